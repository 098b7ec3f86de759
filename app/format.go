package app

import (
	"html"
	"math"
	"strconv"
	"strings"
)

// comma formats an integer with thousands separators.
func comma(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

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
