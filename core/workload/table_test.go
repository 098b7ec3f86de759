package workload

import (
	"slices"
	"testing"
)

// The table is Sarathi-Serve's chat lengths as published: 30,731 rows
// whose medians and 90th percentiles are its paper's Table 2.
func TestShareGPT8kTable(t *testing.T) {
	tab, ok := LengthTableByID("sharegpt-8k")
	if !ok {
		t.Fatal("no sharegpt-8k table")
	}
	rows, err := tab.Rows()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 30731 {
		t.Fatalf("%d rows, want 30,731", len(rows))
	}
	var p, o []int
	for _, r := range rows {
		p, o = append(p, r.Prompt), append(o, r.Output)
		if r.Prompt+r.Output > 8192 {
			t.Fatalf("row %+v over 8,192 tokens", r)
		}
	}
	slices.Sort(p)
	slices.Sort(o)
	rank := func(xs []int, q float64) int { return xs[int(q*float64(len(xs))+0.999999)-1] }
	for _, c := range []struct {
		name      string
		got, want int
	}{{"prompt median", rank(p, 0.5), 1730}, {"prompt P90", rank(p, 0.9), 5696}, {"output median", rank(o, 0.5), 415}, {"output P90", rank(o, 0.9), 834}} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d (Sarathi-Serve, Table 2)", c.name, c.got, c.want)
		}
	}
	if _, err := parseLengthRows("12 x\n"); err == nil {
		t.Error("a bad line parsed")
	}
}

// PoissonRows draws the same rows at every rate and seed-determined
// arrivals that scale with 1/rate.
func TestPoissonRows(t *testing.T) {
	rows := []LengthRow{{1, 2}, {3, 4}, {5, 6}, {7, 8}}
	a, b := PoissonRows(200, 1, rows, 9), PoissonRows(200, 4, rows, 9)
	seen := map[LengthRow]bool{}
	for i := range a {
		if a[i].Prompt != b[i].Prompt || a[i].Output != b[i].Output {
			t.Fatalf("request %d: lengths moved with the rate", i)
		}
		if d := a[i].Arrival - 4*b[i].Arrival; d > 1e-9 || d < -1e-9 {
			t.Fatalf("request %d: arrival %g at 1 req/s, %g at 4", i, a[i].Arrival, b[i].Arrival)
		}
		seen[LengthRow{a[i].Prompt, a[i].Output}] = true
	}
	if len(seen) != 4 {
		t.Errorf("drew %d of 4 rows", len(seen))
	}
	if c := PoissonRows(200, 1, rows, 10); c[0].Arrival == a[0].Arrival {
		t.Error("another seed drew the same requests")
	}
}
