package app

import (
	"strings"
	"testing"

	"github.com/inferlab/inferlab/lessons"
)

func TestTooLarge(t *testing.T) {
	sb := lessons.Get("sandbox")
	if err := tooLarge(sb, "big.jsonl", 5<<20); err == nil || !strings.Contains(err.Error(), "big.jsonl: the file is 5,242,880 bytes: want at most 4 MiB") {
		t.Errorf("tooLarge = %v", err)
	}
	if err := tooLarge(sb, "ok.jsonl", 4<<20); err != nil {
		t.Errorf("a file at the limit is refused: %v", err)
	}
	if got := cliCommand(sb, map[string]string{"workers": "2"}, "my trace.jsonl"); got != "inferlab run sandbox --set workers=2 --trace 'my trace.jsonl'" {
		t.Errorf("cliCommand = %q", got)
	}
}
