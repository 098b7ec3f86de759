package cowfork

import (
	"fmt"
	"strings"
	"testing"
)

// The step comparing beam search with parallel sampling draws both runs:
// the figure holds a series of each, and the narration gives where each
// ends (the old figure was the lesson's own
// parallel-sampling block tables alone, "saved 37.5%", beside a narration
// of 48.4% and 46.9%).
func TestBeamStepDrawsBothRuns(t *testing.T) {
	for _, mode := range []string{"cow", "beam", "prefix"} {
		s, _, err := lesson.Run(map[string]string{"mode": mode})
		if err != nil {
			t.Fatal(err)
		}
		st := s.Steps[len(s.Steps)-1]
		if !strings.Contains(st.Title, "Beam search beside parallel sampling") {
			t.Fatalf("%s: the last step is %q", mode, st.Title)
		}
		found := map[string]bool{}
		for _, sc := range st.Scenes {
			if sc.Chart == nil {
				continue
			}
			for _, se := range sc.Chart.Series {
				if len(se.Y) == 0 {
					continue
				}
				for kind, word := range map[string]string{"beam": "beam search", "parallel": "parallel samples"} {
					if strings.Contains(se.Name, word) {
						found[kind] = true
						if last := fmt.Sprintf("%.1f%%", se.Y[len(se.Y)-1]); !strings.Contains(st.Narration, last) {
							t.Errorf("%s: series %q ends at %s, which the narration does not say: %s", mode, se.Name, last, st.Narration)
						}
					}
				}
			}
		}
		if !found["beam"] || !found["parallel"] {
			t.Errorf("%s: the comparison step draws beam search %v and parallel sampling %v", mode, found["beam"], found["parallel"])
		}
	}
}
