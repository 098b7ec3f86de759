package app

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/inferlab/inferlab/lessons"
)

// Failure describes a lesson build that failed or panicked; the player shows
// it in #error-panel with a link that reproduces it.
type Failure struct {
	Lesson  string
	Params  map[string]string
	Message string
	Panic   bool
	Stack   string
	Trace   string // the uploaded trace the build ran on, if any
}

// BuildScript runs the lesson with the given values and never panics: a
// panic in Build (or in the core it calls) comes back as a Failure. A failed
// relation check is not a failure here: ResolveParams already fell back.
// With a trace, the lesson runs on its requests (Lesson.RunTrace).
func BuildScript(l *lessons.Lesson, v lessons.Values, debugMode string, tr *traceUpload) (s *lessons.Script, f *Failure) {
	params := v.Text()
	trace := traceName(tr)
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

// cliCommand is the `inferlab run` command line that reproduces a build
// (with --trace when it ran on an uploaded file of that name).
func cliCommand(l *lessons.Lesson, params map[string]string, trace string) string {
	var b strings.Builder
	b.WriteString("inferlab run ")
	b.WriteString(l.Slug)
	for _, p := range l.Params {
		if s, ok := params[p.Key]; ok {
			b.WriteString(" --set ")
			b.WriteString(p.Key)
			b.WriteByte('=')
			b.WriteString(s)
		}
	}
	if trace != "" {
		b.WriteString(" --trace ")
		b.WriteString(shellWord(trace))
	}
	return b.String()
}

// shellWord quotes a file name for a POSIX shell when it needs it.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
