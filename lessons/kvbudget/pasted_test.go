package kvbudget

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/modelconfig"
)

// A model the reader pastes (config.json) is the one the attention-kinds
// step sets beside its four references and the one the TP-split step
// splits: both named Llama-3.1-8B whatever was pasted.
func TestPastedModelInEveryStep(t *testing.T) {
	for _, c := range []struct{ file, kind string }{
		{"qwen3-8b.json", "gqa"},
		{"deepseek-v2-lite.json", "mla"},
	} {
		data, err := os.ReadFile("../../core/modelconfig/testdata/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := modelconfig.Parse(data, "pasted-"+strings.TrimSuffix(c.file, ".json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := hardware.RegisterCustomModel(cfg.Model); err != nil {
			t.Fatal(err)
		}
		defer hardware.UnregisterCustomModel(cfg.Model.ID)
		// the model knob offers it, as the page and the CLI do for a paste
		l := *lesson
		l.Params = slices.Clone(lesson.Params)
		for i, p := range l.Params {
			if p.Key == "model" {
				p.Choices = append(slices.Clone(p.Choices), cfg.Model.ID)
				l.Params[i] = p
			}
		}
		s, _, err := l.Run(map[string]string{"model": cfg.Model.ID})
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		name := cfg.Model.Name
		for _, title := range []string{"MHA, GQA, MQA and MLA", "MLA's latent is not split"} {
			found := false
			for _, st := range s.Steps {
				if st.Title != title {
					continue
				}
				found = true
				if !strings.Contains(st.Narration, name) {
					t.Errorf("%s: step %q does not name the pasted model %q: %s", c.file, title, name, st.Narration)
				}
				costs := 0
				for _, sc := range st.Scenes {
					if sc.Memory != nil {
						for _, tc := range sc.Memory.PerToken {
							if strings.Contains(tc.Label, name) {
								costs++
							}
						}
					}
				}
				if costs == 0 {
					t.Errorf("%s: step %q draws no token cost of the pasted model", c.file, title)
				}
			}
			if !found {
				t.Errorf("no step %q", title)
			}
		}
	}
}
