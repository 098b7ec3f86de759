package kit

import (
	"math"
	"strconv"

	"github.com/inferlab/inferlab/core/cluster"
	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/scene"
)

// The cost kit: what a serving lesson's run cost in dollars and in energy,
// computed from the run after it ends (arithmetic over its steps and
// requests, no simulated work). The rule, stated once
// (docs/SOURCES.md#cost-split): every GPU the run holds (workers × TP,
// both pools when disaggregated) is paid usd_per_gpu_hour and draws
// board_power_w from the first arrival to the last token; each engine
// step's time goes to its prefill and its decode tokens in proportion to
// their counts, time with nothing to run is shared like the busy time, and
// a pool that only prefills or only decodes is charged to its phase's
// tokens, as InferenceX splits cost per million input and output tokens.
// The energy is an upper bound: a GPU at its board power (TDP) for every
// second it is held.

// CostWord is the rule in one sentence, for the lessons' narration.
const CostWord = "each engine step's GPU time is split between its prompt and output tokens in proportion to their counts, and time the GPUs sit idle is shared the same way"

// The cost knobs, added to every serving lesson: 0 takes the chosen GPU's
// cited figure (core/hardware, docs/SOURCES.md#gpu-prices).
var (
	PriceParam = lessons.Param{Key: "usd_per_gpu_hour", Label: "Price per GPU-hour", Unit: "$",
		Help: "What one GPU costs an hour; 0 for the chosen GPU's cited on-demand list price (H100 SXM $3.99 on Lambda's list). Public on-demand prices for one H100 SXM ranged from $2.69 to $12.29 in one comparison, so type your own.",
		Kind: lessons.Float, Default: 0, Min: 0, Max: 100, Step: 0.01, Zero: "the chosen GPU's cited price"}
	PowerParam = lessons.Param{Key: "board_power_w", Label: "Power per GPU", Unit: "W",
		Help: "Power each GPU draws while the run holds it, for energy per token; 0 for the chosen GPU's datasheet maximum (TDP: H100 SXM 700 W), which makes the energy an upper bound.",
		Kind: lessons.Float, Default: 0, Min: 0, Max: 2000, Step: 1, Zero: "the chosen GPU's board power"}
)

// CostRates are the price per GPU-hour and the power per GPU the values
// ask for, each the GPU's cited figure when its knob is 0 or absent.
func CostRates(v lessons.Values, g hardware.GPU) (usdPerHour, watts float64) {
	usdPerHour, watts = g.USDPerHour, g.BoardPowerW
	if v.Has(PriceParam.Key) && v.Float(PriceParam.Key) > 0 {
		usdPerHour = v.Float(PriceParam.Key)
	}
	if v.Has(PowerParam.Key) && v.Float(PowerParam.Key) > 0 {
		watts = v.Float(PowerParam.Key)
	}
	return usdPerHour, watts
}

// CheckCostRates refuses a run whose GPU has no cited price or board
// power (a reader's own GPU, core/hardware.RegisterCustomGPU) while its
// knob asks for the cited figure: a cost of $0 would read as a result.
// Every lesson with the cost knobs checks it (CheckingCosts).
func CheckCostRates(v lessons.Values) error {
	if !v.Has(PriceParam.Key) || !v.Has(GPUParam.Key) {
		return nil
	}
	g, err := hardware.GPUByID(v.Choice(GPUParam.Key))
	if err != nil {
		return nil // the lesson's own check names the GPU
	}
	if g.USDPerHour <= 0 && v.Float(PriceParam.Key) <= 0 {
		return &lessons.ParamError{Key: PriceParam.Key, Value: v.TextOf(PriceParam.Key), With: []string{GPUParam.Key},
			Want: "a price above 0: " + g.ID + " has no cited list price, so type what an hour of it costs"}
	}
	if v.Has(PowerParam.Key) && g.BoardPowerW <= 0 && v.Float(PowerParam.Key) <= 0 {
		return &lessons.ParamError{Key: PowerParam.Key, Value: v.TextOf(PowerParam.Key), With: []string{GPUParam.Key},
			Want: "a power above 0: " + g.ID + " has no cited board power, so type what it draws"}
	}
	return nil
}

// CheckingCosts is the Check of a lesson with the cost knobs: check (none
// when nil), then CheckCostRates.
func CheckingCosts(check func(lessons.Values) error) func(lessons.Values) error {
	return func(v lessons.Values) error {
		if check != nil {
			if err := check(v); err != nil {
				return err
			}
		}
		return CheckCostRates(v)
	}
}

// GPUPool is one group of GPUs a run holds: how many, for how long
// (seconds), and the engine time their workers spent on each phase
// (summed over workers; only its split is read).
type GPUPool struct {
	GPUs int
	Held float64
	Busy cluster.Busy
}

// StepsPool is a pool of gpus held for held seconds whose engine ran
// steps.
func StepsPool(gpus int, held float64, steps ...[]scheduler.Step) GPUPool {
	p := GPUPool{GPUs: gpus, Held: held}
	for _, s := range steps {
		p.Busy.AddSteps(s)
	}
	return p
}

// ServedTokens are the prompt and output tokens of finished requests and
// the time from the first arrival to the last token (the makespan, while
// which the GPUs are held).
func ServedTokens(ms []scheduler.RequestMetrics) (input, output int64, held float64) {
	start, end := math.Inf(1), math.Inf(-1)
	for _, m := range ms {
		input += int64(m.Prompt)
		output += int64(m.Output)
		start, end = min(start, m.Arrival), max(end, m.Arrival+m.E2E)
	}
	if len(ms) == 0 {
		return 0, 0, 0
	}
	return input, output, end - start
}

// RunCost is what a run cost: the rates used, the GPU-seconds held, the
// dollars charged to input and to output tokens, the energy in joules and
// the tokens served.
type RunCost struct {
	USDPerHour, Watts   float64
	GPUSeconds          float64
	InputUSD, OutputUSD float64
	joules              float64
	input, Output       int64
}

// CostOf prices pools at usdPerHour and watts per GPU for input prompt
// and output generated tokens. Each pool's dollars are split by its own
// engine time; a pool that never ran is split like the whole run (and a
// run that never ran by its token counts).
func CostOf(usdPerHour, watts float64, pools []GPUPool, input, output int64) RunCost {
	c := RunCost{USDPerHour: usdPerHour, Watts: watts, input: input, Output: output}
	var all cluster.Busy
	for _, p := range pools {
		all.Prefill += p.Busy.Prefill
		all.Decode += p.Busy.Decode
	}
	fallback := 0.0
	switch {
	case all.Prefill+all.Decode > 0:
		fallback = all.Prefill / (all.Prefill + all.Decode)
	case input+output > 0:
		fallback = float64(input) / float64(input+output)
	}
	for _, p := range pools {
		seconds := float64(p.GPUs) * p.Held
		usd := usdPerHour * seconds / 3600
		share := fallback
		if t := p.Busy.Prefill + p.Busy.Decode; t > 0 {
			share = p.Busy.Prefill / t
		}
		c.GPUSeconds += seconds
		c.InputUSD += usd * share
		c.OutputUSD += usd * (1 - share)
	}
	c.joules = watts * c.GPUSeconds
	return c
}

// perMillion is usd per million of n tokens, 0 without tokens.
func perMillion(usd float64, n int64) float64 {
	if n <= 0 {
		return 0
	}
	return usd * 1e6 / float64(n)
}

// per is x per token of n, 0 without tokens.
func per(x float64, n int64) float64 {
	if n <= 0 {
		return 0
	}
	return x / float64(n)
}

// InputPerM, OutputPerM, JoulesPerToken and JoulesPerOutput are the
// figures the metrics report, unrounded.
func (c RunCost) InputPerM() float64       { return perMillion(c.InputUSD, c.input) }
func (c RunCost) OutputPerM() float64      { return perMillion(c.OutputUSD, c.Output) }
func (c RunCost) JoulesPerToken() float64  { return per(c.joules, c.input+c.Output) }
func (c RunCost) JoulesPerOutput() float64 { return per(c.joules, c.Output) }

// Sig4 rounds x to four significant digits: costs per token span many
// orders of magnitude, so a fixed number of decimals would lose them.
func Sig4(x float64) float64 {
	y, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 4, 64), 64)
	return y
}

// Metrics are the run's cost figures, each lower is better.
func (c RunCost) Metrics() []lessons.Metric { return c.MetricsAt("") }

// MetricsAt are the cost figures with where appended to their labels
// (" at the highest rate"), for a lesson that runs several settings.
func (c RunCost) MetricsAt(where string) []lessons.Metric {
	return []lessons.Metric{
		{Key: "usd_per_m_input_tokens", Label: "GPU cost per million input (prompt) tokens" + where, Unit: "$/M tokens", Value: Sig4(c.InputPerM()), Better: lessons.LowerIsBetter},
		{Key: "usd_per_m_output_tokens", Label: "GPU cost per million output tokens" + where, Unit: "$/M tokens", Value: Sig4(c.OutputPerM()), Better: lessons.LowerIsBetter},
		{Key: "joules_per_token", Label: "GPU energy per token, input and output, at board power (an upper bound)" + where, Unit: "J/token", Value: Sig4(c.JoulesPerToken()), Better: lessons.LowerIsBetter},
		{Key: "joules_per_output_token", Label: "GPU energy per output token at board power (an upper bound)" + where, Unit: "J/token", Value: Sig4(c.JoulesPerOutput()), Better: lessons.LowerIsBetter},
	}
}

// MetricsOf are the cost figures of one of several servers a lesson
// compares, keyed "KEY_usd_per_m_output_tokens" and labelled with its name.
func (c RunCost) MetricsOf(key, name string) []lessons.Metric {
	ms := c.Metrics()
	for i := range ms {
		ms[i].Key = key + "_" + ms[i].Key
		ms[i].Label = name + ": " + ms[i].Label
	}
	return ms
}

// MetricsSuffixed are MetricsOf with the key's suffix after the figure:
// "usd_per_m_output_tokens_kv_aware".
func (c RunCost) MetricsSuffixed(suffix, name string) []lessons.Metric {
	ms := c.Metrics()
	for i := range ms {
		ms[i].Key += suffix
		ms[i].Label = name + ": " + ms[i].Label
	}
	return ms
}

// StepsCost prices a run that stops before its requests finish (a
// scenario cut after its moment): gpus held from the first step's start to
// the last one's end, the tokens those steps computed as input (prompt
// chunks, recomputation included) and generated as output (decodes and
// the first tokens prefills produced).
func StepsCost(usdPerHour, watts float64, gpus int, steps []scheduler.Step) RunCost {
	if len(steps) == 0 {
		return CostOf(usdPerHour, watts, nil, 0, 0)
	}
	var in, out int64
	for _, st := range steps {
		in += int64(st.PrefillTokens)
		out += int64(st.DecodeTokens + len(st.FirstTokens))
	}
	last := steps[len(steps)-1]
	held := last.Start + last.Duration - steps[0].Start
	return CostOf(usdPerHour, watts, []GPUPool{StepsPool(gpus, held, steps)}, in, out)
}

// USDText is a dollar figure with three significant digits, never in
// exponent form: "$0.0412", "$1.27", "$312".
func USDText(x float64) string { return "$" + Sig3Text(x) }

// Sig3Text is x with three significant digits in plain decimals.
func Sig3Text(x float64) string {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return "0"
	}
	decimals := max(0, 2-int(math.Floor(math.Log10(math.Abs(x)))))
	return strconv.FormatFloat(x, 'f', decimals, 64)
}

// Cost chart series names (marks refer to them).
const (
	SeriesUSDOutput = "$ per million output tokens"
	seriesUSDInput  = "$ per million input tokens"
	seriesJoules    = "J per output token"
)

// CostCharts plot what each run of a load sweep cost against its offered
// rate (log x): dollars per million output and input tokens, and joules
// per output token.
func CostCharts(rates []float64, costs []RunCost) (usd, energy *scene.Chart) {
	usd = &scene.Chart{Type: scene.Line, XLabel: "offered load", XUnit: "req/s", XLog: true, YLabel: "GPU cost", YUnit: "$/M tokens", YLog: true,
		Series: []scene.Series{{Name: SeriesUSDOutput}, {Name: seriesUSDInput}},
		Note:   "What a million tokens cost at each rate: the GPUs are paid for every second they are held, busy or not."}
	energy = &scene.Chart{Type: scene.Line, XLabel: "offered load", XUnit: "req/s", XLog: true, YLabel: "energy", YUnit: "J/token", YLog: true,
		Series: []scene.Series{{Name: seriesJoules}},
		Note:   "Board power times the seconds held, per output token: an upper bound, as a waiting GPU draws less."}
	for i, c := range costs {
		x := Round2(rates[i])
		usd.Series[0].X, usd.Series[0].Y = append(usd.Series[0].X, x), append(usd.Series[0].Y, Sig4(c.OutputPerM()))
		usd.Series[1].X, usd.Series[1].Y = append(usd.Series[1].X, x), append(usd.Series[1].Y, Sig4(c.InputPerM()))
		energy.Series[0].X, energy.Series[0].Y = append(energy.Series[0].X, x), append(energy.Series[0].Y, Sig4(c.JoulesPerOutput()))
	}
	return usd, energy
}

// Cheapest is the index of the run with the lowest cost per million
// output tokens (the first of equals).
func Cheapest(costs []RunCost) int {
	best := 0
	for i, c := range costs {
		if c.OutputPerM() < costs[best].OutputPerM() {
			best = i
		}
	}
	return best
}

// CostTrend says how the cost per output token moves past the cheapest
// rate: still falling at the last one, levelling off (within 5%), or
// rising again.
func CostTrend(costs []RunCost) string {
	best, last := Cheapest(costs), len(costs)-1
	switch {
	case best == last:
		return "is still falling at the highest rate: raise the rate to see where it stops"
	case costs[last].OutputPerM() <= 1.05*costs[best].OutputPerM():
		return "levels off past it: more load adds queueing, not tokens per second"
	}
	return "rises again past it: the same GPU-seconds buy fewer tokens"
}
