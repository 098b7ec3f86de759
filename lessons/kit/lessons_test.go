package kit_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/lessons"
	_ "github.com/inferlab/inferlab/lessons/all" // the cost knobs across every lesson
	"github.com/inferlab/inferlab/lessons/kit"
)

// costLessons are the registered lessons that take the cost knobs; the
// test fails without one.
func costLessons(t *testing.T) []*lessons.Lesson {
	t.Helper()
	var out []*lessons.Lesson
	for _, l := range lessons.All() {
		if _, ok := l.Param(kit.PriceParam.Key); ok {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		t.Fatal("no registered lesson takes the cost knobs")
	}
	return out
}

// Every lesson with the cost knobs refuses a value out of range with a
// ParamError naming the knob, reports the four cost figures (whatever
// prefix or suffix names its server), and takes both knobs.
func TestCostKnobsAndMetrics(t *testing.T) {
	ls := costLessons(t)
	for _, l := range ls {
		if _, ok := l.Param(kit.PowerParam.Key); !ok {
			t.Errorf("%s takes %s but not %s", l.Slug, kit.PriceParam.Key, kit.PowerParam.Key)
		}
		for _, bad := range []map[string]string{{"usd_per_gpu_hour": "-1"}, {"usd_per_gpu_hour": "100.5"}, {"board_power_w": "2001"}, {"board_power_w": "-5"}} {
			_, _, err := l.Run(bad)
			var pe *lessons.ParamError
			if !errors.As(err, &pe) {
				t.Errorf("%s %v: error %v, want a ParamError", l.Slug, bad, err)
				continue
			}
			for k := range bad {
				if pe.Key != k || !strings.Contains(err.Error(), "want 0 (the chosen GPU's") || !strings.Contains(err.Error(), "or a number from") {
					t.Errorf("%s %v: %v, want it to name %s and its range", l.Slug, bad, err, k)
				}
			}
		}
	}
}

// A reader's own GPU has no cited price or board power, so every lesson
// with the cost knobs and a GPU knob refuses it while the price knob asks
// for the cited figure (its Check is CheckingCosts): a cost of $0 would
// read as a result.
func TestCostKnobsRefuseAnUncitedGPU(t *testing.T) {
	g, err := hardware.RegisterCustomGPU(hardware.CustomGPUSpec{Name: "uncited-h100", MemoryGiB: 79.19, HBMGBps: 3350, BF16TFLOPS: 989, FP8TFLOPS: 1979, InterconnectGBps: 450})
	if err != nil {
		t.Fatal(err)
	}
	defer hardware.UnregisterCustomGPU(g.ID)
	checked := 0
	for _, l := range costLessons(t) {
		if _, ok := l.Param(kit.GPUParam.Key); !ok {
			continue
		}
		checked++
		// The lesson as a page or the CLI offers it with the reader's GPU
		// among its gpu knob's choices.
		own := *l
		own.Params = slices.Clone(l.Params)
		for i, p := range own.Params {
			if p.Key == kit.GPUParam.Key {
				own.Params[i].Choices = append(slices.Clone(p.Choices), g.ID)
			}
		}
		_, _, err := own.Run(map[string]string{kit.GPUParam.Key: g.ID})
		if err == nil || !strings.Contains(err.Error(), g.ID+" has no cited list price") {
			t.Errorf("%s on %s: error %v, want the price refused", l.Slug, g.ID, err)
		}
	}
	if checked == 0 {
		t.Fatal("no lesson takes both the GPU and the cost knobs")
	}
}

// The cost is arithmetic over the run: doubling the price doubles every
// dollar figure and leaves the energy as it was; doubling the power
// doubles the energy and leaves the dollars. The default (0) is the GPU's
// cited price. Checked on the cheapest lesson that takes the knobs.
func TestCostScalesWithPriceAndPower(t *testing.T) {
	ls := costLessons(t)
	l := ls[0]
	for _, c := range ls {
		if c.MaxWork < l.MaxWork {
			l = c
		}
	}
	run := func(set map[string]string) *lessons.Script {
		s, _, err := l.Run(set)
		if err != nil {
			t.Fatalf("%s %v: %v", l.Slug, set, err)
		}
		return s
	}
	base := run(nil)
	var g hardware.GPU
	if p, ok := l.Param("gpu"); ok {
		g = hardware.MustGPU(p.Choices[0])
	} else {
		t.Skipf("%s has no gpu knob to read its default price from", l.Slug)
	}
	price := formatKnob(g.USDPerHour)
	same := run(map[string]string{"usd_per_gpu_hour": price})
	double := run(map[string]string{"usd_per_gpu_hour": formatKnob(2 * g.USDPerHour)})
	hot := run(map[string]string{"board_power_w": formatKnob(2 * g.BoardPowerW)})
	found := 0
	for _, m := range base.Metrics {
		isUSD, isJ := strings.Contains(m.Key, "usd_per_m_"), strings.Contains(m.Key, "joules_per_")
		if !isUSD && !isJ {
			continue
		}
		found++
		if m.Better != lessons.LowerIsBetter {
			t.Errorf("%s: %s is not marked lower-is-better", l.Slug, m.Key)
		}
		s, _ := same.Metric(m.Key)
		d, _ := double.Metric(m.Key)
		h, _ := hot.Metric(m.Key)
		if s != m.Value {
			t.Errorf("%s: %s = %g at the default, %g at the GPU's own price %s", l.Slug, m.Key, m.Value, s, price)
		}
		switch {
		case isUSD && (math.Abs(d-2*m.Value) > 1e-3*m.Value || h != m.Value):
			t.Errorf("%s: %s = %g, %g at twice the price, %g at twice the power", l.Slug, m.Key, m.Value, d, h)
		case isJ && (d != m.Value || math.Abs(h-2*m.Value) > 1e-3*m.Value):
			t.Errorf("%s: %s = %g, %g at twice the price, %g at twice the power", l.Slug, m.Key, m.Value, d, h)
		}
		if m.Value <= 0 {
			t.Errorf("%s: %s = %g, want a positive cost", l.Slug, m.Key, m.Value)
		}
	}
	if found < 4 {
		t.Errorf("%s: %d cost metrics, want at least 4", l.Slug, found)
	}
}

// formatKnob is x as a knob's text.
func formatKnob(x float64) string { return lessons.Param{Kind: lessons.Float}.Format(x) }

// servingLessons serve a stream of requests and report its latencies.
var servingLessons = []string{"batching", "conversations", "disaggregation", "engines", "measuring", "sandbox"}

// Every serving lesson reports, for each server or setting it runs, the
// means engines' benchmarks print beside its percentiles and the end-to-end
// latency (kit.LatencyReport), and a request's end-to-end latency is never
// shorter than its first token.
func TestServingLessonsReportMeansAndEndToEnd(t *testing.T) {
	for _, slug := range servingLessons {
		t.Run(slug, func(t *testing.T) {
			t.Parallel()
			l := lessons.Get(slug)
			if l == nil {
				t.Fatalf("no lesson %s", slug)
			}
			s, _, err := l.Run(nil)
			if err != nil {
				t.Fatal(err)
			}
			byKey := map[string]float64{}
			for _, m := range s.Metrics {
				byKey[m.Key] = m.Value
			}
			runs := 0
			for key, e2e := range byKey {
				if !strings.Contains(key, "e2e_mean_ms") {
					continue
				}
				runs++
				for _, other := range []string{"ttft_mean_ms", "tpot_mean_ms", "e2e_p50_ms", "e2e_p99_ms"} {
					if _, ok := byKey[strings.Replace(key, "e2e_mean_ms", other, 1)]; !ok {
						t.Errorf("%s is reported without %s", key, other)
					}
				}
				if ttft := byKey[strings.Replace(key, "e2e_mean_ms", "ttft_mean_ms", 1)]; !(e2e >= ttft && ttft > 0) {
					t.Errorf("%s = %g ms, mean TTFT %g ms: want 0 < TTFT ≤ end-to-end", key, e2e, ttft)
				}
			}
			if runs == 0 {
				t.Error("no mean end-to-end latency among the metrics")
			}
		})
	}
}
