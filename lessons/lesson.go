// Package lessons is the contract every lesson follows and the registry
// that lists them.
//
// A lesson is data, not UI: metadata, typed parameters, and a simulation
// (Lesson.Build) that runs the core and returns a Script of steps. Each step
// carries a narration and the scenes (package scene) a renderer draws. The
// browser player and the `inferlab run` command show the same Script, so the
// same parameters give the same figures everywhere.
//
// Each lesson is a package of its own under lessons/ that declares a
// *Lesson (with its place in the index, its picture and its glossary
// terms) and calls Register from an init function, as an image format or a
// database/sql driver registers itself; lessons/all imports every one of
// them for its side effect, and the lab's entry points import lessons/all.
// Shared helpers are in lessons/kit, shared test checks in
// lessons/lessontest (CONTRIBUTING.md, "Add a lesson").
package lessons

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/scene"
)

// Lesson describes one lesson: what it is, its knobs, and how to build it.
type Lesson struct {
	Slug    string // URL-safe and stable: embeds and links depend on it
	Title   string
	Part    string // the article it mirrors, e.g. "Part 14 §1"
	Summary string // one line for the index
	Engine  string // which engine and version the mechanism follows
	// Group is the index part the lesson belongs to (one of Groups' IDs)
	// and Rank its place there, lower first: All orders the lessons by
	// group, then rank, then slug.
	Group string
	Rank  int
	// Thumb is the kind of the lesson's main figure on its first step,
	// which its index card draws in miniature (app's TestThumbKinds checks
	// it against the script).
	Thumb scene.Kind
	// Terms are the glossary terms the lesson explains (Glossary); each
	// links to a step of this lesson (register sets Term.Lesson).
	Terms  []Term
	Params []Param
	// Check validates relations between parameters after each one passed its
	// own range check (e.g. prompt_min ≤ prompt_max). It may be nil.
	Check func(Values) error
	// Sim runs the lesson's simulation (see Simulation for why it is an
	// interface value, not a func).
	Sim Simulation
	// TraceIgnores are the knobs a trace replaces, for a lesson that takes
	// one (BuildTrace): those that generate the requests, their arrivals
	// and their lengths. A trace run does not read them; RunTrace leaves
	// them out of the values it returns, and CheckTraceKnobs refuses them.
	TraceIgnores []string
	// MoE reports that the lesson's model knob takes a mixture of experts
	// of the kind core/hardware prices (modelconfig.Config.Priced): every
	// figure the lesson shows comes from the step-time model and the KV
	// sizing, which price the experts, and none from a dense-only formula
	// of its own. The page's own model and --model-config offer one only
	// to such a lesson.
	MoE bool

	// MaxWork bounds Script.Work for every knob combination the lesson
	// accepts: Check refuses, in the knobs' own terms ("requests × (prompt +
	// output) must be ≤ 4,000,000"), any combination whose work would exceed
	// it, so that every accepted setting re-simulates in about a second. Zero
	// while a lesson has no bound yet.
	MaxWork int64
	// HeavyCorners are the heaviest knob settings the lesson accepts (its
	// author's claim, checked by the contract test: each must build, and its
	// counted Work must stay within MaxWork).
	HeavyCorners []map[string]string
}

// Simulation is what a lesson runs: each lesson package declares an empty type
// (its package's sim) whose Simulate method is the simulation.
//
// Why an interface and not a func field: the page's WebAssembly (app.wasm)
// registers every lesson for its metadata and knobs but never runs a
// simulation (a Web Worker with its own wasm, ./wasm/sim, does). A func
// value in the registration literal is a reference the linker must keep,
// with everything it calls; a method reached only through an interface is
// kept only if reachable code calls that interface method (and app.wasm
// reaches no reflect.Value.Method). With Build and BuildTrace as func
// fields app.wasm was 13.7 MB (3.40 MB gzip -9); with methods, and no call
// of Lesson.Build left in the page, it is 10.8 MB (2.70 MB gzip -9): the
// simulations are gone (GOOS=js GOARCH=wasm go build -trimpath
// -ldflags='-s -w' ./wasm). So a registered lesson's sim must be an empty
// struct type with methods, never a func adapter nor a struct holding a
// func (TestRegisteredSimulationsAreMethods). The methods are exported
// because each lesson is a package of its own; an exported method stays
// out as long as the page reaches no reflect.Value.Method or MethodByName,
// which would keep every exported method of a type it uses
// (wasm/page_test.go fails then).
type Simulation interface {
	// Simulate runs the simulation. It is only called with values that passed
	// Resolve and Check, and must be deterministic in them.
	Simulate(Values) (*Script, error)
}

// TraceSimulation is a simulation that also runs on requests read from a
// trace (core/workload's JSONL format) instead of the workload its knobs
// generate; name labels the trace in the narration.
type TraceSimulation interface {
	Simulation
	SimulateTrace(v Values, trace []workload.Request, name string) (*Script, error)
}

// ScriptOf is the script of a typed run, or the error that ended the run:
// a lesson's Simulate is `return lessons.ScriptOf(run<Lesson>(v))`, its run
// type's Script method writing the steps, metrics, claims and counted work.
func ScriptOf[R interface{ Script() *Script }](r R, err error) (*Script, error) {
	if err != nil {
		return nil, err
	}
	return r.Script(), nil
}

// Build runs the lesson's simulation. It is only called with values that
// passed Resolve and Check (Run does both), and is deterministic in them.
func (l *Lesson) Build(v Values) (*Script, error) {
	if l.Sim == nil {
		return nil, fmt.Errorf("%s: the lesson has no simulation", l.Slug)
	}
	return l.Sim.Simulate(v)
}

// TakesTrace reports whether the lesson runs on a trace (BuildTrace).
func (l *Lesson) TakesTrace() bool {
	_, ok := l.Sim.(TraceSimulation)
	return ok
}

// BuildTrace runs the lesson on the requests of a trace instead of the
// workload its knobs generate; name labels the trace in the narration. As
// for Build, v passed Resolve and Check. It fails for a lesson that takes
// no trace.
func (l *Lesson) BuildTrace(v Values, trace []workload.Request, name string) (*Script, error) {
	ts, ok := l.Sim.(TraceSimulation)
	if !ok {
		return nil, fmt.Errorf("%s: the lesson takes no trace", l.Slug)
	}
	return ts.SimulateTrace(v, trace, name)
}

// Script is what a lesson's Build returns: the steps to play and the final
// figures.
type Script struct {
	Steps   []Step
	Metrics []Metric
	Claims  []Claim
	// Work counts the elementary updates the simulation performed (a
	// request advanced by one engine step, a worker scored by the router, a
	// kernel priced): a deterministic measure of cost that tests compare
	// with Lesson.MaxWork. It is not part of any output.
	Work int64 `json:"-"`
}

// Step is one moment of the lesson.
type Step struct {
	Title     string        `json:"title"`
	Narration string        `json:"narration"`
	Scenes    []scene.Scene `json:"scenes"`
	// Cursor is the x position charts mark for this step (e.g. the tick).
	Cursor float64 `json:"cursor"`
	// Quiz, when set, is asked before this step is revealed.
	Quiz *Quiz `json:"quiz,omitempty"`
	// Mentions link phrases of the narration to the elements of the
	// step's scenes they name (scene.Mention).
	Mentions []scene.Mention `json:"mentions,omitempty"`
	// Key, when set, names what the step shows the same way under any
	// knobs ("route:R4", "overload"). A lesson whose steps come and go
	// with its knobs keys them, so that a player re-running it after a
	// knob change stays on the step that means the same thing
	// (Script.SameStep), not on whatever step now has the old index.
	Key string `json:"key,omitempty"`
}

// SameStep is the 0-based step of s that shows what step i of old showed:
// the step with the same Key; when s has none, the step of the nearest
// keyed step before i in old that s still has (the reader stays in the
// same part of the lesson); without keys, i clamped to s's steps.
func (s *Script) SameStep(old *Script, i int) int {
	n := len(s.Steps)
	if n == 0 {
		return 0
	}
	clamped := max(0, min(i, n-1))
	if old == nil || i < 0 || i >= len(old.Steps) || old.Steps[i].Key == "" {
		return clamped
	}
	at := make(map[string]int, n)
	for j, st := range s.Steps {
		if st.Key != "" {
			at[st.Key] = j
		}
	}
	for k := i; k >= 0; k-- {
		if j, ok := at[old.Steps[k].Key]; ok {
			return j
		}
	}
	return clamped
}

// Metric is one named final figure.
type Metric struct {
	Key   string  `json:"key"`
	Label string  `json:"label"`
	Unit  string  `json:"unit"`
	Value float64 `json:"value"`
	// Better says which way the figure improves, where the lesson defines
	// one (a comparison of two settings marks the better side); the zero
	// value says nothing.
	Better Direction `json:"better,omitempty"`
}

// Direction is which way a metric improves: "higher", "lower", or "" for a
// figure that is neither better nor worse when it moves (a count of steps,
// a block size).
type Direction string

// The directions a metric may declare.
const (
	NoDirection    Direction = ""
	HigherIsBetter Direction = "higher"
	LowerIsBetter  Direction = "lower"
)

// Claim puts a figure from the articles beside the model's figure for the
// same setup, with the reason they differ.
type Claim struct {
	What    string `json:"what"`
	Article string `json:"article"`
	Model   string `json:"model"`
	Why     string `json:"why"`
}

// Metric returns the metric with the given key.
func (s *Script) Metric(key string) (float64, bool) {
	for _, m := range s.Metrics {
		if m.Key == key {
			return m.Value, true
		}
	}
	return 0, false
}

// Run resolves raw parameter text, checks it and builds the script. Errors
// from bad parameters are *ParamError values (possibly joined).
func (l *Lesson) Run(raw map[string]string) (*Script, Values, error) {
	v, err := l.ResolveChecked(raw)
	if err != nil {
		return nil, v, err
	}
	s, err := l.Build(v)
	return s, v, l.blame(v, err)
}

// ResolveChecked resolves raw knobs and checks their relations.
func (l *Lesson) ResolveChecked(raw map[string]string) (Values, error) {
	v, errs := l.Resolve(raw)
	if len(errs) > 0 {
		return v, joinParamErrors(errs)
	}
	if err := l.CheckValues(v); err != nil {
		return v, err
	}
	return v, nil
}

// RunTrace is Run on a trace: it resolves and checks the knobs as Run does,
// then builds with BuildTrace. name is shown with its control characters
// escaped (PrintableName).
func (l *Lesson) RunTrace(raw map[string]string, trace []workload.Request, name string) (*Script, Values, error) {
	_, _, bound := l.TraceWork()
	return l.runTrace(raw, trace, name, bound)
}

// RunTraceNative is RunTrace held to the native bound, NativeTraceScale
// times the lesson's own (NativeTraceLimits): what one native invocation
// may cost, where the page keeps to the lesson's own bound.
func (l *Lesson) RunTraceNative(raw map[string]string, trace []workload.Request, name string) (*Script, Values, error) {
	_, _, bound := l.TraceWork()
	return l.runTrace(raw, trace, name, NativeTraceScale*bound)
}

// runTrace is RunTrace with the trace's work bound.
func (l *Lesson) runTrace(raw map[string]string, trace []workload.Request, name string, bound int64) (*Script, Values, error) {
	v, err := l.ResolveChecked(raw)
	if err != nil {
		return nil, v, err
	}
	v.traceWork = bound
	if !l.TakesTrace() {
		return nil, v, fmt.Errorf("%s: the lesson takes no trace", l.Slug)
	}
	name = PrintableName(name)
	if len(trace) == 0 {
		return nil, v, fmt.Errorf("%s: the trace %s has no requests", l.Slug, name)
	}
	s, err := l.BuildTrace(v, trace, name)
	return s, l.TraceValues(v), l.blame(v, err)
}

// TraceValues are the values a run on a trace reads: v without the knobs
// the trace replaces (TraceIgnores), as RunTrace returns them and as the
// page exports a trace run's knobs.
func (l *Lesson) TraceValues(v Values) Values { return v.without(l.TraceIgnores) }

// CheckTraceKnobs refuses, one *ParamError each in the order of the
// lesson's knobs, the raw knobs that a run on a trace ignores
// (TraceIgnores): `inferlab run sandbox --trace t.jsonl --set requests=4`
// served the trace's 50 requests and reported requests 4. The page, whose
// knobs stay set while a trace replaces their workload, says so instead.
func (l *Lesson) CheckTraceKnobs(raw map[string]string) error {
	var errs []*ParamError
	for _, p := range l.Params {
		v, given := raw[p.Key]
		if !given || !slices.Contains(l.TraceIgnores, p.Key) {
			continue
		}
		errs = append(errs, &ParamError{Key: p.Key, Value: v,
			Want: fmt.Sprintf("no value with a trace: a trace gives the requests, their arrivals and their lengths, so %s have no effect on its run", strings.Join(l.TraceIgnores, ", "))})
	}
	if len(errs) == 0 {
		return nil
	}
	return joinParamErrors(errs)
}

// Browser bounds on a trace: 16,384 tokens per request, 2,000,000 in all,
// and 250,000 engine steps in the worst case (workload.TraceSteps). A step
// costs about 5x more in WebAssembly than natively (about 8-9 µs under Node
// 20 when few requests run together) and about 1 KB of the page's heap, so
// the worst accepted trace re-simulates in about 2 s of CPU and 250 MB
// (BENCHMARKS.md, "Trace work bound"); tokens alone do
// not bound that: 122 requests of 1 + 16,383 tokens, staggered so that each
// runs alone, are 2 million steps (19 s natively before this bound).
const (
	traceMaxTokens      = 16384
	traceMaxTotalTokens = 2_000_000
	traceMaxSteps       = 250_000
)

// TraceLimits bounds the traces a lesson takes in the browser: core/workload's
// defaults, with at most as many requests as the lesson's "requests" knob
// allows, the token and step bounds above, and steps counted with the
// smallest token budget the lesson's "max_num_batched_tokens" knob allows,
// so that re-simulating a trace in WebAssembly takes seconds, not minutes.
func (l *Lesson) TraceLimits() workload.Limits {
	lim := workload.DefaultLimits()
	if p, ok := l.Param("requests"); ok && p.Max > 0 && int(p.Max) < lim.MaxRequests {
		lim.MaxRequests = int(p.Max)
	}
	if p, ok := l.Param("max_num_batched_tokens"); ok && p.Min >= 1 {
		lim.StepTokens = int(p.Min)
	}
	lim.MaxTokens = min(lim.MaxTokens, traceMaxTokens)
	lim.MaxTotalTokens = min(lim.MaxTotalTokens, traceMaxTotalTokens)
	lim.MaxSteps = min(lim.MaxSteps, traceMaxSteps)
	lim.PromptWork, lim.OutputWork, lim.MaxWork = l.TraceWork()
	return lim
}

// NativeTraceLimits bounds the traces a lesson takes natively (the CLI's
// run --trace): core/workload's defaults with NativeTraceSteps engine
// steps, counted with the smallest token budget the lesson's
// "max_num_batched_tokens" knob allows, and NativeTraceScale times the
// lesson's work bound (TraceWork). The page keeps its own, smaller bounds
// (TraceLimits); a trace between the two runs natively only.
func (l *Lesson) NativeTraceLimits() workload.Limits {
	lim := workload.DefaultLimits()
	if p, ok := l.Param("max_num_batched_tokens"); ok && p.Min >= 1 {
		lim.StepTokens = min(lim.StepTokens, int(p.Min))
	}
	lim.MaxSteps = NativeTraceSteps
	var bound int64
	lim.PromptWork, lim.OutputWork, bound = l.TraceWork()
	lim.MaxWork = NativeTraceScale * bound
	return lim
}

// The native bounds on a trace, what one native invocation may cost: 20
// times the lesson's own work bound (the sandbox: 140 million of 2 ×
// prompt + 16 × output tokens, against the page's 7 million), and 8
// million engine steps in the worst case (workload.TraceSteps, against
// 500,000 by default and the page's 250,000). The published vLLM
// benchmarks' workloads, the heaviest 122 million of work and 7 million
// steps at most, run in 1.5–3.3 s of CPU and 0.35–0.73 GB natively; the
// worst case the step bound admits, every request alone, about 12 s and
// 3.7 GB (0.46 KB and 1.5 µs a step; BENCHMARKS.md, "Trace work bound").
const (
	NativeTraceScale = 20
	NativeTraceSteps = 8_000_000
)

// TraceWork is the work bound the lesson holds a trace to in the browser
// and through RunTrace: perPrompt × Σ prompt_tokens + perOutput × Σ
// output_tokens at most bound (all 0 for a lesson with none). A native
// run (RunTraceNative) allows NativeTraceScale times bound.
func (l *Lesson) TraceWork() (perPrompt, perOutput, bound int64) {
	if tw, ok := l.Sim.(interface{ TraceWork() (int64, int64, int64) }); ok {
		return tw.TraceWork()
	}
	return 0, 0, 0
}

var registry = map[string]*Lesson{}

// Register adds a lesson; lesson files call it from init.
func Register(l *Lesson) {
	if _, dup := registry[l.Slug]; dup {
		panic(fmt.Sprintf("lessons: duplicate slug %q", l.Slug))
	}
	for i := range l.Terms {
		l.Terms[i].Lesson = l.Slug
	}
	registry[l.Slug] = l
}

// All returns every registered lesson in index order: by the place of its
// group in Groups (a group not listed comes last), then by rank, then by
// slug.
func All() []*Lesson {
	out := make([]*Lesson, 0, len(registry))
	for _, l := range registry {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if ga, gb := groupIndex(a.Group), groupIndex(b.Group); ga != gb {
			return ga < gb
		}
		if a.Rank != b.Rank {
			return a.Rank < b.Rank
		}
		return a.Slug < b.Slug
	})
	return out
}

// Get returns the lesson with the given slug, or nil.
func Get(slug string) *Lesson { return registry[slug] }
