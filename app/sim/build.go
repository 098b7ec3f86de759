// Package sim is a lesson simulation as the page asks for it and receives it:
// the Request the page sends, Build (a lesson run that never panics), and the
// wire format of the reply (Encode, Decode) whose Script decodes each step's
// scenes only when the step is first shown.
//
// The page runs simulations in a Web Worker with its own WebAssembly instance
// (wasm/sim, loaded by web/sim-worker.js), so re-simulating never holds the
// page's thread: the worker builds and encodes, the page decodes the step it
// shows. The package imports no UI code (no go-app, no syscall/js), so the
// worker's wasm stays small, and everything here is tested natively.
package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"runtime/debug"
	"strings"

	"github.com/inferlab/inferlab/app/urlstate"
	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/lessons"
)

// Request is one simulation the page asks for: a lesson, its knobs as
// canonical text (already resolved and checked by the page), and optionally
// an uploaded trace to run on instead of the workload the knobs generate.
type Request struct {
	Slug   string            `json:"slug"`
	Params map[string]string `json:"params"`
	// Debug "panic" makes the build panic (exercises the error panel).
	Debug string     `json:"debug,omitempty"`
	Trace *TraceFile `json:"trace,omitempty"`
	// Model and GPU are the reader's own model and GPU as address tokens
	// (urlstate.Custom): the worker registers them before it runs, and the
	// lesson offers them (Custom.For), so model=custom:NAME and
	// gpu=custom:NAME resolve where the simulation runs.
	Model string `json:"mc,omitempty"`
	GPU   string `json:"gc,omitempty"`
}

// WithCustom is the request carrying the custom model and GPU a lesson
// took (Custom.For).
func (r Request) WithCustom(c urlstate.Custom) Request {
	r.Model, r.GPU = c.ModelToken(), c.GPUToken()
	return r
}

// Lesson is the lesson the request runs: its slug's, offering the
// request's own model and GPU. An error names a token that does not
// decode (the page sends only tokens it decoded) or a lesson unknown.
func (r Request) Lesson() (*lessons.Lesson, error) {
	l := lessons.Get(r.Slug)
	if l == nil {
		return nil, fmt.Errorf("no lesson named %q", r.Slug)
	}
	if r.Model == "" && r.GPU == "" {
		return l, nil
	}
	c, bad := urlstate.ParseCustom(r.Model, r.GPU)
	if len(bad) > 0 {
		return nil, errors.New(strings.Join(bad, " "))
	}
	lc, _, _ := c.For(l)
	return lc, nil
}

// NewRequest is the request for a lesson's resolved knobs. The page and the
// worker's prefetch (ForAddress) build requests with it, so the same state
// gives the same bytes (Body).
func NewRequest(slug string, v lessons.Values, debug string) Request {
	return Request{Slug: slug, Params: v.Text(), Debug: debug}
}

// ForAddress is the request a page's address asks for (its path and raw
// query), read as the page reads it (package urlstate: a bad knob takes its
// default, a broken relation all defaults), or false when the path names no
// lesson. The worker starts it before the page's app has loaded.
func ForAddress(path, rawQuery string) (Request, bool) {
	slug, _ := urlstate.SlugFromPath(path)
	l := lessons.Get(slug)
	if l == nil {
		return Request{}, false
	}
	if _, err := url.ParseQuery(rawQuery); err != nil && len(rawQuery) <= urlstate.MaxQueryBytes {
		return Request{}, false // the page reads what it can; do not guess
	}
	st := urlstate.ParseRawQuery(l, rawQuery)
	lc, custom, _ := st.Custom.For(l)
	v, _ := urlstate.ResolveParams(lc, st.Raw)
	return NewRequest(l.Slug, v, st.Debug).WithCustom(custom), true
}

// Body is the request as JSON (map keys sorted): what the page sends, and
// how a prefetched answer is matched to the page's request.
func (r Request) Body() ([]byte, error) { return json.Marshal(r) }

// TraceFile is a trace the learner chose in the page: its file name and
// text, parsed where the simulation runs, within the lesson's TraceLimits.
type TraceFile struct {
	Name string `json:"name"`
	Text string `json:"text"`
}

// Failure describes a build that failed or panicked; the player shows it in
// #error-panel with a link that reproduces it.
type Failure struct {
	Lesson  string            `json:"lesson"`
	Params  map[string]string `json:"params"`
	Message string            `json:"message"`
	Panic   bool              `json:"panic,omitempty"`
	Stack   string            `json:"stack,omitempty"`
	Trace   string            `json:"trace,omitempty"` // the uploaded trace the build ran on, if any
}

// Trace is a parsed trace: the lesson runs on its requests.
type Trace struct {
	Name     string
	Requests []workload.Request
}

// ParseTrace reads a trace file's text within the lesson's browser limits
// (lessons.Lesson.TraceLimits). The error names the file, and the line,
// field, value and allowed range when one line is at fault.
func ParseTrace(l *lessons.Lesson, name, text string) (*Trace, error) {
	reqs, err := workload.ParseTrace(strings.NewReader(text), l.TraceLimits())
	if err != nil {
		return nil, fmt.Errorf("%s: %v", lessons.PrintableName(name), err)
	}
	return &Trace{Name: name, Requests: reqs}, nil
}

// Build runs the lesson with the given canonical knob text and never
// panics: a panic in Build (or in the core it calls) comes back as a
// Failure, as does an error. With a trace, the lesson runs on its requests
// (Lesson.RunTrace).
func Build(l *lessons.Lesson, params map[string]string, debugMode string, tr *Trace) (s *lessons.Script, f *Failure) {
	trace := ""
	if tr != nil {
		trace = tr.Name
	}
	defer func() {
		if r := recover(); r != nil {
			s = nil
			st := string(debug.Stack())
			if len(st) > 4000 {
				st = st[:4000] + "…"
			}
			f = &Failure{Lesson: l.Slug, Params: params, Message: fmt.Sprint(r), Panic: true, Stack: st, Trace: trace}
		}
	}()
	if debugMode == "panic" {
		panic("debug=panic: a deliberate panic to exercise the error panel")
	}
	var script *lessons.Script
	var err error
	if tr != nil {
		script, _, err = l.RunTrace(params, tr.Requests, tr.Name)
	} else {
		script, _, err = l.Run(params)
	}
	if err != nil {
		return nil, &Failure{Lesson: l.Slug, Params: params, Message: err.Error(), Trace: trace}
	}
	if script == nil || len(script.Steps) == 0 {
		return nil, &Failure{Lesson: l.Slug, Params: params, Message: "the lesson built no steps", Trace: trace}
	}
	return script, nil
}

// Run answers a request where the simulation runs (the worker, or the page
// itself when no worker can start): it parses the trace, builds, and
// encodes the reply. It never panics and always returns a reply.
func Run(req Request) []byte {
	l, err := req.Lesson()
	if err != nil {
		return Encode(Reply{Failure: &Failure{Lesson: req.Slug, Params: req.Params, Message: err.Error()}}, nil)
	}
	var tr *Trace
	if req.Trace != nil {
		var err error
		if tr, err = ParseTrace(l, req.Trace.Name, req.Trace.Text); err != nil {
			return Encode(Reply{TraceError: err.Error()}, nil)
		}
	}
	s, f := Build(l, req.Params, req.Debug, tr)
	rep := Reply{Failure: f}
	if tr != nil {
		rep.TraceRequests = len(tr.Requests)
	}
	return Encode(rep, s)
}

// GCPercent is the GOGC both WebAssembly entry points set (wasm/main.go,
// wasm/sim) and `make bench-wasm` measures with: a script keeps every
// step's scenes in memory (megabytes), and trading memory for fewer
// collections of WebAssembly's stop-the-world collector keeps simulations
// fast and step changes within a frame.
const GCPercent = 400
