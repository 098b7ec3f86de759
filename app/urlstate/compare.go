package urlstate

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/inferlab/inferlab/lessons"
)

// Comparing two settings. An address may carry a second setting of the
// lesson's knobs, run B, beside the plain keys of run A: b.KEY=VALUE
// (/lesson/garage?block_size=16&b.block_size=32). B is A changed by the b.
// keys, as `inferlab diff --vs` changes the --set knobs, and runs on the
// same seed (B's seed is A's whatever b.seed says: a comparison of two
// settings is on one stream). Any b. key puts the page in compare mode;
// the page writes every knob of B back, as it writes every knob of A.

// comparePrefix starts the address key of one of run B's knobs.
const comparePrefix = "b."

// CompareKey is the address key of run B's knob key (b.KEY).
func CompareKey(key string) string { return comparePrefix + key }

// CompareRaw is run B's knob text: A's values changed by the address's
// b. keys (rawB, keyed by the knob's own key).
func CompareRaw(a lessons.Values, rawB map[string]string) map[string]string {
	out := a.Text()
	for k, v := range rawB {
		if a.Has(k) {
			out[k] = v
		}
	}
	return out
}

// ResolveCompare resolves run B's knobs from A's values and the address's
// b. keys. Each bad B value is a notice naming b.KEY, the value and the
// allowed range, and takes A's value of the knob; a broken relation between
// B's knobs is a notice too, and the knob it names takes A's value (all of
// B takes A's values only where that does not mend it). The seed is A's.
func ResolveCompare(l *lessons.Lesson, a lessons.Values, rawB map[string]string) (lessons.Values, []string) {
	raw := CompareRaw(a, rawB)
	var notices []string
	if s, ok := rawB["seed"]; ok && a.Has("seed") && s != a.TextOf("seed") {
		notices = append(notices, fmt.Sprintf("%s = %q: both runs use A's seed, %s, so that they serve the same stream; change seed to change both.", CompareKey("seed"), clip(s), a.TextOf("seed")))
	}
	if a.Has("seed") {
		raw["seed"] = a.TextOf("seed")
	}
	v, errs := l.Resolve(raw)
	for _, e := range errs {
		notices = append(notices, compareNotice(l, e)+" Using A's value, "+a.TextOf(e.Key)+".")
		raw[e.Key] = a.TextOf(e.Key)
	}
	if len(errs) > 0 {
		v, _ = l.Resolve(raw)
	}
	v, more := keepOthers(l, raw, v, func(key string) (string, bool) {
		return a.TextOf(key), a.Has(key)
	}, func(pe *lessons.ParamError, to string) string {
		return compareNotice(l, pe) + " Using A's value, " + to + "; B's other knobs stay as given."
	})
	notices = append(notices, more...)
	if err := l.CheckValues(v); err != nil {
		var pe *lessons.ParamError
		msg := "B's knobs: " + err.Error()
		if errors.As(err, &pe) {
			msg = compareNotice(l, pe)
		}
		notices = append(notices, msg+" Using A's values for B.")
		v = a
	}
	return v, notices
}

// compareNotice words a rejected value of run B's knob: as the notice
// for A's knob, naming b.KEY.
func compareNotice(l *lessons.Lesson, e *lessons.ParamError) string {
	label := CompareKey(e.Key)
	if p, ok := l.Param(e.Key); ok {
		label = "B's " + p.Label + " (" + CompareKey(e.Key) + ")"
	}
	return fmt.Sprintf("%s = %q is not allowed%s.", label, e.Value, e.Reason())
}

// EncodeCompare writes every knob of run B as b.KEY=VALUE, in the
// lesson's order, each with a leading "&" (to follow EncodeQuery).
func EncodeCompare(l *lessons.Lesson, b lessons.Values) string {
	var s strings.Builder
	for _, p := range l.Params {
		if p.Key == "seed" {
			continue // the seed is A's (ResolveCompare)
		}
		s.WriteByte('&')
		s.WriteString(url.QueryEscape(CompareKey(p.Key)))
		s.WriteByte('=')
		s.WriteString(url.QueryEscape(b.TextOf(p.Key)))
	}
	return s.String()
}

// Differing lists the knobs where b differs from a, as KEY=VALUE of each
// side, in the lesson's order (the labels of the two figures).
func Differing(l *lessons.Lesson, a, b lessons.Values) (as, bs []string) {
	for _, p := range l.Params {
		if x, y := a.TextOf(p.Key), b.TextOf(p.Key); x != y {
			as, bs = append(as, p.Key+"="+x), append(bs, p.Key+"="+y)
		}
	}
	return as, bs
}
