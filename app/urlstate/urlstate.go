// Package urlstate reads and writes a lesson page's state in its address:
// /lesson/SLUG?step=N&KEY=VALUE... (step is 1-based), and, to compare two
// settings on the same seed, run B's knobs as b.KEY=VALUE (compare.go). Every parameter and the
// step are written back; bad values become notices that name the knob, the
// value and the allowed range, and fall back to defaults. It imports no UI
// code: the page (package app) and the simulation worker (wasm/sim, which
// starts the simulation a page's address asks for before the page's app has
// loaded) read an address the same way.
package urlstate

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/inferlab/inferlab/lessons"
)

// Bounds on what a URL may carry, so a hostile link cannot make parsing
// expensive. Values longer than this are rejected by lessons' own parser.
const (
	maxQueryKeys = 64
	maxStepText  = 12
)

// State is what a lesson page reads from its query string.
type State struct {
	Raw map[string]string // the lesson's knobs as given (unknown keys dropped)
	// RawB is run B's knobs as given (b.KEY=VALUE, keyed by KEY); nil when
	// the address carries none, non-nil (maybe empty) when it compares.
	RawB    map[string]string
	Step    int      // 1-based step asked for; 0 when absent or invalid
	Debug   string   // "panic" makes the build panic (tests the error panel)
	Find    string   // text whose first mention picks the step (search links); step wins
	Hide    Hide     // parts of the page the address hides (embeds)
	Theme   string   // "light" or "dark" pins the theme (embeds); "" follows the reader
	Notices []string // problems with the query, each naming the key
	Custom  Custom   // the reader's own model and GPU (mc=, gc=; custom.go)
}

// Hide lists the parts of a lesson page that ?hide= removes, a comma list of
// controls, params and narration (for embeds that show a fixed figure).
type Hide struct {
	Controls  bool // the player's buttons, scrubber and speed
	Params    bool // the parameters form
	Narration bool // the step title, narration and quiz checkpoints
}

// hideFlags is the order flags are written back in.
var hideFlags = []string{"controls", "params", "narration"}

// String is the canonical ?hide= value ("" when nothing is hidden).
func (h Hide) String() string {
	var out []string
	for _, f := range hideFlags {
		if h.Has(f) {
			out = append(out, f)
		}
	}
	return strings.Join(out, ",")
}

// Has reports whether flag is set.
func (h Hide) Has(flag string) bool {
	switch flag {
	case "controls":
		return h.Controls
	case "params":
		return h.Params
	case "narration":
		return h.Narration
	}
	return false
}

// ParseHide reads a ?hide= value; an unknown flag is a notice naming it.
func ParseHide(raw string) (Hide, []string) {
	var h Hide
	var notices []string
	if len(raw) > 64 {
		return h, []string{fmt.Sprintf("hide = %q is not allowed: want a comma list of %s.", clip(raw), strings.Join(hideFlags, ", "))}
	}
	for _, f := range strings.Split(raw, ",") {
		switch strings.ToLower(strings.TrimSpace(f)) {
		case "":
		case "controls":
			h.Controls = true
		case "params":
			h.Params = true
		case "narration":
			h.Narration = true
		default:
			notices = append(notices, fmt.Sprintf("hide = %q: %q is not a part that can be hidden; want a comma list of %s.", clip(raw), clip(f), strings.Join(hideFlags, ", ")))
		}
	}
	return h, notices
}

// maxFindText bounds a find= value (search links carry a short phrase).
const maxFindText = 64

// pageKeys are the query keys a lesson page reads besides its knobs.
var pageKeys = []string{"step", "find", "hide", "theme", "debug", ModelKey, GPUKey}

// MaxQueryBytes bounds the query a page reads: a longer one is ignored
// whole, with a notice. The server answers an address whose headers pass
// it with 431 and the lab's page saying so (package server); the page
// applies it too, for an address reached without the server (a static
// host, the app's own navigation).
const MaxQueryBytes = 64 << 10

// ParseRawQuery is ParseQuery on a raw query string (without "?"): one
// longer than MaxQueryBytes is ignored with a notice, as is a query that
// does not parse.
func ParseRawQuery(l *lessons.Lesson, raw string) State {
	if len(raw) > MaxQueryBytes {
		st := ParseQuery(l, nil)
		st.Notices = append(st.Notices, fmt.Sprintf("The address's query is %s bytes long: the lab reads at most %s; showing the lesson at its defaults.",
			thousands(len(raw)), thousands(MaxQueryBytes)))
		return st
	}
	q, err := url.ParseQuery(raw)
	st := ParseQuery(l, q)
	if err != nil {
		st.Notices = append(st.Notices, fmt.Sprintf("The address's query does not parse (%v); reading what it can.", err))
	}
	return st
}

// thousands writes n with thousands separators (65,536).
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// ignoredKey reports a key that link trackers add to an address (utm_*,
// fbclid, gclid): not the lab's, and not worth a notice.
func ignoredKey(k string) bool {
	return strings.HasPrefix(k, "utm_") || k == "fbclid" || k == "gclid"
}

// ParseQuery reads the step and the lesson's knobs from a query. Knob values
// are checked later by Resolve (see ResolveParams); the step is checked here
// for syntax and later against the number of steps (ClampStep). As `inferlab
// run` refuses them, a key given twice (the first value is used), a key the
// lesson does not read and a key that differs from one only in case (keys
// are case-sensitive: Block_Size is not block_size) are each a notice.
func ParseQuery(l *lessons.Lesson, q url.Values) State {
	st := State{Raw: map[string]string{}}
	if len(q) > maxQueryKeys {
		st.Notices = append(st.Notices, fmt.Sprintf("The address carries %d query keys; only the lesson's %d parameters and step are read.", len(q), len(l.Params)))
	}
	known := append([]string(nil), pageKeys...)
	for _, p := range l.Params {
		known = append(known, p.Key)
	}
	for _, p := range l.Params {
		known = append(known, CompareKey(p.Key))
	}
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var unknown []string
	for _, k := range keys {
		vs := q[k]
		switch {
		case slices.Contains(known, k):
			if len(vs) > 1 {
				st.Notices = append(st.Notices, fmt.Sprintf("%s is given %d times (%s): using the first, %q; give each parameter once.", k, len(vs), quoteList(vs), clip(vs[0])))
			}
		case ignoredKey(k):
		default:
			if i := slices.IndexFunc(known, func(c string) bool { return strings.EqualFold(c, k) }); i >= 0 {
				st.Notices = append(st.Notices, fmt.Sprintf("%s is not a parameter of this lesson: keys are case-sensitive; did you mean %s? Ignoring it.", clip(k), known[i]))
			} else {
				unknown = append(unknown, clip(k))
			}
		}
	}
	if len(unknown) > 0 && len(q) <= maxQueryKeys {
		if len(unknown) > 8 {
			unknown = append(unknown[:8], "…")
		}
		var params []string
		for _, p := range l.Params {
			params = append(params, p.Key)
		}
		st.Notices = append(st.Notices, fmt.Sprintf("%s %s not %s of this lesson, ignored; its parameters are %s (and step, find, hide, theme, and b.KEY for a second setting to compare).",
			strings.Join(unknown, ", "), plural(len(unknown), "is", "are"), plural(len(unknown), "a parameter", "parameters"), strings.Join(params, ", ")))
	}
	for _, p := range l.Params {
		if vs, ok := q[p.Key]; ok && len(vs) > 0 {
			st.Raw[p.Key] = vs[0]
		}
		if vs, ok := q[CompareKey(p.Key)]; ok && len(vs) > 0 {
			if st.RawB == nil {
				st.RawB = map[string]string{}
			}
			st.RawB[p.Key] = vs[0]
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
	if vs, ok := q["find"]; ok && len(vs) > 0 && strings.TrimSpace(vs[0]) != "" {
		if len(vs[0]) > maxFindText {
			st.Notices = append(st.Notices, fmt.Sprintf("find = %q is too long: want at most %d characters; showing step 1.", clip(vs[0]), maxFindText))
		} else {
			st.Find = strings.TrimSpace(vs[0])
		}
	}
	if vs, ok := q["hide"]; ok && len(vs) > 0 {
		h, notices := ParseHide(vs[0])
		st.Hide = h
		st.Notices = append(st.Notices, notices...)
	}
	var custom []string
	st.Custom, custom = parseCustom(q)
	st.Notices = append(st.Notices, custom...)
	if vs, ok := q["theme"]; ok && len(vs) > 0 {
		switch t := strings.ToLower(vs[0]); t {
		case "light", "dark":
			st.Theme = t
		case "", "auto":
		default:
			st.Notices = append(st.Notices, fmt.Sprintf("theme = %q is not allowed: want light, dark or auto.", clip(vs[0])))
		}
	}
	return st
}

// Extra is the query the page keeps beside the knobs and the step (hide,
// theme, debug), canonical, with a leading "&", or "".
func (st State) Extra() string {
	var b strings.Builder
	if h := st.Hide.String(); h != "" {
		b.WriteString("&hide=")
		b.WriteString(h) // fixed words and commas: readable as is
	}
	if st.Theme != "" {
		b.WriteString("&theme=")
		b.WriteString(st.Theme)
	}
	if st.Debug != "" {
		b.WriteString("&debug=")
		b.WriteString(url.QueryEscape(st.Debug))
	}
	return b.String()
}

// ResolveParams resolves raw knob text into values. Each bad knob becomes a
// notice and takes its default. A broken relation between knobs (the
// lesson's Check) resets the knob it names to its default, the others
// keeping the address's values (a notice says which); only a relation
// that names no knob, or one still broken once every knob it named is
// back at its default, makes every knob take its default.
func ResolveParams(l *lessons.Lesson, raw map[string]string) (lessons.Values, []string) {
	v, errs := l.Resolve(raw)
	var notices []string
	for _, e := range errs {
		notices = append(notices, paramNotice(l, e, true))
	}
	v, more := keepOthers(l, raw, v, func(key string) (string, bool) {
		p, ok := l.Param(key)
		return p.DefaultText(), ok
	}, func(pe *lessons.ParamError, to string) string {
		return paramNotice(l, pe, false) + " Using its default, " + to + "; the other parameters stay as given."
	})
	notices = append(notices, more...)
	if err := l.CheckValues(v); err != nil {
		notices = append(notices, checkNotice(l, err))
		v = l.Defaults()
	}
	return v, notices
}

// keepOthers mends a broken relation between v's knobs one knob at a time:
// the knob the relation names takes the value fallback gives it (a notice
// worded by say), the rest staying as raw has them, until the relation
// holds, names no knob, or names a knob already mended. It returns the
// values it reached (which may still break a relation) and its notices.
func keepOthers(l *lessons.Lesson, raw map[string]string, v lessons.Values, fallback func(key string) (string, bool),
	say func(pe *lessons.ParamError, to string) string) (lessons.Values, []string) {
	fixed := make(map[string]string, len(raw))
	for k, x := range raw {
		fixed[k] = x
	}
	var notices []string
	mended := map[string]bool{}
	for range l.Params {
		var pe *lessons.ParamError
		if err := l.CheckValues(v); err == nil || !errors.As(err, &pe) || pe.Key == "" || mended[pe.Key] {
			break
		}
		to, ok := fallback(pe.Key)
		if !ok {
			break
		}
		mended[pe.Key] = true
		notices = append(notices, say(pe, to))
		fixed[pe.Key] = to
		v, _ = l.Resolve(fixed)
	}
	return v, notices
}

// KnobErrors checks raw knob text as the parameters form holds it: the
// values when every knob is allowed and the knobs' relations hold, else a
// message per knob at fault ("" keys a relation that names no knob), each
// stating the value and the allowed range.
func KnobErrors(l *lessons.Lesson, raw map[string]string) (lessons.Values, map[string]string) {
	v, errs := l.Resolve(raw)
	if len(errs) > 0 {
		out := make(map[string]string, len(errs))
		for _, e := range errs {
			out[e.Key] = fieldMessage(e)
		}
		return v, out
	}
	if err := l.CheckValues(v); err != nil {
		var pe *lessons.ParamError
		if errors.As(err, &pe) {
			return v, map[string]string{pe.Key: fieldMessage(pe)}
		}
		return v, map[string]string{"": err.Error()}
	}
	return v, nil
}

// KnobErrorsAt is KnobErrors for a form where the learner just changed
// the knob moved: a relation the change breaks (every value valid on its
// own) is shown at that knob, where the learner's eyes and pointer are,
// rather than at the knob the relation happens to name.
func KnobErrorsAt(l *lessons.Lesson, raw map[string]string, moved string) (lessons.Values, map[string]string) {
	v, errs := KnobErrors(l, raw)
	if errs == nil || moved == "" || errs[moved] != "" {
		return v, errs
	}
	if _, own := l.Resolve(raw); len(own) > 0 {
		return v, errs // a value out of its own range: its field says so
	}
	var pe *lessons.ParamError
	if err := l.CheckValues(v); errors.As(err, &pe) {
		return v, map[string]string{moved: fmt.Sprintf("%q is not allowed%s.", raw[moved], pe.Reason())}
	}
	return v, errs
}

// fieldMessage is a rejected value's message under its field.
func fieldMessage(e *lessons.ParamError) string {
	return fmt.Sprintf("%q is not allowed%s.", e.Value, e.Reason())
}

// paramNotice words a rejected knob value for the #notice area.
func paramNotice(l *lessons.Lesson, e *lessons.ParamError, withDefault bool) string {
	label := e.Key
	def := ""
	if p, ok := l.Param(e.Key); ok {
		label = p.Label + " (" + e.Key + ")"
		def = p.DefaultText()
	}
	msg := fmt.Sprintf("%s = %q is not allowed%s.", label, e.Value, e.Reason())
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

// Key is a canonical text of the values, to tell whether a rebuild is
// needed.
func Key(l *lessons.Lesson, v lessons.Values) string {
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

// SlugFromPath extracts the lesson slug from a page path, with or without a
// hosting prefix and a trailing ".html" or "/" (static hosts).
func SlugFromPath(path string) (slug string, embed bool) {
	path = strings.TrimSuffix(path, "/")
	path = strings.TrimSuffix(path, "/index.html")
	path = strings.TrimSuffix(path, ".html")
	for _, p := range []string{"/lesson/", "/embed/"} {
		if i := strings.LastIndex(path, p); i >= 0 {
			return path[i+len(p):], p == "/embed/"
		}
	}
	return "", false
}

// quoteList quotes up to four values, "…" for more.
func quoteList(vs []string) string {
	var out []string
	for i, v := range vs {
		if i == 4 {
			out = append(out, "…")
			break
		}
		out = append(out, strconv.Quote(clip(v)))
	}
	return strings.Join(out, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
