package export

import (
	"math"
	"strconv"
	"strings"

	"github.com/inferlab/inferlab/lessons"
)

// MetricDiff is one final metric of two runs of a lesson on the same seed
// (run A and run B): `inferlab diff` prints these, and the page's compare
// mode shows the same figures. A or B is nil for a metric only one run
// reports, and Diff then too. Diff is B − A rounded to the decimals the two
// values are written with, so it is the difference of the printed figures,
// without binary rounding noise (0.1 + 0.2).
type MetricDiff struct {
	Key   string   `json:"key"`
	Label string   `json:"label"`
	Unit  string   `json:"unit"`
	A     *float64 `json:"a"`
	B     *float64 `json:"b"`
	Diff  *float64 `json:"diff"`
	// Better is the direction the lesson declares for the metric (omitted
	// where it declares none), and Verdict which run's figure is better by
	// it: "a", "b" or "same" (omitted without a direction or a difference).
	Better  lessons.Direction `json:"better,omitempty"`
	Verdict string            `json:"verdict,omitempty"`

	// DiffText is Diff as printed ("+0.75", "0"; "" without a Diff) and
	// Relative the change in percent of A ("+104.2%"; "" when A is 0 or
	// either side is missing).
	DiffText string `json:"-"`
	Relative string `json:"-"`
}

// The verdicts of a MetricDiff.
const (
	VerdictA    = "a"
	VerdictB    = "b"
	VerdictSame = "same"
)

// DiffMetrics pairs the final metrics of run A (a) and run B (b), in the
// order A lists them, then any only B has. A metric's label, unit and
// direction are A's where A has it.
func DiffMetrics(a, b []lessons.Metric) []MetricDiff {
	byKey := func(ms []lessons.Metric, k string) (float64, bool) {
		for _, m := range ms {
			if m.Key == k {
				return m.Value, true
			}
		}
		return 0, false
	}
	seen := map[string]bool{}
	var out []MetricDiff
	add := func(m lessons.Metric) {
		if seen[m.Key] {
			return
		}
		seen[m.Key] = true
		d := MetricDiff{Key: m.Key, Label: m.Label, Unit: m.Unit, Better: m.Better}
		if v, ok := byKey(a, m.Key); ok {
			d.A = &v
		}
		if v, ok := byKey(b, m.Key); ok {
			d.B = &v
		}
		if d.A != nil && d.B != nil {
			s, x := Difference(*d.A, *d.B)
			d.Diff, d.DiffText = &x, s
			d.Verdict = verdict(m.Better, x)
		}
		d.Relative = Relative(d.A, d.B)
		out = append(out, d)
	}
	for _, m := range a {
		add(m)
	}
	for _, m := range b {
		add(m)
	}
	return out
}

// verdict is which run is better by a metric whose B − A is diff.
func verdict(better lessons.Direction, diff float64) string {
	switch {
	case better != lessons.HigherIsBetter && better != lessons.LowerIsBetter:
		return ""
	case diff == 0:
		return VerdictSame
	case (diff > 0) == (better == lessons.HigherIsBetter):
		return VerdictB
	}
	return VerdictA
}

// Figure writes a metric as `inferlab run` prints it.
func Figure(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// Difference is b − a written with as many decimals as the longer of the
// two figures (at most 12), and its value: the difference of the figures
// as printed. A zero difference is "0", never "-0".
func Difference(a, b float64) (string, float64) {
	dec := max(decimals(Figure(a)), decimals(Figure(b)))
	s := strconv.FormatFloat(b-a, 'f', min(dec, 12), 64)
	x, _ := strconv.ParseFloat(s, 64)
	if x == 0 {
		return "0", 0
	}
	if x > 0 {
		s = "+" + s
	}
	return s, x
}

func decimals(s string) int {
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return len(s) - i - 1
	}
	return 0
}

// Relative is (b − a) / |a| in percent, "" when a is 0 or missing.
func Relative(a, b *float64) string {
	if a == nil || b == nil || *a == 0 {
		return ""
	}
	r := 100 * (*b - *a) / math.Abs(*a)
	s := strconv.FormatFloat(r, 'f', 1, 64)
	if s == "0.0" || s == "-0.0" {
		return "0%"
	}
	if r > 0 {
		s = "+" + s
	}
	return s + "%"
}
