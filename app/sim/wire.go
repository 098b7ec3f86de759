package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/scene"
)

// Reply is what a simulation sends back besides the script: why it failed,
// if it did, and about the trace it ran on.
type Reply struct {
	Failure *Failure `json:"failure,omitempty"`
	// TraceError is why an uploaded trace was refused (it did not parse):
	// the file, and the line, field, value and range at fault.
	TraceError string `json:"trace_error,omitempty"`
	// TraceRequests is the number of requests of the trace the script ran on.
	TraceRequests int `json:"trace_requests,omitempty"`
}

// The wire format of a reply, built by Encode and read by Decode:
//
//	"ILS2" | scenes… | head (JSON) | head length (10 decimal digits)
//
// The head holds the Reply, every step's title, narration, cursor and quiz,
// the metrics and claims, and where each step's scenes end in the bytes
// after the magic (each a JSON array of scene.Scene). A page decodes the
// head at once (a few kilobytes) and a step's scenes only when it shows the
// step: garage's defaults, 20 steps of two 2,048-block grids, are 1.7 MB of
// JSON, which encoding/json decodes in about 75 ms natively and several
// times that in WebAssembly, far over a frame; one step is about 85 kB. The head comes
// last so the scenes are written once, in place. The format is text: JSON
// with <, > and & escaped as encoding/json escapes them, and a decimal
// length, so a prerendered page can carry it in a <script> element
// (EmbedText).
const (
	magic     = "ILS2"
	lenDigits = 10
)

type head struct {
	Reply
	Steps   []lessons.Step   `json:"steps,omitempty"`
	Metrics []lessons.Metric `json:"metrics,omitempty"`
	Claims  []lessons.Claim  `json:"claims,omitempty"`
	// Scenes holds the end offset of each step's scenes in the bytes after
	// the magic (a step's start is the previous step's end).
	Scenes []int `json:"scene_ends,omitempty"`
}

// Encode writes a reply and its script (nil when the build failed) in the
// wire format. It never fails: a script that cannot be encoded (a NaN in a
// scene) becomes a Failure saying so.
func Encode(r Reply, s *lessons.Script) []byte {
	h := head{Reply: r}
	out := make([]byte, len(magic), len(magic)+sizeHint(s))
	copy(out, magic)
	if s != nil {
		h.Steps = make([]lessons.Step, len(s.Steps))
		h.Scenes = make([]int, len(s.Steps))
		h.Metrics, h.Claims = s.Metrics, s.Claims
		for i, st := range s.Steps {
			var err error
			if out, err = appendScenes(out, st.Scenes); err != nil {
				return Encode(Reply{Failure: &Failure{Message: fmt.Sprintf("step %d: encoding its scenes: %v", i+1, err)}}, nil)
			}
			h.Scenes[i] = len(out) - len(magic)
			st.Scenes = nil
			h.Steps[i] = st
		}
	}
	hb, err := json.Marshal(h)
	if err != nil {
		return Encode(Reply{Failure: &Failure{Message: "encoding the script: " + err.Error()}}, nil)
	}
	out = append(out, hb...)
	return fmt.Appendf(out, "%0*d", lenDigits, len(hb))
}

// sizeHint guesses the encoded size, so the buffer grows once: about 45
// bytes a block, and a few kilobytes a step for everything else.
func sizeHint(s *lessons.Script) int {
	if s == nil {
		return 1 << 10
	}
	n := 16 << 10
	for _, st := range s.Steps {
		n += 4 << 10
		for _, sc := range st.Scenes {
			if sc.Grid != nil {
				n += 45 * len(sc.Grid.Blocks)
			}
		}
	}
	return n
}

// Decode reads a reply in the wire format. The script is nil when the reply
// carries none (a failure). The script keeps b: do not change it afterwards.
func Decode(b []byte) (Reply, *Script, error) {
	if len(b) < len(magic)+lenDigits || string(b[:len(magic)]) != magic {
		return Reply{}, nil, errors.New("sim: not a simulation reply")
	}
	n, err := strconv.Atoi(string(b[len(b)-lenDigits:]))
	body := b[len(magic) : len(b)-lenDigits]
	if err != nil || n < 0 || n > len(body) {
		return Reply{}, nil, errors.New("sim: truncated reply")
	}
	var h head
	if err := json.Unmarshal(body[len(body)-n:], &h); err != nil {
		return Reply{}, nil, fmt.Errorf("sim: reading the reply: %w", err)
	}
	if h.Steps == nil {
		return h.Reply, nil, nil
	}
	blobs := body[:len(body)-n]
	if len(h.Scenes) != len(h.Steps) {
		return Reply{}, nil, errors.New("sim: reply lists scenes for a different number of steps")
	}
	s := &Script{
		Script: &lessons.Script{Steps: h.Steps, Metrics: h.Metrics, Claims: h.Claims},
		raw:    make([][]byte, len(h.Steps)),
	}
	start := 0
	for i, end := range h.Scenes {
		if end < start || end > len(blobs) {
			return Reply{}, nil, errors.New("sim: reply's scene offsets are out of range")
		}
		s.raw[i] = blobs[start:end:end]
		start = end
	}
	return h.Reply, s, nil
}

// Script is a lesson's script as the page holds it: every step's title,
// narration and quiz, the metrics and claims, and each step's scenes,
// decoded on first use when the script came from a worker.
type Script struct {
	*lessons.Script
	raw [][]byte // encoded scenes of each step; nil once decoded, or for a local script
}

// Local wraps a script built in this process (its scenes are all there).
func Local(s *lessons.Script) *Script {
	if s == nil {
		return nil
	}
	return &Script{Script: s}
}

// Count is the number of steps (0 for a nil script).
func (s *Script) Count() int {
	if s == nil || s.Script == nil {
		return 0
	}
	return len(s.Steps)
}

// Scenes returns step i's scenes (0-based), decoding them the first time.
func (s *Script) Scenes(i int) ([]scene.Scene, error) {
	if i < 0 || i >= s.Count() {
		return nil, fmt.Errorf("sim: no step %d", i+1)
	}
	if s.raw == nil || s.raw[i] == nil {
		return s.Steps[i].Scenes, nil
	}
	var sc []scene.Scene
	if err := json.Unmarshal(s.raw[i], &sc); err != nil {
		return nil, fmt.Errorf("sim: step %d: decoding its scenes: %w", i+1, err)
	}
	s.Steps[i].Scenes = sc
	s.raw[i] = nil
	return sc, nil
}

// Full decodes every step's scenes and returns the whole script.
func (s *Script) Full() (*lessons.Script, error) {
	for i := 0; i < s.Count(); i++ {
		if _, err := s.Scenes(i); err != nil {
			return nil, err
		}
	}
	return s.Script, nil
}

// appendScenes appends scenes as a JSON array. Block grids, nearly all of
// the bytes (garage: two 2,048-block grids in each of 20 steps), are written
// by hand: encoding/json's reflection took 25–48 ms of garage's 30–60 ms
// natively, and several times that in WebAssembly, on every re-simulation.
// The rest goes through encoding/json. Decoding is encoding/json's
// (the round-trip test checks the two agree).
func appendScenes(buf []byte, scenes []scene.Scene) ([]byte, error) {
	if scenes == nil {
		return append(buf, "null"...), nil
	}
	buf = append(buf, '[')
	for i, sc := range scenes {
		if i > 0 {
			buf = append(buf, ',')
		}
		grid := sc.Grid
		sc.Grid = nil
		b, err := json.Marshal(sc)
		if err != nil {
			return buf, err
		}
		if grid == nil {
			buf = append(buf, b...)
			continue
		}
		buf = append(buf, b[:len(b)-1]...) // without the closing brace
		buf = append(buf, `,"grid":`...)
		buf = appendGrid(buf, grid)
		buf = append(buf, '}')
	}
	return append(buf, ']'), nil
}

// appendGrid writes a block grid as encoding/json would decode it (field
// names from scene's tags; omitempty fields left out when zero).
func appendGrid(buf []byte, g *scene.BlockGrid) []byte {
	buf = append(buf, `{"block_size":`...)
	buf = strconv.AppendInt(buf, int64(g.BlockSize), 10)
	if g.Columns != 0 {
		buf = append(buf, `,"columns":`...)
		buf = strconv.AppendInt(buf, int64(g.Columns), 10)
	}
	if g.Blocks == nil {
		return append(buf, `,"blocks":null}`...)
	}
	buf = append(buf, `,"blocks":[`...)
	for i, b := range g.Blocks {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"owner":`...)
		buf = strconv.AppendInt(buf, int64(b.Owner), 10)
		buf = append(buf, `,"label":`...)
		buf = appendJSONString(buf, b.Label)
		buf = append(buf, `,"used":`...)
		buf = strconv.AppendInt(buf, int64(b.Used), 10)
		if b.Refs != 0 {
			buf = append(buf, `,"refs":`...)
			buf = strconv.AppendInt(buf, int64(b.Refs), 10)
		}
		if b.Cached {
			buf = append(buf, `,"cached":true`...)
		}
		if b.Highlight {
			buf = append(buf, `,"hl":true`...)
		}
		if b.Colour != 0 {
			buf = append(buf, `,"colour":`...)
			buf = strconv.AppendInt(buf, int64(b.Colour), 10)
		}
		buf = append(buf, '}')
	}
	return append(buf, "]}"...)
}

// appendJSONString writes s as a JSON string that encoding/json decodes to
// s: quotes and backslashes escaped; control characters, <, > and & as
// \u00XX (as json.Marshal escapes the last three, so the text is safe
// inside a <script> element); everything else (UTF-8 included) as is.
// Strings with invalid UTF-8, U+2028 or U+2029 (rare in labels) go through
// encoding/json itself, which replaces or escapes them.
func appendJSONString(buf []byte, s string) []byte {
	if !utf8.ValidString(s) || strings.ContainsRune(s, '\u2028') || strings.ContainsRune(s, '\u2029') {
		b, _ := json.Marshal(s)
		return append(buf, b...)
	}
	buf = append(buf, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			buf = append(buf, '\\', c)
		case c < 0x20 || c == '<' || c == '>' || c == '&':
			buf = append(buf, `\u00`...)
			buf = append(buf, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
		default:
			buf = append(buf, c)
		}
	}
	return append(buf, '"')
}
