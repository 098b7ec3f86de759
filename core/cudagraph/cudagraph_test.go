package cudagraph

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/internal/testinput"
)

func step(t *testing.T, gpu, model string, tp int) hardware.StepModel {
	t.Helper()
	g, err := hardware.GPUByID(gpu)
	if err != nil {
		t.Fatal(err)
	}
	m, err := hardware.ModelByID(model)
	if err != nil {
		t.Fatal(err)
	}
	s, err := hardware.NewStepModel(g, m, tp, hardware.BF16)
	if err != nil {
		t.Fatal(err)
	}
	s.Host = hardware.HostOverhead{}
	return s
}

// mixed is a batch of decodes plus one prefill chunk.
func mixed(decodes, chunk int) hardware.Batch {
	b := hardware.DecodeBatch(decodes, 500)
	b.Seqs = append(b.Seqs, hardware.Chunk{NewTokens: chunk})
	return b
}

func TestCaptureSizes(t *testing.T) {
	for _, c := range []struct {
		seqs, tokens int
		n, last      int
	}{
		{256, 8192, 51, 512}, // vLLM's default list: 3 + 31 + 17 [VLLM-CG]
		{1024, 16384, 51, 512},
		{128, 8192, 35, 256},
		// Newest vLLM appends max_num_batched_tokens when it is off the
		// stride within the maximum [VLLM-CGSIZES]; before, 300 was
		// truncated to 288 and a full batch ran eagerly.
		{256, 300, 38, 300},
		{256, 100, 16, 100},
		{256, 256, 35, 256},
		{100, 8192, 28, 200},
		{1, 8192, 2, 2},
		{2, 8192, 3, 4},
		{4, 8192, 4, 8},
		{256, 0, 51, 512}, // no token limit
		{0, 8192, 0, 0},
	} {
		s := CaptureSizes(c.seqs, c.tokens)
		last := 0
		if len(s) > 0 {
			last = s[len(s)-1]
		}
		if len(s) != c.n || last != c.last {
			t.Errorf("CaptureSizes(%d, %d): %d sizes up to %d, want %d up to %d: %v", c.seqs, c.tokens, len(s), last, c.n, c.last, s)
		}
		if !slices.IsSorted(s) || len(slices.Compact(slices.Clone(s))) != len(s) {
			t.Errorf("sizes not sorted and unique: %v", s)
		}
		for i, x := range s {
			switch {
			case x <= 4 && x != []int{1, 2, 4}[i]:
				t.Errorf("size %d at %d", x, i)
			case x == c.tokens && i == len(s)-1:
				// the appended token budget may be off the stride
			case x > 4 && x < 256 && x%8 != 0, x >= 256 && x%16 != 0:
				t.Errorf("size %d breaks vLLM's steps", x)
			}
		}
		if d := New(FullAndPiecewise, c.seqs, c.tokens); d.MaxCaptureSize() != c.last {
			t.Errorf("MaxCaptureSize %d, want %d", d.MaxCaptureSize(), c.last)
		}
	}
	if s := New(None, 256, 8192).Sizes; len(s) != 0 {
		t.Errorf("NONE captures %v", s)
	}
}

// Padding to the next captured size, vLLM's rule ([VLLM-CG]).
func TestPad(t *testing.T) {
	d := New(FullAndPiecewise, 256, 8192)
	for _, c := range []struct {
		n, want int
		ok      bool
	}{
		{1, 1, true}, {2, 2, true}, {3, 4, true}, {4, 4, true}, {5, 8, true}, {8, 8, true}, {9, 16, true},
		{247, 248, true}, {249, 256, true}, {250, 256, true}, {256, 256, true}, {257, 272, true},
		{500, 512, true}, {512, 512, true}, {513, 513, false}, {4096, 4096, false}, {0, 0, false},
	} {
		got, ok := d.Pad(c.n)
		if got != c.want || ok != c.ok {
			t.Errorf("Pad(%d) = %d, %v; want %d, %v", c.n, got, ok, c.want, c.ok)
		}
		if ok && (got < c.n || !slices.Contains(d.Sizes, got)) {
			t.Errorf("Pad(%d) = %d is not a captured size ≥ n", c.n, got)
		}
	}
}

// vLLM's CudagraphDispatcher: full graphs only for uniform decode batches
// within max_num_seqs (except under FULL), piecewise for the rest where the
// mode has them, eager above the largest size.
func TestSelect(t *testing.T) {
	type want struct {
		rt     Runtime
		padded int
	}
	batches := []struct {
		name string
		b    hardware.Batch
	}{
		{"decode 1", hardware.DecodeBatch(1, 100)},
		{"decode 3", hardware.DecodeBatch(3, 100)},
		{"decode 250", hardware.DecodeBatch(250, 100)},
		{"decode 300", hardware.DecodeBatch(300, 100)}, // padded 304 > max_num_seqs 256
		{"mixed 7+100", mixed(7, 100)},
		{"prefill 200", hardware.PrefillBatch(1, 200)},
		{"mixed 16+512", mixed(16, 512)}, // 528 > 512
	}
	cases := map[Mode][]want{
		None:             {{RunEager, 1}, {RunEager, 3}, {RunEager, 250}, {RunEager, 300}, {RunEager, 107}, {RunEager, 200}, {RunEager, 528}},
		Piecewise:        {{RunPiecewise, 1}, {RunPiecewise, 4}, {RunPiecewise, 256}, {RunPiecewise, 304}, {RunPiecewise, 112}, {RunPiecewise, 200}, {RunEager, 528}},
		Full:             {{RunFull, 1}, {RunFull, 4}, {RunFull, 256}, {RunFull, 304}, {RunFull, 112}, {RunFull, 200}, {RunEager, 528}},
		FullDecodeOnly:   {{RunFull, 1}, {RunFull, 4}, {RunFull, 256}, {RunEager, 300}, {RunEager, 107}, {RunEager, 200}, {RunEager, 528}},
		FullAndPiecewise: {{RunFull, 1}, {RunFull, 4}, {RunFull, 256}, {RunPiecewise, 304}, {RunPiecewise, 112}, {RunPiecewise, 200}, {RunEager, 528}},
	}
	for mode, wants := range cases {
		d := New(mode, 256, 8192)
		for i, w := range wants {
			c := d.Select(batches[i].b)
			if c.Runtime != w.rt || c.Padded != w.padded || c.Tokens != batches[i].b.Tokens() {
				t.Errorf("%s, %s: %s padded %d, want %s padded %d", mode, batches[i].name, c.Runtime, c.Padded, w.rt, w.padded)
			}
		}
	}
}

func TestParseMode(t *testing.T) {
	for _, m := range Modes() {
		for _, s := range []string{m.String(), m.Key(), strings.ReplaceAll(m.Key(), "_", "-")} {
			got, err := ParseMode(s)
			if err != nil || got != m {
				t.Errorf("ParseMode(%q) = %v, %v", s, got, err)
			}
		}
	}
	if m, err := ParseMode("eager"); err != nil || m != None {
		t.Errorf("eager → %v, %v", m, err)
	}
	if _, err := ParseMode("fast"); err == nil || !strings.Contains(err.Error(), "full_and_piecewise") {
		t.Errorf("bad mode error %v", err)
	}
	if Modes()[0] != Default || Default.String() != "FULL_AND_PIECEWISE" {
		t.Errorf("default %v", Default)
	}
}

// Kernels per step for every model: 10 per layer plus 4 at TP 1, 12 per
// layer plus 6 at TP > 1 (docs/SOURCES.md#kernels-per-layer); piecewise splits them into L+1
// pieces around 2 eager kernels per layer.
func TestKernelCounts(t *testing.T) {
	for _, m := range hardware.Models() {
		for _, tp := range []int{1, 2, 4, 8} {
			s, err := hardware.NewStepModel(hardware.GPUs()[0], m, tp, hardware.BF16)
			if err != nil {
				continue // tp does not split the model
			}
			ks := s.Kernels(hardware.DecodeBatch(1, 100))
			want := 10*m.Layers + 4
			if tp > 1 {
				want = 12*m.Layers + 6
			}
			if len(ks) != want {
				t.Errorf("%s TP %d: %d kernels, want %d", m.ID, tp, len(ks), want)
			}
			if p := Pieces(ks); p != m.Layers+1 {
				t.Errorf("%s TP %d: %d pieces, want %d", m.ID, tp, p, m.Layers+1)
			}
			split := 0
			for _, k := range ks {
				if Splitting(k) {
					split++
				}
			}
			if split != 2*m.Layers {
				t.Errorf("%s TP %d: %d eager kernels in piecewise, want %d", m.ID, tp, split, 2*m.Layers)
			}
		}
	}
	// Llama-3.1-8B: 32 × 10 + 4 = 324, about the ≈ 330 counted by hand
	// (docs/SOURCES.md#kernels-per-layer).
	s := step(t, "h100-sxm", "llama-3.1-8b", 1)
	if n := len(s.Kernels(hardware.DecodeBatch(1, 1))); n != 324 {
		t.Errorf("Llama-3.1-8B: %d kernels", n)
	}
}

// The plan issues every kernel once, in order, with CPU costs per mode.
func TestPlan(t *testing.T) {
	s := step(t, "h100-sxm", "llama-3.1-8b", 2)
	L := s.Model.Layers
	b := hardware.DecodeBatch(8, 1000)
	ks := s.Kernels(b)
	for _, mode := range Modes() {
		d := New(mode, 256, 8192)
		d.PieceLaunch = 7e-6
		p := d.Plan(b, ks)
		next, t0 := 0, 0.0
		for _, l := range p.Launches {
			if l.First != next || l.Last < l.First || l.Start != t0 || l.End <= l.Start {
				t.Fatalf("%s: launch %+v after kernel %d at %v", mode, l, next-1, t0)
			}
			next, t0 = l.Last+1, l.End
		}
		if next != len(ks) || p.CPU != t0 {
			t.Fatalf("%s: launches cover %d of %d kernels, CPU %v", mode, next, len(ks), p.CPU)
		}
		var want float64
		switch p.Runtime {
		case RunEager:
			want = float64(len(ks)) * d.PerLaunch
		case RunFull:
			want = d.GraphLaunch
		case RunPiecewise:
			want = d.GraphLaunch + float64(L)*d.PieceLaunch + float64(2*L)*d.PerLaunch
		}
		if math.Abs(p.CPU-want) > 1e-12 {
			t.Errorf("%s (%s): CPU %v, want %v", mode, p.Runtime, p.CPU, want)
		}
		disp := d.Dispatch(b, ks)
		if disp.Mode != string(p.Runtime) || disp.CPUTime != p.CPU || len(disp.Launches) != len(ks) {
			t.Errorf("%s: dispatch %s %v", mode, disp.Mode, disp.CPUTime)
		}
		for i, l := range disp.Launches {
			if l <= 0 || (i > 0 && l < disp.Launches[i-1]) {
				t.Fatalf("%s: kernel %d launched at %v", mode, i, l)
			}
		}
	}
	// PieceLaunch 0 means PerLaunch.
	d := New(Piecewise, 256, 8192)
	if p := d.Plan(b, ks); math.Abs(p.CPU-(d.GraphLaunch+float64(3*L)*d.PerLaunch)) > 1e-12 {
		t.Errorf("piecewise CPU %v", p.CPU)
	}
}

// A step never takes less than its GPU work nor less than its dispatch,
// the GPU computes the padded tokens, and padding never makes a step faster.
func TestStepBounds(t *testing.T) {
	batches := []hardware.Batch{
		hardware.DecodeBatch(1, 10), hardware.DecodeBatch(3, 1000), hardware.DecodeBatch(9, 4000),
		hardware.DecodeBatch(250, 1000), hardware.DecodeBatch(257, 1000), hardware.DecodeBatch(500, 200),
		hardware.DecodeBatch(513, 200), mixed(7, 100), mixed(64, 448), hardware.PrefillBatch(1, 2048),
	}
	for _, cfg := range []struct {
		gpu, model string
		tp         int
	}{{"h100-sxm", "llama-3.1-8b", 1}, {"b200", "llama-3.1-8b", 1}, {"a100-80gb-sxm", "llama-3.1-70b", 4}, {"l4", "qwen2.5-7b", 1}} {
		s := step(t, cfg.gpu, cfg.model, cfg.tp)
		for _, mode := range Modes() {
			for _, per := range []float64{hardware.PerLaunchCPP, hardware.PerLaunchPython, 100e-6} {
				d := New(mode, 256, 8192)
				d.PerLaunch = per
				s.Dispatcher = d
				for _, b := range batches {
					c := s.Step(b)
					ch := d.Select(b)
					name := fmt.Sprintf("%s %s %s %.0fµs %d tokens", cfg.gpu, cfg.model, mode, per*1e6, b.Tokens())
					if c.Total < c.GPU+c.Comm-1e-15 || c.Total < c.CPU-1e-15 {
						t.Errorf("%s: step %v below GPU %v + comm %v or dispatch %v", name, c.Total, c.GPU, c.Comm, c.CPU)
					}
					if c.PaddedTokens != ch.Padded || c.Mode != string(ch.Runtime) {
						t.Errorf("%s: padded %d mode %s, want %d %s", name, c.PaddedTokens, c.Mode, ch.Padded, ch.Runtime)
					}
					if ch.Padded > ch.Tokens {
						unpadded := s
						unpadded.Dispatcher = hardware.Replay{Launch: d.GraphLaunch}
						if u := unpadded.Step(b); c.GPU < u.GPU {
							t.Errorf("%s: padded GPU time %v below unpadded %v", name, c.GPU, u.GPU)
						}
					}
				}
			}
		}
	}
}

// Dispatch dominates exactly when a kernel's GPU time is shorter than its
// launch: at batch 1 eager launches leave the GPU idle and replay is
// faster; with launches far cheaper than every kernel eager costs nothing.
func TestWhenDispatchDominates(t *testing.T) {
	s := step(t, "h100-sxm", "llama-3.1-8b", 1)
	b := hardware.DecodeBatch(1, 1000)
	s.Dispatcher = New(None, 256, 8192)
	eager := s.Step(b)
	s.Dispatcher = New(Full, 256, 8192)
	full := s.Step(b)
	if eager.Idle <= 0 || eager.Total <= full.Total {
		t.Errorf("batch 1: eager %v (idle %v) not slower than replay %v", eager.Total, eager.Idle, full.Total)
	}
	if math.Abs(full.Total-(full.GPU+hardware.GraphLaunch)) > 1e-9 {
		t.Errorf("replay step %v, want launch + GPU %v", full.Total, full.GPU+hardware.GraphLaunch)
	}
	// Launches of 1 ns: no kernel waits for one.
	d := New(None, 256, 8192)
	d.PerLaunch = 1e-9
	s.Dispatcher = d
	if fast := s.Step(b); fast.Idle > 1e-9*float64(len(fast.Kernels)) {
		t.Errorf("1 ns launches still idle the GPU %v", fast.Idle)
	}
	// 100 µs Python launches on a B200: CPU-bound, the GPU mostly waits
	// and the step ends after the last launch.
	s = step(t, "b200", "llama-3.1-8b", 1)
	d.PerLaunch = 100e-6
	s.Dispatcher = d
	c := s.Step(b)
	last := c.Kernels[len(c.Kernels)-1]
	if c.Total < c.CPU+last.GPUTime || c.Idle < c.GPU {
		t.Errorf("CPU-bound step %v (idle %v, busy %v), want ≥ CPU %v + last kernel %v and mostly idle", c.Total, c.Idle, c.GPU, c.CPU, last.GPUTime)
	}
}

// Piecewise graphs stall the GPU at each eager attention when a layer's
// GPU work is shorter than the CPU work between pieces.
func TestPiecewiseGaps(t *testing.T) {
	s := step(t, "b200", "llama-3.1-8b", 1)
	b := hardware.DecodeBatch(1, 100)
	d := New(Piecewise, 256, 8192)
	d.PerLaunch = 100e-6
	s.Dispatcher = d
	pw := s.Step(b)
	s.Dispatcher = New(Full, 256, 8192)
	full := s.Step(b)
	if pw.Idle <= full.Idle || pw.Total <= full.Total {
		t.Errorf("piecewise %v (idle %v) not slower than full %v (idle %v)", pw.Total, pw.Idle, full.Total, full.Idle)
	}
}

func TestCapture(t *testing.T) {
	for _, c := range []struct {
		mode        Mode
		full, piece int
	}{
		{None, 0, 0}, {Piecewise, 0, 51}, {Full, 51, 0}, {FullDecodeOnly, 35, 0}, {FullAndPiecewise, 35, 51},
	} {
		got := New(c.mode, 256, 8192).Capture()
		if got.FullGraphs != c.full || got.PiecewiseGraphs != c.piece {
			t.Errorf("%s: %d full + %d piecewise, want %d + %d", c.mode, got.FullGraphs, got.PiecewiseGraphs, c.full, c.piece)
		}
		n := float64(c.full + c.piece)
		if math.Abs(got.Seconds-n*2.0/53) > 1e-12 || math.Abs(got.Bytes-n*0.45*(1<<30)/53) > 1 {
			t.Errorf("%s: %v s %v B", c.mode, got.Seconds, got.Bytes)
		}
	}
}

// Every case is within its tolerance, and every [TAG] this package cites
// resolves; every own tag is cited.
func TestValidation(t *testing.T) {
	rs := Validate()
	if len(rs) < 3 {
		t.Fatalf("%d cases, want at least 3", len(rs))
	}
	for _, r := range rs {
		if _, ok := Cite(r.Source); !ok {
			t.Errorf("%s: source %q does not resolve", r.Name, r.Source)
		}
		if r.KnownMiss == "" && !r.Within() {
			t.Errorf("%s: model %.3g %s vs measured %.3g (%+.1f%%, tolerance %.0f%%)", r.Name, r.Value, r.Unit, r.Measured, 100*r.Error, 100*r.Tolerance)
		}
	}
	md := ValidationMarkdown()
	for _, want := range []string{"gpt-fast eager", "[GPTFAST-MODEL]", "[VLLM-2192]"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
}

func TestCitations(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	cites, err := testinput.Cited(files, regexp.MustCompile(`\[([A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+)\]`))
	if err != nil {
		t.Fatal(err)
	}
	cited := map[string]bool{}
	for _, c := range cites {
		cited[c.Tag] = true
		if _, ok := Cite(c.Tag); !ok {
			t.Errorf("%s cites [%s], which Cite does not resolve", c.File, c.Tag)
		}
	}
	for _, tag := range SourceTags() {
		if !cited[tag] {
			t.Errorf("source %q is never cited", tag)
		}
		if _, dup := hardware.Cite(tag); dup {
			t.Errorf("tag %q is also core/hardware's", tag)
		}
	}
}

// The eager op inventory of gpt-fast is 49 ops per layer plus the head and
// sampler, counted from its model.py.
func TestGPTFastOps(t *testing.T) {
	perLayer := 0
	for _, name := range []string{"input_norm", "qkv_proj", "rotary", "kv_cache_write", "attention", "o_proj", "post_attn_norm", "gate_up_proj", "silu_mul", "down_proj"} {
		perLayer += gptFastOps[name]
	}
	if perLayer != 49 || GPTFastEagerOps() != 32*49+3+8+1+11 {
		t.Errorf("%d ops per layer, %d per step", perLayer, GPTFastEagerOps())
	}
}

// docs/VALIDATION.md has this package's section after core/hardware's, as
// cmd/validation writes it (core/hardware's KV-capacity section follows).
func TestValidationDocUpToDate(t *testing.T) {
	got, err := os.ReadFile(filepath.Join("..", "..", "docs", "VALIDATION.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := hardware.ValidationMarkdown() + ValidationMarkdown(); !strings.HasPrefix(string(got), want) {
		t.Error("docs/VALIDATION.md is out of date; run `go run ./cmd/validation > docs/VALIDATION.md` from the repository root")
	}
}

// With k speculative tokens vLLM sizes its captures for verify steps of
// 1 + k tokens per sequence [VLLM-CGSPEC]: the maximum grows by 1 + k and,
// for full decode graphs, every size is a multiple of 1 + k.
func TestSpecCaptureSizes(t *testing.T) {
	cases := []struct {
		mode            Mode
		seqs, budget, k int
		want            []int
	}{
		{FullAndPiecewise, 1, 8192, 0, []int{1, 2}},
		// Batch 1, γ = 4: the maximum is 2·1·5 = 10, so the list is 1, 2,
		// 4, 8 and the effective maximum 8; rounded up to multiples of 5
		// within it, only 5 is left.
		{FullAndPiecewise, 1, 8192, 4, []int{5}},
		{FullAndPiecewise, 4, 8192, 3, []int{4, 8, 16, 24, 32}},
		// Without full graphs nothing is rounded.
		{Piecewise, 1, 8192, 4, []int{1, 2, 4, 8}},
		{FullAndPiecewise, 1, 8192, 6, []int{7}},
		// A budget below 1 + k leaves nothing to round: no graphs.
		{FullAndPiecewise, 1, 4, 7, nil},
	}
	for _, c := range cases {
		if got := SpecCaptureSizes(c.mode, c.seqs, c.budget, c.k); !slices.Equal(got, c.want) {
			t.Errorf("%s, max_num_seqs %d, budget %d, k %d: %v, want %v", c.mode, c.seqs, c.budget, c.k, got, c.want)
		}
	}
	// The 512 ceiling still holds, and every size stays a multiple of 1 + k.
	s := SpecCaptureSizes(FullAndPiecewise, 256, 8192, 4)
	if s[len(s)-1] > 512 {
		t.Errorf("largest size %d above 512", s[len(s)-1])
	}
	for _, x := range s {
		if x%5 != 0 {
			t.Errorf("size %d is not a multiple of 5", x)
		}
	}
}

// A verify step of 1 + k tokens per sequence is vLLM's uniform decode batch
// when the engine speculates k tokens: at batch 1, γ = 4 it replays a full
// graph of 5 tokens. Without spec-aware sizes (New with max_num_seqs 1: sizes
// 1 and 2) the same step ran eagerly.
func TestSpecSelect(t *testing.T) {
	verify := func(n, q int) hardware.Batch {
		b := hardware.Batch{Seqs: make([]hardware.Chunk, n)}
		for i := range b.Seqs {
			b.Seqs[i] = hardware.Chunk{NewTokens: q, Context: 1000}
		}
		return b
	}
	d := NewSpec(FullAndPiecewise, 1, 8192, 4)
	if c := d.Select(verify(1, 5)); c.Runtime != RunFull || c.Padded != 5 {
		t.Errorf("verify 1×5: %s padded %d, want full 5", c.Runtime, c.Padded)
	}
	if c := New(FullAndPiecewise, 1, 8192).Select(verify(1, 5)); c.Runtime != RunEager {
		t.Errorf("verify 1×5 without spec sizes: %s, want eager (the old behaviour this replaces)", c.Runtime)
	}
	d = NewSpec(FullAndPiecewise, 8, 8192, 3)
	cases := []struct {
		name string
		b    hardware.Batch
		rt   Runtime
		pad  int
	}{
		{"verify 8×4", verify(8, 4), RunFull, 32},
		// 12 is not captured (the list has 8 and 16): padded to 16.
		{"verify 3×4", verify(3, 4), RunFull, 16},
		// One token per sequence is not the uniform shape of this engine:
		// piecewise, padded to a multiple of 4.
		{"decode 3", hardware.DecodeBatch(3, 100), RunPiecewise, 4},
		{"mixed", mixed(2, 9), RunPiecewise, 16},
	}
	for _, c := range cases {
		if got := d.Select(c.b); got.Runtime != c.rt || got.Padded != c.pad {
			t.Errorf("%s: %s padded %d, want %s padded %d", c.name, got.Runtime, got.Padded, c.rt, c.pad)
		}
	}
	// Full decode graphs are captured for 4…32 tokens (4, 8, 16, 24, 32),
	// piecewise for every size up to 64.
	if c := d.Capture(); c.FullGraphs != 5 || c.PiecewiseGraphs != len(d.Sizes) || d.MaxCaptureSize() != 64 {
		t.Errorf("capture %+v for sizes %v", c, d.Sizes)
	}
}
