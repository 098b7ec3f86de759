package app

import (
	"fmt"
	"strings"
	"time"

	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/lessons"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// traceUpload is a trace the learner loaded from a file: the lesson runs on
// its requests instead of the workload its knobs generate. It lives in the
// page, not in the address: a shared link carries the knobs, not the file.
type traceUpload struct {
	Name     string
	Requests []workload.Request
}

// parseUpload reads a trace file's text within the lesson's browser limits
// (lessons.Lesson.TraceLimits). The error names the file, and the line, field,
// value and allowed range when one line is at fault.
func parseUpload(l *lessons.Lesson, name, text string) (*traceUpload, error) {
	reqs, err := workload.ParseTrace(strings.NewReader(text), l.TraceLimits())
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return &traceUpload{Name: name, Requests: reqs}, nil
}

// tooLarge is the error for a file over the size limit, given before
// reading it into memory.
func tooLarge(l *lessons.Lesson, name string, size int64) error {
	max := l.TraceLimits().MaxBytes
	if size <= max {
		return nil
	}
	return fmt.Errorf("%s: the file is %s bytes: want at most %s", name, comma(int(size)), byteSize(max))
}

// useTrace rebuilds the lesson on an uploaded trace. A trace that does not
// parse, or that the lesson cannot run with its knobs, leaves the page as it
// was and says why in #trace-error.
func (p *Player) useTrace(ctx app.Context, name, text string) {
	if p.lesson == nil || p.lesson.BuildTrace == nil {
		return
	}
	tr, err := parseUpload(p.lesson, name, text)
	if err != nil {
		p.traceErr = err.Error()
		return
	}
	script, fail := BuildScript(p.lesson, p.values, p.debug, tr)
	if fail != nil {
		p.traceErr = name + ": " + fail.Message
		return
	}
	p.trace, p.traceErr = tr, ""
	p.adopt(script, nil)
	p.step = 0
	p.syncURL(ctx)
}

// dropTrace goes back to the workload the knobs generate.
func (p *Player) dropTrace(ctx app.Context) {
	if p.trace == nil || p.lesson == nil {
		return
	}
	p.trace, p.traceErr = nil, ""
	p.adopt(BuildScript(p.lesson, p.values, p.debug, nil))
	p.step = 0
	p.syncURL(ctx)
}

// readTraceFile reads the file chosen in input#trace-file and hands its text
// to useTrace. Big files are refused before they are read.
func (p *Player) readTraceFile(ctx app.Context) {
	in := ctx.JSSrc()
	files := in.Get("files")
	if !files.Truthy() || files.Get("length").Int() == 0 {
		return
	}
	f := files.Index(0)
	name := f.Get("name").String()
	p.traceGen++
	gen := p.traceGen
	// Cleared, so choosing the same file again (after editing it) reads it again.
	in.Set("value", "")
	if err := tooLarge(p.lesson, name, int64(f.Get("size").Float())); err != nil {
		p.traceErr = err.Error()
		return
	}
	var done, failed app.Func
	release := func() { done.Release(); failed.Release() }
	done = app.FuncOf(func(this app.Value, args []app.Value) any {
		text := args[0].String()
		release()
		ctx.Dispatch(func(ctx app.Context) {
			if gen != p.traceGen {
				return // another file was chosen, or the lesson changed
			}
			// Say what is happening before the simulation holds the page.
			p.traceBusy = name
			p.later(ctx, traceRenderGap, func(ctx app.Context) {
				if gen != p.traceGen {
					return
				}
				p.traceBusy = ""
				p.useTrace(ctx, name, text)
			})
		})
		return nil
	})
	failed = app.FuncOf(func(this app.Value, args []app.Value) any {
		msg := "the browser could not read it"
		if len(args) > 0 && args[0].Truthy() {
			msg = args[0].Call("toString").String()
		}
		release()
		ctx.Dispatch(func(ctx app.Context) {
			if gen == p.traceGen {
				p.traceErr = name + ": " + msg
			}
		})
		return nil
	})
	f.Call("text").Call("then", done, failed)
}

// traceRenderGap lets the "Simulating…" status paint before the trace's
// simulation, which runs on the page's only thread.
const traceRenderGap = 50 * time.Millisecond

// renderTrace is section#trace-panel, for lessons that take a trace: a file
// input, what the lesson now runs on, and the last upload's error.
func (p *Player) renderTrace() app.UI {
	lim := p.lesson.TraceLimits()
	status := "Running on the workload the knobs generate."
	switch {
	case p.traceBusy != "":
		status = "Simulating " + p.traceBusy + "…"
	case p.trace != nil:
		status = fmt.Sprintf("Running on %s: %s requests. The workload, requests and rate knobs are ignored, and links to this page do not carry the trace.",
			p.trace.Name, comma(len(p.trace.Requests)))
	}
	return app.Section().ID("trace-panel").Class("panel trace-panel").Aria("labelledby", "trace-title").Body(
		app.H2().ID("trace-title").Text("Your own trace"),
		app.P().Class("help").Body(
			app.Text("One JSON object per line: "),
			app.Code().Text(`{"arrival_s": 0.25, "prompt_tokens": 512, "output_tokens": 128, "prefix_group": 1, "prefix_tokens": 256}`),
			app.Text(fmt.Sprintf(" (prefix fields optional; at most %s requests of up to %s tokens, %s tokens and %s in all). The file stays in this browser.",
				comma(lim.MaxRequests), comma(lim.MaxTokens), comma(lim.MaxTotalTokens), byteSize(lim.MaxBytes))),
		),
		app.Label().For("trace-file").Text("Run on a trace file (JSONL)"),
		app.Input().ID("trace-file").Type("file").Accept(".jsonl,.ndjson,.json,.txt,application/x-ndjson,application/json,text/plain").
			OnChange(func(ctx app.Context, e app.Event) { p.readTraceFile(ctx) }),
		app.P().ID("trace-status").Role("status").DataSet("trace", traceName(p.trace)).Text(status),
		app.If(p.trace != nil, func() app.UI {
			return app.Button().ID("trace-clear").Type("button").
				OnClick(func(ctx app.Context, e app.Event) { p.dropTrace(ctx) }).Text("Back to the generated workload")
		}),
		app.P().ID("trace-error").Class("notice-msg").Role("alert").Hidden(p.traceErr == "").Text(p.traceErr),
	)
}

// byteSize is a byte count for people: "4 MiB" when whole mebibytes.
func byteSize(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return comma(int(n>>20)) + " MiB"
	}
	return comma(int(n)) + " bytes"
}

func traceName(t *traceUpload) string {
	if t == nil {
		return ""
	}
	return t.Name
}
