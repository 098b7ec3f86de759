package lessons

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/agnivade/levenshtein"

	"github.com/inferlab/inferlab/core/router"
	"github.com/inferlab/inferlab/scene"
)

// prefix-cache: Parts 11–12. SGLang's RadixAttention keeps finished
// requests' KV in a radix tree of token runs; new requests reuse the longest
// cached prefix. Words stand in for tokens so the tree can be read.
var prefixCache = &Lesson{
	Slug:    "prefix-cache",
	Title:   "The radix tree: prefix caching, splits, locks and eviction",
	Part:    "Parts 11–12",
	Summary: "Requests insert into SGLang's radix tree; watch matches, edge splits, lock counts and LRU eviction — and why a one-word change at the start shares nothing.",
	Engine: "SGLang RadixCache (match_prefix splits edges, insert de-duplicates, lock_ref protects running requests, LRU eviction of unlocked leaves), page size 1. " +
		"Simplified: one word is one token, and the cache capacity is counted in tokens.",
	Params: []Param{
		{Key: "capacity", Label: "Cache capacity", Unit: "tokens", Help: "Tokens the KV pool can hold; inserting past it evicts least-recently-used unlocked leaves.", Kind: Int, Default: 48, Min: 24, Max: 400, Step: 1},
		{Key: "system", Label: "System prompt", Help: "The shared opening every request starts with.", Kind: Choice,
			Choices: []string{"You are a careful assistant for the finance team .", "Answer briefly .", "You are a patient tutor who explains every step and checks the student's reasoning before giving the answer ."}},
	},
	Build: buildPrefixCache,
}

func init() { register(prefixCache) }

// vocab turns words into token ids in order of first appearance, so runs are
// deterministic and readable.
type vocab struct {
	ids   map[string]int
	words []string
}

func (v *vocab) encode(text string) []int {
	if v.ids == nil {
		v.ids = map[string]int{}
	}
	var out []int
	for _, w := range strings.Fields(text) {
		id, ok := v.ids[w]
		if !ok {
			id = len(v.words)
			v.ids[w] = id
			v.words = append(v.words, w)
		}
		out = append(out, id)
	}
	return out
}

func (v *vocab) decode(ids []int) string {
	ws := make([]string, len(ids))
	for i, id := range ids {
		ws[i] = v.words[id]
	}
	return strings.Join(ws, " ")
}

// sharedPrefix counts the leading tokens two sequences have in common.
func sharedPrefix(a, b []int) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// The lesson's requests: four that open with the system prompt, a long
// unrelated one that brings memory pressure, and the twist's prompt pairs.
var (
	prefixCacheTails = []string{
		" Summarise this quarterly report for the board .",
		" Summarise this quarterly report in French .",
		" Translate this email into German .",
		" Summarise this quarterly report for the board and list the risks .",
	}
	prefixCacheLong  = "Write a detailed travel plan for seven days in Japan with trains , temples , food markets , museums and a budget for each day ."
	prefixCachePairs = [2][2]string{
		{"Please summarise the quarterly report for the board .", "Kindly summarise the quarterly report for the board ."},
		{"Please summarise the quarterly report for the board .", "Please summarise the quarterly report for the board , then draft three follow-up emails to the finance team about the open risks ."},
	}
)

// prefixCacheRun is what the radix tree did with the lesson's requests:
// each request's outcome, the tree as it stood after each, and the twist's
// pairs.
type prefixCacheRun struct {
	capacity  int
	system    string
	voc       vocab
	requests  []string // the four system-prompt requests
	predicted int      // R2's shared prefix with R1, for the quiz
	r1, r2    served
	r3, r4    served
	r5        served // the long request
	before    int    // tokens cached before the long request
	held      int    // tokens R3 held locked when it finished
	frames    []cacheFrame
	twist     [2]twistPair
	final     cacheFrame
	splits    int
	evicted   int
	reused    int // prompt tokens found cached
	prompted  int // prompt tokens
}

// served is one request's pass through the cache.
type served struct {
	tokens                                   int
	matched, inserted, evictedNow, splitsNow int
	waits                                    bool // no room even after evicting every unlocked leaf
	node                                     *router.Node
	touched                                  map[int]bool
}

// cacheFrame is the tree and its counts at one moment.
type cacheFrame struct {
	nodes                                  []router.NodeView
	total, evictable, protected, nodeCount int
	reused                                 int // tokens reused so far
}

// twistPair is two prompts: their edit distance and shared prefix.
type twistPair struct {
	a, b           string
	distance, lenB int
	shared         int
}

func buildPrefixCache(v Values) (*Script, error) {
	r, err := runPrefixCache(v)
	if err != nil {
		return nil, err
	}
	return r.script(), nil
}

// runPrefixCache serves the lesson's requests through one radix tree.
func runPrefixCache(v Values) (*prefixCacheRun, error) {
	r := &prefixCacheRun{capacity: v.Int("capacity"), system: v.Choice("system")}
	for _, tail := range prefixCacheTails {
		r.requests = append(r.requests, r.system+tail)
	}
	tree := router.NewRadixTree(1)
	r.frames = append(r.frames, r.frame(tree))
	r.r1 = r.serve(tree, r.requests[0], false)
	r.frames = append(r.frames, r.frame(tree))
	r.predicted = sharedPrefix(r.voc.encode(r.requests[0]), r.voc.encode(r.requests[1]))
	r.r2 = r.serve(tree, r.requests[1], false)
	r.frames = append(r.frames, r.frame(tree))
	r.r3 = r.serve(tree, r.requests[2], true)
	r.frames = append(r.frames, r.frame(tree))
	r.r4 = r.serve(tree, r.requests[3], false)
	r.frames = append(r.frames, r.frame(tree))
	// Memory pressure: a long unrelated prompt.
	r.before = tree.TotalSize()
	r.r5 = r.serve(tree, prefixCacheLong, false)
	r.frames = append(r.frames, r.frame(tree))
	r.held = tree.ProtectedSize()
	if r.r3.node != nil {
		if err := tree.Unlock(r.r3.node); err != nil {
			return nil, err
		}
	}
	r.final = r.frame(tree)
	if err := tree.Check(); err != nil {
		return nil, err
	}
	for i, p := range prefixCachePairs {
		var pv vocab
		a, b := pv.encode(p[0]), pv.encode(p[1])
		r.twist[i] = twistPair{a: p[0], b: p[1], distance: levenshtein.ComputeDistance(p[0], p[1]), shared: sharedPrefix(a, b), lenB: len(b)}
	}
	return r, nil
}

// serve runs one request through the cache: match, make room, insert,
// and (lock) keep it locked as a running request.
func (r *prefixCacheRun) serve(tree *router.RadixTree, text string, lock bool) served {
	ids := r.voc.encode(text)
	tree.Events()
	matched, _ := tree.Match(ids)
	r.prompted += len(ids)
	r.reused += matched
	out := served{tokens: len(ids), matched: matched}
	if need := tree.TotalSize() + len(ids) - matched - r.capacity; need > 0 {
		out.evictedNow = tree.Evict(need)
		r.evicted += out.evictedNow
		if out.evictedNow < need {
			out.waits = true // SGLang cannot allocate: the request stays queued
			return out
		}
	}
	tree.Insert(ids)
	_, node := tree.Match(ids)
	out.node = node
	if lock {
		// node was just inserted or matched, so it is in the tree.
		if err := tree.Lock(node); err != nil {
			panic(fmt.Sprintf("prefix-cache: locking a node just matched: %v", err))
		}
	}
	out.touched = map[int]bool{}
	for _, e := range tree.Events() {
		switch e.Kind {
		case router.TreeSplit:
			out.splitsNow++
			out.touched[e.Node] = true
		case router.TreeInserted:
			out.touched[e.Node] = true
			out.inserted += e.Len
		}
	}
	r.splits += out.splitsNow
	return out
}

// frame copies the tree and its counts.
func (r *prefixCacheRun) frame(tree *router.RadixTree) cacheFrame {
	return cacheFrame{nodes: tree.Snapshot(), total: tree.TotalSize(), evictable: tree.EvictableSize(), protected: tree.ProtectedSize(),
		nodeCount: tree.Nodes(), reused: r.reused}
}

// hitRate is the share of prompt tokens found cached.
func (r *prefixCacheRun) hitRate() float64 { return float64(r.reused) / float64(max(1, r.prompted)) }

// treeScene draws the tree of frame f, marking the nodes in highlight.
func (r *prefixCacheRun) treeScene(f cacheFrame, highlight map[int]bool) scene.Scene {
	tbl := &scene.Table{Columns: []string{"node", "edge (tokens)", "length", "lock_ref", "last used"}}
	for _, n := range f.nodes {
		if n.Parent < 0 {
			tbl.Rows = append(tbl.Rows, []string{"root", "", "", "", ""})
			continue
		}
		mark := ""
		if highlight[n.ID] {
			mark = " ◀"
		}
		tbl.Rows = append(tbl.Rows, []string{
			strings.Repeat("    ", n.Depth-1) + "└─ #" + strconv.Itoa(n.ID) + mark,
			r.voc.decode(n.Key), strconv.Itoa(len(n.Key)), strconv.Itoa(n.LockRef), "tick " + strconv.FormatUint(n.LastAccess, 10),
		})
	}
	return scene.Scene{Kind: scene.KindTable, ID: "tree", Title: "The radix tree (each row is an edge; indentation is depth)", Table: tbl}
}

// cardsScene is frame f's counts.
func (r *prefixCacheRun) cardsScene(f cacheFrame) scene.Scene {
	return scene.Scene{Kind: scene.KindCards, ID: "cache", Title: "The cache", Cards: []scene.Card{
		{Label: "cached tokens", Value: float64(f.total), Note: fmt.Sprintf("capacity %d", r.capacity)},
		{Label: "evictable (unlocked)", Value: float64(f.evictable)},
		{Label: "protected (locked)", Value: float64(f.protected)},
		{Label: "nodes", Value: float64(f.nodeCount)},
		{Label: "tokens reused so far", Value: float64(f.reused)},
	}}
}

func (r *prefixCacheRun) script() *Script {
	s := &Script{Metrics: r.metrics(), Claims: r.claims()}
	s.Steps = append(r.treeSteps(), r.twistStep(), Step{Title: "Article claim vs this model", Narration: "What the series says about prefix caching, and what this run shows.", Scenes: []scene.Scene{claimsTable(s.Claims)}})
	indexCursors(s.Steps)
	return s
}

// treeSteps narrate the requests, one step per frame.
func (r *prefixCacheRun) treeSteps() []Step {
	sysTokens := len(strings.Fields(r.system))
	r1, r2, r3, r4, r5 := r.r1, r.r2, r.r3, r.r4, r.r5
	evictText := "Nothing had to be evicted."
	if r4.evictedNow > 0 {
		evictText = fmt.Sprintf("The cache was full, so %d tokens were evicted first: the least recently used unlocked leaves, deepest first; R3's locked path stayed.", r4.evictedNow)
	}
	long := len(strings.Fields(prefixCacheLong))
	pressure := fmt.Sprintf("A long unrelated request (%d tokens) needs room. The cache held %d of %d tokens, so it evicted %d: SGLang heaps the leaves by last use and drops unlocked ones, pushing a parent that becomes a leaf. Locked nodes are skipped; only leaves ever go, so a shared prefix outlives its extensions.",
		long, r.before, r.capacity, r5.evictedNow)
	if r5.waits {
		pressure = fmt.Sprintf("A long unrelated request (%d tokens) needs room, but after evicting every unlocked leaf (%d tokens) the cache is still too full: %d tokens are locked by the running R3. The request waits until R3 finishes.",
			long, r5.evictedNow, r.frames[5].protected)
	}
	texts := []struct {
		title, narration string
		hl               map[int]bool
		quiz             *Quiz
	}{
		{"An empty tree", fmt.Sprintf("SGLang keeps the KV of finished requests in a radix tree: each edge holds a run of tokens, and a path from the root spells a cached prefix. Every request here starts with the same system prompt (%d tokens); the cache holds %d tokens.",
			sysTokens, r.capacity), nil, nil},
		{"R1: a miss, then one leaf", fmt.Sprintf("R1 finds nothing cached and computes all %d tokens. When it finishes, its tokens are inserted as one leaf: a single edge of %d tokens under the root.", r1.tokens, r1.inserted), r1.touched, nil},
		{"R2: a partial match splits the edge", fmt.Sprintf("R2 shares its first %d tokens with R1. The match stops inside R1's edge, so the tree splits it there: a new node holds the shared %d tokens, and R1's tail and R2's new tail (%d tokens) hang below it as siblings. R2 reuses %d tokens of KV and computes %d.",
			r2.matched, r2.matched, r2.inserted, r2.matched, r2.tokens-r2.matched), r2.touched,
			numberQuiz("R2 starts with the same system prompt and the same first words as R1. How many of its tokens will it find in the cache?", float64(r.predicted), 0, "The longest common prefix with what is cached; the match then splits R1's edge there.")},
		{"R3 runs: its path is locked", fmt.Sprintf("R3 reuses the %d-token system prompt and adds %d tokens. While it runs it holds a lock on its path: lock_ref is 1 on every node from its leaf to the root, and those %d tokens move from evictable to protected, so memory pressure cannot take them.",
			r3.matched, r3.inserted, r.frames[3].protected), r3.touched, nil},
		{"R4 extends a cached prefix", fmt.Sprintf("R4 matches %d tokens, all of R1 up to its closing full stop, and adds %d. %s", r4.matched, r4.inserted, evictText), r4.touched, nil},
		{"Memory pressure: LRU eviction", pressure, r5.touched, nil},
		{"R3 finishes: the lock is released", fmt.Sprintf("R3 is done and releases its lock chain: lock_ref drops to 0 along its path and its %d tokens become evictable again.", r.held), nil, nil},
	}
	frames := append(r.frames, r.final)
	var steps []Step
	for i, t := range texts {
		steps = append(steps, Step{Title: t.title, Narration: t.narration, Quiz: t.quiz, Scenes: []scene.Scene{r.treeScene(frames[i], t.hl), r.cardsScene(frames[i])}})
	}
	return steps
}

// twistStep sets edit distance against shared prefix.
func (r *prefixCacheRun) twistStep() Step {
	tbl := &scene.Table{Columns: []string{"prompt A", "prompt B", "edit distance (characters)", "shared prefix (tokens)", "KV reused"}}
	for _, p := range r.twist {
		tbl.Rows = append(tbl.Rows, []string{p.a, p.b, strconv.Itoa(p.distance), strconv.Itoa(p.shared), fmt.Sprintf("%d of %d tokens", p.shared, p.lenB)})
	}
	small, large := r.twist[0], r.twist[1]
	return Step{
		Title: "Similar is not shared",
		Narration: fmt.Sprintf("KV reuse needs an identical prefix, because each token's keys and values depend on every token before it. Two prompts %d characters apart that differ in their first word share %d tokens: nothing is reused. "+
			"Two prompts %d characters apart that start the same way share %d tokens. Put what varies at the end of a prompt, not the start.", small.distance, small.shared, large.distance, large.shared),
		Scenes: []scene.Scene{{Kind: scene.KindTable, ID: "twist", Title: "Edit distance vs shared prefix", Table: tbl}, r.treeScene(r.final, nil)},
		Quiz: choiceQuiz(fmt.Sprintf("\"%s\" vs \"%s\": %d characters apart. Will the second reuse the first one's KV cache?", small.a, small.b, small.distance),
			[]string{"yes, most of it", "almost none of it"}, map[bool]string{true: "yes, most of it", false: "almost none of it"}[small.shared > 0],
			fmt.Sprintf("They share %d leading tokens: the first word differs, so every later token's keys and values differ too.", small.shared)),
	}
}

func (r *prefixCacheRun) metrics() []Metric {
	small, large := r.twist[0], r.twist[1]
	return []Metric{
		{Key: "cached_tokens", Label: "Tokens cached at the end", Unit: "tokens", Value: float64(r.final.total)},
		{Key: "tree_nodes", Label: "Nodes in the tree at the end (root included)", Value: float64(r.final.nodeCount)},
		{Key: "splits", Label: "Edge splits", Value: float64(r.splits)},
		{Key: "evicted_tokens", Label: "Tokens evicted", Unit: "tokens", Value: float64(r.evicted)},
		{Key: "hit_rate_pct", Label: "Prompt tokens found in the cache", Unit: "%", Value: round2(100 * r.hitRate())},
		{Key: "edit_distance_small", Label: "Edit distance of the near-identical pair", Unit: "characters", Value: float64(small.distance)},
		{Key: "shared_prefix_small", Label: "Shared prefix of the near-identical pair", Unit: "tokens", Value: float64(small.shared)},
		{Key: "edit_distance_large", Label: "Edit distance of the long-tailed pair", Unit: "characters", Value: float64(large.distance)},
		{Key: "shared_prefix_large", Label: "Shared prefix of the long-tailed pair", Unit: "tokens", Value: float64(large.shared)},
	}
}

func (r *prefixCacheRun) claims() []Claim {
	return []Claim{{
		What:    "Prefix caching reuses the KV of repeated prefixes",
		Article: "Part 11: RadixAttention tree-structured prefix caching; Part 12: route to the worker holding the matching prefix",
		Model:   fmt.Sprintf("%.1f%% of this stream's prompt tokens were found in the tree", 100*r.hitRate()),
		Why:     "Agrees; the SGLang paper reports 50%–99% hit rates on its benchmarks (engines.md §6). Reuse stops at the first differing token, however similar the rest is.",
	}}
}
