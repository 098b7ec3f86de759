package lessons

import (
	"fmt"
	"strings"
	"unicode"
)

// PrintableName is a trace's file name as the narration shows it: every
// control character (ESC, BEL, C1 codes) and every bidirectional-text
// control (U+202A–U+202E, U+2066–U+2069, which can make "gpj.exe" read
// "exe.jpg") written as a \x or \u escape, so that a file name cannot move
// a terminal's cursor, ring its bell or reorder what the page shows. The
// page and the CLI both pass names through it (Lesson.RunTrace), so their
// narrations stay equal; the CLI also passes the messages that quote a
// path through it before they reach a terminal.
func PrintableName(name string) string {
	if !strings.ContainsFunc(name, hiddenRune) {
		return name
	}
	var b strings.Builder
	for _, r := range name {
		switch {
		case !hiddenRune(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// hiddenRune reports a rune that changes how text around it is shown
// instead of showing itself.
func hiddenRune(r rune) bool {
	return unicode.IsControl(r) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c
}
