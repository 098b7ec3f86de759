package urlstate

import (
	"net/url"
	"strings"
	"testing"
)

// What `inferlab run` refuses is a notice in the page, never dropped
// silently: a key given twice (the first value is used), a key the lesson
// does not read, a key that differs from one only in case, and a query
// longer than the page reads.
func TestParseQueryNoticesWhatTheCLIRefuses(t *testing.T) {
	l := testLesson()
	for _, c := range []struct {
		query string
		want  []string
		block int // the block value used
	}{
		{"block=16&block=999", []string{`block is given 2 times ("16", "999"): using the first, "16"; give each parameter once.`}, 16},
		{"step=1&step=3&block=32", []string{`step is given 2 times ("1", "3"): using the first, "1"`}, 32},
		{"nosuchknob=1", []string{"nosuchknob is not a parameter of this lesson, ignored; its parameters are block, rate, mode (and step, find, hide, theme, and b.KEY for a second setting to compare)."}, 16},
		{"a=1&b=2", []string{"a, b are not parameters of this lesson, ignored"}, 16},
		{"Block=32", []string{"Block is not a parameter of this lesson: keys are case-sensitive; did you mean block? Ignoring it."}, 16},
		{"STEP=2", []string{"did you mean step?"}, 16},
		{strings.Repeat("x", MaxQueryBytes-9) + "&block=32", []string{"is not a parameter of this lesson, ignored"}, 32}, // at the bound: read
		{"block=32&x=" + strings.Repeat("y", MaxQueryBytes), []string{"The address's query is 65,547 bytes long: the lab reads at most 65,536; showing the lesson at its defaults."}, 16},
	} {
		st := ParseRawQuery(l, c.query)
		v, notices := ResolveParams(l, st.Raw)
		all := strings.Join(append(st.Notices, notices...), "\n")
		for _, w := range c.want {
			if !strings.Contains(all, w) {
				t.Errorf("%.40s: notices %q lack %q", c.query, all, w)
			}
		}
		if v.Int("block") != c.block {
			t.Errorf("%.40s: block = %d, want %d", c.query, v.Int("block"), c.block)
		}
	}
	// Keys link trackers add are not the lab's: no notice.
	q, _ := url.ParseQuery("utm_source=blog&utm_medium=x&fbclid=1&gclid=2&block=8")
	if st := ParseQuery(l, q); len(st.Notices) != 0 || st.Raw["block"] != "8" {
		t.Errorf("tracking keys: %v %v", st.Notices, st.Raw)
	}
}
