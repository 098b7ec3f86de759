package urlstate

import (
	"net/url"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/lessons"
)

// B's knobs are A's changed by the b. keys; every knob of B is written back.
func TestCompareGood(t *testing.T) {
	l := testLesson()
	q, _ := url.ParseQuery("step=3&block=32&b.rate=0.25")
	st := ParseQuery(l, q)
	if len(st.Notices) != 0 || st.RawB == nil || st.RawB["rate"] != "0.25" {
		t.Fatalf("notices %v, RawB %v", st.Notices, st.RawB)
	}
	a, _ := ResolveParams(l, st.Raw)
	b, notices := ResolveCompare(l, a, st.RawB)
	if len(notices) != 0 {
		t.Fatalf("notices %v", notices)
	}
	if b.Int("block") != 32 || b.Float("rate") != 0.25 || a.Float("rate") != 0.5 {
		t.Fatalf("A %v B %v", a.Text(), b.Text())
	}
	if got, want := EncodeQuery(l, a, 3)+EncodeCompare(l, b), "step=3&block=32&rate=0.5&mode=max&b.block=32&b.rate=0.25&b.mode=max"; got != want {
		t.Errorf("encoded %q, want %q", got, want)
	}
	as, bs := Differing(l, a, b)
	if strings.Join(as, " ") != "rate=0.5" || strings.Join(bs, " ") != "rate=0.25" {
		t.Errorf("differing %v | %v", as, bs)
	}
	// The written address reads back to the same two settings.
	q2, _ := url.ParseQuery(EncodeQuery(l, a, 3) + EncodeCompare(l, b))
	st2 := ParseQuery(l, q2)
	a2, _ := ResolveParams(l, st2.Raw)
	b2, _ := ResolveCompare(l, a2, st2.RawB)
	if Key(l, a2) != Key(l, a) || Key(l, b2) != Key(l, b) {
		t.Errorf("round trip: A %v B %v", a2.Text(), b2.Text())
	}
}

// No b. key: no comparison.
func TestCompareAbsent(t *testing.T) {
	q, _ := url.ParseQuery("block=32")
	if st := ParseQuery(testLesson(), q); st.RawB != nil {
		t.Errorf("RawB = %v without a b. key", st.RawB)
	}
}

// A bad B value gets the notice a bad A value gets, naming b.KEY, the
// value and the range, and B takes A's value; A is untouched. A relation B
// breaks makes the knob it names take A's value, B's others staying (b.rate
// stays 0.9). An unknown b. key is an unknown key.
func TestCompareBadValues(t *testing.T) {
	l := testLesson()
	for _, tc := range []struct {
		query string
		want  []string
		block int // B's block after the fallback
	}{
		{"block=32&b.block=999", []string{`(b.block) = "999"`, "from 1 to 256", "Using A's value, 32."}, 32},
		{"b.mode=nope", []string{`(b.mode) = "nope"`, "one of max, exact"}, 16},
		{"block=32&b.block=7&b.rate=0.9", []string{`(b.block) = "7"`, "anything but 7", "Using A's value, 32; B's other knobs stay as given."}, 32},
	} {
		q, _ := url.ParseQuery(tc.query)
		st := ParseQuery(l, q)
		a, na := ResolveParams(l, st.Raw)
		b, nb := ResolveCompare(l, a, st.RawB)
		joined := strings.Join(append(append(st.Notices, na...), nb...), "\n")
		for _, w := range tc.want {
			if !strings.Contains(joined, w) {
				t.Errorf("%s: notices lack %q:\n%s", tc.query, w, joined)
			}
		}
		if len(na) != 0 || len(nb) != 1 {
			t.Errorf("%s: A notices %v, B notices %v; want none and one", tc.query, na, nb)
		}
		if strings.Contains(tc.query, "b.rate=0.9") && b.Float("rate") != 0.9 {
			t.Errorf("%s: B's rate %v, want 0.9 (kept)", tc.query, b.Float("rate"))
		}
		if b.Int("block") != tc.block {
			t.Errorf("%s: B's block %d, want %d", tc.query, b.Int("block"), tc.block)
		}
	}
	q, _ := url.ParseQuery("b.colour=blue&b.Block=3")
	st := ParseQuery(l, q)
	joined := strings.Join(st.Notices, "\n")
	for _, w := range []string{"b.colour is not a parameter of this lesson", "did you mean b.block?"} {
		if !strings.Contains(joined, w) {
			t.Errorf("notices lack %q:\n%s", w, joined)
		}
	}
	if len(st.RawB) != 0 {
		t.Errorf("RawB = %v from unknown keys", st.RawB)
	}
}

// Both runs serve the same stream: B's seed is A's, and a b.seed says so.
func TestCompareSeedIsShared(t *testing.T) {
	l := &lessons.Lesson{Slug: "s", Params: []lessons.Param{
		{Key: "n", Label: "N", Kind: lessons.Int, Default: 1, Min: 1, Max: 9, Step: 1},
		{Key: "seed", Label: "Seed", Kind: lessons.Int, Default: 42, Min: 0, Max: 1000, Step: 1},
	}}
	q, _ := url.ParseQuery("seed=7&b.seed=8&b.n=2")
	st := ParseQuery(l, q)
	a, _ := ResolveParams(l, st.Raw)
	b, notices := ResolveCompare(l, a, st.RawB)
	if b.Int("seed") != 7 || b.Int("n") != 2 || len(notices) != 1 || !strings.Contains(notices[0], "b.seed") {
		t.Errorf("B %v, notices %v", b.Text(), notices)
	}
	if enc := EncodeCompare(l, b); enc != "&b.n=2" {
		t.Errorf("EncodeCompare = %q, want &b.n=2 (the seed is A's)", enc)
	}
}
