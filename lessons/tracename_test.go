package lessons

import "testing"

func TestPrintableName(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"my-trace.jsonl", "my-trace.jsonl"},
		{"évolution 📈.jsonl", "évolution 📈.jsonl"},
		{"a\x1b[31mb\x07.jsonl", `a\x1b[31mb\x07.jsonl`},
		{"line\nbreak\t.jsonl", `line\x0abreak\x09.jsonl`},
		{"c1\u009b2J", `c1\x9b2J`},
		{"photo\u202egpj.exe", `photo\u202egpj.exe`},
		{"\u2066x\u2069", `\u2066x\u2069`},
	} {
		if got := PrintableName(c.in); got != c.want {
			t.Errorf("PrintableName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
