package kit

import (
	"math"
	"testing"

	"github.com/inferlab/inferlab/core/cluster"
	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/lessons"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// The cost formulas on cases worked by hand.
func TestCostOfByHand(t *testing.T) {
	half := cluster.Busy{Prefill: 900, Decode: 900}
	tests := []struct {
		name                        string
		usd, watts                  float64
		pools                       []GPUPool
		in, out                     int64
		inPerM, outPerM, jTok, jOut float64
	}{
		// $2 an hour for an hour, busy half on each phase: $1 each; 700 W ×
		// 3,600 s = 2.52 MJ over 2 M tokens.
		{"one GPU, even split", 2, 700, []GPUPool{{GPUs: 1, Held: 3600, Busy: half}}, 1e6, 1e6, 1, 1, 1.26, 2.52},
		// Four GPUs for half an hour at $3: $6, three quarters of the engine
		// time on prefill: $4.50 to 3 M input tokens, $1.50 to 0.5 M output.
		{"four GPUs, 3:1", 3, 400, []GPUPool{{GPUs: 4, Held: 1800, Busy: cluster.Busy{Prefill: 30, Decode: 10}}}, 3e6, 5e5, 1.5, 3, 400 * 4 * 1800 / 3.5e6, 400 * 4 * 1800 / 5e5},
		// Disaggregated: 2 prefill GPUs and 1 decode GPU for 1,800 s at $4:
		// the prefill pool's $4 to input, the decode pool's $2 to output.
		{"two pools", 4, 1000, []GPUPool{{GPUs: 2, Held: 1800, Busy: cluster.Busy{Prefill: 100}}, {GPUs: 1, Held: 1800, Busy: cluster.Busy{Decode: 50}}}, 2e6, 1e6, 2, 2, 1000 * 3 * 1800 / 3e6, 1000 * 3 * 1800 / 1e6},
		// A pool that never ran is shared like the run: 1 GPU idle beside 1
		// busy 1:3, at $1 for 3,600 s each: $0.50 to input, $1.50 to output.
		{"an idle pool", 1, 100, []GPUPool{{GPUs: 1, Held: 3600, Busy: cluster.Busy{Prefill: 1, Decode: 3}}, {GPUs: 1, Held: 3600}}, 1e6, 1e6, 0.5, 1.5, 0.36, 0.72},
		// Nothing ran: the tokens' split.
		{"no engine time", 1, 100, []GPUPool{{GPUs: 1, Held: 3600}}, 1e6, 3e6, 0.25, 0.25, 0.09, 0.12},
		// No tokens: zero, never a division by zero.
		{"no tokens", 1, 100, []GPUPool{{GPUs: 1, Held: 10, Busy: half}}, 0, 0, 0, 0, 0, 0},
	}
	for _, tt := range tests {
		c := CostOf(tt.usd, tt.watts, tt.pools, tt.in, tt.out)
		got := []float64{c.InputPerM(), c.OutputPerM(), c.JoulesPerToken(), c.JoulesPerOutput()}
		want := []float64{tt.inPerM, tt.outPerM, tt.jTok, tt.jOut}
		for i := range got {
			if !near(got[i], want[i]) || math.IsNaN(got[i]) {
				t.Errorf("%s: figure %d = %g, want %g (%+v)", tt.name, i, got[i], want[i], c)
			}
		}
		if !near(c.InputUSD+c.OutputUSD, func() float64 {
			s := 0.0
			for _, p := range tt.pools {
				s += tt.usd * float64(p.GPUs) * p.Held / 3600
			}
			return s
		}()) {
			t.Errorf("%s: $%g + $%g is not what the GPU-hours cost", tt.name, c.InputUSD, c.OutputUSD)
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
	c := StepsCost(3600, 1, 1, []scheduler.Step{
		{Start: 1, Duration: 0.5, PrefillTokens: 1000, FirstTokens: []int{7}},
		{Start: 1.5, Duration: 0.5, DecodeTokens: 1},
	})
	// Held 1 s at $1 a second: $0.50 each; 1,000 input, 2 output tokens.
	if c.input != 1000 || c.Output != 2 || !near(c.InputUSD, 0.5) || !near(c.OutputUSD, 0.5) || !near(c.joules, 1) {
		t.Fatalf("stepsCost %+v", c)
	}
}

func TestCostRatesDefaultToTheGPU(t *testing.T) {
	l := &lessons.Lesson{Params: []lessons.Param{PriceParam, PowerParam}}
	g := hardware.MustGPU("l4")
	usd, w := CostRates(l.Defaults(), g)
	if usd != g.USDPerHour || w != g.BoardPowerW {
		t.Errorf("defaults: $%g, %g W; want the L4's $%g, %g W", usd, w, g.USDPerHour, g.BoardPowerW)
	}
	v, errs := l.Resolve(map[string]string{"usd_per_gpu_hour": "2.5", "board_power_w": "300"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if usd, w := CostRates(v, g); usd != 2.5 || w != 300 {
		t.Errorf("set: $%g, %g W", usd, w)
	}
	if usd, w := CostRates(lessons.Values{}, g); usd != g.USDPerHour || w != g.BoardPowerW {
		t.Errorf("without the knobs: $%g, %g W", usd, w)
	}
}

func TestSig4AndTexts(t *testing.T) {
	for _, c := range []struct {
		x    float64
		sig  float64
		text string
	}{{0.0123456, 0.01235, "0.0123"}, {1.23456, 1.235, "1.23"}, {312.49, 312.5, "312"}, {12345, 12340, "12345"}, {0, 0, "0"}} {
		if got := Sig4(c.x); got != c.sig {
			t.Errorf("sig4(%g) = %g, want %g", c.x, got, c.sig)
		}
		if got := Sig3Text(c.x); got != c.text {
			t.Errorf("sig3Text(%g) = %q, want %q", c.x, got, c.text)
		}
	}
}
