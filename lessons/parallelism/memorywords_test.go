package parallelism

import (
	"strings"
	"testing"

	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/lessons/kit"
)

// The lesson gives one figure for a GPU's memory, the one its budgets use
// (an H100 was 80.00 GB in the first step, 85.03 GB in the memory step),
// and a layout that does not fit says what besides its weights fills the
// memory (72.65 GB of weights "does not fit" beside 76.53 GB usable).
func TestMemoryFiguresAgree(t *testing.T) {
	s, _, err := lesson.Run(nil)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := lesson.Resolve(nil)
	g := hardware.MustGPU(v.Choice("gpu"))
	seen, _ := hardware.EngineMemory(g)
	if seen == g.MemoryBytes {
		t.Fatalf("%s: the engine sees its datasheet memory: the case tests nothing", g.Name)
	}
	datasheet, engine := kit.BytesText(float64(g.MemoryBytes)), kit.BytesText(float64(seen))
	for _, st := range s.Steps {
		if strings.Contains(st.Narration, datasheet) {
			t.Errorf("step %q gives %s, the datasheet's figure, where the budgets use %s: %s", st.Title, datasheet, engine, st.Narration)
		}
	}
	if !strings.Contains(s.Steps[0].Narration, engine) {
		t.Errorf("the first step does not give the %s the engine sees: %s", engine, s.Steps[0].Narration)
	}
	for _, st := range s.Steps {
		if n := strings.Count(st.Narration, "does not fit"); n > 0 && strings.Count(st.Narration, "reserve") < n {
			t.Errorf("step %q: %d layouts do not fit, %d say what besides the weights takes the memory: %s", st.Title, n, strings.Count(st.Narration, "reserve"), st.Narration)
		}
	}
}
