package app

import (
	"fmt"
	"strings"

	"github.com/inferlab/inferlab/app/playback"
	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/lessons"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// tooLarge is the error for a file over the size limit, given before
// reading it into memory.
func tooLarge(l *lessons.Lesson, name string, size int64) error {
	max := l.TraceLimits().MaxBytes
	if size <= max {
		return nil
	}
	return fmt.Errorf("%s: the file is %s bytes: want at most %s", lessons.PrintableName(name), comma(int(size)), byteSize(max))
}

// tryTrace simulates the lesson on an uploaded trace. A trace that does not
// parse, or that the lesson cannot run with its knobs, leaves the page as it
// was and says why in #trace-error (Player.deliver).
func (p *Player) tryTrace(ctx app.Context, name, text string) {
	if p.lesson == nil || !p.lesson.TakesTrace() {
		return
	}
	p.traceSeq++
	p.traceErr = ""
	p.want(playback.StepWish{Step: 1}, &traceFile{Name: name, Text: text, ID: p.traceSeq})
	p.flush(ctx)
}

// dropTrace goes back to the workload the knobs generate.
func (p *Player) dropTrace(ctx app.Context) {
	if p.trace == nil || p.lesson == nil {
		return
	}
	p.trace, p.traceErr = nil, ""
	p.want(playback.StepWish{Step: 1}, nil)
	p.flush(ctx)
}

// readTraceFile reads the file chosen in input#trace-file and hands its text
// (workload.TraceText of its bytes) to tryTrace. Big files are refused
// before they are read.
func (p *Player) readTraceFile(ctx app.Context) {
	in := ctx.JSSrc()
	files := in.Get("files")
	if !files.Truthy() || files.Get("length").Int() == 0 {
		return
	}
	f := files.Index(0)
	name := f.Get("name").String()
	p.traceSeq++
	gen := p.traceSeq
	// Cleared, so choosing the same file again (after editing it) reads it again.
	in.Set("value", "")
	if err := tooLarge(p.lesson, name, int64(f.Get("size").Float())); err != nil {
		p.traceErr = err.Error()
		return
	}
	var done, failed app.Func
	release := func() { done.Release(); failed.Release() }
	done = app.FuncOf(func(this app.Value, args []app.Value) any {
		// The file's bytes, decoded as the CLI decodes a file
		// (workload.TraceText), not the browser's text: Chrome reads a
		// UTF-16 file with its byte-order mark, another browser may not.
		u8 := app.Window().Get("Uint8Array").New(args[0])
		data := make([]byte, u8.Get("length").Int())
		app.CopyBytesToGo(data, u8)
		release()
		text, err := workload.TraceText(data)
		p.dispatch(ctx, func(ctx app.Context) {
			if gen != p.traceSeq {
				return // another file was chosen
			}
			if err != nil {
				p.traceErr = lessons.PrintableName(name) + ": " + err.Error()
				return
			}
			p.tryTrace(ctx, name, text)
		})
		return nil
	})
	failed = app.FuncOf(func(this app.Value, args []app.Value) any {
		msg := "the browser could not read it"
		if len(args) > 0 && args[0].Truthy() {
			msg = args[0].Call("toString").String()
		}
		release()
		p.dispatch(ctx, func(ctx app.Context) {
			if gen == p.traceSeq {
				p.traceErr = lessons.PrintableName(name) + ": " + msg
			}
		})
		return nil
	})
	f.Call("arrayBuffer").Call("then", done, failed)
}

// renderTrace is section#trace-panel, for lessons that take a trace: a file
// input, what the lesson now runs on, and the last upload's error.
func (p *Player) renderTrace() app.UI {
	lim := p.lesson.TraceLimits()
	status := "Running on the workload the knobs generate."
	switch {
	case p.sim.upload != nil:
		status = "Simulating " + lessons.PrintableName(p.sim.upload.Name) + "…"
	case p.trace != nil:
		status = fmt.Sprintf("Running on %s: %s requests.%s Links to this page do not carry the trace.",
			lessons.PrintableName(p.trace.Name), comma(p.trace.Requests), ignoredKnobsText(p.lesson.TraceIgnores))
	}
	return app.Section().ID("trace-panel").Class("panel trace-panel").Aria("labelledby", "trace-title").Body(
		app.H2().ID("trace-title").Text("Your own trace"),
		app.P().Class("help").Body(
			app.Text("One JSON object per line: "),
			app.Code().Text(`{"arrival_s": 0.25, "prompt_tokens": 512, "output_tokens": 128, "prefix_group": 1, "prefix_tokens": 256}`),
			app.Text(fmt.Sprintf(" (prefix fields optional; at most %s requests of up to %s tokens, %s tokens and %s in all, %s engine steps: Σ output + Σ prompt / %d + one per request%s). The file stays in this browser.",
				comma(lim.MaxRequests), comma(lim.MaxTokens), comma(lim.MaxTotalTokens), byteSize(lim.MaxBytes), comma(lim.MaxSteps), lim.StepTokens, traceWorkText(lim))),
		),
		app.Label().For("trace-file").Text("Run on a trace file (JSONL)"),
		app.Input().ID("trace-file").Type("file").Accept(".jsonl,.ndjson,.json,.txt,application/x-ndjson,application/json,text/plain").
			OnChange(func(ctx app.Context, e app.Event) { p.readTraceFile(ctx) }),
		app.P().ID("trace-status").Role("status").DataSet("trace", p.traceName()).Text(status),
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

// traceName is the name of the trace in use ("" for the knobs' workload).
func (p *Player) traceName() string {
	if p.trace == nil {
		return ""
	}
	return p.trace.Name
}

// traceWorkText states a lesson's work bound on a trace, "" when it has none.
func traceWorkText(lim workload.Limits) string {
	if lim.MaxWork <= 0 {
		return ""
	}
	return fmt.Sprintf(", and %s of work: %d × prompt + %d × output tokens summed", comma(int(lim.MaxWork)), lim.PromptWork, lim.OutputWork)
}

// ignoredKnobsText says which knobs a trace replaces, from the lesson's own
// list (Lesson.TraceIgnores, the list the command line refuses with a
// trace), so the page and the command line name the same knobs.
func ignoredKnobsText(keys []string) string {
	switch len(keys) {
	case 0:
		return ""
	case 1:
		return " The " + keys[0] + " knob is ignored."
	}
	return " The " + strings.Join(keys[:len(keys)-1], ", ") + " and " + keys[len(keys)-1] + " knobs are ignored."
}
