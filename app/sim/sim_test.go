package sim

import (
	"encoding/json"
	"maps"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/scene"
)

// TestRoundTrip: for every lesson at its defaults, the script decoded from
// the wire (and from a page's embedded JSON, when small enough) equals the
// one built, step by step and scene by scene.
func TestRoundTrip(t *testing.T) {
	for _, l := range lessons.All() {
		t.Run(l.Slug, func(t *testing.T) {
			params := l.Defaults().Text()
			built, f := Build(l, params, "", nil)
			if f != nil {
				t.Fatalf("build: %s", f.Message)
			}
			want := *built
			want.Work = 0 // not part of any output, and not sent

			rep, got, err := Decode(Run(Request{Slug: l.Slug, Params: params}))
			if err != nil || rep.Failure != nil || got == nil {
				t.Fatalf("decode: %v %+v %v", err, rep.Failure, got)
			}
			if got.Count() != len(built.Steps) {
				t.Fatalf("%d steps decoded, want %d", got.Count(), len(built.Steps))
			}
			// The head alone: titles, narration and quizzes before any scene.
			for i, st := range got.Steps {
				if st.Title != built.Steps[i].Title || st.Narration != built.Steps[i].Narration || !reflect.DeepEqual(st.Quiz, built.Steps[i].Quiz) {
					t.Fatalf("step %d's head differs", i+1)
				}
			}
			full, err := got.Full()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*full, want) {
				for i := range want.Steps {
					if !reflect.DeepEqual(full.Steps[i], want.Steps[i]) {
						t.Fatalf("step %d differs after the round trip:\n got %+v\nwant %+v", i+1, full.Steps[i], want.Steps[i])
					}
				}
				t.Fatalf("metrics or claims differ after the round trip")
			}

			// Every lesson's default script is carried by its prerendered
			// page (MaxEmbed), and reads back the same.
			text, ok := EmbedText("k", params, built)
			if !ok {
				t.Fatalf("the defaults' script (%d bytes on the wire) is not carried by the page", len(Run(Request{Slug: l.Slug, Params: params})))
			}
			key, ps, emb, err := ReadEmbedded(text)
			if err != nil || key != "k" || !reflect.DeepEqual(ps, params) {
				t.Fatalf("embedded: %q %v", key, err)
			}
			embFull, err := emb.Full()
			if err != nil || !reflect.DeepEqual(*embFull, want) {
				t.Fatalf("the embedded script differs from the built one (%v)", err)
			}
		})
	}
}

func TestReplyFailures(t *testing.T) {
	l := lessons.All()[0]
	cases := []struct {
		name string
		req  Request
		want func(Reply) bool
	}{
		{"unknown lesson", Request{Slug: "no-such"}, func(r Reply) bool {
			return r.Failure != nil && strings.Contains(r.Failure.Message, "no-such")
		}},
		{"panic", Request{Slug: l.Slug, Params: l.Defaults().Text(), Debug: "panic"}, func(r Reply) bool {
			return r.Failure != nil && r.Failure.Panic && r.Failure.Lesson == l.Slug && r.Failure.Stack != ""
		}},
		{"bad knob", Request{Slug: l.Slug, Params: map[string]string{l.Params[0].Key: "nonsense"}}, func(r Reply) bool {
			return r.Failure != nil && strings.Contains(r.Failure.Message, l.Params[0].Key)
		}},
	}
	for _, tl := range lessons.All() {
		if tl.TakesTrace() {
			cases = append(cases, struct {
				name string
				req  Request
				want func(Reply) bool
			}{"bad trace", Request{Slug: tl.Slug, Params: map[string]string{}, Trace: &TraceFile{Name: "t.jsonl", Text: `{"arrival_s": -1}`}}, func(r Reply) bool {
				return r.Failure == nil && strings.HasPrefix(r.TraceError, "t.jsonl: ")
			}})
			break
		}
	}
	for _, c := range cases {
		rep, s, err := Decode(Run(c.req))
		if err != nil || s != nil || !c.want(rep) {
			t.Errorf("%s: reply %+v (failure %+v), script %v, err %v", c.name, rep, rep.Failure, s != nil, err)
		}
	}
}

func TestTraceReply(t *testing.T) {
	text := `{"arrival_s": 0, "prompt_tokens": 64, "output_tokens": 8}` + "\n" + `{"arrival_s": 0.1, "prompt_tokens": 32, "output_tokens": 4}` + "\n"
	rep, s, err := Decode(Run(Request{Slug: traceLesson(t).Slug, Params: map[string]string{}, Trace: &TraceFile{Name: "two.jsonl", Text: text}}))
	if err != nil || rep.Failure != nil || s == nil {
		t.Fatalf("%v %+v", err, rep)
	}
	if rep.TraceRequests != 2 || !strings.Contains(strings.Join(narrations(s), " "), "two.jsonl") {
		t.Errorf("trace reply: %d requests, narration %q", rep.TraceRequests, narrations(s))
	}
}

func narrations(s *Script) []string {
	var out []string
	for _, st := range s.Steps {
		out = append(out, st.Narration)
	}
	return out
}

func TestDecodeRejectsGarbage(t *testing.T) {
	good := Run(Request{Slug: lessons.All()[0].Slug, Params: map[string]string{}})
	for name, b := range map[string][]byte{
		"empty":     nil,
		"magic":     []byte("XXXX0000000000"),
		"old magic": []byte("ILS1{}\x02\x00\x00\x00"),
		"truncated": good[:10],
		"head":      []byte("ILS2{!0000000002"),
		"length":    []byte("ILS2{}0000000255"),
		"digits":    []byte("ILS2{}00000000x2"),
		"negative":  []byte("ILS2{}-000000002"),
	} {
		if _, _, err := Decode(b); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// A corrupted step fails when that step is shown, naming it.
	_, s, err := Decode(good)
	if err != nil {
		t.Fatal(err)
	}
	s.raw[1] = []byte("[{")
	if _, err := s.Scenes(1); err == nil || !strings.Contains(err.Error(), "step 2") {
		t.Errorf("corrupt step 2: %v", err)
	}
	if _, err := s.Scenes(0); err != nil {
		t.Errorf("step 1: %v", err)
	}
}

// The embedded text must not close the <script> element it sits in, nor
// open a comment, wherever the text comes from: narration, scene titles or
// the block labels the wire format writes by hand.
func TestEmbedTextIsScriptSafe(t *testing.T) {
	nasty := "</script><!-- a & b \u2028"
	s := &lessons.Script{Steps: []lessons.Step{{Title: nasty, Narration: nasty, Scenes: []scene.Scene{{
		Title: nasty,
		Grid:  &scene.BlockGrid{BlockSize: 4, Blocks: []scene.Block{{Owner: 1, Label: nasty, Used: 2}, {Owner: 2, Label: "R2 <", Used: 4}}},
	}}}}}
	text, ok := EmbedText("k", map[string]string{"a": nasty}, s)
	if !ok {
		t.Fatal("not embedded")
	}
	for _, bad := range []string{"</", "<!--", "<", ">", "&", "\u2028"} {
		if strings.Contains(text, bad) {
			t.Fatalf("the embedded text contains %q: %s", bad, text)
		}
	}
	key, ps, back, err := ReadEmbedded(text)
	if err != nil || key != "k" || ps["a"] != nasty {
		t.Fatalf("%q %v %v", key, ps, err)
	}
	full, err := back.Full()
	if err != nil || !reflect.DeepEqual(*full, *s) {
		t.Fatalf("read back %+v (%v), want %+v", full, err, s)
	}
	// Over MaxEmbed: not carried (the worker computes it).
	big := &lessons.Script{Steps: []lessons.Step{{Narration: strings.Repeat("x", MaxEmbed)}}}
	if _, ok := EmbedText("k", nil, big); ok {
		t.Error("a script over MaxEmbed was embedded")
	}
	if _, _, _, err := ReadEmbedded(`{"key":"k"}`); err == nil {
		t.Error("a text without a script read back")
	}
}

// The prefetch reads an address as the page does: the same state gives the
// same request bytes.
func TestForAddress(t *testing.T) {
	l, k, other := knobsOf(t)
	slug, min := l.Slug, k.val
	cases := []struct {
		path, query string
		knobs       map[string]string // the knobs the page resolves
		debug       string
		ok          bool
	}{
		{"/lesson/" + slug, "", nil, "", true},
		{"/embed/" + slug + "/", "step=4&" + k.Key + "=" + min + "&theme=dark", map[string]string{k.Key: min}, "", true},
		{"/repo/lesson/" + slug + ".html", k.Key + "=zero&" + other.Key + "=" + other.val, map[string]string{other.Key: other.val}, "", true}, // a bad knob takes its default
		{"/lesson/" + slug, "debug=panic", nil, "panic", true},
		{"/lesson/nope", "", nil, "", false},
		{"/", "", nil, "", false},
	}
	// A broken relation between knobs: all defaults.
	if set := refusedByCheck(l); set != nil {
		q := url.Values{}
		for key, val := range set {
			q.Set(key, val)
		}
		cases = append(cases, struct {
			path, query string
			knobs       map[string]string
			debug       string
			ok          bool
		}{"/lesson/" + slug, q.Encode(), nil, "", true})
		t.Logf("%s: %s is refused by Check", slug, q.Encode())
	}
	for _, c := range cases {
		got, ok := ForAddress(c.path, c.query)
		if ok != c.ok {
			t.Errorf("ForAddress(%q, %q) ok = %v", c.path, c.query, ok)
			continue
		}
		if !ok {
			continue
		}
		v, errs := l.Resolve(c.knobs)
		if len(errs) > 0 {
			t.Fatal(errs[0])
		}
		want, _ := NewRequest(slug, v, c.debug).Body()
		body, _ := got.Body()
		if string(body) != string(want) {
			t.Errorf("ForAddress(%q, %q) = %s, want %s", c.path, c.query, body, want)
		}
	}
}

// knobsOf is the first lesson with two integer knobs that each accept a
// value other than their default (their minimum or maximum, the other
// knobs at their defaults), with those values.
func knobsOf(t *testing.T) (l *lessons.Lesson, k, other knobValue) {
	t.Helper()
	for _, l := range lessons.All() {
		var ks []knobValue
		for _, p := range l.Params {
			if p.Kind != lessons.Int {
				continue
			}
			for _, x := range []float64{p.Min, p.Max} {
				if x != p.Default && accepts(l, map[string]string{p.Key: fmtKnob(x)}) {
					ks = append(ks, knobValue{p.Key, fmtKnob(x)})
					break
				}
			}
		}
		if len(ks) >= 2 {
			return l, ks[0], ks[1]
		}
	}
	t.Skip("no lesson has two integer knobs")
	return nil, knobValue{}, knobValue{}
}

// knobValue is a knob and a value for it.
type knobValue struct{ Key, val string }

// accepts reports whether l's knobs resolve set and its Check accepts it.
func accepts(l *lessons.Lesson, set map[string]string) bool {
	v, errs := l.Resolve(set)
	return len(errs) == 0 && (l.Check == nil || l.Check(v) == nil)
}

func fmtKnob(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// refusedByCheck is a setting of one or two knobs at their ends that each
// pass their own range but that l's Check refuses, or nil.
func refusedByCheck(l *lessons.Lesson) map[string]string {
	if l.Check == nil {
		return nil
	}
	var ends []map[string]string
	for _, p := range l.Params {
		if p.Kind != lessons.Choice {
			ends = append(ends, map[string]string{p.Key: fmtKnob(p.Min)}, map[string]string{p.Key: fmtKnob(p.Max)})
		}
	}
	for i, a := range ends {
		for _, b := range append([]map[string]string{nil}, ends[i+1:]...) {
			set := maps.Clone(a)
			maps.Copy(set, b)
			if v, errs := l.Resolve(set); len(errs) == 0 && l.Check(v) != nil {
				return set
			}
		}
	}
	return nil
}

// The hand-written grid encoding decodes to the grid, whatever its labels
// and flags.
func TestGridEncoding(t *testing.T) {
	grids := []*scene.BlockGrid{
		{BlockSize: 16, Blocks: []scene.Block{
			{Owner: scene.Free}, {Owner: 3, Label: "R3", Used: 16, Refs: 2, Cached: true, Highlight: true},
			{Owner: 7, Label: `q"uote\\back`, Used: 1}, {Owner: 8, Label: "tab\tnl\nbell\x07", Used: 2},
			{Owner: 9, Label: "µs ✓ 日本", Used: 3}, {Owner: 10, Label: "bad \xff utf8", Used: 4},
		}},
		{BlockSize: 16, Columns: 64, Blocks: []scene.Block{{Owner: 4, Label: "R5", Used: 9, Colour: 13}, {Owner: scene.Free, Colour: 0}}},
		{BlockSize: 1},
		{BlockSize: 2, Blocks: []scene.Block{}},
	}
	for i, g := range grids {
		in := []scene.Scene{{Kind: scene.KindCards, ID: "c", Cards: []scene.Card{{Label: "x", Value: 1}}}, {Kind: scene.KindBlockGrid, ID: "g", Title: "T", Grid: g}}
		b, err := appendScenes(nil, in)
		if err != nil {
			t.Fatal(err)
		}
		var out []scene.Scene
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("grid %d: %v\n%s", i, err, b)
		}
		want, _ := json.Marshal(in) // encoding/json's view (it replaces invalid UTF-8)
		var wantScenes []scene.Scene
		_ = json.Unmarshal(want, &wantScenes)
		if !reflect.DeepEqual(out, wantScenes) {
			t.Errorf("grid %d: decoded %+v, want %+v", i, out[1].Grid, wantScenes[1].Grid)
		}
	}
	if b, _ := appendScenes(nil, nil); string(b) != "null" {
		t.Errorf("nil scenes: %s", b)
	}
}

// heaviestScript is the lesson whose defaults' script is the largest on the
// wire, with that script: the garage's, 1.7 MB, which the Garage
// benchmarks below are named for (BENCHMARKS.md, "Wire format").
func heaviestScript(b *testing.B) (*lessons.Lesson, *lessons.Script) {
	b.Helper()
	var best *lessons.Lesson
	var script *lessons.Script
	size := -1
	for _, l := range lessons.All() {
		s, _, err := l.Run(nil)
		if err != nil {
			b.Fatal(err)
		}
		if n := len(Encode(Reply{}, s)); n > size {
			best, script, size = l, s, n
		}
	}
	if best == nil {
		b.Skip("no lessons")
	}
	return best, script
}

func BenchmarkEncodeGarage(b *testing.B) {
	_, s := heaviestScript(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.SetBytes(int64(len(Encode(Reply{}, s))))
	}
}

func BenchmarkDecodeGarageStep(b *testing.B) {
	_, s := heaviestScript(b)
	data := Encode(Reply{}, s)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_, got, err := Decode(data)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := got.Scenes(i % got.Count()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadEmbeddedGarage is what the heaviest page (the garage's)
// does with the script it carries before showing step 1: read the text and
// decode step 1.
func BenchmarkReadEmbeddedGarage(b *testing.B) {
	l, s := heaviestScript(b)
	text, ok := EmbedText("k", l.Defaults().Text(), s)
	if !ok {
		b.Fatalf("%s's defaults are not carried", l.Slug)
	}
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_, _, got, err := ReadEmbedded(text)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := got.Scenes(0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeGarageReflect is the same scenes through encoding/json
// alone (the wire format before block grids were written by hand), for
// comparison.
func BenchmarkEncodeGarageReflect(b *testing.B) {
	_, s := heaviestScript(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n := 0
		for _, st := range s.Steps {
			out, err := json.Marshal(st.Scenes)
			if err != nil {
				b.Fatal(err)
			}
			n += len(out)
		}
		b.SetBytes(int64(n))
	}
}
