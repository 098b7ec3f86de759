package lessons_test

import (
	"errors"
	"strconv"
	"testing"

	"github.com/inferlab/inferlab/lessons"
)

// A refusal of a relation between knobs names the knob the reader set, not
// one left at its default (each lesson's own cases, with the message, are its
// registered refusals: TestLessonsRefuse). Every lesson, every knob set alone
// to its bounds (each choice of a choice knob): a relation the setting breaks
// is refused on that knob.
func TestRelationRefusalsNameTheKnobSetAlone(t *testing.T) {
	for _, l := range lessons.All() {
		for _, p := range l.Params {
			var values []string
			switch p.Kind {
			case lessons.Choice:
				values = p.Choices
			default:
				values = []string{p.Format(p.Min), p.Format(p.Max)}
				if p.Kind == lessons.Int {
					values = append(values, strconv.Itoa(int(p.Min)+1))
				}
			}
			for _, val := range values {
				if val == p.DefaultText() {
					continue
				}
				v, errs := l.Resolve(map[string]string{p.Key: val})
				if len(errs) > 0 {
					t.Fatalf("%s %s=%s: %v", l.Slug, p.Key, val, errs[0])
				}
				err := l.CheckValues(v)
				var pe *lessons.ParamError
				if err != nil && errors.As(err, &pe) && pe.Key != p.Key {
					t.Errorf("%s --set %s=%s: refused on %s, a knob at its default: %v", l.Slug, p.Key, val, pe.Key, err)
				}
			}
		}
	}
}
