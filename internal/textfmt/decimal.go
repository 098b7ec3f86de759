package textfmt

import (
	"strconv"
	"strings"
)

// Reading a number as typed. strconv.ParseFloat rounds to the nearest
// float64, so text can name a value the number read is not: "1e-400"
// reads as 0, and "1e-400" for an integer reads as the integer 0. These
// report such text, so that the readers of knobs (package lessons), of a
// config.json and of a GPU's figures refuse it in the same words instead
// of taking 0.

// RoundsToZero reports whether s, a decimal number (an optional sign,
// digits with at most one point, an optional exponent), names a value
// other than zero that a float64 reads as 0: "1e-400", "-2e-324". Text
// that is not such a number reports false.
func RoundsToZero(s string) bool {
	x, err := strconv.ParseFloat(s, 64)
	return err == nil && x == 0 && !zeroDigits(mantissa(s))
}

// IsWhole reports whether s, a decimal number as RoundsToZero reads it,
// names an integer exactly: "12", "1.5e1", "100e-2" do, "1e-400" and
// "1.0000000000000000001" do not (a float64 reads both as an integer).
// An exponent of more than six digits is not read: a value that large is
// out of every bound, and one that small is no integer unless it is 0.
func IsWhole(s string) bool {
	s = strings.TrimLeft(s, "+-")
	m, exp := mantissa(s), 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e := s[i+1:]
		digits := strings.TrimLeft(e, "+-")
		if len(digits) > 6 {
			return !strings.HasPrefix(e, "-") || zeroDigits(m)
		}
		n, err := strconv.Atoi(e)
		if err != nil {
			return false
		}
		exp = n
	}
	whole, frac, _ := strings.Cut(m, ".")
	digits, point := whole+frac, len(whole)+exp
	return zeroDigits(digits[min(max(point, 0), len(digits)):])
}

// mantissa is s without its sign and exponent.
func mantissa(s string) string {
	s = strings.TrimLeft(s, "+-")
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		s = s[:i]
	}
	return s
}

// zeroDigits reports whether every digit of s is 0 (a point aside).
func zeroDigits(s string) bool { return strings.Trim(s, "0.") == "" }
