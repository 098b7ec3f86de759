package app

import (
	"math"
	"strconv"
	"strings"

	"github.com/inferlab/inferlab/lessons"
)

// knobScale maps a numeric knob to a slider's positions 0…sliderPositions
// and back. Knobs whose range holds more than logAbove steps (max_context
// 16…131,072, requests 1…2,000) use a logarithmic scale from the minimum,
// so the low end, where most settings lie, is not squeezed into a few
// pixels; their values are rounded to two significant digits above the
// minimum, then to the knob's step. Smaller ranges are linear, one position
// per step where that fits.
type knobScale struct {
	min, max, step float64
	log            bool
	int            bool
	decimals       int // digits after the point of a float knob's text
}

const (
	sliderPositions = 1000
	logAbove        = 400
)

// scaleFor returns the slider scale of knob p, or false when p gets no
// slider: a choice (a select), or a seed (any value is as good as another,
// and the range is 2³¹ wide).
func scaleFor(p lessons.Param) (knobScale, bool) {
	if p.Kind == lessons.Choice || p.Key == "seed" || !(p.Max > p.Min) {
		return knobScale{}, false
	}
	s := knobScale{min: p.Min, max: p.Max, step: p.Step, int: p.Kind == lessons.Int}
	if s.step <= 0 {
		s.step = 1
		if !s.int {
			s.step = niceStep((p.Max - p.Min) / 200)
		}
	}
	if s.int && s.step < 1 {
		s.step = 1
	}
	s.log = (p.Max-p.Min)/s.step > logAbove
	if !s.int {
		s.decimals = max(0, int(math.Ceil(-math.Log10(s.step)-1e-9)))
	}
	return s, true
}

// niceStep rounds x down to 1, 2 or 5 times a power of ten.
func niceStep(x float64) float64 {
	if x <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{5, 2, 1} {
		if m*p <= x {
			return m * p
		}
	}
	return p
}

// ratio is the log scale's base: the range in steps.
func (s knobScale) ratio() float64 { return (s.max - s.min) / s.step }

// value is the knob value at slider position pos.
func (s knobScale) value(pos int) float64 {
	if pos >= sliderPositions {
		return s.max // the ends are exact, whatever the rounding
	}
	t := float64(max(0, pos)) / sliderPositions
	var off float64
	if s.log {
		r := s.ratio()
		off = (math.Pow(r, t) - 1) / (r - 1) * (s.max - s.min)
		off = twoDigits(off)
	} else {
		off = t * (s.max - s.min)
	}
	off = math.Round(off/s.step) * s.step
	return math.Max(s.min, math.Min(s.max, s.min+off))
}

// pos is the slider position of value v: one that gives v back when v is
// a value of the scale (rounding makes a few positions share a value), else
// the nearest.
func (s knobScale) pos(v float64) int {
	t := (math.Max(s.min, math.Min(s.max, v)) - s.min) / (s.max - s.min)
	if s.log {
		r := s.ratio()
		t = math.Log1p(t*(r-1)) / math.Log(r)
	}
	p := int(math.Round(t * sliderPositions))
	for d := 0; d <= 4; d++ {
		for _, q := range []int{p - d, p + d} {
			if q >= 0 && q <= sliderPositions && s.value(q) == v {
				return q
			}
		}
	}
	return p
}

// text is v as the knob's text (what the number field shows).
func (s knobScale) text(v float64) string {
	if s.int {
		return strconv.FormatInt(int64(math.Round(v)), 10)
	}
	t := strconv.FormatFloat(v, 'f', s.decimals, 64)
	if strings.Contains(t, ".") {
		t = strings.TrimRight(strings.TrimRight(t, "0"), ".")
	}
	return t
}

// twoDigits rounds x ≥ 0 to two significant digits.
func twoDigits(x float64) float64 {
	if x < 10 {
		return math.Round(x)
	}
	p := math.Pow(10, math.Floor(math.Log10(x))-1)
	return math.Round(x/p) * p
}

// SliderPosition is where #slider-KEY sits (0…1000) for value v of knob p,
// or false when the knob has no slider (docs/DOM.md).
func SliderPosition(p lessons.Param, v float64) (int, bool) {
	s, ok := scaleFor(p)
	if !ok {
		return 0, false
	}
	return s.pos(v), true
}
