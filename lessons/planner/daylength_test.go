package planner

import (
	"strings"
	"testing"
)

// The lesson's "day" is a compressed one: its first step says how long it
// is in all (12 intervals of 180 s are 36 minutes), not "a day" alone.
func TestDaySaysItsLength(t *testing.T) {
	for _, c := range []struct {
		set  map[string]string
		want string
	}{
		{nil, "36 minutes in all"},
		{map[string]string{"intervals": "6", "interval_s": "60"}, "6 minutes in all"},
	} {
		s, _, err := lesson.Run(c.set)
		if err != nil {
			t.Fatal(err)
		}
		if text := s.Steps[0].Narration; !strings.Contains(text, c.want) || !strings.Contains(text, "compressed") {
			t.Errorf("%v: the first step does not say the day is compressed into %s: %s", c.set, c.want, text)
		}
	}
}
