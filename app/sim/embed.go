package sim

import (
	"encoding/json"
	"errors"

	"github.com/inferlab/inferlab/lessons"
)

// A prerendered lesson page (the lesson at its defaults) carries what the
// page needs to step that state as soon as its app starts, without waiting
// for the simulation worker to start:
//
//   - the script itself, when its JSON is at most MaxEmbed: most lessons'
//     defaults are 5–60 kB and decode in a few milliseconds, where
//     simulating them can take a second or more (smart-routing); batching's
//     350 kB decode in 5–7 ms natively (a few times that in WebAssembly,
//     well under the 100 ms the page's thread may be held);
//   - else, when the build's counted work (Script.Work) is at most
//     LocalWork, a note that the page may build it on its own thread:
//     garage's defaults are 3 MB of JSON (decoding them at once would hold
//     the page for hundreds of ms) but build in about 10 ms natively, far
//     less than starting the worker (fetching and compiling sim.wasm,
//     starting Go) costs on a busy machine;
//   - else nothing: the worker computes it.
const (
	MaxEmbed  = 512 << 10
	LocalWork = 100_000
)

// embedded is the JSON a prerendered page carries: the state's key (the
// canonical knob text) so the page uses it only for the same state, its
// knobs, and its script, or Local.
type embedded struct {
	Key    string            `json:"key"`
	Params map[string]string `json:"params"`
	Script *lessons.Script   `json:"script,omitempty"`
	Local  bool              `json:"local,omitempty"`
}

// EmbedJSON is what a page shows for the state key (built with the
// canonical knob text params) carries about script s (see MaxEmbed and
// LocalWork), or false when nothing. encoding/json escapes <, > and &, so
// the text is safe inside a <script type="application/json"> element.
func EmbedJSON(key string, params map[string]string, s *lessons.Script) (string, bool) {
	if s == nil {
		return "", false
	}
	b, err := json.Marshal(embedded{Key: key, Params: params, Script: s})
	if err == nil && len(b) <= MaxEmbed {
		return string(b), true
	}
	if s.Work > LocalWork {
		return "", false
	}
	b, err = json.Marshal(embedded{Key: key, Params: params, Local: true})
	return string(b), err == nil
}

// ReadEmbedded decodes EmbedJSON's text: the state's key, its knobs, and
// its script, or nil when the page may build it on its own thread.
func ReadEmbedded(text string) (key string, params map[string]string, s *Script, err error) {
	if len(text) > MaxEmbed {
		return "", nil, nil, errors.New("sim: embedded script over the size limit")
	}
	var e embedded
	if err := json.Unmarshal([]byte(text), &e); err != nil {
		return "", nil, nil, err
	}
	if e.Local {
		return e.Key, e.Params, nil, nil
	}
	if e.Script == nil || len(e.Script.Steps) == 0 {
		return "", nil, nil, errors.New("sim: embedded script has no steps")
	}
	return e.Key, e.Params, Local(e.Script), nil
}
