package app

import "regexp"

// go-app's prerender writes an attribute whose value is "true" as a bare
// name (aria-hidden, not aria-hidden="true"). For a boolean HTML attribute
// that is the same; for an ARIA state it is not: an empty aria-hidden is
// no value at all, so before the app ran a decoration hidden from screen
// readers was read out (axe: aria-required-children on garage's bays).
// Only inside a start tag: a narration may name the attribute in words.
var bareARIA = regexp.MustCompile(`(<[a-zA-Z][^<>]*?\saria-[a-z]+)([\s/>])`)

// PrerenderedARIA gives every bare aria-* attribute of prerendered markup
// its value "true" back.
func PrerenderedARIA(html string) string {
	// Two bare attributes side by side share the space between them, which
	// one pass consumes: repeat until nothing changes (twice in practice).
	for {
		out := bareARIA.ReplaceAllString(html, `$1="true"$2`)
		if out == html {
			return out
		}
		html = out
	}
}
