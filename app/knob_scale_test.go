package app

import (
	"testing"

	"github.com/inferlab/inferlab/lessons"
)

// Every slider position of every lesson's knobs is a value the lesson
// accepts; the ends are the range's ends; positions and values move
// together; and the slider lands back on the position of the value it set.
func TestKnobScalesGiveAllowedValues(t *testing.T) {
	for _, l := range lessons.All() {
		for _, p := range l.Params {
			s, ok := scaleFor(p)
			if !ok {
				continue
			}
			prev := -1.0
			for pos := 0; pos <= sliderPositions; pos++ {
				v := s.value(pos)
				text := s.text(v)
				if _, errs := l.Resolve(map[string]string{p.Key: text}); len(errs) > 0 {
					t.Fatalf("%s %s: position %d gives %q: %v", l.Slug, p.Key, pos, text, errs[0])
				}
				if v < prev {
					t.Fatalf("%s %s: position %d gives %v, below position %d's %v", l.Slug, p.Key, pos, v, pos-1, prev)
				}
				prev = v
				if back := s.value(s.pos(v)); back != v {
					t.Fatalf("%s %s: value %v → position %d → value %v", l.Slug, p.Key, v, s.pos(v), back)
				}
			}
			if s.value(0) != p.Min || s.value(sliderPositions) != p.Max {
				t.Errorf("%s %s: ends %v…%v, want %v…%v", l.Slug, p.Key, s.value(0), s.value(sliderPositions), p.Min, p.Max)
			}
		}
	}
}

func TestKnobScale(t *testing.T) {
	cases := []struct {
		p      lessons.Param
		slider bool
		log    bool
		pos    int
		want   string
	}{
		// 256 steps: linear.
		{lessons.Param{Key: "block_size", Kind: lessons.Int, Min: 1, Max: 256, Step: 1}, true, false, 500, "129"},
		// 131,072 steps: logarithmic; the middle is about √131072 ≈ 362, rounded to two digits.
		{lessons.Param{Key: "output_min", Kind: lessons.Int, Min: 0, Max: 131072, Step: 1}, true, true, 500, "360"},
		// A float knob with a 0.1 step.
		{lessons.Param{Key: "rate", Kind: lessons.Float, Min: 0.1, Max: 500, Step: 0.1}, true, true, 0, "0.1"},
		{lessons.Param{Key: "hot_share", Kind: lessons.Float, Min: 0, Max: 100, Step: 1}, true, false, 250, "25"},
		// No step given: a float gets a nice one, 1/200 of the range or below.
		{lessons.Param{Key: "x", Kind: lessons.Float, Min: 0, Max: 1}, true, false, 333, "0.335"},
		{lessons.Param{Key: "seed", Kind: lessons.Int, Min: 0, Max: 1 << 31, Step: 1}, false, false, 0, ""},
		{lessons.Param{Key: "mode", Kind: lessons.Choice, Choices: []string{"a"}}, false, false, 0, ""},
	}
	for _, c := range cases {
		s, ok := scaleFor(c.p)
		if ok != c.slider {
			t.Errorf("%s: slider %v, want %v", c.p.Key, ok, c.slider)
			continue
		}
		if !ok {
			continue
		}
		v := s.value(c.pos)
		if s.log != c.log || s.text(v) != c.want || s.value(s.pos(v)) != v {
			t.Errorf("%s: log %v, position %d → %q → position %d; want %v, %q and a position giving it back", c.p.Key, s.log, c.pos, s.text(v), s.pos(v), c.log, c.want)
		}
	}
}
