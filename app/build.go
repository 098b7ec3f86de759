package app

import (
	"strings"

	"github.com/inferlab/inferlab/app/sim"
	"github.com/inferlab/inferlab/lessons"
)

// Failure describes a lesson build that failed or panicked (package sim
// builds); the player shows it in #error-panel with a link that reproduces it.
type Failure = sim.Failure

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
