package export

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/lessons"
)

func TestRunJSONShape(t *testing.T) {
	l := lessons.Get("garage")
	if l == nil {
		t.Skip("no garage lesson")
	}
	s, v, err := l.Run(map[string]string{"block_size": "32"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := RunJSON("garage", v, s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "{\n  \"lesson\": \"garage\",\n  \"params\": {") || !strings.HasSuffix(string(b), "}\n") {
		t.Errorf("not the CLI's indented layout:\n%.200s", b)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"lesson", "params", "steps", "metrics", "narration"} {
		if _, ok := got[k]; !ok {
			t.Errorf("key %q missing", k)
		}
	}
	if len(got) != 5 {
		t.Errorf("%d keys, want 5", len(got))
	}
	if p := got["params"].(map[string]any); p["block_size"] != float64(32) {
		t.Errorf("params.block_size = %v, want the number 32", p["block_size"])
	}
	if got["steps"] != float64(len(s.Steps)) || len(got["narration"].([]any)) != len(s.Steps) {
		t.Errorf("steps %v, narration %d, want %d", got["steps"], len(got["narration"].([]any)), len(s.Steps))
	}
	if m := got["metrics"].(map[string]any); len(m) != len(s.Metrics) {
		t.Errorf("%d metrics, want %d", len(m), len(s.Metrics))
	}
	// Deterministic: the same run gives the same bytes.
	s2, v2, _ := l.Run(map[string]string{"block_size": "32"})
	b2, _ := RunJSON("garage", v2, s2)
	if string(b2) != string(b) {
		t.Error("two runs of the same parameters differ")
	}
}
