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
}

// BuildScript runs the lesson with the given values and never panics: a
// panic in Build (or in the core it calls) comes back as a Failure. A failed
// relation check is not a failure here: ResolveParams already fell back.
func BuildScript(l *lessons.Lesson, v lessons.Values, debugMode string) (s *lessons.Script, f *Failure) {
	params := v.Text()
	defer func() {
		if r := recover(); r != nil {
			s = nil
			st := string(debug.Stack())
			if len(st) > 4000 {
				st = st[:4000] + "…"
			}
			f = &Failure{Lesson: l.Slug, Params: params, Message: fmt.Sprint(r), Panic: true, Stack: st}
		}
	}()
	if debugMode == "panic" {
		panic("debug=panic: a deliberate panic to exercise the error panel")
	}
	script, _, err := l.Run(params)
	if err != nil {
		return nil, &Failure{Lesson: l.Slug, Params: params, Message: err.Error()}
	}
	if script == nil || len(script.Steps) == 0 {
		return nil, &Failure{Lesson: l.Slug, Params: params, Message: "the lesson built no steps"}
	}
	return script, nil
}

// cliCommand is the `inferlab run` command line that reproduces a build.
func cliCommand(l *lessons.Lesson, params map[string]string) string {
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
	return b.String()
}
