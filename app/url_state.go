package app

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/inferlab/inferlab/lessons"
)

// URL state: /lesson/SLUG?step=N&KEY=VALUE... (step is 1-based). Every
// parameter and the step are written back; bad values become notices that
// name the knob, the value and the allowed range, and fall back to defaults.

// Bounds on what a URL may carry, so a hostile link cannot make parsing
// expensive. Values longer than this are rejected by lessons' own parser.
const (
	maxQueryKeys = 64
	maxStepText  = 12
)

// URLState is what a lesson page reads from its query string.
type URLState struct {
	Raw     map[string]string // the lesson's knobs as given (unknown keys dropped)
	Step    int               // 1-based step asked for; 0 when absent or invalid
	Debug   string            // "panic" makes the build panic (tests the error panel)
	Notices []string          // problems with the query, each naming the key
}

// ParseQuery reads the step and the lesson's knobs from a query. Knob values
// are checked later by Resolve (see ResolveParams); the step is checked here
// for syntax and later against the number of steps (ClampStep).
func ParseQuery(l *lessons.Lesson, q url.Values) URLState {
	st := URLState{Raw: map[string]string{}}
	if len(q) > maxQueryKeys {
		st.Notices = append(st.Notices, fmt.Sprintf("The address carries %d query keys; only the lesson's %d parameters and step are read.", len(q), len(l.Params)))
	}
	for _, p := range l.Params {
		if vs, ok := q[p.Key]; ok && len(vs) > 0 {
			st.Raw[p.Key] = vs[0]
		}
	}
	if vs, ok := q["step"]; ok && len(vs) > 0 {
		raw := vs[0]
		n, err := strconv.Atoi(strings.TrimSpace(raw))
		if err != nil || len(raw) > maxStepText {
			st.Notices = append(st.Notices, fmt.Sprintf("step = %q is not allowed: want an integer step number from 1; showing step 1.", clip(raw)))
		} else {
			st.Step = n
			if n < 1 {
				st.Notices = append(st.Notices, fmt.Sprintf("step = %q is not allowed: want an integer step number from 1; showing step 1.", clip(raw)))
				st.Step = 1
			}
		}
	}
	if vs, ok := q["debug"]; ok && len(vs) > 0 {
		st.Debug = vs[0]
	}
	return st
}

// ResolveParams resolves raw knob text into values. Each bad knob becomes a
// notice and takes its default; a broken relation between knobs (the
// lesson's Check) makes every knob take its default.
func ResolveParams(l *lessons.Lesson, raw map[string]string) (lessons.Values, []string) {
	v, errs := l.Resolve(raw)
	var notices []string
	for _, e := range errs {
		notices = append(notices, paramNotice(l, e, true))
	}
	if l.Check != nil {
		if err := l.Check(v); err != nil {
			notices = append(notices, checkNotice(l, err))
			v = l.Defaults()
		}
	}
	return v, notices
}

// paramNotice words a rejected knob value for the #notice area.
func paramNotice(l *lessons.Lesson, e *lessons.ParamError, withDefault bool) string {
	label := e.Key
	def := ""
	if p, ok := l.Param(e.Key); ok {
		label = p.Label + " (" + e.Key + ")"
		def = p.DefaultText()
	}
	msg := fmt.Sprintf("%s = %q is not allowed: want %s.", label, e.Value, e.Want)
	if withDefault && def != "" {
		msg += " Using the default, " + def + "."
	}
	return msg
}

// checkNotice words a failed relation check between knobs.
func checkNotice(l *lessons.Lesson, err error) string {
	var pe *lessons.ParamError
	if errors.As(err, &pe) {
		return paramNotice(l, pe, false) + " Using the default values for all parameters."
	}
	return err.Error() + " Using the default values for all parameters."
}

// ClampStep checks a 1-based step against the number of steps n and returns
// the 0-based index to show, with a notice when the step had to change.
func ClampStep(step, n int) (int, string) {
	if n <= 0 {
		return 0, ""
	}
	if step == 0 {
		return 0, ""
	}
	if step > n {
		return n - 1, fmt.Sprintf("step = %d is out of range: want a step from 1 to %d; showing step %d.", step, n, n)
	}
	return step - 1, ""
}

// EncodeQuery writes the step (1-based) and every knob, in the lesson's
// order, as a query string (without "?").
func EncodeQuery(l *lessons.Lesson, v lessons.Values, step int) string {
	var b strings.Builder
	b.WriteString("step=")
	b.WriteString(strconv.Itoa(step))
	for _, p := range l.Params {
		b.WriteByte('&')
		b.WriteString(url.QueryEscape(p.Key))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(v.TextOf(p.Key)))
	}
	return b.String()
}

// EncodeRaw writes raw form text (possibly invalid) and the step as a query,
// in the lesson's order, so the page that loads it can report bad values.
func EncodeRaw(l *lessons.Lesson, raw map[string]string, step int) string {
	var b strings.Builder
	b.WriteString("step=")
	b.WriteString(strconv.Itoa(step))
	for _, p := range l.Params {
		if s, ok := raw[p.Key]; ok {
			b.WriteByte('&')
			b.WriteString(url.QueryEscape(p.Key))
			b.WriteByte('=')
			b.WriteString(url.QueryEscape(s))
		}
	}
	return b.String()
}

// paramsKey is a canonical text of the values, to tell whether a rebuild is
// needed.
func paramsKey(l *lessons.Lesson, v lessons.Values) string {
	var b strings.Builder
	for _, p := range l.Params {
		b.WriteString(p.Key)
		b.WriteByte('=')
		b.WriteString(v.TextOf(p.Key))
		b.WriteByte('&')
	}
	return b.String()
}

func clip(s string) string {
	if len(s) > 24 {
		return s[:24] + "…"
	}
	return s
}
