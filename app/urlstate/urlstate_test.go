package urlstate

import (
	"net/url"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/lessons"
)

// testLesson is a throwaway lesson for these tests; it is never registered.
func testLesson() *lessons.Lesson {
	return &lessons.Lesson{
		Slug: "test-lesson", Title: "Test",
		Params: []lessons.Param{
			{Key: "block", Label: "Block size", Unit: "tokens", Kind: lessons.Int, Default: 16, Min: 1, Max: 256, Step: 1},
			{Key: "rate", Label: "Rate", Kind: lessons.Float, Default: 0.5, Min: 0, Max: 1, Step: 0.1},
			{Key: "mode", Label: "Mode", Kind: lessons.Choice, Choices: []string{"max", "exact"}},
		},
		Check: func(v lessons.Values) error {
			if v.Int("block") == 7 {
				return lessons.Relation("block", "7", "anything but 7")
			}
			return nil
		},
	}
}

func TestParseQueryGood(t *testing.T) {
	l := testLesson()
	q, _ := url.ParseQuery("step=2&block=32&rate=0.25&mode=EXACT&utm_source=blog")
	st := ParseQuery(l, q)
	if st.Step != 2 || len(st.Notices) != 0 {
		t.Fatalf("step %d notices %v", st.Step, st.Notices)
	}
	v, notices := ResolveParams(l, st.Raw)
	if len(notices) != 0 {
		t.Fatalf("notices %v", notices)
	}
	if v.Int("block") != 32 || v.Float("rate") != 0.25 || v.Choice("mode") != "exact" {
		t.Fatalf("values %v", v.Text())
	}
	if got, want := EncodeQuery(l, v, 2), "step=2&block=32&rate=0.25&mode=exact"; got != want {
		t.Fatalf("EncodeQuery = %q, want %q", got, want)
	}
}

func TestParseQueryBadValuesNameTheKey(t *testing.T) {
	l := testLesson()
	q, _ := url.ParseQuery("step=abc&block=999&rate=x&mode=nope")
	st := ParseQuery(l, q)
	if st.Step != 0 {
		t.Fatalf("step = %d, want 0 (invalid)", st.Step)
	}
	v, notices := ResolveParams(l, st.Raw)
	all := append(st.Notices, notices...)
	joined := strings.Join(all, "\n")
	for _, want := range []string{
		`step = "abc"`,
		`(block) = "999"`, "from 1 to 256", "default, 16",
		`(rate) = "x"`, "from 0 to 1",
		`(mode) = "nope"`, "one of max, exact",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("notices lack %q:\n%s", want, joined)
		}
	}
	if v.Int("block") != 16 || v.Float("rate") != 0.5 || v.Choice("mode") != "max" {
		t.Fatalf("bad values must fall back to defaults: %v", v.Text())
	}
}

func TestParseQueryLongAndNegative(t *testing.T) {
	l := testLesson()
	q := url.Values{"step": {"-3"}, "block": {strings.Repeat("9", 500)}}
	st := ParseQuery(l, q)
	if st.Step != 1 || len(st.Notices) != 1 {
		t.Fatalf("step %d notices %v", st.Step, st.Notices)
	}
	_, notices := ResolveParams(l, st.Raw)
	if len(notices) != 1 || len(notices[0]) > 300 {
		t.Fatalf("long value notice: %v", notices)
	}
}

// A broken relation resets the knob it names, not the others: they keep
// the address's values; a relation no knob's default mends resets all.
func TestResolveRelationKeepsOtherKnobs(t *testing.T) {
	l := testLesson()
	v, notices := ResolveParams(l, map[string]string{"block": "7", "rate": "0.9", "mode": "exact"})
	if len(notices) != 1 || !strings.Contains(notices[0], "block") || !strings.Contains(notices[0], "anything but 7") ||
		!strings.Contains(notices[0], "default, 16") || !strings.Contains(notices[0], "other parameters stay") {
		t.Fatalf("notices %v", notices)
	}
	if v.Int("block") != 16 || v.Float("rate") != 0.9 || v.Choice("mode") != "exact" {
		t.Fatalf("a failed check must reset block alone: %v", v.Text())
	}
	stubborn := testLesson()
	stubborn.Check = func(v lessons.Values) error {
		if v.Float("rate") > 0.8 {
			return lessons.Relation("block", v.TextOf("block"), "a rate of at most 0.8") // names a knob whose default does not mend it
		}
		return nil
	}
	// Mended knob by knob: block, then rate (the relation then names it);
	// mode stays.
	v, notices = ResolveParams(stubborn, map[string]string{"block": "32", "rate": "0.9", "mode": "exact"})
	if v.Int("block") != 16 || v.Float("rate") != 0.5 || v.Choice("mode") != "exact" || len(notices) != 2 {
		t.Fatalf("a relation block's default does not mend: %v, notices %q", v.Text(), notices)
	}
	never := testLesson()
	never.Check = func(v lessons.Values) error { return lessons.Relation("block", v.TextOf("block"), "never") }
	v, notices = ResolveParams(never, map[string]string{"block": "32", "rate": "0.9"})
	if v.Int("block") != 16 || v.Float("rate") != 0.5 || !strings.Contains(notices[len(notices)-1], "default values for all") {
		t.Fatalf("a relation nothing mends resets every knob: %v, notices %q", v.Text(), notices)
	}
}

func TestEncodeRawKeepsBadText(t *testing.T) {
	l := testLesson()
	got := EncodeRaw(l, map[string]string{"block": "1e9", "mode": "a b"}, 3)
	if got != "step=3&block=1e9&mode=a+b" {
		t.Fatalf("EncodeRaw = %q", got)
	}
}

func TestKnobErrors(t *testing.T) {
	l := testLesson()
	cases := []struct {
		raw  map[string]string
		want map[string]string // key → part of the message; nil: valid
	}{
		{map[string]string{"block": "32", "mode": "exact"}, nil},
		{map[string]string{"block": "0"}, map[string]string{"block": "an integer from 1 to 256"}},
		{map[string]string{"block": "x", "rate": "2"}, map[string]string{"block": `"x" is not allowed`, "rate": "a number from 0 to 1"}},
		{map[string]string{"block": "7"}, map[string]string{"block": "anything but 7"}}, // the relation check
	}
	for _, c := range cases {
		v, got := KnobErrors(l, c.raw)
		if len(got) != len(c.want) {
			t.Errorf("KnobErrors(%v) = %v, want keys of %v", c.raw, got, c.want)
			continue
		}
		for k, part := range c.want {
			if !strings.Contains(got[k], part) {
				t.Errorf("KnobErrors(%v)[%s] = %q, want it to contain %q", c.raw, k, got[k], part)
			}
		}
		if c.want == nil && v.Int("block") != 32 {
			t.Errorf("valid knobs resolved to %v", v.Text())
		}
	}
}

func TestSlugFromPath(t *testing.T) {
	for in, want := range map[string]string{
		"/lesson/some-lesson": "some-lesson", "/repo/lesson/some-lesson": "some-lesson", "/lesson/some-lesson/": "some-lesson",
		"/lesson/some-lesson.html": "some-lesson", "/lesson/some-lesson/index.html": "some-lesson", "/embed/some-lesson": "some-lesson", "/": "",
	} {
		if got, _ := SlugFromPath(in); got != want {
			t.Errorf("SlugFromPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseQueryFindHideTheme(t *testing.T) {
	l := testLesson()
	q, _ := url.ParseQuery("find=two&hide=narration,CONTROLS,narration&theme=light&debug=x")
	st := ParseQuery(l, q)
	if len(st.Notices) != 0 {
		t.Fatalf("notices %v", st.Notices)
	}
	if st.Find != "two" || !st.Hide.Controls || !st.Hide.Narration || st.Hide.Params || st.Theme != "light" {
		t.Fatalf("state %+v", st)
	}
	if got, want := st.Extra(), "&hide=controls,narration&theme=light&debug=x"; got != want {
		t.Errorf("Extra = %q, want %q", got, want)
	}
	s := &lessons.Script{Steps: []lessons.Step{{Title: "one"}, {Title: "Two things"}}}
	if n := lessons.StepFor(s, st.Find); n != 2 {
		t.Errorf("StepFor(two) = %d, want 2", n)
	}

	q, _ = url.ParseQuery("hide=controls,wings&theme=purple&find=" + strings.Repeat("x", 80))
	st = ParseQuery(l, q)
	if !st.Hide.Controls || st.Theme != "" || st.Find != "" {
		t.Errorf("bad values kept: %+v", st)
	}
	joined := strings.Join(st.Notices, "\n")
	for _, want := range []string{"wings", "theme", "find"} {
		if !strings.Contains(joined, want) {
			t.Errorf("no notice naming %s: %v", want, st.Notices)
		}
	}
	if h, n := ParseHide(strings.Repeat("controls,", 20)); h.Controls || len(n) != 1 {
		t.Errorf("an over-long hide= was read: %+v %v", h, n)
	}
	if (Hide{}).String() != "" || (Hide{Params: true, Controls: true}).String() != "controls,params" {
		t.Error("Hide.String is not canonical")
	}
}

// A relation broken by the knob just moved is reported at that knob, with
// the value typed there and the relation's reason; an error of a value's
// own range stays at its field, whichever knob moved.
func TestKnobErrorsAt(t *testing.T) {
	l := testLesson()
	l.Check = func(v lessons.Values) error {
		if v.Int("block") > 64 && v.Float("rate") > 0.5 {
			return lessons.Relation("block", v.Text()["block"], "at most 64 when the rate is over 0.5")
		}
		return nil
	}
	cases := []struct {
		name  string
		raw   map[string]string
		moved string
		want  map[string]string // key → part of the message; nil: valid
	}{
		{"valid", map[string]string{"block": "128", "rate": "0.5"}, "rate", nil},
		{"relation, named knob moved", map[string]string{"block": "128", "rate": "0.9"}, "block",
			map[string]string{"block": "at most 64 when the rate is over 0.5"}},
		{"relation, other knob moved", map[string]string{"block": "128", "rate": "0.9"}, "rate",
			map[string]string{"rate": `"0.9" is not allowed: want at most 64 when the rate is over 0.5`}},
		{"relation, nothing moved (a reset)", map[string]string{"block": "128", "rate": "0.9"}, "",
			map[string]string{"block": "at most 64"}},
		{"own range, other knob moved", map[string]string{"block": "0", "rate": "0.9"}, "rate",
			map[string]string{"block": "an integer from 1 to 256"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, got := KnobErrorsAt(l, c.raw, c.moved)
			if len(got) != len(c.want) {
				t.Fatalf("KnobErrorsAt(%v, moved %q) = %v, want keys of %v", c.raw, c.moved, got, c.want)
			}
			for k, part := range c.want {
				if !strings.Contains(got[k], part) {
					t.Errorf("KnobErrorsAt(%v, moved %q)[%s] = %q, want it to contain %q", c.raw, c.moved, k, got[k], part)
				}
			}
		})
	}
}
