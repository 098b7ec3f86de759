package lessons

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// A refusal of a relation between knobs names the knob the reader set, not
// one left at its default (`kv-tiers --set p_gpu=100` blamed p_host,
// `block-table --set length=1` blamed token), and states the relation with
// the other knob's value.
func TestRelationNamesTheKnobSet(t *testing.T) {
	for _, c := range []struct {
		slug string
		set  map[string]string
		want string
	}{
		{"kv-tiers", map[string]string{"p_gpu": "100"}, `p_gpu = "100" is not allowed with p_host = "30" (p_host: want at most 0%: the hit probabilities of all tiers sum to at most 100%)`},
		{"block-table", map[string]string{"length": "1"}, `length = "1" is not allowed with token = "37" (token: want a token of the 1-token request: 0 to 0)`},
		{"block-table", map[string]string{"length": "1", "neighbours": "8"}, `length = "1" is not allowed with token = "37"`},
		{"block-table", map[string]string{"token": "80"}, `token = "80" is not allowed: want a token of the 72-token request: 0 to 71`},
		{"garage", map[string]string{"output_max": "0"}, `output_max = "0" is not allowed with output_min = "`},
		{"measuring", map[string]string{"rate_max": "0.1"}, `rate_max = "0.1" is not allowed with rate_min = "2" (rate_min: want below rate_max (0.1))`},
	} {
		_, _, err := Get(c.slug).Run(c.set)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: %v\nwant %s", c.slug, c.set, err, c.want)
		}
	}
}

// Every lesson, every knob set alone to its bounds (each choice of a choice
// knob): a relation the setting breaks is refused on that knob.
func TestRelationRefusalsNameTheKnobSetAlone(t *testing.T) {
	for _, l := range All() {
		for _, p := range l.Params {
			var values []string
			switch p.Kind {
			case Choice:
				values = p.Choices
			default:
				values = []string{p.format(p.Min), p.format(p.Max)}
				if p.Kind == Int {
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
				var pe *ParamError
				if err != nil && errors.As(err, &pe) && pe.Key != p.Key {
					t.Errorf("%s --set %s=%s: refused on %s, a knob at its default: %v", l.Slug, p.Key, val, pe.Key, err)
				}
			}
		}
	}
}
