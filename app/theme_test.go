package app

import (
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The themes' text colours keep a contrast of at least 4.5:1 (WCAG AA) with
// the backgrounds they are drawn on. The pairs are the roles web/lab.css
// defines for both themes; block labels (ink) on every owner colour are
// checked too. The browser test TestLearnerKeyboard measures the rendered
// page as well.

func cssVars(t *testing.T, css, selector string) map[string]string {
	t.Helper()
	i := strings.Index(css, selector+" {")
	if i < 0 {
		t.Fatalf("lab.css has no %q block", selector)
	}
	j := strings.Index(css[i:], "\n}")
	block := css[i : i+j]
	out := map[string]string{}
	for _, m := range regexp.MustCompile(`--([a-z0-9-]+):\s*(#[0-9a-fA-F]{6})`).FindAllStringSubmatch(block, -1) {
		out[m[1]] = m[2]
	}
	return out
}

func luminance(hex string) float64 {
	v, _ := strconv.ParseUint(strings.TrimPrefix(hex, "#"), 16, 32)
	ch := func(c uint64) float64 {
		x := float64(c) / 255
		if x <= 0.03928 {
			return x / 12.92
		}
		return math.Pow((x+0.055)/1.055, 2.4)
	}
	return 0.2126*ch(v>>16&0xff) + 0.7152*ch(v>>8&0xff) + 0.0722*ch(v&0xff)
}

func contrast(a, b string) float64 {
	x, y := luminance(a), luminance(b)
	return (math.Max(x, y) + 0.05) / (math.Min(x, y) + 0.05)
}

func TestThemeContrast(t *testing.T) {
	b, err := os.ReadFile("../web/lab.css")
	if err != nil {
		t.Fatal(err)
	}
	css := string(b)
	dark := cssVars(t, css, ":root")
	light := cssVars(t, css, `:root[data-theme="light"]`)
	pairs := [][2]string{
		{"text", "bg"}, {"text", "surface"}, {"text", "surface-2"},
		{"muted", "bg"}, {"muted", "surface"}, {"muted", "surface-2"},
		{"link", "bg"}, {"link", "surface"}, {"link", "surface-2"},
		{"accent-2", "bg"}, {"accent-2", "surface"}, {"accent-2", "surface-2"},
		{"good", "surface-2"}, {"bad", "surface-2"}, {"bad", "surface"},
		{"on-accent", "accent"}, {"on-pressed", "pressed"},
		{"notice-text", "notice-bg"}, {"error-text", "error-bg"}, {"error-link", "error-bg"},
	}
	for name, vars := range map[string]map[string]string{"dark": dark, "light": light} {
		for _, p := range pairs {
			fg, bg := vars[p[0]], vars[p[1]]
			if fg == "" || bg == "" {
				t.Errorf("%s theme: --%s or --%s is missing", name, p[0], p[1])
				continue
			}
			if c := contrast(fg, bg); c < 4.5 {
				t.Errorf("%s theme: --%s %s on --%s %s: contrast %.2f:1, want ≥ 4.5:1", name, p[0], fg, p[1], bg, c)
			}
		}
	}
	// Block labels are ink (#0f172a) on each owner colour and its pale tint.
	owners := regexp.MustCompile(`\.c\d+\s*\{\s*--c:\s*(#[0-9a-fA-F]{6});\s*--pale:\s*(#[0-9a-fA-F]{6})`).FindAllStringSubmatch(css, -1)
	if len(owners) != ownerColours {
		t.Fatalf("%d owner colours in lab.css, want %d", len(owners), ownerColours)
	}
	for _, m := range owners {
		for _, bg := range m[1:] {
			if c := contrast(dark["ink"], bg); c < 4.5 {
				t.Errorf("ink on owner colour %s: %.2f:1", bg, c)
			}
		}
	}
}
