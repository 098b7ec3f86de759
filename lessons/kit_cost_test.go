package lessons

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/core/cluster"
	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/scheduler"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// The cost formulas on cases worked by hand.
func TestCostOfByHand(t *testing.T) {
	half := cluster.Busy{Prefill: 900, Decode: 900}
	tests := []struct {
		name                        string
		usd, watts                  float64
		pools                       []gpuPool
		in, out                     int64
		inPerM, outPerM, jTok, jOut float64
	}{
		// $2 an hour for an hour, busy half on each phase: $1 each; 700 W ×
		// 3,600 s = 2.52 MJ over 2 M tokens.
		{"one GPU, even split", 2, 700, []gpuPool{{gpus: 1, held: 3600, busy: half}}, 1e6, 1e6, 1, 1, 1.26, 2.52},
		// Four GPUs for half an hour at $3: $6, three quarters of the engine
		// time on prefill: $4.50 to 3 M input tokens, $1.50 to 0.5 M output.
		{"four GPUs, 3:1", 3, 400, []gpuPool{{gpus: 4, held: 1800, busy: cluster.Busy{Prefill: 30, Decode: 10}}}, 3e6, 5e5, 1.5, 3, 400 * 4 * 1800 / 3.5e6, 400 * 4 * 1800 / 5e5},
		// Disaggregated: 2 prefill GPUs and 1 decode GPU for 1,800 s at $4:
		// the prefill pool's $4 to input, the decode pool's $2 to output.
		{"two pools", 4, 1000, []gpuPool{{gpus: 2, held: 1800, busy: cluster.Busy{Prefill: 100}}, {gpus: 1, held: 1800, busy: cluster.Busy{Decode: 50}}}, 2e6, 1e6, 2, 2, 1000 * 3 * 1800 / 3e6, 1000 * 3 * 1800 / 1e6},
		// A pool that never ran is shared like the run: 1 GPU idle beside 1
		// busy 1:3, at $1 for 3,600 s each: $0.50 to input, $1.50 to output.
		{"an idle pool", 1, 100, []gpuPool{{gpus: 1, held: 3600, busy: cluster.Busy{Prefill: 1, Decode: 3}}, {gpus: 1, held: 3600}}, 1e6, 1e6, 0.5, 1.5, 0.36, 0.72},
		// Nothing ran: the tokens' split.
		{"no engine time", 1, 100, []gpuPool{{gpus: 1, held: 3600}}, 1e6, 3e6, 0.25, 0.25, 0.09, 0.12},
		// No tokens: zero, never a division by zero.
		{"no tokens", 1, 100, []gpuPool{{gpus: 1, held: 10, busy: half}}, 0, 0, 0, 0, 0, 0},
	}
	for _, tt := range tests {
		c := costOf(tt.usd, tt.watts, tt.pools, tt.in, tt.out)
		got := []float64{c.inputPerM(), c.outputPerM(), c.joulesPerToken(), c.joulesPerOutput()}
		want := []float64{tt.inPerM, tt.outPerM, tt.jTok, tt.jOut}
		for i := range got {
			if !near(got[i], want[i]) || math.IsNaN(got[i]) {
				t.Errorf("%s: figure %d = %g, want %g (%+v)", tt.name, i, got[i], want[i], c)
			}
		}
		if !near(c.inputUSD+c.outputUSD, func() float64 {
			s := 0.0
			for _, p := range tt.pools {
				s += tt.usd * float64(p.gpus) * p.held / 3600
			}
			return s
		}()) {
			t.Errorf("%s: $%g + $%g is not what the GPU-hours cost", tt.name, c.inputUSD, c.outputUSD)
		}
	}
}

// A step's time goes to its phases by token count.
func TestBusySplitsAStepByTokens(t *testing.T) {
	var b cluster.Busy
	b.AddSteps([]scheduler.Step{
		{Duration: 0.010, PrefillTokens: 300, DecodeTokens: 100},
		{Duration: 0.004, DecodeTokens: 64},
		{Duration: 0.050, PrefillTokens: 8192},
		{Duration: 0.001}, // nothing ran
	})
	if !near(b.Prefill, 0.0075+0.050) || !near(b.Decode, 0.0025+0.004) {
		t.Fatalf("busy %+v, want prefill 0.0575 s and decode 0.0065 s", b)
	}
	c := stepsCost(3600, 1, 1, []scheduler.Step{
		{Start: 1, Duration: 0.5, PrefillTokens: 1000, FirstTokens: []int{7}},
		{Start: 1.5, Duration: 0.5, DecodeTokens: 1},
	})
	// Held 1 s at $1 a second: $0.50 each; 1,000 input, 2 output tokens.
	if c.input != 1000 || c.output != 2 || !near(c.inputUSD, 0.5) || !near(c.outputUSD, 0.5) || !near(c.joules, 1) {
		t.Fatalf("stepsCost %+v", c)
	}
}

func TestCostRatesDefaultToTheGPU(t *testing.T) {
	l := &Lesson{Params: []Param{priceParam, powerParam}}
	g := hardware.MustGPU("l4")
	usd, w := costRates(l.Defaults(), g)
	if usd != g.USDPerHour || w != g.BoardPowerW {
		t.Errorf("defaults: $%g, %g W; want the L4's $%g, %g W", usd, w, g.USDPerHour, g.BoardPowerW)
	}
	v, errs := l.Resolve(map[string]string{"usd_per_gpu_hour": "2.5", "board_power_w": "300"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if usd, w := costRates(v, g); usd != 2.5 || w != 300 {
		t.Errorf("set: $%g, %g W", usd, w)
	}
	if usd, w := costRates(Values{}, g); usd != g.USDPerHour || w != g.BoardPowerW {
		t.Errorf("without the knobs: $%g, %g W", usd, w)
	}
}

func TestSig4AndTexts(t *testing.T) {
	for _, c := range []struct {
		x    float64
		sig  float64
		text string
	}{{0.0123456, 0.01235, "0.0123"}, {1.23456, 1.235, "1.23"}, {312.49, 312.5, "312"}, {12345, 12340, "12345"}, {0, 0, "0"}} {
		if got := sig4(c.x); got != c.sig {
			t.Errorf("sig4(%g) = %g, want %g", c.x, got, c.sig)
		}
		if got := sig3Text(c.x); got != c.text {
			t.Errorf("sig3Text(%g) = %q, want %q", c.x, got, c.text)
		}
	}
}

// costLessons are the registered lessons that take the cost knobs.
func costLessons() []*Lesson {
	var out []*Lesson
	for _, l := range All() {
		if _, ok := l.Param(priceParam.Key); ok {
			out = append(out, l)
		}
	}
	return out
}

// Every lesson with the cost knobs refuses a value out of range with a
// ParamError naming the knob, reports the four cost figures (whatever
// prefix or suffix names its server), and takes both knobs.
func TestCostKnobsAndMetrics(t *testing.T) {
	ls := costLessons()
	if len(ls) == 0 {
		t.Skip("no lesson takes the cost knobs")
	}
	for _, l := range ls {
		if _, ok := l.Param(powerParam.Key); !ok {
			t.Errorf("%s takes %s but not %s", l.Slug, priceParam.Key, powerParam.Key)
		}
		for _, bad := range []map[string]string{{"usd_per_gpu_hour": "-1"}, {"usd_per_gpu_hour": "100.5"}, {"board_power_w": "2001"}, {"board_power_w": "-5"}} {
			_, _, err := l.Run(bad)
			var pe *ParamError
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

// The cost is arithmetic over the run: doubling the price doubles every
// dollar figure and leaves the energy as it was; doubling the power
// doubles the energy and leaves the dollars. The default (0) is the GPU's
// cited price. Checked on the cheapest lesson that takes the knobs.
func TestCostScalesWithPriceAndPower(t *testing.T) {
	ls := costLessons()
	if len(ls) == 0 {
		t.Skip("no lesson takes the cost knobs")
	}
	l := ls[0]
	for _, c := range ls {
		if c.MaxWork < l.MaxWork {
			l = c
		}
	}
	run := func(set map[string]string) *Script {
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
		if m.Better != LowerIsBetter {
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
func formatKnob(x float64) string { return Param{Kind: Float}.format(x) }
