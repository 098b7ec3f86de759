package lessons

import (
	"strings"
	"testing"
)

// Knob values are plain decimals: strconv.ParseFloat alone also reads
// underscores, hexadecimal and Inf, which a URL or --set must not carry.
func TestParseDecimalOnly(t *testing.T) {
	p := Param{Key: "requests", Kind: Int, Default: 10, Min: 1, Max: 100000}
	for raw, want := range map[string]float64{"1000": 1000, " 42 ": 42, "+7": 7, "1e3": 1000, "2.0": 2, "10.": 10} {
		if x, _, err := p.parse(raw); err != nil || x != want {
			t.Errorf("parse(%q) = %v, %v; want %v", raw, x, err, want)
		}
	}
	f := Param{Key: "rate", Kind: Float, Default: 1, Min: 0, Max: 1000}
	if x, _, err := f.parse(".25"); err != nil || x != 0.25 {
		t.Errorf("parse(.25) = %v, %v", x, err)
	}
	for _, raw := range []string{"1_000", "0x10", "0X1p4", "0b101", "0o17", "Inf", "infinity", "NaN", "1e", "e3", ".", "-", "1.2.3", "1e+", "１０", "10 20", ""} {
		_, _, err := p.parse(raw)
		if err == nil {
			t.Errorf("parse(%q) accepted", raw)
			continue
		}
		if err.Key != "requests" || !strings.Contains(err.Error(), "want an integer from 1 to 100000") {
			t.Errorf("parse(%q): %v; want the knob and its range named", raw, err)
		}
	}
}
