package lessons

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/inferlab/inferlab/internal/textfmt"
)

// ParamKind is the type of a knob's value.
type ParamKind int

// The kinds of knob.
const (
	Int ParamKind = iota
	Float
	Choice
)

// maxRawLen bounds the text of one parameter value taken from a URL or the
// command line, so hostile input cannot make parsing expensive.
const maxRawLen = 64

// Param is one typed knob of a lesson.
type Param struct {
	Key     string // URL and CLI name, e.g. "block_size"
	Label   string // shown beside the control
	Unit    string // e.g. "tokens"
	Help    string // one sentence: what turning it does
	Kind    ParamKind
	Default float64 // for Int and Float
	Min     float64
	Max     float64
	Step    float64
	Choices []string // for Choice; the first is the default
	// Zero, when set, says what 0 means for a numeric knob whose Min is 0
	// ("the chosen GPU's cited figure", "none"): 0 is then a choice, not
	// an amount, and an amount is at least Step, the smallest the control
	// offers. A smaller one (4.9e-324 dollars an hour) would read as 0
	// in every figure computed from it, and one that a float64 reads as 0
	// (1e-400) would silently mean Zero.
	Zero string
}

// DefaultText is the default value as it appears in a URL.
func (p Param) DefaultText() string {
	if p.Kind == Choice {
		return p.Choices[0]
	}
	return p.Format(p.Default)
}

func (p Param) Format(x float64) string {
	if p.Kind == Int {
		return strconv.FormatInt(int64(x), 10)
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// Range describes the allowed values in words, for error messages and help.
func (p Param) Range() string {
	if p.Kind == Choice {
		return "one of " + strings.Join(p.Choices, ", ")
	}
	kind := "a number"
	if p.Kind == Int {
		kind = "an integer"
	}
	if p.Zero != "" {
		return fmt.Sprintf("0 (%s) or %s from %s to %s", p.Zero, kind, p.Format(p.Step), p.Format(p.Max))
	}
	return fmt.Sprintf("%s from %s to %s", kind, p.Format(p.Min), p.Format(p.Max))
}

// ParamError says which knob got which bad value and what is allowed.
type ParamError struct {
	Key   string
	Value string
	Want  string // the allowed range or relation
	// With are the other knobs a relation ties Key to; empty for a knob's
	// own range, and for a relation that may involve any knob (a work
	// bound, whether a GPU holds the setting).
	With []string
	// Held is set when Key was named because the reader set it while the
	// relation's rule (Want) is stated for Held, a knob at its default:
	// `p_gpu = "100" is not allowed with p_host = "30" (p_host: want at
	// most 0%: …)` (Lesson.CheckValues).
	Held *ParamError
}

func (e *ParamError) Error() string {
	return fmt.Sprintf("%s = %q is not allowed%s", e.Key, e.Value, e.Reason())
}

// Reason is the message after "KEY = VALUE is not allowed": ": want …",
// or, for a relation blamed on the knob the reader set, " with OTHER =
// VALUE (OTHER: want …)".
func (e *ParamError) Reason() string {
	if h := e.Held; h != nil {
		return fmt.Sprintf(" with %s = %q (%s: want %s)", h.Key, h.Value, h.Key, h.Want)
	}
	return ": want " + e.Want
}

func joinParamErrors(errs []*ParamError) error {
	if len(errs) == 1 {
		return errs[0]
	}
	all := make([]error, len(errs))
	for i, e := range errs {
		all[i] = e
	}
	return errors.Join(all...)
}

// parse turns raw text into a value for p, or explains why it cannot.
func (p Param) parse(raw string) (float64, string, *ParamError) {
	bad := &ParamError{Key: p.Key, Value: raw, Want: p.Range()}
	if len(raw) > maxRawLen {
		bad.Value = raw[:maxRawLen] + "…"
		return 0, "", bad
	}
	raw = strings.TrimSpace(raw)
	if p.Kind == Choice {
		for _, c := range p.Choices {
			if strings.EqualFold(raw, c) {
				return 0, c, nil
			}
		}
		return 0, "", bad
	}
	if !isDecimal(raw) {
		return 0, "", bad // strconv also reads 1_000, 0x10, Inf and NaN
	}
	x, err := strconv.ParseFloat(raw, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, "", bad
	}
	// A float64 reads "1e-400" as 0 and "1e-400" for an integer as the
	// integer 0: an integer knob takes only text that names an integer,
	// and a knob where 0 means something else takes no amount below Step.
	if p.Kind == Int && (x != math.Trunc(x) || !textfmt.IsWhole(raw)) {
		return 0, "", bad
	}
	if p.Zero != "" && (x == 0 && textfmt.RoundsToZero(raw) || x != 0 && x < p.Step) {
		return 0, "", bad
	}
	if x < p.Min || x > p.Max {
		return 0, "", bad
	}
	return x, "", nil
}

// isDecimal reports whether s is a plain decimal number: an optional sign,
// digits with at most one decimal point, and an optional exponent (12,
// -0.5, .25, 1e3). Underscores, hexadecimal, Inf and NaN are not.
func isDecimal(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		digits++
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(s)
}

// Values holds a lesson's resolved parameters.
type Values struct {
	params  []Param
	nums    map[string]float64
	choices map[string]string
	changed map[string]bool // knobs the raw text set to other than their default
	// traceWork is the work bound a run on a trace is held to (RunTrace:
	// the lesson's own, TraceWork's; RunTraceNative: NativeTraceScale
	// times it); 0 for a run on the knobs' own workload.
	traceWork int64
}

// TraceWorkBound is the work a run on a trace may do, in the units of the
// lesson's TraceWork: the lesson's own bound in the page and through
// RunTrace, NativeTraceScale times it through RunTraceNative; 0 when the
// values were not made for a trace run (a lesson then holds a trace to its
// own bound).
func (v Values) TraceWorkBound() int64 { return v.traceWork }

// Changed reports whether the raw text the values were resolved from set
// the knob to a value other than its default (what the reader touched).
func (v Values) Changed(key string) bool { return v.changed[key] }

// Int returns an integer knob.
func (v Values) Int(key string) int { return int(v.num(key)) }

// Float returns a numeric knob.
func (v Values) Float(key string) float64 { return v.num(key) }

func (v Values) num(key string) float64 {
	x, ok := v.nums[key]
	if !ok {
		panic("lessons: no numeric parameter " + key)
	}
	return x
}

// Choice returns a choice knob.
func (v Values) Choice(key string) string {
	c, ok := v.choices[key]
	if !ok {
		panic("lessons: no choice parameter " + key)
	}
	return c
}

// Text returns every parameter as canonical text (for URLs and --set).
func (v Values) Text() map[string]string {
	out := make(map[string]string, len(v.params))
	for _, p := range v.params {
		out[p.Key] = v.TextOf(p.Key)
	}
	return out
}

// TextOf returns one parameter as canonical text.
func (v Values) TextOf(key string) string {
	for _, p := range v.params {
		if p.Key == key {
			if p.Kind == Choice {
				return v.choices[key]
			}
			return p.Format(v.nums[key])
		}
	}
	return ""
}

// JSON returns the parameters as JSON-ready values: numbers as numbers,
// choices as strings.
func (v Values) JSON() map[string]any {
	out := make(map[string]any, len(v.params))
	for _, p := range v.params {
		if p.Kind == Choice {
			out[p.Key] = v.choices[p.Key]
		} else if p.Kind == Int {
			out[p.Key] = int64(v.nums[p.Key])
		} else {
			out[p.Key] = v.nums[p.Key]
		}
	}
	return out
}

// Param returns the knob with the given key.
func (l *Lesson) Param(key string) (Param, bool) {
	for _, p := range l.Params {
		if p.Key == key {
			return p, true
		}
	}
	return Param{}, false
}

// Defaults returns the lesson's default values.
func (l *Lesson) Defaults() Values {
	v, _ := l.Resolve(nil)
	return v
}

// Resolve reads the lesson's knobs from raw text (URL query or --set pairs).
// Missing keys take their defaults; keys the lesson does not know are
// ignored (a URL carries other state too). A value that does not parse or is
// out of range is reported and replaced by the default, so the caller always
// gets usable Values.
func (l *Lesson) Resolve(raw map[string]string) (Values, []*ParamError) {
	v := Values{params: l.Params, nums: map[string]float64{}, choices: map[string]string{}}
	var errs []*ParamError
	for _, p := range l.Params {
		if p.Kind == Choice {
			v.choices[p.Key] = p.Choices[0]
		} else {
			v.nums[p.Key] = p.Default
		}
		text, ok := raw[p.Key]
		if !ok {
			continue
		}
		x, c, err := p.parse(text)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if p.Kind == Choice {
			v.choices[p.Key] = c
		} else {
			v.nums[p.Key] = x
		}
		if v.TextOf(p.Key) != p.DefaultText() {
			if v.changed == nil {
				v.changed = map[string]bool{}
			}
			v.changed[p.Key] = true
		}
	}
	return v, errs
}

// Relation reports a broken relation between knobs, e.g. min ≤ max: key
// is the knob the rule (want) is stated for, with the other knobs it ties
// key to (none: any knob may take part, as in a work bound).
// Lesson.CheckValues names one of them instead when the reader set it and
// left key at its default.
func Relation(key string, value, want string, with ...string) *ParamError {
	return &ParamError{Key: key, Value: value, Want: want, With: with}
}

// CheckValues runs the lesson's Check. A broken relation stated for a
// knob the reader left at its default is named on a knob of the relation
// the reader set (the first of With, or of the lesson's knobs when With is
// empty), with the rule as stated for the other: `inferlab run kv-tiers
// --set p_gpu=100` is refused as `p_gpu = "100" is not allowed with p_host
// = "30" (p_host: want at most 0%: …)`, not as a refusal of p_host, which
// was never set.
func (l *Lesson) CheckValues(v Values) error {
	if l.Check == nil {
		return nil
	}
	return l.blame(v, l.Check(v))
}

// blame names a broken relation on the knob the reader set (see
// CheckValues); err is returned as it is when it is no *ParamError, or
// names a knob the reader set, or none of its knobs was set.
func (l *Lesson) blame(v Values, err error) error {
	var pe *ParamError
	if err == nil || !errors.As(err, &pe) || pe.Held != nil || v.Changed(pe.Key) {
		return err
	}
	cands := pe.With
	if len(cands) == 0 {
		for _, p := range l.Params {
			cands = append(cands, p.Key)
		}
	}
	for _, k := range cands {
		if k != pe.Key && v.Changed(k) {
			return &ParamError{Key: k, Value: v.TextOf(k), Want: pe.Want, Held: pe}
		}
	}
	return err
}

// Defaults returns the default values of the same knobs.
func (v Values) Defaults() Values {
	l := Lesson{Params: v.params}
	return l.Defaults()
}

// without returns v with the knobs keys left out of what it lists (Text,
// TextOf, JSON), though still readable (Int, Float, Choice, Has): the
// values of a run that did not use those knobs.
func (v Values) without(keys []string) Values {
	if len(keys) == 0 {
		return v
	}
	out := v
	out.params = nil
	for _, p := range v.params {
		if !slices.Contains(keys, p.Key) {
			out.params = append(out.params, p)
		}
	}
	return out
}

// WithNumber is v with the numeric knob key set to x and every other knob
// as it was: a simulation that tries variants of the reader's setting (the
// sandbox's capacity search at other rates) derives them from v.
func (v Values) WithNumber(key string, x float64) Values {
	c := v
	c.nums = maps.Clone(v.nums)
	c.nums[key] = x
	return c
}

// WithChoice is v with the choice knob key set to choice and every other
// knob as it was (see WithNumber).
func (v Values) WithChoice(key, choice string) Values {
	c := v
	c.choices = maps.Clone(v.choices)
	c.choices[key] = choice
	return c
}

// Has reports whether the lesson declares the knob.
func (v Values) Has(key string) bool {
	_, n := v.nums[key]
	_, c := v.choices[key]
	return n || c
}
