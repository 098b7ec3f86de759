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

// Values that round to zero: a float64 reads "1e-400" as 0, so an integer
// knob (the seed among them) took 0 for it, and a knob where 0 means
// something else took an amount that every figure computed from it read
// as 0 (usd_per_gpu_hour=4.9e-324 priced every token at exactly $0) or
// that silently meant its 0. Each is refused with the knob's range, the
// same words as any value out of it.
func TestParseRoundsToZero(t *testing.T) {
	seed := Param{Key: "seed", Kind: Int, Default: 42, Min: 0, Max: 1 << 31, Step: 1}
	price := Param{Key: "usd_per_gpu_hour", Kind: Float, Default: 0, Min: 0, Max: 100, Step: 0.01, Zero: "the chosen GPU's cited price"}
	share := Param{Key: "hot_share", Kind: Float, Default: 70, Min: 0, Max: 100, Step: 1}
	for _, tc := range []struct {
		p    Param
		raw  string
		want string // "" when accepted
	}{
		{seed, "1e-400", "want an integer from 0 to 2147483648"},
		{seed, "1.0000000000000000001", "want an integer from 0 to 2147483648"},
		{seed, "0e-400", ""},
		{seed, "1.5e1", ""},
		{price, "4.9e-324", "want 0 (the chosen GPU's cited price) or a number from 0.01 to 100"},
		{price, "1e-300", "want 0 (the chosen GPU's cited price) or a number from 0.01 to 100"},
		{price, "1e-400", "want 0 (the chosen GPU's cited price) or a number from 0.01 to 100"},
		{price, "0.009", "want 0 (the chosen GPU's cited price) or a number from 0.01 to 100"},
		{price, "0", ""},
		{price, "0.00", ""},
		{price, "0.01", ""},
		{price, "2.5", ""},
		{share, "1e-400", ""}, // 0 is an amount here, and the nearest
		{share, "0.5", ""},
	} {
		x, _, err := tc.p.parse(tc.raw)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s=%s: %v; want it accepted", tc.p.Key, tc.raw, err)
		case tc.want != "" && err == nil:
			t.Errorf("%s=%s accepted as %v; want it refused", tc.p.Key, tc.raw, x)
		case tc.want != "" && !strings.Contains(err.Error(), tc.p.Key+` = "`+tc.raw+`" is not allowed: `+tc.want):
			t.Errorf("%s=%s: %q; want %q", tc.p.Key, tc.raw, err, tc.want)
		}
	}
}
