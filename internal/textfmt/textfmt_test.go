package textfmt

import "testing"

func TestComma(t *testing.T) {
	for n, want := range map[int]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 32768: "32,768", 1234567: "1,234,567", -4096: "-4,096"} {
		if got := Comma(n); got != want {
			t.Errorf("Comma(%d) = %q, want %q", n, got, want)
		}
	}
}
