package textfmt

import "testing"

func TestComma(t *testing.T) {
	for n, want := range map[int]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 32768: "32,768", 1234567: "1,234,567", -4096: "-4,096"} {
		if got := Comma(n); got != want {
			t.Errorf("Comma(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestRoundsToZero(t *testing.T) {
	for s, want := range map[string]bool{
		"1e-400": true, "-2e-324": true, "0.0000e-999": false, "0": false, "0.0": false, "-0": false,
		"4.9e-324": false, "1e-300": false, "12": false, "1e400": false, "abc": false,
	} {
		if got := RoundsToZero(s); got != want {
			t.Errorf("RoundsToZero(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestIsWhole(t *testing.T) {
	for s, want := range map[string]bool{
		"12": true, "-12": true, "0": true, "1e3": true, "1.5e1": true, "100e-2": true, "0e-400": true, "1E+2": true, "1.000": true,
		"1e-400": false, "1.5": false, "0.5e0": false, "1.0000000000000000001": false, "15e-1": false, ".5": false,
		"1e9999999": true, "1e-9999999": false, "0.0e-9999999": true,
	} {
		if got := IsWhole(s); got != want {
			t.Errorf("IsWhole(%q) = %v, want %v", s, got, want)
		}
	}
}
