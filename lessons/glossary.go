package lessons

import (
	"net/url"
	"sort"
	"strings"

	"github.com/agnivade/levenshtein"
)

// Term is a glossary entry of the series' vocabulary. Lesson names the
// lesson that explains it; the step is found by searching that lesson's
// default run for Find (so links follow the lesson when its steps change).
type Term struct {
	Term       string
	Aliases    []string
	Definition string
	Lesson     string
	Find       string // text to look for in step titles and narrations; Term when empty
	Set        string // URL query of knobs the explaining run needs, e.g. "mode=prefix"
}

// find is the text that locates the term's step.
func (t Term) find() string {
	if t.Find != "" {
		return t.Find
	}
	return t.Term
}

// Link is the term's URL query on its lesson page: its knobs and a find=
// the player resolves to the first step mentioning the term.
func (t Term) Link() string {
	q := url.Values{}
	if t.Set != "" {
		if v, err := url.ParseQuery(t.Set); err == nil {
			q = v
		}
	}
	q.Set("find", t.find())
	return q.Encode()
}

// StepFor returns the 1-based step of s whose title or narration first
// mentions text (case-insensitive), or 0.
func StepFor(s *Script, text string) int {
	f := strings.ToLower(text)
	for i, st := range s.Steps {
		if strings.Contains(strings.ToLower(st.Title+" "+st.Narration), f) {
			return i + 1
		}
	}
	return 0
}

// Glossary lists the terms the search box knows.
var Glossary = []Term{
	{Term: "KV cache", Definition: "The keys and values of every past token, kept per layer so attention need not recompute them.", Lesson: "garage", Find: "KV slots"},
	{Term: "PagedAttention", Aliases: []string{"paged attention", "paging"}, Definition: "vLLM's KV layout: fixed-size blocks found through a block table, like virtual memory pages.", Lesson: "garage", Find: "blocks of"},
	{Term: "block table", Definition: "A request's map from logical block (⌊t/B⌋) to the physical block holding it.", Lesson: "block-table", Find: "table"},
	{Term: "S_entry", Aliases: []string{"kv bytes per token"}, Definition: "Bytes of one token's K and V across all layers: 2 · layers · KV heads · head dim · bytes per element.", Lesson: "block-table", Find: "per token"},
	{Term: "internal fragmentation", Definition: "Memory reserved for a request but never filled: the empty tail of a reservation.", Lesson: "garage"},
	{Term: "external fragmentation", Definition: "Free memory split into holes too small for the next reservation.", Lesson: "garage", Find: "rejected for now"},
	{Term: "first fit", Definition: "Place a reservation in the lowest-addressed hole that holds it.", Lesson: "garage"},
	{Term: "copy-on-write", Aliases: []string{"cow"}, Definition: "Share a block until someone writes to it; the writer gets a private copy.", Lesson: "cow-fork", Find: "copy on write"},
	{Term: "parallel sampling", Aliases: []string{"n > 1"}, Definition: "Several outputs sampled from one prompt, sharing its KV blocks.", Lesson: "cow-fork", Find: "sampled"},
	{Term: "reference count", Aliases: []string{"ref count"}, Definition: "How many block tables hold a physical block; it returns to the pool at zero.", Lesson: "cow-fork", Find: "reference count"},
	{Term: "prefix caching", Aliases: []string{"automatic prefix caching", "apc"}, Definition: "Reuse the KV blocks of an identical prompt prefix, found by chain hashes of full blocks.", Lesson: "cow-fork", Find: "prefix cache", Set: "mode=prefix"},
	{Term: "continuous batching", Definition: "Requests join and leave the running batch at every step instead of waiting for a whole batch to finish.", Lesson: "chunked-prefill", Find: "Every step"},
	{Term: "chunked prefill", Definition: "Split a long prompt into chunks that share steps with running decodes, bounded by a token budget.", Lesson: "chunked-prefill", Find: "chunk"},
	{Term: "prefill", Definition: "Computing the prompt's tokens in parallel to fill the KV cache and produce the first output token.", Lesson: "chunked-prefill", Find: "prefill"},
	{Term: "decode", Definition: "Generating one token per request per step, reading the whole KV cache each time.", Lesson: "chunked-prefill", Find: "decoding"},
	{Term: "TTFT", Aliases: []string{"time to first token"}, Definition: "Time from a request's arrival to its first output token.", Lesson: "measuring", Find: "TTFT"},
	{Term: "ITL", Aliases: []string{"inter-token latency"}, Definition: "The gap between two consecutive output tokens of a request.", Lesson: "chunked-prefill", Find: "gap between tokens"},
	{Term: "TPOT", Aliases: []string{"time per output token"}, Definition: "Mean gap between a request's output tokens after the first.", Lesson: "measuring", Find: "TPOT"},
	{Term: "goodput", Definition: "Requests per second that meet the latency objective (TTFT and TPOT).", Lesson: "measuring", Find: "Goodput"},
	{Term: "throughput", Definition: "Tokens (or requests) served per second.", Lesson: "measuring", Find: "throughput"},
	{Term: "SLO", Aliases: []string{"service level objective"}, Definition: "The latency a request must meet to count as served well.", Lesson: "measuring", Find: "SLO"},
	{Term: "roofline", Definition: "Attainable FLOP/s = min(peak, arithmetic intensity × memory bandwidth).", Lesson: "roofline"},
	{Term: "arithmetic intensity", Definition: "FLOPs per byte of memory traffic.", Lesson: "roofline"},
	{Term: "ridge point", Aliases: []string{"ridge"}, Definition: "The intensity where a GPU's memory roof meets its compute roof: peak FLOPS / bandwidth.", Lesson: "roofline", Find: "ridge"},
	{Term: "memory-bound", Definition: "Limited by bytes moved, not by arithmetic: decode at small batch.", Lesson: "roofline"},
	{Term: "compute-bound", Definition: "Limited by tensor-core arithmetic: prefill of long prompts.", Lesson: "roofline"},
	{Term: "preemption", Aliases: []string{"recompute"}, Definition: "vLLM frees the most recently admitted request's KV when blocks run out; it is recomputed later.", Lesson: "garage", Find: "preempted"},
	{Term: "head-of-line blocking", Definition: "The first waiting request does not fit, so nobody behind it is admitted either.", Lesson: "garage", Find: "everyone behind it waits"},
	{Term: "CUDA graph", Aliases: []string{"cudagraph", "graph replay"}, Definition: "A recorded sequence of kernel launches replayed with one call, removing per-kernel CPU launch cost.", Lesson: "cuda-graphs", Find: "graph"},
	{Term: "NIXL", Definition: "NVIDIA Inference Xfer Library: moves KV blocks between GPUs, hosts and storage over RDMA.", Lesson: "disaggregation", Find: "Formulation 3"},
	{Term: "KVBM", Aliases: []string{"kv block manager"}, Definition: "Dynamo's KV Block Manager: offloads KV blocks from GPU to host memory, SSD and object storage.", Lesson: "kv-tiers", Find: "KVBM"},
	{Term: "KV-aware routing", Aliases: []string{"smart routing", "kv router"}, Definition: "Send a request to the worker whose cache holds most of its prefix, weighed against that worker's load.", Lesson: "smart-routing", Find: "KV-aware"},
	{Term: "radix tree", Definition: "A tree of token runs in which shared prefixes are stored once (SGLang's RadixAttention).", Lesson: "prefix-cache", Find: "tree"},
	{Term: "disaggregation", Aliases: []string{"disaggregated serving"}, Definition: "Prefill and decode on separate GPU pools, with the KV cache transferred between them.", Lesson: "disaggregation", Find: "Separate pools"},
}

// Hit is one search result: a lesson (Term empty) or a glossary term, with
// the URL query that opens the lesson at the step explaining it.
type Hit struct {
	Lesson  string
	Title   string
	Term    string
	Snippet string
	Query   string
	score   int // lower is better
}

// maxQueryLen bounds what the search reads from the box.
const maxQueryLen = 64

// Search finds lessons and glossary terms matching query, tolerant of
// small typos (Levenshtein distance on words and phrases). It returns at
// most limit hits, best first.
func Search(query string, limit int) []Hit {
	q := normalizeTerm(query)
	if len(q) > maxQueryLen {
		q = q[:maxQueryLen]
	}
	if q == "" {
		return nil
	}
	var hits []Hit
	for _, t := range Glossary {
		if Get(t.Lesson) == nil {
			continue
		}
		best := -1
		for _, name := range append([]string{t.Term}, t.Aliases...) {
			if d, ok := phraseDistance(q, normalizeTerm(name)); ok && (best < 0 || d < best) {
				best = d
			}
		}
		if best < 0 {
			if strings.Contains(normalizeTerm(t.Definition), q) && len(q) >= 4 {
				best = 10
			} else {
				continue
			}
		}
		hits = append(hits, Hit{Lesson: t.Lesson, Title: Get(t.Lesson).Title, Term: t.Term, Snippet: t.Definition, Query: t.Link(), score: best})
	}
	for _, l := range All() {
		text := normalizeTerm(l.Title + " " + l.Summary + " " + l.Slug)
		d, ok := phraseDistance(q, normalizeTerm(l.Title))
		switch {
		case ok:
			d += 1 // a term hit ranks above its lesson
		case strings.Contains(text, q):
			d = 5
		case wordsMatch(q, text):
			d = 8
		default:
			continue
		}
		hits = append(hits, Hit{Lesson: l.Slug, Title: l.Title, Snippet: l.Summary, score: d})
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].score < hits[j].score })
	if limit > 0 && len(hits) > limit {
		hits = hits[:limit]
	}
	return hits
}

// phraseDistance compares a query with a name: exact, prefix (the user is
// still typing), or within the typo budget of the whole name.
func phraseDistance(q, name string) (int, bool) {
	switch {
	case q == name:
		return 0, true
	case len(q) >= 3 && strings.HasPrefix(name, q):
		return 2, true
	}
	d := levenshtein.ComputeDistance(q, name)
	if d <= typoBudget(len([]rune(name))) {
		return 1 + d, true
	}
	return 0, false
}

// wordsMatch reports whether every word of q is within its typo budget of
// some word of text.
func wordsMatch(q, text string) bool {
	words := strings.Fields(text)
	for _, w := range strings.Fields(q) {
		found := false
		for _, t := range words {
			if levenshtein.ComputeDistance(w, t) <= typoBudget(len([]rune(t))) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
