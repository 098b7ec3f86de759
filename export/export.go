// Package export writes a lesson run in the machine-readable forms the lab
// offers: the JSON of `inferlab run SLUG --format json`, which the browser's
// "Export JSON" button writes too (same bytes for the same parameters). It
// imports only package lessons, so it compiles into app.wasm and natively.
package export

import (
	"bytes"
	"encoding/json"

	"github.com/inferlab/inferlab/lessons"
)

// Run is the JSON shape of a run (docs/ARCHITECTURE.md#the-lesson-contract):
// the lesson's slug, its parameters (numbers as numbers, choices as
// strings), the number of steps, the final metrics by key, and every step's
// narration in order.
type Run struct {
	Lesson    string             `json:"lesson"`
	Params    map[string]any     `json:"params"`
	Steps     int                `json:"steps"`
	Metrics   map[string]float64 `json:"metrics"`
	Narration []string           `json:"narration"`
}

// NewRun collects a run of lesson slug with values v that built s.
func NewRun(slug string, v lessons.Values, s *lessons.Script) Run {
	out := Run{Lesson: slug, Params: v.JSON(), Metrics: map[string]float64{}}
	if s == nil {
		return out
	}
	out.Steps = len(s.Steps)
	for _, m := range s.Metrics {
		out.Metrics[m.Key] = m.Value
	}
	for _, st := range s.Steps {
		out.Narration = append(out.Narration, st.Narration)
	}
	return out
}

// RunJSON is the run as `inferlab run SLUG --format json` prints it:
// indented by two spaces, map keys sorted, HTML characters escaped as
// encoding/json does by default, and a final newline.
func RunJSON(slug string, v lessons.Values, s *lessons.Script) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(NewRun(slug, v, s)); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
