package lessons_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/lessontest"
	"github.com/inferlab/inferlab/scene"
)

// The lesson contract, checked for every registered lesson: a new lesson is
// covered by registering it, without editing this test.
//
//   - the defaults build, and the same knobs (seed included) build the same
//     script, byte for byte (steps with their scenes, metrics, claims);
//   - every metric is finite, its key unique, and it has a label and a unit;
//   - every step has a title and a narration;
//   - every knob's minimum, default and maximum (every choice of a choice
//     knob), with the other knobs at their defaults, builds or is refused by
//     Check with a *ParamError that names one of the lesson's knobs;
//   - the lesson bounds its work (MaxWork) and declares its heaviest
//     settings, which build within that bound, as its defaults do.
func TestLessonContract(t *testing.T) {
	for _, l := range lessons.All() {
		t.Run(l.Slug, func(t *testing.T) {
			t.Parallel()
			for _, p := range contractProblems(l, testing.Short()) {
				t.Error(p)
			}
		})
	}
}

// contractProblems returns every way l breaks the contract, in words.
// quick checks only the defaults (for -short).
func contractProblems(l *lessons.Lesson, quick bool) (problems []string) {
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	defer func() {
		if r := recover(); r != nil {
			add("%s panicked: %v", l.Slug, r)
		}
	}()
	if l.Slug == "" || l.Title == "" || l.Summary == "" || l.Engine == "" || l.Part == "" {
		add("metadata incomplete: slug %q, title %q, part %q, summary %q, engine %q", l.Slug, l.Title, l.Part, l.Summary, l.Engine)
	}
	if l.MaxWork <= 0 || len(l.HeavyCorners) == 0 {
		add("no work bound: MaxWork %d, %d heavy corners", l.MaxWork, len(l.HeavyCorners))
	}
	s, _, err := l.Run(nil)
	if err != nil {
		add("defaults do not build: %v", err)
		return problems
	}
	if s != nil && (s.Work <= 0 || (l.MaxWork > 0 && s.Work > l.MaxWork)) {
		add("the defaults counted %d units of work, want 1 to MaxWork (%d)", s.Work, l.MaxWork)
	}
	problems = append(problems, scriptProblems(s)...)
	if len(problems) > 0 {
		return problems // a NaN would also stop the JSON comparison below
	}
	first, err1 := buildJSON(l, nil)
	again, err2 := buildJSON(l, nil)
	if err1 != nil || err2 != nil || !bytes.Equal(first, again) {
		add("the same knobs built two different scripts (errors %v, %v)", err1, err2)
	}
	if quick {
		return problems
	}
	problems = append(problems, extremeProblems(l)...)
	return append(problems, heavyCornerProblems(l)...)
}

// extremeProblems builds each knob's ends (knobExtremes): each builds a
// well-formed script or is refused with an error naming one of l's knobs.
func extremeProblems(l *lessons.Lesson) (problems []string) {
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	seen := map[string]bool{}
	for _, set := range knobExtremes(l) {
		s, _, err := l.Run(set)
		if err != nil {
			var pe *lessons.ParamError
			if !errors.As(err, &pe) {
				add("%v: refused without naming a knob: %v", set, err)
			} else if _, ok := l.Param(pe.Key); !ok {
				add("%v: refusal names %q, which is not a knob of %s: %v", set, pe.Key, l.Slug, err)
			}
			continue
		}
		for _, p := range scriptProblems(s) {
			if !seen[p] { // one report per problem, with the first knob set that shows it
				seen[p] = true
				add("%v: %s", set, p)
			}
		}
	}
	return problems
}

// heavyCornerProblems builds l's heaviest settings: each is accepted and
// counts no more work than MaxWork.
func heavyCornerProblems(l *lessons.Lesson) (problems []string) {
	for _, set := range l.HeavyCorners {
		s, _, err := l.Run(set)
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("heavy corner %v is refused: %v", set, err))
		case l.MaxWork > 0 && s.Work > l.MaxWork:
			problems = append(problems, fmt.Sprintf("heavy corner %v counted %d units of work, over MaxWork %d", set, s.Work, l.MaxWork))
		}
	}
	return problems
}

// scriptProblems checks one built script.
func scriptProblems(s *lessons.Script) (problems []string) {
	if s == nil {
		return []string{"Build returned no script and no error"}
	}
	if len(s.Steps) == 0 {
		problems = append(problems, "no steps")
	}
	for i, st := range s.Steps {
		if strings.TrimSpace(st.Title) == "" || strings.TrimSpace(st.Narration) == "" {
			problems = append(problems, fmt.Sprintf("step %d has no title or no narration (title %q)", i, st.Title))
		}
		problems = append(problems, mentionProblems(i, st)...)
		problems = append(problems, cursorProblems(i, st)...)
	}
	seen := map[string]bool{}
	for _, m := range s.Metrics {
		switch {
		case seen[m.Key]:
			problems = append(problems, "metric "+m.Key+" appears twice")
		case math.IsNaN(m.Value) || math.IsInf(m.Value, 0):
			problems = append(problems, fmt.Sprintf("metric %s is %v", m.Key, m.Value))
		case m.Key == "" || m.Label == "" || m.Unit == "":
			problems = append(problems, fmt.Sprintf("metric %q has no label or no unit (label %q, unit %q)", m.Key, m.Label, m.Unit))
		case m.Better != lessons.NoDirection && m.Better != lessons.HigherIsBetter && m.Better != lessons.LowerIsBetter:
			problems = append(problems, fmt.Sprintf("metric %s: better = %q, want %q, %q or none", m.Key, m.Better, lessons.HigherIsBetter, lessons.LowerIsBetter))
		}
		seen[m.Key] = true
	}
	return problems
}

// cursorProblems checks that a chart's "now" line (Chart.Cursor) stands
// where the chart has data: not on a bar chart's categories, not outside
// its series' x range (a by-turn chart drew one at turn 0).
func cursorProblems(i int, st lessons.Step) (problems []string) {
	for _, sc := range st.Scenes {
		c := sc.Chart
		if c == nil || c.Cursor == nil {
			continue
		}
		if c.Type == scene.Bar {
			problems = append(problems, fmt.Sprintf("step %d: bar chart %q has a cursor", i, sc.ID))
			continue
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, se := range c.Series {
			for _, x := range se.X {
				lo, hi = min(lo, x), max(hi, x)
			}
		}
		if x := *c.Cursor; x < lo || x > hi {
			problems = append(problems, fmt.Sprintf("step %d: chart %q has its cursor at %g, outside its data's x range %g to %g", i, sc.ID, x, lo, hi))
		}
	}
	return problems
}

// mentionProblems checks that each mention of a step quotes its narration
// and names an element that one of the step's scenes marks, and that each
// mark has a reference.
func mentionProblems(i int, st lessons.Step) (problems []string) {
	marked := map[string]bool{}
	for _, sc := range st.Scenes {
		for _, m := range sc.Marks {
			if !strings.Contains(m.Ref, ":") {
				problems = append(problems, fmt.Sprintf("step %d: scene %q marks %q, not a kind:key reference", i, sc.ID, m.Ref))
			}
			if !drawnIn(sc, m.Ref) {
				problems = append(problems, fmt.Sprintf("step %d: scene %q marks %q, which it does not draw", i, sc.ID, m.Ref))
			}
			marked[sc.ID+" "+m.Ref] = true
		}
	}
	for _, m := range st.Mentions {
		if !strings.Contains(st.Narration, m.Text) || m.Text == "" {
			problems = append(problems, fmt.Sprintf("step %d: mention %q is not in the narration", i, m.Text))
		}
		if !marked[m.Scene+" "+m.Ref] {
			problems = append(problems, fmt.Sprintf("step %d: mention %q names %s in scene %q, which marks no such element", i, m.Text, m.Ref, m.Scene))
		}
	}
	return problems
}

// drawnIn reports whether a chart's point or a table's row that ref names
// exists in sc (other kinds of reference are not checked here: their
// renderers' tests and the e2e layout test see them drawn).
func drawnIn(sc scene.Scene, ref string) bool {
	kind, key, _ := strings.Cut(ref, ":")
	switch {
	case kind == "point" && sc.Chart != nil:
		i := strings.LastIndex(key, ":")
		n, err := strconv.Atoi(key[i+1:])
		if i < 0 || err != nil {
			return false
		}
		for _, se := range sc.Chart.Series {
			if se.Name == key[:i] {
				return n >= 0 && n < len(se.Y)
			}
		}
		return false
	case kind == "row" && sc.Table != nil:
		n, err := strconv.Atoi(key)
		if err != nil {
			return true // a named row (row:p1): looked up by the renderer
		}
		return n >= 0 && n < len(sc.Table.Rows)
	}
	return true
}

// buildJSON builds l with the raw knobs and returns the whole script as JSON.
func buildJSON(l *lessons.Lesson, raw map[string]string) ([]byte, error) {
	s, _, err := l.Run(raw)
	if err != nil {
		return nil, err
	}
	return json.Marshal(s)
}

// knobExtremes lists one knob set per knob end: each numeric knob at its
// minimum and at its maximum, each choice knob at each choice, the other
// knobs at their defaults.
func knobExtremes(l *lessons.Lesson) []map[string]string {
	var out []map[string]string
	for _, p := range l.Params {
		if p.Kind == lessons.Choice {
			for _, c := range p.Choices[1:] {
				out = append(out, map[string]string{p.Key: c})
			}
			continue
		}
		for _, x := range []float64{p.Min, p.Max} {
			out = append(out, map[string]string{p.Key: strconv.FormatFloat(x, 'f', -1, 64)})
		}
	}
	return out
}

// The contract test must fail on a broken lesson: each of these breaks one
// rule and must be reported.
func TestLessonContractCatchesBrokenLessons(t *testing.T) {
	if p := contractProblems(wellFormedLesson(), false); len(p) > 0 {
		t.Fatalf("the well-formed fake lesson is reported broken: %v", p)
	}
	for _, c := range brokenLessons() {
		l := wellFormedLesson()
		c.break_(l)
		got := strings.Join(contractProblems(l, false), "\n")
		if !strings.Contains(got, c.want) {
			t.Errorf("%s: want a problem mentioning %q, got %q", c.name, c.want, got)
		}
	}
}

// wellFormedLesson is a fake lesson that keeps the contract.
func wellFormedLesson() *lessons.Lesson {
	return &lessons.Lesson{
		Slug: "fake", Title: "Fake", Part: "Part 0", Summary: "a lesson for testing the contract", Engine: "none",
		Params:  []lessons.Param{{Key: "n", Label: "N", Unit: "things", Kind: lessons.Int, Default: 2, Min: 1, Max: 4, Step: 1}},
		MaxWork: 4, HeavyCorners: []map[string]string{{"n": "4"}},
		Sim: lessontest.SimFunc(func(v lessons.Values) (*lessons.Script, error) {
			return &lessons.Script{
				Steps:   []lessons.Step{{Title: "One", Narration: "n is " + strconv.Itoa(v.Int("n"))}},
				Metrics: []lessons.Metric{{Key: "n", Label: "N", Unit: "things", Value: float64(v.Int("n"))}},
				Work:    int64(v.Int("n")),
			}, nil
		}),
	}
}

// brokenLesson breaks one rule of the contract in a well-formed lesson; the
// contract test must report it with a problem mentioning want.
type brokenLesson struct {
	name   string
	break_ func(l *lessons.Lesson)
	want   string
}

func brokenLessons() []brokenLesson {
	return []brokenLesson{
		{"defaults fail", func(l *lessons.Lesson) {
			l.Sim = lessontest.SimFunc(func(lessons.Values) (*lessons.Script, error) { return nil, errors.New("boom") })
		}, "defaults do not build"},
		{"not deterministic", func(l *lessons.Lesson) {
			calls := 0
			b := l.Sim.Simulate
			l.Sim = lessontest.SimFunc(func(v lessons.Values) (*lessons.Script, error) {
				s, err := b(v)
				calls++
				s.Steps[0].Narration += strings.Repeat("!", calls)
				return s, err
			})
		}, "two different scripts"},
		{"NaN metric", func(l *lessons.Lesson) {
			b := l.Sim.Simulate
			l.Sim = lessontest.SimFunc(func(v lessons.Values) (*lessons.Script, error) {
				s, err := b(v)
				s.Metrics[0].Value = math.NaN()
				return s, err
			})
		}, "is NaN"},
		{"metric without unit", func(l *lessons.Lesson) {
			b := l.Sim.Simulate
			l.Sim = lessontest.SimFunc(func(v lessons.Values) (*lessons.Script, error) {
				s, err := b(v)
				s.Metrics[0].Unit = ""
				return s, err
			})
		}, "no unit"},
		{"duplicate metric", func(l *lessons.Lesson) {
			b := l.Sim.Simulate
			l.Sim = lessontest.SimFunc(func(v lessons.Values) (*lessons.Script, error) {
				s, err := b(v)
				s.Metrics = append(s.Metrics, s.Metrics[0])
				return s, err
			})
		}, "appears twice"},
		{"untitled step", func(l *lessons.Lesson) {
			b := l.Sim.Simulate
			l.Sim = lessontest.SimFunc(func(v lessons.Values) (*lessons.Script, error) {
				s, err := b(v)
				s.Steps = append(s.Steps, lessons.Step{Narration: "no title"})
				return s, err
			})
		}, "no title or no narration"},
		{"max knob panics", func(l *lessons.Lesson) {
			b := l.Sim.Simulate
			l.Sim = lessontest.SimFunc(func(v lessons.Values) (*lessons.Script, error) {
				if v.Int("n") == 4 {
					var s []int
					_ = s[v.Int("n")]
				}
				return b(v)
			})
		}, "panicked"},
		{"unnamed refusal", func(l *lessons.Lesson) {
			l.Check = func(v lessons.Values) error {
				if v.Int("n") == 1 {
					return errors.New("too small")
				}
				return nil
			}
		}, "refused without naming a knob"},
		{"mention of an unmarked element", func(l *lessons.Lesson) {
			b := l.Sim.Simulate
			l.Sim = lessontest.SimFunc(func(v lessons.Values) (*lessons.Script, error) {
				s, err := b(v)
				s.Steps[0].Mentions = []scene.Mention{{Text: "n is", Scene: "grid", Ref: "block:1"}}
				return s, err
			})
		}, "marks no such element"},
		{"heavy corner over the bound", func(l *lessons.Lesson) {
			l.MaxWork = 3
		}, "over MaxWork"},
		{"no work bound", func(l *lessons.Lesson) {
			l.MaxWork = 0
		}, "no work bound"},
		{"no heavy corners", func(l *lessons.Lesson) {
			l.HeavyCorners = nil
		}, "no work bound"},
		{"work not counted", func(l *lessons.Lesson) {
			b := l.Sim.Simulate
			l.Sim = lessontest.SimFunc(func(v lessons.Values) (*lessons.Script, error) {
				s, err := b(v)
				s.Work = 0
				return s, err
			})
		}, "counted 0 units of work"},
	}
}
