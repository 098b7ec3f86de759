package app

import "testing"

func TestPrerenderedARIA(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`<span aria-hidden>x</span>`, `<span aria-hidden="true">x</span>`},
		{`<div class="a" aria-hidden aria-atomic role="x">`, `<div class="a" aria-hidden="true" aria-atomic="true" role="x">`},
		{`<i aria-hidden/>`, `<i aria-hidden="true"/>`},
		{`<b aria-hidden="true" aria-pressed="false">`, `<b aria-hidden="true" aria-pressed="false">`},
		{`<p>aria-hidden is text</p>`, `<p>aria-hidden is text</p>`},
		{`<p>set aria-hidden so</p>`, `<p>set aria-hidden so</p>`},
	} {
		if got := PrerenderedARIA(c.in); got != c.want {
			t.Errorf("PrerenderedARIA(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
