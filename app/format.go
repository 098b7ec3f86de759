package app

import (
	"html"
	"math"
	"strconv"

	"github.com/inferlab/inferlab/internal/textfmt"
)

// comma formats an integer with thousands separators.
func comma(n int) string { return textfmt.Comma(n) }

// formatNumber shows a figure for people: integers with separators, other
// values with at most two decimals (more for small magnitudes).
func formatNumber(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return strconv.FormatFloat(v, 'g', -1, 64)
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return comma(int(v))
	case math.Abs(v) >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case math.Abs(v) >= 0.01:
		return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// metricText is the exact text of a final metric in #metrics: the same
// shortest representation `inferlab run` prints, so both can be compared.
func metricText(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// htmlAttr escapes text for an HTML attribute value.
func htmlAttr(s string) string { return html.EscapeString(s) }
