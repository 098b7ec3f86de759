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

func buildPrefixCache(v Values) (*Script, error) {
	capacity := v.Int("capacity")
	sys := v.Choice("system")
	var voc vocab
	tree := router.NewRadixTree(1)
	s := &Script{}
	var splits, evicted, hitTokens, queryTokens int

	treeTable := func(highlight map[int]bool) scene.Scene {
		tbl := &scene.Table{Columns: []string{"node", "edge (tokens)", "length", "lock_ref", "last used"}}
		for _, n := range tree.Snapshot() {
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
				voc.decode(n.Key), strconv.Itoa(len(n.Key)), strconv.Itoa(n.LockRef), "tick " + strconv.FormatUint(n.LastAccess, 10),
			})
		}
		return scene.Scene{Kind: scene.KindTable, ID: "tree", Title: "The radix tree (each row is an edge; indentation is depth)", Table: tbl}
	}
	cards := func() scene.Scene {
		return scene.Scene{Kind: scene.KindCards, ID: "cache", Title: "The cache", Cards: []scene.Card{
			{Label: "cached tokens", Value: float64(tree.TotalSize()), Note: fmt.Sprintf("capacity %d", capacity)},
			{Label: "evictable (unlocked)", Value: float64(tree.EvictableSize())},
			{Label: "protected (locked)", Value: float64(tree.ProtectedSize())},
			{Label: "nodes", Value: float64(tree.Nodes())},
			{Label: "tokens reused so far", Value: float64(hitTokens)},
		}}
	}
	// serve runs one request through the cache: match, make room, insert,
	// and (optionally) keep it locked as a running request.
	type served struct {
		matched, inserted, evictedNow, splitsNow int
		waits                                    bool // no room even after evicting every unlocked leaf
		node                                     *router.Node
		touched                                  map[int]bool
	}
	serve := func(text string, lock bool) served {
		ids := voc.encode(text)
		tree.Events()
		matched, _ := tree.Match(ids)
		queryTokens += len(ids)
		hitTokens += matched
		var out served
		out.matched = matched
		if need := tree.TotalSize() + len(ids) - matched - capacity; need > 0 {
			out.evictedNow = tree.Evict(need)
			evicted += out.evictedNow
			if out.evictedNow < need {
				out.waits = true // SGLang cannot allocate: the request stays queued
				return out
			}
		}
		tree.Insert(ids)
		_, node := tree.Match(ids)
		out.node = node
		if lock {
			_ = tree.Lock(node)
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
		splits += out.splitsNow
		return out
	}
	step := func(title, narration string, hl map[int]bool, quiz *Quiz) {
		s.Steps = append(s.Steps, Step{Title: title, Narration: narration, Quiz: quiz, Scenes: []scene.Scene{treeTable(hl), cards()}, Cursor: float64(len(s.Steps))})
	}

	requests := []string{
		sys + " Summarise this quarterly report for the board .",
		sys + " Summarise this quarterly report in French .",
		sys + " Translate this email into German .",
		sys + " Summarise this quarterly report for the board and list the risks .",
	}
	step("An empty tree", fmt.Sprintf("SGLang keeps the KV of finished requests in a radix tree: each edge holds a run of tokens, and a path from the root spells a cached prefix. Every request here starts with the same system prompt (%d tokens); the cache holds %d tokens.",
		len(strings.Fields(sys)), capacity), nil, nil)

	r1 := serve(requests[0], false)
	step("R1: a miss, then one leaf", fmt.Sprintf("R1 finds nothing cached and computes all %d tokens. When it finishes, its tokens are inserted as one leaf: a single edge of %d tokens under the root.", len(strings.Fields(requests[0])), r1.inserted), r1.touched, nil)

	ids2 := voc.encode(requests[1])
	pred := sharedPrefix(voc.encode(requests[0]), ids2)
	r2 := serve(requests[1], false)
	step("R2: a partial match splits the edge", fmt.Sprintf("R2 shares its first %d tokens with R1. The match stops inside R1's edge, so the tree splits it there: a new node holds the shared %d tokens, and R1's tail and R2's new tail (%d tokens) hang below it as siblings. R2 reuses %d tokens of KV and computes %d.",
		r2.matched, r2.matched, r2.inserted, r2.matched, len(ids2)-r2.matched), r2.touched,
		numberQuiz("R2 starts with the same system prompt and the same first words as R1. How many of its tokens will it find in the cache?", float64(pred), 0, "The longest common prefix with what is cached; the match then splits R1's edge there."))

	r3 := serve(requests[2], true)
	step("R3 runs: its path is locked", fmt.Sprintf("R3 reuses the %d-token system prompt and adds %d tokens. While it runs it holds a lock on its path: lock_ref is 1 on every node from its leaf to the root, and those %d tokens move from evictable to protected, so memory pressure cannot take them.",
		r3.matched, r3.inserted, tree.ProtectedSize()), r3.touched, nil)

	r4 := serve(requests[3], false)
	evictText := "Nothing had to be evicted."
	if r4.evictedNow > 0 {
		evictText = fmt.Sprintf("The cache was full, so %d tokens were evicted first: the least recently used unlocked leaves, deepest first; R3's locked path stayed.", r4.evictedNow)
	}
	step("R4 extends a cached prefix", fmt.Sprintf("R4 matches %d tokens, all of R1 up to its closing full stop, and adds %d. %s", r4.matched, r4.inserted, evictText), r4.touched, nil)

	// Memory pressure: a long unrelated prompt.
	long := "Write a detailed travel plan for seven days in Japan with trains , temples , food markets , museums and a budget for each day ."
	before := tree.TotalSize()
	r5 := serve(long, false)
	pressure := fmt.Sprintf("A long unrelated request (%d tokens) needs room. The cache held %d of %d tokens, so it evicted %d: SGLang heaps the leaves by last use and drops unlocked ones, pushing a parent that becomes a leaf. Locked nodes are skipped; only leaves ever go, so a shared prefix outlives its extensions.",
		len(strings.Fields(long)), before, capacity, r5.evictedNow)
	if r5.waits {
		pressure = fmt.Sprintf("A long unrelated request (%d tokens) needs room, but after evicting every unlocked leaf (%d tokens) the cache is still too full: %d tokens are locked by the running R3. The request waits until R3 finishes.",
			len(strings.Fields(long)), r5.evictedNow, tree.ProtectedSize())
	}
	step("Memory pressure: LRU eviction", pressure, r5.touched, nil)

	held := tree.ProtectedSize()
	_ = tree.Unlock(r3.node)
	step("R3 finishes: the lock is released", fmt.Sprintf("R3 is done and releases its lock chain: lock_ref drops to 0 along its path and its %d tokens become evictable again.", held), nil, nil)

	// The twist: edit distance vs shared prefix.
	pairs := []struct{ a, b string }{
		{"Please summarise the quarterly report for the board .", "Kindly summarise the quarterly report for the board ."},
		{"Please summarise the quarterly report for the board .", "Please summarise the quarterly report for the board , then draft three follow-up emails to the finance team about the open risks ."},
	}
	tbl := &scene.Table{Columns: []string{"prompt A", "prompt B", "edit distance (characters)", "shared prefix (tokens)", "KV reused"}}
	var dSmall, dLarge, pSmall, pLarge int
	for i, p := range pairs {
		var pv vocab
		a, b := pv.encode(p.a), pv.encode(p.b)
		d := levenshtein.ComputeDistance(p.a, p.b)
		sp := sharedPrefix(a, b)
		tbl.Rows = append(tbl.Rows, []string{p.a, p.b, strconv.Itoa(d), strconv.Itoa(sp), fmt.Sprintf("%d of %d tokens", sp, len(b))})
		if i == 0 {
			dSmall, pSmall = d, sp
		} else {
			dLarge, pLarge = d, sp
		}
	}
	s.Steps = append(s.Steps, Step{
		Title: "Similar is not shared",
		Narration: fmt.Sprintf("KV reuse needs an identical prefix, because each token's keys and values depend on every token before it. Two prompts %d characters apart that differ in their first word share %d tokens: nothing is reused. "+
			"Two prompts %d characters apart that start the same way share %d tokens. Put what varies at the end of a prompt, not the start.", dSmall, pSmall, dLarge, pLarge),
		Scenes: []scene.Scene{{Kind: scene.KindTable, ID: "twist", Title: "Edit distance vs shared prefix", Table: tbl}, treeTable(nil)},
		Cursor: float64(len(s.Steps)),
		Quiz: choiceQuiz(fmt.Sprintf("\"%s\" vs \"%s\": %d characters apart. Will the second reuse the first one's KV cache?", pairs[0].a, pairs[0].b, dSmall),
			[]string{"yes, most of it", "almost none of it"}, map[bool]string{true: "yes, most of it", false: "almost none of it"}[pSmall > 0],
			fmt.Sprintf("They share %d leading tokens: the first word differs, so every later token's keys and values differ too.", pSmall)),
	})
	if err := tree.Check(); err != nil {
		return nil, err
	}
	s.Metrics = []Metric{
		{Key: "cached_tokens", Label: "Tokens cached at the end", Unit: "tokens", Value: float64(tree.TotalSize())},
		{Key: "tree_nodes", Label: "Nodes in the tree at the end (root included)", Value: float64(tree.Nodes())},
		{Key: "splits", Label: "Edge splits", Value: float64(splits)},
		{Key: "evicted_tokens", Label: "Tokens evicted", Unit: "tokens", Value: float64(evicted)},
		{Key: "hit_rate_pct", Label: "Prompt tokens found in the cache", Unit: "%", Value: round2(100 * float64(hitTokens) / float64(max(1, queryTokens)))},
		{Key: "edit_distance_small", Label: "Edit distance of the near-identical pair", Unit: "characters", Value: float64(dSmall)},
		{Key: "shared_prefix_small", Label: "Shared prefix of the near-identical pair", Unit: "tokens", Value: float64(pSmall)},
		{Key: "edit_distance_large", Label: "Edit distance of the long-tailed pair", Unit: "characters", Value: float64(dLarge)},
		{Key: "shared_prefix_large", Label: "Shared prefix of the long-tailed pair", Unit: "tokens", Value: float64(pLarge)},
	}
	s.Claims = []Claim{{
		What:    "Prefix caching reuses the KV of repeated prefixes",
		Article: "Part 11: RadixAttention tree-structured prefix caching; Part 12: route to the worker holding the matching prefix",
		Model:   fmt.Sprintf("%.1f%% of this stream's prompt tokens were found in the tree", 100*float64(hitTokens)/float64(max(1, queryTokens))),
		Why:     "Agrees; the SGLang paper reports 50%–99% hit rates on its benchmarks (engines.md §6). Reuse stops at the first differing token, however similar the rest is.",
	}}
	s.Steps = append(s.Steps, Step{Title: "Article claim vs this model", Narration: "What the series says about prefix caching, and what this run shows.", Scenes: []scene.Scene{claimsTable(s.Claims)}, Cursor: float64(len(s.Steps))})
	return s, nil
}
