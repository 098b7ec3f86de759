// Package textfmt formats numbers for people, the same way in lesson
// narration (package lessons) and on the page (package app).
//
// It is one of the foundations under internal/: the layer below the core,
// which imports only the standard library (layering_test.go).
package textfmt

import (
	"strconv"
	"strings"
)

// Comma formats an integer with thousands separators: 32768 → "32,768".
func Comma(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
