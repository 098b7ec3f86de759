package kit

import (
	"fmt"
	"math"
	"strings"

	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/core/slo"
	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/lessons"
)

// The capacity search the serving lessons share: core/slo's steady-state
// search (slo.Steady) at one precision, so that measuring, disaggregation
// and the sandbox answer "what rate does this sustain under the SLO?" the
// same way, and within the page's budget.
//
// The precision. Each seed bisects to SearchTolerance (5%, twice
// Sarathi-Serve's 2.5%) with runs long enough to expose a 5% overload,
// and the answer is the median of SearchSeeds (5) seeds. Tried on
// measuring's Sarathi-Serve setup (Mistral-7B on an A100, Sarathi-Serve's
// chat lengths, p99 TBT ≤ 100 ms), 2.5% on one seed costs about four times
// as much CPU as 5% on one seed and its answers over seeds 1–5 span 4.5%;
// the median of five seeds at 5% spans 1.5% (chunks of 512) and 2.1%
// (8,192) over five windows of seeds, at about 0.5 s and 0.9 s of CPU.
//
// The cost. A search spends at most SearchBudget of search cost, its
// probes' CPU-calibrated work, and stops at the first probe that would
// not fit (slo.SteadyCapacity.Truncated; the lessons say so and report the
// seeds finished), so every setting a lesson accepts stays within the
// native bound of 2 s whatever the search finds.
const (
	SearchTolerance = 0.05
	SearchSeeds     = 5
	// SearchSpan bounds the rates probed to [start / SearchSpan, start ×
	// SearchSpan] around the system's estimated saturation rate.
	SearchSpan = 64
	// SearchMinRequests and SearchMaxRequests bound a probe's run
	// (slo.Steady's rule gives 800 requests judged at the median at 5%).
	SearchMinRequests = 100
	SearchMaxRequests = 3200
)

// The search cost's weights, calibrated on this repository's scheduler runs
// (the calibration runs of measuring at chunks of 512 and 8,192 on an
// A100, 2 and 1,024 sequences, graph_mode none at TP 1 and 8): a step
// costs about 0.8 µs of CPU to schedule and price, a step priced kernel by
// kernel about 0.04 µs more per unit of StreamedWorkTP, a request advanced
// by a step about 0.023 µs. In units of one request advanced:
const (
	searchStepCost     = 35
	searchStreamedCost = 2
)

// SearchBudget is the most search cost a lesson's run and its capacity
// searches may spend together (the run's share is taken first, Spend.Take):
// about 1.7 s of CPU at 0.023 µs a unit. Measuring's Sarathi-Serve setup
// (both budgets, five seeds each, a two-rate sweep) spends about 72
// million.
const SearchBudget = 75_000_000

// SearchMaxWork bounds the Script.Work a lesson's searches count: their
// The search cost never falls below the work counted (a step counts StepWork ≤
// searchStepCost, a streamed one StreamedWorkTP ≤ searchStreamedCost ×
// StreamedWorkTP), the budget stops them at SearchBudget, and the last
// probe may overshoot its estimate, taken here as at most as much again.
const SearchMaxWork = 2 * SearchBudget

// Served converts a run's finished requests for core/slo's steady-state
// judgement: arrival, latencies and the scheduling delay (the time from
// arrival to the step that first scheduled the request).
func Served(ms []scheduler.RequestMetrics) []slo.Served {
	out := make([]slo.Served, len(ms))
	for i, m := range ms {
		out[i] = slo.Served{Arrival: m.Arrival, Latency: slo.Latency{TTFT: m.TTFT, TPOT: m.TPOT, Gaps: m.ITL, Wait: m.Scheduled - m.Arrival}}
	}
	return out
}

// WorkAndSearchCost is PricedStepsWork of a scheduler run priced by e at
// these limits and what the run costs a capacity search's budget (its
// search cost): each request advanced 1, each step searchStepCost, each
// step the dispatcher streams searchStreamedCost × StreamedWorkTP more. It
// reads which steps the dispatcher streams once for both.
func (e *Engine) WorkAndSearchCost(steps []scheduler.Step, seqs, budget int) (work, cost int64) {
	streamed, per := e.streamedSteps(steps, seqs, budget), StreamedWorkTP(e.Model, e.TP)
	cost = searchStepCost*int64(len(steps)) + searchStreamedCost*per*streamed
	for _, st := range steps {
		cost += int64(st.Running)
	}
	return StepsWork(steps) + streamed*per, cost
}

// Spend is what a lesson's capacity searches may still spend, and what
// they spent per request served so far (the estimate of the next probe).
type Spend struct {
	Left       int64
	perRequest float64
}

// NewSpend is a budget of budget units (SearchBudget for a lesson whose
// probes are scheduler runs priced by WorkAndSearchCost).
func NewSpend(budget int64) *Spend { return &Spend{Left: budget} }

// Take spends cost outside the searches (the lesson's own run).
func (s *Spend) Take(cost int64) { s.Left -= cost }

// Afford reports whether a probe of n requests fits what is left, at the
// costliest rate per request seen so far (the first probe always runs
// while anything is left).
func (s *Spend) Afford(_ float64, n int) bool {
	return s.Left > 0 && s.perRequest*float64(n) <= float64(s.Left)
}

// Charge records a probe of n requests that cost cost.
func (s *Spend) Charge(cost int64, n int) {
	s.Left -= cost
	if n > 0 {
		s.perRequest = max(s.perRequest, float64(cost)/float64(n))
	}
}

// Precision is how closely a search brackets each seed's capacity and
// over how many seeds it takes the median.
type Precision struct {
	Tolerance float64
	Seeds     int
}

// Precise is the shared search's precision (SearchTolerance,
// SearchSeeds); Quick is the cluster lessons' in the page's budget: 10%
// on one seed, runs a quarter as long, about a twentieth of the cost.
var (
	Precise = Precision{Tolerance: SearchTolerance, Seeds: SearchSeeds}
	Quick   = Precision{Tolerance: 0.10, Seeds: 1}
)

// SearchParam picks a cluster lesson's search precision: a cluster run
// costs about ten times a single engine's per request (each worker hashes
// every prompt block for its prefix cache), so the precise search does not
// fit the page's second.
var SearchParam = lessons.Param{Key: "capacity_search", Label: "Capacity search",
	Help: "quick: within 10% on one seed, within the page's budget (one seed's answer can lie a fifth from another's). precise: within 5%, the median of 5 seeds, as the measuring lesson searches: several seconds natively and longer in the page, which keeps its last figures, marked stale, until it is done.",
	Kind: lessons.Choice, Choices: []string{"quick", "precise"}}

// PrecisionOf is the precision the capacity_search knob picks (Precise
// without the knob).
func PrecisionOf(v lessons.Values) Precision {
	if v.Has("capacity_search") && v.Choice("capacity_search") == "quick" {
		return Quick
	}
	return Precise
}

// NewSearch is the shared search at precision p from start (req/s, the
// system's estimated saturation rate) over the seeds seed, seed+1, …,
// spending from spend.
func NewSearch(p Precision, start float64, seed uint64, spend *Spend) slo.Steady {
	seeds := make([]uint64, p.Seeds)
	for i := range seeds {
		seeds[i] = seed + uint64(i)
	}
	return slo.Steady{Start: start, Min: start / SearchSpan, Max: start * SearchSpan, Tolerance: p.Tolerance, Seeds: seeds,
		MinRequests: SearchMinRequests, MaxRequests: SearchMaxRequests, Afford: spend.Afford}
}

// PooledMinSeeds and PooledMaxSeeds are the fewest seeds whose probes may
// show a pooled search's answer steady and the most it may use (its budget
// usually stops it sooner). With fewer than ten workloads the probes'
// scatter about the line can look small by chance: on Dynamo's recipe a
// search that stopped at five seeds claimed 3.19–3.29 req/s where 29 seeds
// of another setting put the capacity at 3.37–3.59.
const (
	PooledMinSeeds = 20
	PooledMaxSeeds = 64
)

// NewPooledSearch is the shared search at precision p, its seeds pooled
// (slo.Steady.Pooled), for a lesson whose single workloads' answers
// scatter more than the tolerance: at least PooledMinSeeds seeds and at
// most PooledMaxSeeds, drawn from seed, seed + 2³², seed + 2·2³², …, so that no
// two seed settings share a workload. A precision of one seed is the
// first seed's bisection alone, as NewSearch's.
func NewPooledSearch(p Precision, start float64, seed uint64, spend *Spend) slo.Steady {
	s := NewSearch(p, start, seed, spend)
	if p.Seeds == 1 {
		return s
	}
	s.Seeds = make([]uint64, PooledMaxSeeds)
	for i := range s.Seeds {
		s.Seeds[i] = seed + uint64(i)<<32
	}
	s.Pooled, s.MinSeeds = true, PooledMinSeeds
	return s
}

// StartRate is where a capacity search of an engine begins: an estimate of
// the rate it sustains serving requests like sample (its lengths), under
// o, from the system alone. The lower of two estimates:
//
//   - throughput: a request's prefill alone, chunked at budget, plus its
//     share of the decode steps of a full batch (max_num_seqs, or what
//     kvTokens of KV hold);
//   - stalls, when o bounds the p99 gap between tokens: a step carrying a
//     prefill chunk that alone takes longer than the limit stalls every
//     decode in it. With k such chunks per request and a decode step of τ,
//     the share of gaps that stall is λ·k·τ (λk stalled steps a second,
//     each holding the λ·O·τ running requests' gaps, of λ·O gaps a second),
//     so 1% of them stall at λ = 0.01 / (k·τ).
//
// Only the search's first probe depends on it.
func StartRate(t scheduler.Timer, sample []workload.Request, seqs int, kvTokens int64, budget int, o slo.Objective) float64 {
	return StartRateReusing(t, sample, seqs, kvTokens, budget, o, 0)
}

// StartRateReusing is StartRate for engines whose prefix caches find the
// share reused of every prompt's tokens already computed (PrefixReuse of
// the sample): each prompt prefills only the rest, after its cached
// prefix.
func StartRateReusing(t scheduler.Timer, sample []workload.Request, seqs int, kvTokens int64, budget int, o slo.Objective, reused float64) float64 {
	if len(sample) == 0 {
		return 1
	}
	var prompt, output, stalls float64
	for _, q := range sample {
		prompt, output = prompt+float64(q.Prompt), output+float64(q.Output)
		for done := int(reused * float64(q.Prompt)); done < q.Prompt; done += budget {
			if o.P99TBT > 0 && t.StepSeconds([]scheduler.Work{{NewTokens: min(budget, q.Prompt-done), Context: done, Prefill: true}}) > o.P99TBT {
				stalls++
			}
		}
	}
	n := float64(len(sample))
	prompt, output, stalls = prompt/n, output/n, stalls/n
	batch := int(min(float64(seqs), float64(kvTokens)/max(1, prompt+output)))
	batch = max(1, batch)
	decodes := make([]scheduler.Work, batch)
	for i := range decodes {
		decodes[i] = scheduler.Work{NewTokens: 1, Context: int(prompt + output/2)}
	}
	perRequest := prefillAfter(t, int(reused*prompt), int(prompt), budget) + output*t.StepSeconds(decodes)/float64(batch)
	rate := 1.0
	if perRequest > 0 {
		rate = 1 / perRequest
	}
	if stalls > 0 {
		tau := t.StepSeconds([]scheduler.Work{{NewTokens: 1, Context: int(prompt)}})
		rate = min(rate, 0.01/(stalls*tau))
	}
	return rate
}

// prefillAfter is PrefillSeconds for a prompt of n tokens whose first
// cached are already in the cache: its chunks from there on.
func prefillAfter(t scheduler.Timer, cached, n, budget int) float64 {
	total := 0.0
	for done := cached; done < n; {
		k := min(budget, n-done)
		total += t.StepSeconds([]scheduler.Work{{NewTokens: k, Context: done, Prefill: true}})
		done += k
	}
	return total
}

// PrefixReuse is the share of w's prompt tokens in leading runs that an
// earlier prompt of w already had: what a prefix cache that kept
// everything would find. A prompt's runs are its Segments, or else its
// group's shared prefix (PrefixGroup, PrefixLen).
func PrefixReuse(w []workload.Request) float64 {
	seen := map[workload.Segment]bool{}
	groups := map[int]int{} // a group's shared prefix, by the first prompt seen
	var reused, total float64
	for _, q := range w {
		total += float64(q.Prompt)
		if len(q.Segments) == 0 {
			if n, ok := groups[q.PrefixGroup]; ok && q.PrefixGroup >= 0 {
				reused += float64(min(n, q.PrefixLen))
			} else {
				groups[q.PrefixGroup] = q.PrefixLen
			}
			continue
		}
		leading := true
		for _, s := range q.Segments {
			if leading && seen[s] {
				reused += float64(s.Len)
			} else {
				leading = false
			}
			seen[s] = true
		}
	}
	return reused / max(1, total)
}

// CapacityText states a search's answer: "3.35 req/s (median of 5 seeds,
// 3.28–3.41)", a bound when it lies outside the range searched, and what
// a truncated search finished.
func CapacityText(c slo.SteadyCapacity, s slo.Steady) string {
	var t string
	switch {
	case c.Truncated && c.Complete() == 0 && c.Rate == 0:
		if c.Probes() == 0 {
			return "not searched: the lesson's work bound leaves no room for one probe"
		}
		lowest := math.Inf(1)
		for _, sc := range c.Seeds {
			for _, r := range sc.Runs {
				lowest = min(lowest, r.Rate)
			}
		}
		return fmt.Sprintf("below %s: the lesson's work bound stopped the search after %d %s, none of which met the SLO", RateText(lowest), c.Probes(), Plural(c.Probes(), "probe", "probes"))
	case c.BelowRange():
		return fmt.Sprintf("below %s (even the lowest rate searched misses the SLO)", RateText(s.Min))
	case c.AboveRange():
		t = fmt.Sprintf("at least %s (the highest rate searched meets the SLO)", RateText(s.Max))
	case s.Pooled && len(c.Seeds) > 1:
		t = fmt.Sprintf("%s (95%% interval %s–%s, %d seeds pooled)", RateText(c.Rate), Sig3Text(c.Low), Sig3Text(c.High), len(c.Seeds))
	case c.Complete() > 1:
		t = fmt.Sprintf("%s (median of %d seeds, %s–%s)", RateText(c.Rate), c.Complete(), Sig3Text(c.Low), Sig3Text(c.High))
	case c.Complete() == 0:
		// No seed finished: the first one's highest rate met, a lower bound.
		t = fmt.Sprintf("at least %s (the highest rate met)", RateText(c.Rate))
	default:
		t = RateText(c.Rate)
	}
	switch {
	case c.Truncated && s.Pooled && len(c.Seeds) > 1:
		t += fmt.Sprintf(": the lesson's work bound stopped the search before its interval narrowed to %.0f%%", 100*s.Tolerance)
	case c.Truncated:
		t += fmt.Sprintf(": the lesson's work bound stopped the search (%d of %d seeds finished)", c.Complete(), len(s.Seeds))
	case s.Pooled && len(c.Seeds) == len(s.Seeds) && c.High > c.Low*(1+s.Tolerance):
		t += fmt.Sprintf(": %d seeds left the interval wider than %.0f%%", len(s.Seeds), 100*s.Tolerance)
	}
	return t
}

// SearchMethod says how the shared search found an answer: the run
// length at the capacity, the window judged, the tolerance and the seeds.
func SearchMethod(c slo.SteadyCapacity, s slo.Steady, o slo.Objective) string {
	n := s.Requests(o, ReferenceRate(c, s))
	wait := ""
	if o.TTFT == 0 && o.MedianWait == 0 {
		wait = fmt.Sprintf(" A rate also needs the median request scheduled within %g s (Sarathi-Serve's search): gaps alone never see a queue grow.", slo.DefaultMedianWait)
	}
	// The count is what a Tolerance overload needs to show past the
	// arrivals' noise (Steady.Requests); the narration has no room to say so.
	probe := fmt.Sprintf("Each probe serves %s Poisson arrivals at one rate and judges the middle %.0f%% (no warm-up, no drain); ",
		Comma(n), 100*(1-slo.WarmUpShare-slo.DrainShare))
	if s.Pooled && len(s.Seeds) > 1 {
		return probe + fmt.Sprintf("one seed brackets the capacity and bisects to %.0f%%; further seeds each serve one probe %.0f%% off the answer, "+
			"where a line through every probe's margin crosses the SLO, until its 95%% interval is within %.0f%% (%d seeds, %d probes).%s",
			100*s.Tolerance, 100*2*s.Tolerance, 100*s.Tolerance, len(c.Seeds), c.Probes(), wait)
	}
	offered := ""
	if s.ByOffered {
		offered = ", read at the rate requests arrived"
	}
	return probe + fmt.Sprintf("the search brackets the capacity and bisects to %.0f%%%s; %s (%d %s).%s",
		100*s.Tolerance, offered, seedsText(len(s.Seeds)), c.Probes(), Plural(c.Probes(), "probe", "probes"), wait)
}

// ReferenceRate is the rate a search's narration quotes its run length
// at: the capacity, or without one the first probe's rate (the start),
// within [Min, Max].
func ReferenceRate(c slo.SteadyCapacity, s slo.Steady) float64 {
	rate := c.Rate
	if rate == 0 {
		rate = s.Start
		if len(c.Seeds) > 0 && len(c.Seeds[0].Runs) > 0 {
			rate = c.Seeds[0].Runs[0].Rate
		}
	}
	return min(max(rate, s.Min), s.Max)
}

// seedsText says how the seeds' answers combine.
func seedsText(n int) string {
	if n == 1 {
		return "one seed"
	}
	return fmt.Sprintf("the median and range of %d seeds", n)
}

// ProbesText lists a seed's probes: "3.2 ✓, 6.4 ✗, 4.5 ✓ …".
func ProbesText(sc slo.SeedCapacity) string {
	parts := make([]string, len(sc.Runs))
	for i, p := range sc.Runs {
		mark := "✗"
		if p.Meets {
			mark = "✓"
		}
		parts[i] = fmt.Sprintf("%.3g %s", p.Rate, mark)
	}
	return strings.Join(parts, ", ")
}

// MedianSeed is the complete seed whose capacity is the median (the first
// seed when none is complete; none before any search).
func MedianSeed(c slo.SteadyCapacity) slo.SeedCapacity {
	for _, sc := range c.Seeds {
		if sc.Complete && sc.Rate == c.Rate {
			return sc
		}
	}
	if len(c.Seeds) == 0 {
		return slo.SeedCapacity{}
	}
	return c.Seeds[0]
}

// SpreadPct is the seeds' range over the median, in percent (0 when the
// capacity is 0 or NaN).
func SpreadPct(c slo.SteadyCapacity) float64 {
	if s := c.Spread(); !math.IsNaN(s) {
		return 100 * s
	}
	return 0
}
