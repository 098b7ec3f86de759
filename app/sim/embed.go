package sim

import (
	"encoding/json"
	"errors"

	"github.com/inferlab/inferlab/lessons"
)

// MaxEmbed bounds the script a prerendered page carries (EmbedJSON): the
// scripts of most lessons at their defaults are 5–60 kB of JSON and decode
// in a few milliseconds, so the page can step them as soon as the wasm
// starts, without waiting for a simulation; garage's 3 MB is left to the
// worker (decoding it at once would hold the page for hundreds of ms).
const MaxEmbed = 192 << 10

// embedded is the JSON a prerendered page carries: the script of the state
// it shows, and that state's key (the canonical knob text) so the page uses
// it only for the same state.
type embedded struct {
	Key    string            `json:"key"`
	Params map[string]string `json:"params"`
	Script *lessons.Script   `json:"script"`
}

// EmbedJSON is the JSON of script s for the state key (built with the
// canonical knob text params), or false when it is over MaxEmbed or cannot
// be encoded. encoding/json escapes <, > and &, so
// the text is safe inside a <script type="application/json"> element.
func EmbedJSON(key string, params map[string]string, s *lessons.Script) (string, bool) {
	if s == nil {
		return "", false
	}
	b, err := json.Marshal(embedded{Key: key, Params: params, Script: s})
	if err != nil || len(b) > MaxEmbed {
		return "", false
	}
	return string(b), true
}

// ReadEmbedded decodes EmbedJSON's text: the state's key, its knobs and its
// script.
func ReadEmbedded(text string) (key string, params map[string]string, s *Script, err error) {
	if len(text) > MaxEmbed {
		return "", nil, nil, errors.New("sim: embedded script over the size limit")
	}
	var e embedded
	if err := json.Unmarshal([]byte(text), &e); err != nil {
		return "", nil, nil, err
	}
	if e.Script == nil || len(e.Script.Steps) == 0 {
		return "", nil, nil, errors.New("sim: embedded script has no steps")
	}
	return e.Key, e.Params, Local(e.Script), nil
}
