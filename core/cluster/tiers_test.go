package cluster

import (
	"math"
	"testing"
)

func near(a, b, rel float64) bool { return math.Abs(a-b) <= rel*math.Abs(b) }

// T_xfer = α + B/(BW·η), hand-computed for a few links.
func TestLinkTransfer(t *testing.T) {
	const kv70b4k = 4096 * 327680.0 // bytes: one 4k-token Llama-3.1-70B KV (docs/SOURCES.md#kv-bytes-per-token)
	for _, c := range []struct {
		link  string
		bytes float64
		want  float64 // seconds
	}{
		{"ib-ndr", kv70b4k, 17e-6 + kv70b4k/35.9e9},
		{"nvlink4", kv70b4k, 5e-6 + kv70b4k/348e9},
		{"rdma-8x400", kv70b4k, 17e-6 + kv70b4k/190e9},
		{"pcie5", 1e9, 1 / 52.0},
		{"pcie4", 1e9, 1 / 25.0},
		{"nvme4", 6.8e9, 1e-4 + 1},
		{"s3-stream", 93e6, 0.020 + 1},
		{"s3-100g", 8.003e9, 0.020 + 1},
		{"tcpxo", 23.58e9, 600e-6 + 1},
		{"ib-ndr", 0, 0},
	} {
		l, err := LinkByID(c.link)
		if err != nil {
			t.Fatal(err)
		}
		if got := l.Transfer(c.bytes); !near(got, c.want, 1e-12) {
			t.Errorf("%s: %g bytes in %.9f s, want %.9f s", c.link, c.bytes, got, c.want)
		}
	}
}

// docs/SOURCES.md#kv-transfer-model: moving one 4k-token Llama-3.1-70B KV
// (1.34 GB) at the measured rates takes the times listed there (rounded).
func TestLinkTransferMatchesProfilesTable(t *testing.T) {
	const bytes = 4096 * 327680.0
	for _, c := range []struct {
		link   string
		wantMS float64
	}{
		{"nvlink4", 3.9}, {"rdma-8x400", 7.1}, {"ib-ndr", 37}, {"pcie5", 26}, {"pcie4", 54},
		{"nvme5", 103}, {"nvme4", 197}, {"s3-100g", 168 + 20}, {"s3-stream", 14400},
	} {
		l, _ := LinkByID(c.link)
		if got := 1000 * l.Transfer(bytes); !near(got, c.wantMS, 0.03) {
			t.Errorf("%s: %.1f ms, docs/SOURCES.md#kv-transfer-model says %.1f ms", c.link, got, c.wantMS)
		}
	}
}

func TestLinksValidAndCited(t *testing.T) {
	seen := map[string]bool{}
	for _, l := range Links() {
		if seen[l.ID] {
			t.Errorf("duplicate link id %q", l.ID)
		}
		seen[l.ID] = true
		if err := l.Validate(); err != nil {
			t.Error(err)
		}
		if len(l.Sources) == 0 || l.Note == "" {
			t.Errorf("link %s has no sources or note", l.ID)
		}
		for _, tag := range l.Sources {
			if _, ok := Cite(tag); !ok {
				t.Errorf("link %s cites %q, which neither core/hardware nor this package resolves", l.ID, tag)
			}
		}
	}
	if _, err := LinkByID("carrier-pigeon"); err == nil {
		t.Error("unknown link id accepted")
	}
	for _, tag := range SourceTags() {
		s, _ := Cite(tag)
		if s.Ref == "" || s.Note == "" || s.Tag != tag {
			t.Errorf("source %q is malformed: %+v", tag, s)
		}
	}
}

func TestLinkValidate(t *testing.T) {
	for _, l := range []Link{{ID: "a", Bandwidth: 0, Eff: 1}, {ID: "b", Bandwidth: 1, Eff: 0}, {ID: "c", Bandwidth: 1, Eff: 1.5}, {ID: "d", Bandwidth: 1, Eff: 1, Alpha: -1}} {
		if l.Validate() == nil {
			t.Errorf("%+v accepted", l)
		}
	}
}

func TestTiers(t *testing.T) {
	nvme, _ := LinkByID("nvme4")
	s3, _ := LinkByID("s3-100g")
	ts := Tiers(63e9, nvme, s3)
	if len(ts) != 4 || ts[0].ID != G1 || ts[3].ID != G4 || ts[3].ID.String() != "G4" {
		t.Fatalf("tiers %+v", ts)
	}
	if ts[0].Fetch(1e9) != 0 {
		t.Error("a G1 hit should need no copy")
	}
	if ts[1].Link.ID != "pcie5" || HostLink(31.5e9).ID != "pcie4" {
		t.Errorf("host links: %s for Gen5, %s for Gen4", ts[1].Link.ID, HostLink(31.5e9).ID)
	}
	if got, want := ts[2].Fetch(6.8e9), 1e-4+1; !near(got, want, 1e-12) {
		t.Errorf("NVMe fetch of 6.8 GB: %g s, want %g", got, want)
	}
}

// The article's formulation 2, hand-computed.
func TestExpectedTTFT(t *testing.T) {
	for _, c := range []struct {
		p, fetch []float64
		compute  float64
		want     float64
		bad      bool
	}{
		// 0.5·0 + 0.2·10 ms + 0.1·100 ms + 0·1 s + (1 − 0.8)·200 ms = 52 ms
		{p: []float64{0.5, 0.2, 0.1, 0}, fetch: []float64{0, 0.010, 0.100, 1}, compute: 0.200, want: 0.052},
		{p: []float64{0, 0, 0, 0}, fetch: []float64{0, 1, 2, 3}, compute: 0.3, want: 0.3},
		{p: []float64{0, 0, 0, 1}, fetch: []float64{0, 1, 2, 3}, compute: 0.3, want: 3},
		{p: []float64{0.6, 0.6}, fetch: []float64{0, 1}, compute: 1, bad: true},
		{p: []float64{-0.1, 0}, fetch: []float64{0, 1}, compute: 1, bad: true},
		{p: []float64{0.1}, fetch: []float64{0, 1}, compute: 1, bad: true},
	} {
		got, err := ExpectedTTFT(c.p, c.fetch, c.compute)
		if c.bad {
			if err == nil {
				t.Errorf("%v accepted", c.p)
			}
			continue
		}
		if err != nil || !near(got, c.want, 1e-12) {
			t.Errorf("p %v: E[TTFT] = %g (%v), want %g", c.p, got, err, c.want)
		}
	}
}

func TestBreakEven(t *testing.T) {
	lin := func(a, b float64) func(int) float64 { return func(n int) float64 { return a + b*float64(n) } }
	for _, c := range []struct {
		name           string
		fetch, compute func(int) float64
		want           []Crossing
	}{
		// 20 + n < 5 + 2n ⇔ n > 15: fetching wins from 16 tokens on (α-bound).
		{"alpha-bound", lin(20, 1), lin(5, 2), []Crossing{{16, true}}},
		// 0.1 + 3n < 5 + 2n ⇔ n < 4.9: fetching wins up to 4 tokens (bandwidth-bound).
		{"bandwidth-bound", lin(0.1, 3), lin(5, 2), []Crossing{{5, false}}},
		{"fetch always faster", lin(0.1, 1), lin(5, 2), nil},
		{"recompute always faster", lin(50, 3), lin(5, 2), nil},
		// A fetch that is slower for short and long prefixes: 30 + n²/1000 vs 5 + n:
		// equal near n = 26 and n = 974.
		{"window", func(n int) float64 { return 30 + float64(n*n)/1000 }, lin(5, 1), []Crossing{{26, true}, {975, false}}},
	} {
		got := BreakEven(c.fetch, c.compute, 100000, 64)
		if len(got) != len(c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: %v, want %v", c.name, got, c.want)
			}
		}
	}
}

func TestDiskFilter(t *testing.T) {
	f := NewDiskFilter()
	var trace []int
	var offload []bool
	for _, ev := range "hdhhddddd" { // hit, decay, …
		if ev == 'h' {
			f.Hit()
		} else {
			f.Decay()
		}
		trace = append(trace, f.Frequency())
		offload = append(offload, f.Offload())
	}
	// 1 → hit 2 → decay 1 → hit 2 → hit 4 → 3 → 2 → 1 → 0 → 0
	want := []int{2, 1, 2, 4, 3, 2, 1, 0, 0}
	for i := range want {
		if trace[i] != want[i] || offload[i] != (want[i] >= 2) {
			t.Fatalf("step %d: frequency %v, offload %v; want %v", i, trace, offload, want)
		}
	}
	if g := NewDiskFilter(); g.Offload() {
		t.Error("a block used once must not go to disk")
	}
}
