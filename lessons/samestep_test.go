package lessons_test

import (
	"testing"

	"github.com/inferlab/inferlab/lessons"
)

// keyed is a script whose steps carry the keys given ("" for none).
func keyed(keys ...string) *lessons.Script {
	s := &lessons.Script{}
	for _, k := range keys {
		s.Steps = append(s.Steps, lessons.Step{Key: k})
	}
	return s
}

func TestSameStep(t *testing.T) {
	nine := keyed("intro", "route:R1", "route:R2", "route:R3", "route:R4", "route:R7", "compare", "policies", "overload")
	seven := keyed("intro", "route:R1", "route:R2", "route:R3", "compare", "policies", "overload")
	cases := []struct {
		name     string
		old, now *lessons.Script
		i, want  int
	}{
		{"same key at a lower index", nine, seven, 6, 4},
		{"same key at a higher index", seven, nine, 4, 6},
		{"a step gone: the nearest keyed step before it", nine, seven, 5, 3},
		{"the last step", nine, seven, 8, 6},
		{"no keys: the index, clamped", keyed("", "", "", ""), keyed("", ""), 3, 1},
		{"no keys: the index kept", keyed("", "", ""), keyed("", "", ""), 1, 1},
		{"no old script", nil, seven, 9, 6},
		{"none of the keys left", keyed("a", "b"), keyed("c", "d", "e"), 1, 1},
		{"an empty script", nine, keyed(), 3, 0},
	}
	for _, c := range cases {
		if got := c.now.SameStep(c.old, c.i); got != c.want {
			t.Errorf("%s: SameStep(old, %d) = %d, want %d", c.name, c.i, got, c.want)
		}
	}
}
