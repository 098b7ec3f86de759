package scene

// The systems pictures: a prefix cache's radix tree, a cluster of workers
// behind a router (or split into prefill and decode pools joined by a
// link), a stack of KV memory tiers with fetch and recompute racing, and
// one request's journey on a timeline with a zoom window. Like every
// scene they are plain data: the lesson fills them from its typed run and
// a renderer lays them out and draws them.

// RadixTree is a prefix cache's radix tree (SGLang's RadixCache): each node
// holds the run of tokens on the edge from its parent, so a path from the
// root spells a cached prefix.
type RadixTree struct {
	Capacity int    `json:"capacity"` // tokens the cache can hold (0: no capacity bar is drawn)
	Cached   int    `json:"cached"`   // tokens in the tree now
	Locked   int    `json:"locked"`   // of them, on a path some request holds (lock_ref > 0)
	Unit     string `json:"unit"`     // of the counts, e.g. "tokens"
	// Nodes lists every node once, each parent before its children, in
	// drawing order; Nodes[0] is the root. Nodes that left the tree in this
	// step are kept (State NodeEvicted) so the picture can fade them out.
	Nodes []RadixNode `json:"nodes"`
	// LayoutDepth, when set, is the depth the drawing makes room for (the
	// deepest the tree gets in the run), so that its boxes keep one width
	// from step to step; the tree's own depth when deeper or unset.
	LayoutDepth int `json:"layout_depth,omitempty"`
}

// RadixNode is one node of a RadixTree and the edge above it.
type RadixNode struct {
	ID      int    `json:"id"`     // stable across steps; the node's ref is "node:ID"
	Parent  int    `json:"parent"` // the parent's ID, -1 for the root
	Text    string `json:"text"`   // the edge's tokens as text ("" for the root)
	Tokens  int    `json:"tokens"` // the edge's length
	LockRef int    `json:"lock_ref,omitempty"`
	// LastUse is the tree's logical clock at the node's last access (what
	// LRU eviction orders leaves by).
	LastUse uint64 `json:"last_use,omitempty"`
	State   string `json:"state,omitempty"` // "" (cached) or one of the Node… states
}

// States of a RadixNode in the step shown.
const (
	NodeNew     = "new"     // inserted in this step (a new leaf)
	NodeSplit   = "split"   // created in this step by cutting an edge: it holds the edge's first part
	NodeCut     = "cut"     // its edge was cut in this step: it keeps the second part
	NodeMatched = "matched" // on the path a request matched in this step
	NodeEvicted = "evicted" // left the tree in this step
)

// Cluster is serving workers and what routes work to them: a router above
// one pool of workers, or (Link set) a prefill pool and a decode pool joined
// by the link their KV crosses. Several pools without a link are drawn one
// under the other as small multiples on one scale.
type Cluster struct {
	Router string `json:"router,omitempty"` // the router's text (its ref is "router:R"); "" when none is drawn
	Pools  []Pool `json:"pools"`
	Link   *Link  `json:"link,omitempty"` // joins Pools[0] (prefill) to Pools[1] (decode)
	// Travel is what moves in this step: a request from the router to its
	// worker, or a request's KV from a prefill worker across the link.
	Travel *Travel `json:"travel,omitempty"`
	// Groups names the groups the workers' cache bars are split by (system
	// prompts), in palette order.
	Groups     []string `json:"groups,omitempty"`
	CacheLabel string   `json:"cache_label,omitempty"` // what the cache bars count, for the legend, e.g. "blocks the router's index holds"
	QueueLabel string   `json:"queue_label,omitempty"` // what the queue bars count, for the legend, e.g. "requests running + waiting"
	CacheUnit  string   `json:"cache_unit,omitempty"`  // printed after a cache bar's number, e.g. "blocks"
	QueueUnit  string   `json:"queue_unit,omitempty"`  // printed after a queue bar's number, e.g. "in flight"
	// CacheMax and QueueMax fix the bars' scales (0: the largest value
	// shown), so steps and small multiples share one scale.
	CacheMax float64 `json:"cache_max,omitempty"`
	QueueMax float64 `json:"queue_max,omitempty"`
	Stats    []Stat  `json:"stats,omitempty"` // a dashboard drawn under the diagram
}

// Pool is a row (or, beside a link, a column) of workers.
type Pool struct {
	Label   string   `json:"label"` // its ref is "pool:Label"
	Workers []Worker `json:"workers"`
}

// Worker is one serving worker.
type Worker struct {
	ID   string `json:"id"`             // unique in the scene; its ref is "worker:ID"
	Name string `json:"name,omitempty"` // what is printed ("W3", "P1"); ID when empty
	// Cache is what the worker caches, by group (Fill.Group indexes
	// Cluster.Groups, -1 for everything else).
	Cache  []Fill   `json:"cache,omitempty"`
	Queue  float64  `json:"queue"`          // requests running or waiting (or a mean of them)
	Cost   string   `json:"cost,omitempty"` // the router's cost for the travelling request, as text
	Chosen bool     `json:"chosen,omitempty"`
	Lines  []string `json:"lines,omitempty"` // figures printed in the worker, with units
}

// Fill is one group's share of a worker's cache bar.
type Fill struct {
	Group int     `json:"group"`
	Value float64 `json:"value"`
}

// Link is the path between a prefill pool and a decode pool.
type Link struct {
	Label string `json:"label"` // the link's name
	Rate  string `json:"rate"`  // its effective bandwidth, with unit
	Note  string `json:"note,omitempty"`
}

// Travel is one thing moving in a cluster: a request to its worker, or KV
// over the link. Its ref is Ref (e.g. "req:R12").
type Travel struct {
	Ref   string `json:"ref"`
	Label string `json:"label"`
	Group int    `json:"group"` // palette colour (its system prompt); -1 for none
	From  string `json:"from"`  // "router" or a worker ID
	To    string `json:"to"`    // a worker ID
}

// Stat is one figure of a dashboard.
type Stat struct {
	Label string `json:"label"`
	Value string `json:"value"` // formatted, with its unit
}

// Tiers is a hierarchy of KV memory tiers (Dynamo KVBM's G1–G4), fastest
// first, and a race between fetching a cached prefix and recomputing it.
type Tiers struct {
	Subject string `json:"subject"` // what is fetched, e.g. "a 9,600-token prefix: 1.26 GB of KV"
	Tiers   []Tier `json:"tiers"`
	// Races are lanes of consecutive bars on one time scale (Unit): each
	// way of getting the prefix, and what follows it, racing to the first
	// token.
	Races []Race `json:"races,omitempty"`
	Unit  string `json:"unit,omitempty"`
}

// Tier is one level of the hierarchy; its ref is "tier:ID".
type Tier struct {
	ID        string  `json:"id"` // "G1"
	Name      string  `json:"name"`
	Medium    string  `json:"medium"`
	Capacity  string  `json:"capacity"`       // with unit, or why it is not modelled
	Path      string  `json:"path,omitempty"` // the link its blocks take back to the GPU
	Bandwidth string  `json:"bandwidth"`      // that path's rate, with unit
	Hit       float64 `json:"hit"`            // the share of requests whose prefix is found here (0…1)
	Fetch     string  `json:"fetch"`          // the prefix's fetch time, with unit
	Note      string  `json:"note,omitempty"`
}

// Race is one lane of a Tiers race; its ref is Ref ("race:KEY").
type Race struct {
	Ref    string    `json:"ref"`
	Label  string    `json:"label"`
	Bars   []RaceBar `json:"bars"`
	Winner bool      `json:"winner,omitempty"` // reaches the first token first
}

// RaceBar is one segment of a Race. Class names what it is: "fetch",
// "compute" (recomputing the prefix) or "rest" (the rest of the prompt).
type RaceBar struct {
	Label string  `json:"label"`
	Class string  `json:"class"`
	Value float64 `json:"value"` // duration, in the Tiers' Unit
}

// Journey is a timeline that shows the whole interval as context and a
// zoomed window on the part a step talks about (a request's prefill, the
// link and its first token). Bars are refs "span:LANE:I" (the lane's label
// and the bar's index), as in Timeline.
type Journey struct {
	Unit  string  `json:"unit"`
	Lanes []Lane  `json:"lanes"`
	Zoom  *Window `json:"zoom,omitempty"` // nil: no zoom
	// Context, when set, is what the thin view draws instead of Lanes (the
	// whole run, with runs of like bars merged), and ContextLabel names it.
	Context      []Lane `json:"context,omitempty"`
	ContextLabel string `json:"context_label,omitempty"`
	// Cursor marks one moment (e.g. the first token), labelled.
	Cursor      *float64 `json:"cursor,omitempty"`
	CursorLabel string   `json:"cursor_label,omitempty"`
}
