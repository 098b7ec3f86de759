package measuring

import (
	"math"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/scene"
)

// The replay costs what the step's share of MaxWork allows, and counts
// what it ran: every step, the requests they advanced.
func TestMeasuredReplayWork(t *testing.T) {
	m, err := replayMeasured()
	if err != nil {
		t.Fatal(err)
	}
	if m.work <= int64(m.res.Steps) || m.work > measuredReplayMaxWork {
		t.Errorf("the replay counted %d units of work over %d steps, want more than a unit a step and at most %d", m.work, m.res.Steps, measuredReplayMaxWork)
	}
	if lesson.MaxWork < measuringMaxWork+measuredReplayMaxWork {
		t.Errorf("MaxWork %d leaves the replay less than its %d units beside the sweep's %d", lesson.MaxWork, measuredReplayMaxWork, measuringMaxWork)
	}
}

// The step draws each measured stage beside its replay: a row and a point
// per stage, the chart's points the table's figures, and the replay within
// 10% of what vLLM measured on the means the narration quotes (docs/
// VALIDATION.md holds every run to tighter targets).
func TestMeasuredReplayStep(t *testing.T) {
	v, errs := lesson.Resolve(nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	r, err := runMeasuring(v)
	if err != nil {
		t.Fatal(err)
	}
	m := r.measured
	if len(m.res.Stages) != len(m.run.Stages) || len(m.res.Stages) < 2 {
		t.Fatalf("%d stages replayed, %d measured: want the same, at least two", len(m.res.Stages), len(m.run.Stages))
	}
	st := m.step()
	var charts []*scene.Chart
	var table *scene.Table
	for _, sc := range st.Scenes {
		switch {
		case sc.Chart != nil:
			charts = append(charts, sc.Chart)
		case sc.Table != nil:
			table = sc.Table
		}
	}
	if len(charts) != 2 || table == nil || len(table.Rows) != len(m.res.Stages) {
		t.Fatalf("%d charts, table %v: want TTFT's and end-to-end's charts and a row per stage", len(charts), table)
	}
	ttft, e2e := charts[0], charts[1]
	for i, s := range m.res.Stages {
		ms := m.run.Stages[i]
		for _, c := range []struct {
			what      string
			got, want float64
		}{{"TTFT", s.TTFT.Mean, ms.TTFT.Mean}, {"end-to-end", s.E2E.Mean, ms.E2E.Mean}, {"TPOT", s.TPOT.Mean, m.measuredTPOT(ms)}} {
			if math.Abs(c.got-c.want) > 0.1*c.want {
				t.Errorf("stage %d: %s mean %.2f ms replayed, %.2f ms measured: want within 10%%", i, c.what, c.got, c.want)
			}
		}
		if e2e.Series[0].Y[i] != math.Round(100*ms.E2E.Mean)/100 || ttft.Series[1].Y[i] != math.Round(100*s.TTFT.Mean)/100 {
			t.Errorf("stage %d: charts %v / %v, want measured E2E %.2f and replayed TTFT %.2f", i, e2e.Series[0].Y, ttft.Series[1].Y, ms.E2E.Mean, s.TTFT.Mean)
		}
		if !strings.Contains(st.Narration, relErr(s.E2E.Mean, ms.E2E.Mean)) {
			t.Errorf("the narration does not give stage %d's end-to-end error %s", i, relErr(s.E2E.Mean, ms.E2E.Mean))
		}
	}
	for _, says := range []string{"fitted", "7.7 ms", "10 µs", "Left out"} {
		if !strings.Contains(st.Narration, says) {
			t.Errorf("the narration does not say %q: %s", says, st.Narration)
		}
	}
}
