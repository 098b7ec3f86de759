// Package bench is the lab's measuring harness: performance scenarios,
// defined once and timed both by `go test -bench` and by `inferlab bench`
// on the reader's own machine, and the code that times them (Measure,
// Result). It sits at the top of the repository, with the commands that
// use it (cmd/inferlab, cmd/benchrun): nothing below cmd/ imports it.
//
// The core scenarios serve 10,000 (and 100,000) requests on core/scenario's
// reference configuration, vLLM v1's scheduler on one H100 SXM with
// Llama-3.1-8B, every step priced; package suite adds one scenario per
// lesson.
package bench

import (
	"fmt"
	"slices"
	"time"

	"github.com/inferlab/inferlab/core/scenario"
	"github.com/inferlab/inferlab/core/scheduler"
)

// Scenario is one timed piece of work.
type Scenario struct {
	Name   string        // stable: --only matches it, JSON carries it
	What   string        // one line for people
	Budget time.Duration // the most a run may take natively; 0 when it has no budget
	Run    func() (Work, error)
}

// Work is what one run of a scenario simulated.
type Work struct {
	Requests int `json:"requests"`
	Tokens   int `json:"tokens"` // prompt + output tokens served
	Steps    int `json:"steps"`
}

// Result is a scenario measured over several runs.
type Result struct {
	Name     string  `json:"name"`
	What     string  `json:"what"`
	Runs     int     `json:"runs"`
	MinMS    float64 `json:"min_ms"`
	MedianMS float64 `json:"median_ms"`
	// CPU time of the whole process per run (all threads: the garbage
	// collector's too), where the platform reports it. On a machine shared
	// with other work it varies far less than wall-clock time.
	CPUMinMS    float64 `json:"cpu_min_ms,omitempty"`
	CPUMedianMS float64 `json:"cpu_median_ms,omitempty"`
	BudgetMS    float64 `json:"budget_ms,omitempty"`
	Work        Work    `json:"work"`
	// Warmup runs were made before the measured ones and are not counted.
	Warmup int `json:"warmup,omitempty"`
	// TimesMS is each measured run's wall-clock time, in order, so that
	// runs from several processes can be pooled (make bench-wasm).
	TimesMS []float64 `json:"times_ms,omitempty"`
}

// CoreScenarios lists the 10,000-request scenarios, whose budget is 1 s
// natively, and the same workloads ten times larger, whose time should
// grow about tenfold (a 100k/10k ratio of at most 11).
func CoreScenarios() []Scenario {
	return []Scenario{
		{
			Name:   "core-10k-uniform",
			What:   "10,000 requests of 512 prompt + 256 output tokens, all queued at once, H100 / Llama-3.1-8B, priced steps",
			Budget: time.Second,
			Run:    func() (Work, error) { return Serve(scenario.UniformRequests(10000, 512, 256)) },
		},
		{
			Name:   "core-10k-chat",
			What:   "10,000 chat-like requests (long-tailed lengths, Poisson at 40 req/s), H100 / Llama-3.1-8B, priced steps",
			Budget: time.Second,
			Run:    func() (Work, error) { return Serve(scenario.ChatRequests(10000)) },
		},
		{
			Name: "core-100k-uniform",
			What: "core-10k-uniform with 100,000 requests",
			Run:  func() (Work, error) { return Serve(scenario.UniformRequests(100000, 512, 256)) },
		},
		{
			Name: "core-100k-chat",
			What: "core-10k-chat with 100,000 requests (the same 40 req/s, ten times as long)",
			Run:  func() (Work, error) { return Serve(scenario.ChatRequests(100000)) },
		},
	}
}

// Serve runs the requests to completion on the H100 configuration.
func Serve(reqs []scheduler.Request) (Work, error) {
	cfg, timer, err := scenario.H100()
	if err != nil {
		return Work{}, err
	}
	s, err := scheduler.New(cfg, timer, reqs)
	if err != nil {
		return Work{}, err
	}
	if err := s.Run(); err != nil {
		return Work{}, err
	}
	w := Work{Requests: s.Finished(), Steps: len(s.Steps())}
	if w.Requests != len(reqs) {
		return w, fmt.Errorf("bench: %d of %d requests finished", w.Requests, len(reqs))
	}
	for _, r := range reqs {
		w.Tokens += r.Prompt + r.Output
	}
	return w, nil
}

// Measure runs a scenario runs times and reports its fastest and median
// wall-clock time (for an even count, the slower of the two middle runs).
// The first run is not discarded: a reader's first knob move is a first run
// too.
func Measure(s Scenario, runs int) (Result, error) { return MeasureWarm(s, 0, runs) }

// MeasureWarm is Measure after warmup unmeasured runs: what a page costs
// once its engine has compiled the hot code (WebAssembly in V8 starts in a
// baseline compiler and tiers up while it runs).
func MeasureWarm(s Scenario, warmup, runs int) (Result, error) {
	return MeasureWarmFor(s, warmup, 0, runs)
}

// maxWarmup bounds the runs MeasureWarmFor adds for its warm-up time.
const maxWarmup = 10_000

// MeasureWarmFor is MeasureWarm with at least warmFor of warm-up too: the
// unmeasured runs go on past warmup until that much time has passed (up to
// maxWarmup runs in all, unless warmup itself asks for more). V8 moves a
// WebAssembly function to its optimising compiler once it has run enough,
// compiling in the background:
// a scenario of a few milliseconds is still partly in baseline code after
// five runs, and its measured runs then time the tier-up (garage with
// 1,000 requests: medians of 8–20 ms after 5 runs, 6.8–7.1 ms after 30).
// Result.Warmup is the number of warm-up runs made (on an error, those
// completed).
func MeasureWarmFor(s Scenario, warmup int, warmFor time.Duration, runs int) (Result, error) {
	if runs < 1 {
		return Result{}, fmt.Errorf("bench: runs = %d: want at least 1", runs)
	}
	if warmup < 0 || warmFor < 0 {
		return Result{}, fmt.Errorf("bench: warmup = %d, for %v: want at least 0", warmup, warmFor)
	}
	r := Result{Name: s.Name, What: s.What, Runs: runs, BudgetMS: ms(s.Budget)}
	for start := time.Now(); r.Warmup < warmup || (r.Warmup < maxWarmup && time.Since(start) < warmFor); r.Warmup++ {
		if _, err := s.Run(); err != nil {
			return r, fmt.Errorf("%s: %w", s.Name, err)
		}
	}
	times := make([]time.Duration, 0, runs)
	cpus := make([]time.Duration, 0, runs)
	for range runs {
		start := time.Now()
		cpu0, cpuOK := cpuTime()
		w, err := s.Run()
		if err != nil {
			return r, fmt.Errorf("%s: %w", s.Name, err)
		}
		times = append(times, time.Since(start))
		if cpu1, ok := cpuTime(); ok && cpuOK {
			cpus = append(cpus, cpu1-cpu0)
		}
		r.Work = w
	}
	for _, t := range times {
		r.TimesMS = append(r.TimesMS, ms(t))
	}
	slices.Sort(times)
	r.MinMS, r.MedianMS = ms(times[0]), ms(times[len(times)/2])
	if len(cpus) == runs {
		slices.Sort(cpus)
		r.CPUMinMS, r.CPUMedianMS = ms(cpus[0]), ms(cpus[len(cpus)/2])
	}
	return r, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Median is the middle of the values (for an even count, the larger of the
// two middle ones, as Measure reports), or 0 for none.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
