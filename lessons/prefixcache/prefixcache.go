// Package prefixcache holds the lesson prefix-cache: Parts 11–12. SGLang's
// RadixAttention keeps finished requests' KV in a radix tree of token runs;
// new requests reuse the longest cached prefix. Words stand in for tokens so
// the tree can be read.
package prefixcache

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/agnivade/levenshtein"
	"github.com/inferlab/inferlab/core/radixcache"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/scene"
)

var lesson = &lessons.Lesson{
	Slug:    "prefix-cache",
	Title:   "The radix tree: prefix caching, splits, locks and eviction",
	Part:    "Parts 11–12",
	Summary: "Requests insert into SGLang's radix tree; watch matches, edge splits, lock counts and LRU eviction — and why a one-word change at the start shares nothing.",
	Engine: "SGLang RadixCache (match_prefix splits edges, insert de-duplicates, lock_ref protects running requests and the prefix a new one matched, LRU eviction of unlocked leaves) and PrefillAdder's admission (a request waits when its new tokens do not fit even after eviction), page size 1. " +
		"Simplified: one word is one token, the cache capacity is counted in tokens, no output tokens are reserved, and a request is computed and cached in one go.",
	Group: "memory", Rank: 50, Thumb: scene.KindRadixTree,
	Terms: []lessons.Term{
		{Term: "radix tree", Definition: "A tree of token runs in which shared prefixes are stored once (SGLang's RadixAttention).", Find: "tree"},
	},
	Params: []lessons.Param{
		{Key: "capacity", Label: "Cache capacity", Unit: "tokens", Help: "Tokens the KV pool can hold; inserting past it evicts least-recently-used unlocked leaves.", Kind: lessons.Int, Default: 48, Min: prefixCacheMinCapacity, Max: 400, Step: 1},
		{Key: "system", Label: "System prompt", Help: "The shared opening every request starts with.", Kind: lessons.Choice,
			Choices: []string{"You are a careful assistant for the finance team .", "Answer briefly .", "You are a patient tutor who explains every step ."}},
	},
	Sim:     sim{},
	MaxWork: 1_000, // tokens walked through the tree: at most seven requests of ≤ 26 tokens, whatever the knobs
	HeavyCorners: []map[string]string{
		{"capacity": "26"}, {"capacity": "400", "system": "You are a patient tutor who explains every step ."},
	},
}

func init() { lessons.Register(lesson) }

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

// prefixCacheMinCapacity is the longest request's length (the travel plan,
// 26 tokens): with less, that request could never be admitted, even into an
// empty cache.
const prefixCacheMinCapacity = 26

// prefixCacheRun is what the radix tree did with the lesson's requests:
// each request's outcome, the tree as it stood after each, and the twist's
// pairs.
type prefixCacheRun struct {
	capacity  int
	system    string
	voc       vocab
	requests  []string // the four system-prompt requests
	predicted int      // R2's shared prefix with R1, for the quiz
	r1r4      int      // tokens R4 shares with R1: what it matches when R1's tail is still cached
	r         [4]radixcache.Served
	long      radixcache.Served // the long request's first try
	before    int               // tokens cached before the long request
	held      int               // tokens R3 held locked when it finished
	retried   []retry           // requests that waited, served again once R3 finished
	frames    []cacheFrame      // after each tree step: empty, R1–R4, the long request, R3's release
	twist     [2]twistPair
	splits    int
	evicted   int
	reused    int   // prompt tokens of admitted requests that were found cached
	prompted  int   // prompt tokens of admitted requests
	work      int64 // Script.Work: tokens walked through the tree by every serve
}

// retry is a request served again after R3 released its lock.
type retry struct {
	name string
	radixcache.Served
}

// cacheFrame is the tree and its counts at one moment.
type cacheFrame struct {
	nodes                                  []radixcache.NodeView
	events                                 []radixcache.Event // what happened since the frame before
	total, evictable, protected, nodeCount int
	reused                                 int // tokens reused so far
}

// twistPair is two prompts: their edit distance and shared prefix.
type twistPair struct {
	a, b           string
	distance, lenB int
	shared         int
	tree           []radixcache.NodeView // both prompts inserted into an empty tree
	voc            vocab
}

// sim is the lesson's simulation: a method, not a func value, so that the
// page's WebAssembly leaves it out (see lessons.Simulation).
type sim struct{}

func (sim) Simulate(v lessons.Values) (*lessons.Script, error) {
	return lessons.ScriptOf(runPrefixCache(v))
}

// runPrefixCache serves the lesson's requests through one radix tree, as
// SGLang admits them into a pool of capacity tokens: R3 stays running
// (locked) until after the long request; whatever had to wait is served
// again once R3 finishes.
func runPrefixCache(v lessons.Values) (*prefixCacheRun, error) {
	r := &prefixCacheRun{capacity: v.Int("capacity"), system: v.Choice("system")}
	for _, tail := range prefixCacheTails {
		r.requests = append(r.requests, r.system+tail)
	}
	tree := radixcache.New(1)
	r.frames = append(r.frames, r.frame(tree))
	r.predicted = sharedPrefix(r.voc.encode(r.requests[0]), r.voc.encode(r.requests[1]))
	r.r1r4 = sharedPrefix(r.voc.encode(r.requests[0]), r.voc.encode(r.requests[3]))
	var waiting []retry
	for i, text := range r.requests {
		s, err := r.serve(tree, text, i == 2)
		if err != nil {
			return nil, err
		}
		if s.Waits {
			if i < 3 { // only R4 can meet R3's lock; R1–R3 fit any allowed capacity
				return nil, fmt.Errorf("prefix-cache: R%d does not fit a %d-token cache", i+1, r.capacity)
			}
			waiting = append(waiting, retry{name: "R4", Served: s})
		}
		r.r[i] = s
		r.frames = append(r.frames, r.frame(tree))
	}
	// Memory pressure: a long unrelated prompt.
	r.before = tree.TotalSize()
	var err error
	if r.long, err = r.serve(tree, prefixCacheLong, false); err != nil {
		return nil, err
	}
	if r.long.Waits {
		waiting = append(waiting, retry{name: "the long request", Served: r.long})
	}
	r.frames = append(r.frames, r.frame(tree))
	r.held = tree.ProtectedSize()
	if err := tree.Unlock(r.r[2].Node); err != nil {
		return nil, err
	}
	for _, w := range waiting {
		text := prefixCacheLong
		if w.name == "R4" {
			text = r.requests[3]
		}
		s, err := r.serve(tree, text, false)
		if err != nil {
			return nil, err
		}
		if s.Waits { // nothing is locked now and every request fits the capacity
			return nil, fmt.Errorf("prefix-cache: %s does not fit a %d-token cache", w.name, r.capacity)
		}
		r.retried = append(r.retried, retry{name: w.name, Served: s})
	}
	r.frames = append(r.frames, r.frame(tree))
	if err := tree.Check(); err != nil {
		return nil, err
	}
	for i, p := range prefixCachePairs {
		var pv vocab
		a, b := pv.encode(p[0]), pv.encode(p[1])
		r.twist[i] = twistPair{a: p[0], b: p[1], distance: levenshtein.ComputeDistance(p[0], p[1]), shared: sharedPrefix(a, b), lenB: len(b), voc: pv}
		t := radixcache.New(1)
		for _, ids := range [][]int{a, b} {
			if _, err := t.Serve(ids, len(a)+len(b), false); err != nil {
				return nil, err
			}
			r.work += int64(len(ids))
		}
		r.twist[i].tree = t.Snapshot()
	}
	return r, nil
}

// serve runs one request through the cache (core's Serve: match, lock the
// match, make room, insert) and counts what it reused once admitted.
func (r *prefixCacheRun) serve(tree *radixcache.Tree, text string, hold bool) (radixcache.Served, error) {
	s, err := tree.Serve(r.voc.encode(text), r.capacity, hold)
	if err != nil {
		return s, err
	}
	r.work += int64(s.Tokens)
	r.splits += s.Splits
	r.evicted += s.Evicted
	if !s.Waits {
		r.prompted += s.Tokens
		r.reused += s.Matched
	}
	return s, nil
}

// final is the tree at the end.
func (r *prefixCacheRun) final() cacheFrame { return r.frames[len(r.frames)-1] }

// frame copies the tree and its counts.
func (r *prefixCacheRun) frame(tree *radixcache.Tree) cacheFrame {
	return cacheFrame{nodes: tree.Snapshot(), events: tree.Events(), total: tree.TotalSize(), evictable: tree.EvictableSize(), protected: tree.ProtectedSize(),
		nodeCount: tree.Nodes(), reused: r.reused}
}

// hitRate is the share of admitted prompt tokens found cached.
func (r *prefixCacheRun) hitRate() float64 { return float64(r.reused) / float64(max(1, r.prompted)) }

// frameChange is what a frame's events did to the tree: the leaves
// inserted, the nodes split off and the nodes they cut, the nodes evicted,
// and the deepest node each lookup matched.
type frameChange struct {
	inserted, split, cut, evicted, matched []int
}

func (f cacheFrame) change() frameChange {
	var c frameChange
	for _, e := range f.events {
		switch e.Kind {
		case radixcache.Inserted:
			c.inserted = append(c.inserted, e.Node)
		case radixcache.Split:
			c.split, c.cut = append(c.split, e.Node), append(c.cut, e.Child)
		case radixcache.Evicted:
			c.evicted = append(c.evicted, e.Node)
		case radixcache.Matched:
			if e.Len > 0 {
				c.matched = append(c.matched, e.Node)
			}
		}
	}
	return c
}

// nodeRef is a radix node's reference for marks and mentions.
func nodeRef(id int) string { return "node:" + strconv.Itoa(id) }

// radixNodes turns a snapshot into the scene's nodes, with states from the
// change and the nodes evicted in it kept (from the frame before) so the
// picture can fade them.
func radixNodes(voc *vocab, nodes, before []radixcache.NodeView, c frameChange) []scene.RadixNode {
	state := map[int]string{}
	parent := map[int]int{}
	for _, n := range nodes {
		parent[n.ID] = n.Parent
	}
	for _, id := range c.matched {
		for at, ok := id, true; ok && at >= 0; at, ok = parent[at] {
			state[at] = scene.NodeMatched
		}
	}
	for _, id := range c.cut {
		state[id] = scene.NodeCut
	}
	for _, id := range c.split {
		state[id] = scene.NodeSplit
	}
	for _, id := range c.inserted {
		state[id] = scene.NodeNew
	}
	gone := map[int]bool{}
	for _, id := range c.evicted {
		gone[id] = true
	}
	conv := func(n radixcache.NodeView, st string) scene.RadixNode {
		return scene.RadixNode{ID: n.ID, Parent: n.Parent, Text: voc.decode(n.Key), Tokens: len(n.Key), LockRef: n.LockRef, LastUse: n.LastAccess, State: st}
	}
	var out []scene.RadixNode
	for _, n := range nodes {
		st := state[n.ID]
		if n.Parent < 0 {
			st = "" // the root is always there
		}
		out = append(out, conv(n, st))
	}
	for _, n := range before {
		if gone[n.ID] {
			out = append(out, conv(n, scene.NodeEvicted))
		}
	}
	return out
}

// radixScene is frame i's tree, the step's main figure (marks are added
// once the step's narration is known).
func (r *prefixCacheRun) radixScene(i int) scene.Scene {
	f := r.frames[i]
	var before []radixcache.NodeView
	if i > 0 {
		before = r.frames[i-1].nodes
	}
	return scene.Scene{Kind: scene.KindRadixTree, ID: "tree", Main: true,
		Title: fmt.Sprintf("The radix tree: %d of %d tokens cached", f.total, r.capacity),
		Radix: &scene.RadixTree{Capacity: r.capacity, Cached: f.total, Locked: f.protected, Unit: "tokens",
			Nodes: radixNodes(&r.voc, f.nodes, before, f.change())}}
}

// drawnRefs are the references a radix scene draws: its nodes (a leaf
// inserted and evicted within one step is not among them) and its
// capacity bar.
func drawnRefs(t *scene.RadixTree) map[string]bool {
	out := map[string]bool{}
	if t.Capacity > 0 {
		out["cache:capacity"] = true
	}
	for _, n := range t.Nodes {
		out[nodeRef(n.ID)] = true
	}
	return out
}

func (r *prefixCacheRun) Script() *lessons.Script {
	s := &lessons.Script{Metrics: r.metrics(), Claims: r.claims(), Work: r.work}
	s.Steps = append(r.treeSteps(), r.twistStep())
	kit.IndexCursors(s.Steps)
	return s
}

// evictionText says what a request evicted to make room, if anything.
func evictionText(s radixcache.Served, kept string) string {
	if s.Evicted == 0 {
		return ""
	}
	return fmt.Sprintf(" To make room the cache first evicted %d tokens: the least recently used unlocked leaves, deepest first; %s stayed.", s.Evicted, kept)
}

// treeSteps narrate the requests, one step per frame, each over the tree
// as it stood after it.
func (r *prefixCacheRun) treeSteps() []lessons.Step {
	r1, r2, r3 := r.r[0], r.r[1], r.r[2]
	texts := []struct {
		title, narration string
		quiz             *lessons.Quiz
	}{
		{"An empty tree", fmt.Sprintf("SGLang keeps the KV of finished requests in a radix tree: each edge holds a run of tokens, and a path from the root spells a cached prefix. Every request here starts with the same system prompt (%d tokens); the cache holds %d tokens.",
			len(strings.Fields(r.system)), r.capacity), nil},
		{"R1: a miss, then one leaf", fmt.Sprintf("R1 finds nothing cached and computes all %d tokens. When it finishes, its tokens are inserted as one leaf: a single edge of %d tokens under the root.", r1.Tokens, r1.Inserted), nil},
		{"R2: a partial match splits the edge", fmt.Sprintf("R2 shares its first %d tokens with R1. The match stops inside R1's edge, so the tree splits it there: a new node holds the shared %d tokens, and R1's tail and R2's new tail (%d tokens) hang below it as siblings. R2 reuses %d tokens of KV and computes %d.%s",
			r2.Matched, r2.Matched, r2.Inserted, r2.Matched, r2.Tokens-r2.Matched, evictionText(r2, "the prefix R2 matched was locked and")),
			lessons.NumberQuiz("R2 starts with the same system prompt and the same first words as R1. How many of its tokens will it find in the cache?", float64(r.predicted), 0, "The longest common prefix with what is cached; the match then splits R1's edge there.")},
		{"R3 runs: its path is locked", fmt.Sprintf("R3 reuses the %d-token system prompt and adds %d tokens.%s While it runs it holds a lock on its path: lock_ref is 1 on every node from its leaf to the root, and those %d tokens move from evictable to protected, so memory pressure cannot take them.",
			r3.Matched, r3.Inserted, evictionText(r3, "the system prompt R3 matched was locked, so it"), r.frames[3].protected), nil},
		{r.r4Title(), r.r4Text(), nil},
		{"Memory pressure: LRU eviction", r.pressureText(), nil},
		{"R3 finishes: the lock is released", r.releaseText(), nil},
	}
	var steps []lessons.Step
	for i, t := range texts {
		sc := r.radixScene(i)
		a := &kit.Annotator{Scene: "tree", Drawn: drawnRefs(sc.Radix)}
		r.treeMarks(i, t.narration, a)
		sc.Marks = a.Marks
		steps = append(steps, lessons.Step{Title: t.title, Narration: t.narration, Quiz: t.quiz, Scenes: []scene.Scene{sc}, Mentions: a.Mentions})
	}
	return steps
}

// r3Leaf is the leaf R3 inserted (it stays locked until R3 finishes).
func (r *prefixCacheRun) r3Leaf() int {
	if c := r.frames[3].change(); len(c.inserted) > 0 {
		return c.inserted[0]
	}
	return -1
}

// treeMarks marks, on frame i's tree, what step i's narration names.
func (r *prefixCacheRun) treeMarks(i int, narration string, a *kit.Annotator) {
	f := r.frames[i]
	c := f.change()
	first := func(ids []int) int {
		if len(ids) == 0 {
			return -1
		}
		return ids[0]
	}
	capLabel := fmt.Sprintf("%d of %d tokens", f.total, r.capacity)
	switch i {
	case 0:
		a.Mark(nodeRef(f.nodes[0].ID), "root", "a path from the root", narration)
		a.Mark("cache:capacity", capLabel, fmt.Sprintf("the cache holds %d tokens", r.capacity), narration)
	case 1:
		if id := first(c.inserted); id >= 0 {
			a.Mark(nodeRef(id), fmt.Sprintf("R1: %d tokens", r.r[0].Inserted), "one leaf", narration)
		}
	case 2:
		if id := first(c.split); id >= 0 {
			a.Mark(nodeRef(id), fmt.Sprintf("split: %d shared tokens", r.r[1].Matched), "a new node holds the shared", narration)
			a.Mark(nodeRef(first(c.cut)), "R1's tail", "R1's tail", narration)
		}
		if id := first(c.inserted); id >= 0 {
			a.Mark(nodeRef(id), "R2's tail", "R2's new tail", narration)
		}
	case 3:
		if id := first(c.split); id >= 0 {
			a.Mark(nodeRef(id), "system prompt: lock_ref 1", fmt.Sprintf("the %d-token system prompt", r.r[2].Matched), narration)
		}
		if id := r.r3Leaf(); id >= 0 {
			a.Mark(nodeRef(id), "R3 running: locked", "from its leaf to the root", narration)
		}
		a.Mark("cache:capacity", fmt.Sprintf("%d locked", f.protected), "protected", narration)
	case 4:
		r.r4Marks(c, narration, a)
	case 5:
		r.pressureMarks(c, narration, a)
	case 6:
		if id := r.r3Leaf(); id >= 0 {
			a.Mark(nodeRef(id), "R3 done: unlocked", "releases its lock chain", narration)
		}
		for k, w := range r.retried {
			if k < len(c.inserted) {
				a.Mark(nodeRef(c.inserted[k]), w.name+" admitted", "Now "+w.name+" is admitted", narration)
			}
		}
	}
	r.evictedMarks(c, narration, a)
}

// r4Marks marks R4's leaf and split, or, when it waits, R3's lock.
func (r *prefixCacheRun) r4Marks(c frameChange, narration string, a *kit.Annotator) {
	r4 := r.r[3]
	if r4.Waits {
		if id := r.r3Leaf(); id >= 0 {
			a.Mark(nodeRef(id), "R3: locked", fmt.Sprintf("R3's %d tokens are locked", r.frames[3].protected), narration)
		}
		a.Mark("cache:capacity", "no room for R4", "R4 is not admitted", narration)
		return
	}
	if len(c.split) > 0 {
		a.Mark(nodeRef(c.split[0]), "split", "", narration)
	}
	if len(c.inserted) > 0 {
		a.Mark(nodeRef(c.inserted[0]), fmt.Sprintf("R4: +%d tokens", r4.Inserted), fmt.Sprintf("R4 matches %d tokens", r4.Matched), narration)
	}
}

// pressureMarks marks the long request's leaf, or R3's lock when it waits.
func (r *prefixCacheRun) pressureMarks(c frameChange, narration string, a *kit.Annotator) {
	if r.long.Waits {
		if id := r.r3Leaf(); id >= 0 {
			a.Mark(nodeRef(id), "R3: locked", "locked by the running R3", narration)
		}
		a.Mark("cache:capacity", "too little evictable", fmt.Sprintf("The cache holds %d of %d tokens", r.frames[5].total, r.capacity), narration)
		return
	}
	if len(c.inserted) > 0 {
		a.Mark(nodeRef(c.inserted[0]), fmt.Sprintf("long request: %d tokens", r.long.Inserted), "A long unrelated request", narration)
	}
}

// evictedMarks labels the leaves evicted in a step; the narration's
// mention of the eviction names the first.
func (r *prefixCacheRun) evictedMarks(c frameChange, narration string, a *kit.Annotator) {
	texts := []string{"were evicted first", "so it evicted", "first evicted"}
	for k, id := range c.evicted {
		text := ""
		if k == 0 {
			for _, t := range texts {
				if strings.Contains(narration, t) {
					text = t
					break
				}
			}
		}
		a.Mark(nodeRef(id), "evicted", text, narration)
	}
}

func (r *prefixCacheRun) r4Title() string {
	if r.r[3].Waits {
		return "R4 waits: its room is locked"
	}
	return "R4 extends a cached prefix"
}

// r4Text narrates R4: it extends R1, or waits for R3's lock.
func (r *prefixCacheRun) r4Text() string {
	r4 := r.r[3]
	what := "all of R1 up to its closing full stop"
	if r4.Matched < r.r1r4 {
		what = "what is still cached of R1's opening (R1's tail was evicted earlier)"
	}
	if r4.Waits {
		return fmt.Sprintf("R4 matches %d tokens, %s, and needs room for %d more. SGLang locks the prefix it matched, and R3's %d tokens are locked too, so even evicting every unlocked leaf would free too little: R4 is not admitted, nothing is evicted, and it waits for R3 to finish.",
			r4.Matched, what, r4.Tokens-r4.Matched, r.frames[3].protected)
	}
	evict := "Nothing had to be evicted."
	if r4.Evicted > 0 {
		evict = fmt.Sprintf("The cache was full, so %d tokens were evicted first: the least recently used unlocked leaves, deepest first; R3's locked path and the prefix R4 matched stayed.", r4.Evicted)
	}
	return fmt.Sprintf("R4 matches %d tokens, %s, and adds %d. %s", r4.Matched, what, r4.Inserted, evict)
}

// pressureText narrates the long request: it evicts, or waits for R3.
func (r *prefixCacheRun) pressureText() string {
	long := r.long.Tokens
	if r.long.Waits {
		f := r.frames[5]
		return fmt.Sprintf("A long unrelated request (%d tokens) needs room. The cache holds %d of %d tokens, %d of them locked by the running R3; even evicting every unlocked leaf (%d tokens) would leave too little, so SGLang does not admit it and evicts nothing. The request waits until R3 finishes.",
			long, f.total, r.capacity, f.protected, f.evictable)
	}
	return fmt.Sprintf("A long unrelated request (%d tokens) needs room. The cache held %d of %d tokens, so it evicted %d: SGLang heaps the leaves by last use and drops unlocked ones, pushing a parent that becomes a leaf. Locked nodes are skipped; only leaves ever go, so a shared prefix outlives its extensions.",
		long, r.before, r.capacity, r.long.Evicted)
}

// releaseText narrates R3's release and the retries it lets in.
func (r *prefixCacheRun) releaseText() string {
	text := fmt.Sprintf("R3 is done and releases its lock chain: lock_ref drops to 0 along its path and its %d tokens become evictable again.", r.held)
	for _, w := range r.retried {
		text += fmt.Sprintf(" Now %s is admitted: it matches %d tokens, evicts %d and adds %d.", w.name, w.Matched, w.Evicted, w.Inserted)
	}
	return text
}

// twistScene is one twist pair inserted into an empty tree.
func (r *prefixCacheRun) twistScene(i int, a *kit.Annotator, narration string) scene.Scene {
	p := r.twist[i]
	nodes := radixNodes(&p.voc, p.tree, nil, frameChange{})
	total := 0
	for _, n := range p.tree {
		total += len(n.Key)
	}
	id := fmt.Sprintf("twist-%d", i+1)
	a.Scene = id
	k := 0
	for _, n := range p.tree {
		switch {
		case n.Parent < 0:
		case i == 0 && len(n.Children) == 0:
			text := ""
			if k == 0 {
				text = fmt.Sprintf("share %d tokens: nothing is reused", p.shared)
			}
			a.Mark(nodeRef(n.ID), fmt.Sprintf("own branch: %d tokens", len(n.Key)), text, narration)
			k++
		case i == 1 && len(n.Children) > 0:
			a.Mark(nodeRef(n.ID), fmt.Sprintf("shared: %d tokens", len(n.Key)), fmt.Sprintf("share %d tokens", p.shared), narration)
		}
	}
	sc := scene.Scene{Kind: scene.KindRadixTree, ID: id, Marks: a.Marks, Main: i == 0,
		Title: fmt.Sprintf("\u201c%s\u201d then \u201c%s\u201d in an empty tree", firstWords(p.a, 3), firstWords(p.b, 3)),
		Radix: &scene.RadixTree{Cached: total, Unit: "tokens", Nodes: nodes}}
	a.Marks = nil
	return sc
}

// firstWords is the first n words of s, with "…" when there are more.
func firstWords(s string, n int) string {
	w := strings.Fields(s)
	if len(w) <= n {
		return s
	}
	return strings.Join(w[:n], " ") + " …"
}

// twistStep sets edit distance against shared prefix, each pair drawn as
// the tree it makes.
func (r *prefixCacheRun) twistStep() lessons.Step {
	tbl := &scene.Table{Columns: []string{"prompt A", "prompt B", "edit distance (characters)", "shared prefix (tokens)", "KV reused"}}
	for _, p := range r.twist {
		tbl.Rows = append(tbl.Rows, []string{p.a, p.b, strconv.Itoa(p.distance), strconv.Itoa(p.shared), fmt.Sprintf("%d of %d tokens", p.shared, p.lenB)})
	}
	small, large := r.twist[0], r.twist[1]
	narration := fmt.Sprintf("KV reuse needs an identical prefix, because each token's keys and values depend on every token before it. Two prompts %d characters apart that differ in their first word share %d tokens: nothing is reused. "+
		"Two prompts %d characters apart that start the same way share %d tokens. Put what varies at the end of a prompt, not the start.", small.distance, small.shared, large.distance, large.shared)
	a := &kit.Annotator{}
	var mentions []scene.Mention
	scenes := []scene.Scene{}
	for i := range r.twist {
		scenes = append(scenes, r.twistScene(i, a, narration))
		mentions = append(mentions, a.Mentions...)
		a.Mentions = nil
	}
	scenes = append(scenes, scene.Scene{Kind: scene.KindTable, ID: "twist", Title: "Edit distance vs shared prefix", Table: tbl})
	return lessons.Step{
		Title:     "Similar is not shared",
		Narration: narration,
		Scenes:    scenes,
		Mentions:  mentions,
		Quiz: lessons.ChoiceQuiz(fmt.Sprintf("\"%s\" vs \"%s\": %d characters apart. Will the second reuse the first one's KV cache?", small.a, small.b, small.distance),
			[]string{"yes, most of it", "almost none of it"}, map[bool]string{true: "yes, most of it", false: "almost none of it"}[small.shared > 0],
			fmt.Sprintf("They share %d leading tokens: the first word differs, so every later token's keys and values differ too.", small.shared)),
	}
}

func (r *prefixCacheRun) metrics() []lessons.Metric {
	small, large := r.twist[0], r.twist[1]
	return []lessons.Metric{
		{Key: "cached_tokens", Label: "Tokens cached at the end", Unit: "tokens", Value: float64(r.final().total)},
		{Key: "tree_nodes", Label: "Nodes in the tree at the end (root included)", Unit: "nodes", Value: float64(r.final().nodeCount)},
		{Key: "splits", Label: "Edge splits", Unit: "splits", Value: float64(r.splits)},
		{Key: "evicted_tokens", Label: "Tokens evicted", Unit: "tokens", Better: lessons.LowerIsBetter, Value: float64(r.evicted)},
		{Key: "hit_rate_pct", Label: "Prompt tokens found in the cache", Unit: "%", Better: lessons.HigherIsBetter, Value: kit.Round2(100 * r.hitRate())},
		{Key: "edit_distance_small", Label: "Edit distance of the near-identical pair", Unit: "characters", Value: float64(small.distance)},
		{Key: "shared_prefix_small", Label: "Shared prefix of the near-identical pair", Unit: "tokens", Value: float64(small.shared)},
		{Key: "edit_distance_large", Label: "Edit distance of the long-tailed pair", Unit: "characters", Value: float64(large.distance)},
		{Key: "shared_prefix_large", Label: "Shared prefix of the long-tailed pair", Unit: "tokens", Value: float64(large.shared)},
	}
}

func (r *prefixCacheRun) claims() []lessons.Claim {
	return []lessons.Claim{{
		What:    "Prefix caching reuses the KV of repeated prefixes",
		Article: "Part 11: RadixAttention tree-structured prefix caching; Part 12: route to the worker holding the matching prefix",
		Model:   fmt.Sprintf("%.1f%% of this stream's prompt tokens were found in the tree", 100*r.hitRate()),
		Why:     "Agrees; the SGLang paper reports 50%–99% hit rates on its benchmarks (§6). Reuse stops at the first differing token, however similar the rest is.",
	}}
}
