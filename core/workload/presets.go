package workload

import (
	"bufio"
	"bytes"
	_ "embed" // the presets' compact files
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Trace presets: windows of real, published request streams, shipped in a
// compact form (presets/*.txt, made by presets/build.py from the published
// files; presets/README.md gives their licences and attribution).
//
//   - azure-conv and azure-code: the Azure LLM inference trace of
//     2023-11-16 (Azure/AzurePublicDataset @ b469a11,
//     data/AzureLLMInferenceTrace_conv.csv and _code.csv; CC-BY 4.0; Patel
//     et al., "Splitwise", ISCA 2024): arrival, prompt and output tokens.
//   - mooncake-conversation: Moonshot AI's conversation trace (kvcache-ai/
//     Mooncake @ 3b5a594, FAST25-release/traces/conversation_trace.jsonl;
//     Apache-2.0; Qin et al., "Mooncake", FAST 2025), whose hash_ids name
//     the prompt's 512-token blocks: equal ids are equal prefixes.
//
// Azure's files hold the first PresetWindow seconds of their traces,
// Mooncake's the whole published hour (LoadPreset reads its first
// PresetWindow seconds, LoadWholeTrace all of it: its prefix reuse shows
// only over thousands of requests, 21% of the prompt tokens over the
// first 300 s and 37% over the hour). A hash id
// is a prefix hash (in the published file an id always follows the same
// id at the same position), so LoadPreset turns ids into Segments: block
// k of a prompt is 512 ids from a source named by its hash id, and two
// prompts share token ids exactly as far as their hash ids agree. Turns
// are inferred from that sharing (presetTurns).
//
// The data is parsed only when a preset is loaded: nothing here runs at
// init, so a binary that never calls LoadPreset leaves the files out.

// PresetWindow is how many seconds of each trace the presets hold, from
// the trace's first request.
const PresetWindow = 300

// MooncakeBlock is the Mooncake trace's block size: one hash id names 512
// prompt tokens.
const MooncakeBlock = 512

// Preset describes one trace preset.
type Preset struct {
	ID, Title string
	// Source is the published file and the commit it was read at.
	Source string
	// Licence and Attribution are what the licence asks to keep with a copy.
	Licence, Attribution string
	// Blocks is true when the prompts carry block hashes (shared prefixes).
	Blocks bool
	// Whole is true when the preset's file holds its whole trace
	// (LoadWholeTrace), not only the first PresetWindow seconds.
	Whole bool
	data  *string
}

var (
	//go:embed presets/azure-conv.txt
	azureConvData string
	//go:embed presets/azure-code.txt
	azureCodeData string
	//go:embed presets/mooncake-conversation.txt
	mooncakeConvData string
)

const (
	azureAttribution    = "Patel et al., \"Splitwise: Efficient generative LLM inference using phase splitting\", ISCA 2024"
	mooncakeAttribution = "Qin et al., \"Mooncake: Trading More Storage for Less Computation — A KVCache-centric Architecture for Serving LLM Chatbot\", FAST 2025"
)

var presets = []Preset{
	{ID: "azure-conv", Title: "Azure LLM inference 2023, conversation", Source: "Azure/AzurePublicDataset @ b469a11, data/AzureLLMInferenceTrace_conv.csv",
		Licence: "CC-BY 4.0", Attribution: azureAttribution, data: &azureConvData},
	{ID: "azure-code", Title: "Azure LLM inference 2023, code completion", Source: "Azure/AzurePublicDataset @ b469a11, data/AzureLLMInferenceTrace_code.csv",
		Licence: "CC-BY 4.0", Attribution: azureAttribution, data: &azureCodeData},
	{ID: "mooncake-conversation", Title: "Mooncake (Kimi) conversation, FAST'25", Source: "kvcache-ai/Mooncake @ 3b5a594, FAST25-release/traces/conversation_trace.jsonl",
		Licence: "Apache-2.0", Attribution: mooncakeAttribution, Blocks: true, Whole: true, data: &mooncakeConvData},
}

// Presets returns the trace presets, in a fixed order.
func Presets() []Preset { return append([]Preset(nil), presets...) }

// PresetByID returns the preset with the given id.
func PresetByID(id string) (Preset, bool) {
	for _, p := range presets {
		if p.ID == id {
			return p, true
		}
	}
	return Preset{}, false
}

// presetSource is the source of the token ids of Mooncake block hash h:
// below 1<<56, clear of this package's own kinds, and far from small
// sources a caller may pick.
func presetSource(h int) int64 { return 1<<48 + int64(h) }

// LoadPreset returns the requests of preset id that arrive in the first
// window seconds (0 < window ≤ PresetWindow), numbered 0, 1, … by arrival.
// Mooncake requests carry Segments (their blocks' token ids) and the
// conversation, turn and previous turn inferred from their shared blocks;
// Azure requests share nothing.
func LoadPreset(id string, window float64) ([]Request, error) {
	p, ok := PresetByID(id)
	if !ok {
		return nil, fmt.Errorf("workload: no trace preset %q", id)
	}
	if !(window > 0 && window <= PresetWindow) {
		return nil, fmt.Errorf("workload: preset window %g s, want 0 < window ≤ %d", window, PresetWindow)
	}
	return p.load(window)
}

// LoadWholeTrace returns every request of the published trace behind
// preset id, for a preset whose file holds it whole (Preset.Whole), as
// LoadPreset returns a window of it: numbered by arrival, Mooncake's with
// conversations inferred over the whole trace.
func LoadWholeTrace(id string) ([]Request, error) {
	p, ok := PresetByID(id)
	if !ok || !p.Whole {
		return nil, fmt.Errorf("workload: no whole trace for preset %q", id)
	}
	return p.load(math.Inf(1))
}

// load parses the requests of p's file that arrive before window seconds.
func (p Preset) load(window float64) ([]Request, error) {
	id := p.ID
	var reqs []Request
	var hashes [][]int
	sc := bufio.NewScanner(strings.NewReader(*p.data))
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := sc.Bytes()
		if len(text) == 0 || text[0] == '#' {
			continue
		}
		r, ids, err := presetLine(text, p.Blocks)
		if err != nil {
			return nil, fmt.Errorf("workload: preset %s line %d: %w", id, line, err)
		}
		if r.Arrival >= window {
			break
		}
		r.ID = len(reqs)
		reqs = append(reqs, r)
		hashes = append(hashes, ids)
	}
	if p.Blocks {
		presetTurns(reqs, hashes)
	}
	return reqs, nil
}

// presetLine parses "arrival_ms prompt output [hash runs]".
func presetLine(text []byte, blocks bool) (Request, []int, error) {
	f := bytes.Fields(text)
	if want := 3 + b2i(blocks); len(f) != want {
		return Request{}, nil, fmt.Errorf("%d fields, want %d", len(f), want)
	}
	var n [3]int
	for i := range n {
		v, err := strconv.Atoi(string(f[i]))
		if err != nil || v < 0 {
			return Request{}, nil, fmt.Errorf("field %d: %q is not a count", i+1, f[i])
		}
		n[i] = v
	}
	r := Request{Arrival: float64(n[0]) / 1000, Prompt: n[1], Output: max(n[2], 1), PrefixGroup: -1, Conversation: -1, Prev: -1}
	if !blocks {
		return r, nil, nil
	}
	ids, err := hashRuns(string(f[3]))
	if err != nil {
		return Request{}, nil, err
	}
	if len(ids) != (r.Prompt+MooncakeBlock-1)/MooncakeBlock {
		return Request{}, nil, fmt.Errorf("%d block hashes for %d prompt tokens", len(ids), r.Prompt)
	}
	r.Segments = make([]Segment, len(ids))
	for k, h := range ids {
		r.Segments[k] = Segment{Source: presetSource(h), Len: min(MooncakeBlock, r.Prompt-k*MooncakeBlock)}
	}
	return r, ids, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// hashRuns expands "0-13,2353-2354" into the ids it names.
func hashRuns(s string) ([]int, error) {
	var ids []int
	for _, run := range strings.Split(s, ",") {
		lo, hi, dash := strings.Cut(run, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("hash run %q", run)
		}
		b := a
		if dash {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b-a > 1<<16 {
				return nil, fmt.Errorf("hash run %q", run)
			}
		}
		for h := a; h <= b; h++ {
			ids = append(ids, h)
		}
	}
	return ids, nil
}

// presetTurns infers conversations from shared blocks. Every prompt of the
// Mooncake trace starts with block 0 (a common system prompt), so sharing
// it says nothing; a request whose prompt extends an earlier prompt's
// blocks beyond it, up to that prompt's last full block at least, is that
// conversation's next turn (its history resent). Prev is the latest such
// earlier request with the longest shared run.
func presetTurns(reqs []Request, hashes [][]int) {
	// last[h] is the latest request whose prompt ends at block hash h, or
	// whose last full block is h.
	last := map[int]int{}
	conv := 0
	for i := range reqs {
		ids, r := hashes[i], &reqs[i]
		for k := len(ids) - 1; k >= 1; k-- {
			if j, ok := last[ids[k]]; ok {
				r.Prev, r.Turn, r.Conversation = j, reqs[j].Turn+1, reqs[j].Conversation
				break
			}
		}
		if r.Prev < 0 {
			r.Conversation = conv
			conv++
		}
		if n := len(ids); n >= 2 {
			last[ids[n-1]] = i
			last[ids[n-2]] = i
		}
	}
}
