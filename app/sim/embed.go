package sim

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/inferlab/inferlab/lessons"
)

// A prerendered lesson page (the lesson at its defaults) carries the
// script of that state in the wire format (Encode), so the page can step
// it as soon as its app starts, without waiting for the simulation worker
// (fetching and compiling sim.wasm and starting Go take 0.4–2.5 s on a
// busy machine; the page's own WebAssembly has no simulations in it). The
// page decodes the head at once and each step's scenes when shown, as it
// does a worker's reply: garage's defaults are 1.7 MB (20 steps of two
// 2,048-block grids), of which a step is about 85 kB. A script over
// MaxEmbed is not carried; the worker computes it.
const MaxEmbed = 4 << 20

// embedHead is the first line of the embedded text: the state's key (the
// canonical knob text) so the page uses the script only for the same
// state, and its knobs.
type embedHead struct {
	Key    string            `json:"key"`
	Params map[string]string `json:"params"`
}

// EmbedText is what a page showing the state key (built with the canonical
// knob text params) carries about script s: a line of JSON naming the
// state, then the script in the wire format; or false when s is nil, does
// not encode, or is over MaxEmbed. The text is safe inside a
// <script type="application/json"> element: every string in it is JSON
// with <, > and & escaped.
func EmbedText(key string, params map[string]string, s *lessons.Script) (string, bool) {
	if s == nil {
		return "", false
	}
	wire := Encode(Reply{}, s)
	if rep, _, err := Decode(wire); err != nil || rep.Failure != nil || len(wire) > MaxEmbed {
		return "", false
	}
	h, err := json.Marshal(embedHead{Key: key, Params: params})
	if err != nil {
		return "", false
	}
	return string(h) + "\n" + string(wire), true
}

// ReadEmbedded decodes EmbedText's text: the state's key, its knobs, and
// its script (each step's scenes decoded when first asked for).
func ReadEmbedded(text string) (key string, params map[string]string, s *Script, err error) {
	if len(text) > MaxEmbed+64<<10 {
		return "", nil, nil, errors.New("sim: embedded script over the size limit")
	}
	line, wire, ok := strings.Cut(text, "\n")
	if !ok {
		return "", nil, nil, errors.New("sim: embedded script without its state")
	}
	var h embedHead
	if err := json.Unmarshal([]byte(line), &h); err != nil {
		return "", nil, nil, err
	}
	rep, s, err := Decode([]byte(wire))
	if err != nil {
		return "", nil, nil, err
	}
	if rep.Failure != nil || s.Count() == 0 {
		return "", nil, nil, errors.New("sim: embedded script has no steps")
	}
	return h.Key, h.Params, s, nil
}
