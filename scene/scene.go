// Package scene is the small, closed vocabulary of pictures a lesson step can
// ask a renderer to draw: a block grid, a contiguous memory strip, a chart, a
// row of metric cards, a formula with live values and a claim table.
//
// Scenes are plain data (JSON-friendly structs). Lessons build them from the
// state of the core simulation; renderers (the go-app components in app/ and
// the text renderer of cmd/inferlab) only draw them and never simulate. A
// Scene carries exactly one of its pointer fields, named by Kind.
package scene

import "strconv"

// Kind names which of a Scene's fields is set.
type Kind string

// The kinds of scene a renderer must know how to draw.
const (
	KindBlockGrid   Kind = "block-grid"
	KindMemoryStrip Kind = "memory-strip"
	KindChart       Kind = "chart"
	KindCards       Kind = "cards"
	KindFormula     Kind = "formula"
	KindTable       Kind = "table"
	KindBlockTables Kind = "block-tables"
	KindTimeline    Kind = "timeline"
	KindSlots       Kind = "slots"
	KindTokens      Kind = "tokens"
	KindMemoryStack Kind = "memory-stack"
	// KindPools draws two KV pools side by side in one figure, on one
	// scale: a paged pool (Grid) beside a contiguous one (Strip), with the
	// queue of requests waiting for them (Queue).
	KindPools Kind = "pools"

	// The systems pictures (scene/systems.go).
	KindRadixTree Kind = "radix-tree"
	KindCluster   Kind = "cluster"
	KindTiers     Kind = "tiers"
	KindJourney   Kind = "journey"
)

// Scene is one picture inside a step. Exactly one of the pointer fields is
// non-nil; Kind says which, with two exceptions: KindPools sets Grid and
// Strip (and its Queues), and KindBlockTables may set Grid, the physical
// pool its tables point into.
type Scene struct {
	Kind    Kind         `json:"kind"`
	ID      string       `json:"id"`    // stable across steps, so a renderer can keep DOM and transitions
	Title   string       `json:"title"` // short caption shown above the picture
	Grid    *BlockGrid   `json:"grid,omitempty"`
	Strip   *MemoryStrip `json:"strip,omitempty"`
	Chart   *Chart       `json:"chart,omitempty"`
	Cards   []Card       `json:"cards,omitempty"`
	Formula *Formula     `json:"formula,omitempty"`
	Table   *Table       `json:"table,omitempty"`
	Tables  *BlockTables `json:"tables,omitempty"`
	Gantt   *Timeline    `json:"timeline,omitempty"`
	Slots   *SlotChart   `json:"slots,omitempty"`
	Tokens  *TokenStrip  `json:"tokens,omitempty"`
	Memory  *MemoryStack `json:"memory,omitempty"`
	Queues  []Queue      `json:"queues,omitempty"` // KindPools: the requests waiting for each pool
	Radix   *RadixTree   `json:"radix,omitempty"`
	Cluster *Cluster     `json:"cluster,omitempty"`
	Tiers   *Tiers       `json:"tiers,omitempty"`
	Journey *Journey     `json:"journey,omitempty"`
	// Main marks the step's main figure: the one picture the narration is
	// about, kept in view beside it. When no scene of a step sets it, the
	// first scene is the main figure.
	Main bool `json:"main,omitempty"`
	// Marks are the elements of this picture that the step's narration
	// names (block 8, R17, the stall): the renderer outlines and labels
	// them on the figure.
	Marks []Mark `json:"marks,omitempty"`
}

// Mark points at one element of a scene.
//
// Ref names the element in the scene's own terms, as "kind:key":
//
//	block:8          physical block 8 of a block grid
//	req:R17          request R17 wherever it is drawn (a strip segment, a table row, a lane, a bar)
//	node:3           node 3 of a radix tree
//	worker:W2        worker W2 of a cluster
//	tier:G2          memory tier G2
//	race:fetch       the fetch bar of a tiers scene's race
//	link:KV          the link of a cluster (and what crosses it)
//	router:R         the router of a cluster
//	span:GPU:4       the fifth bar of the lane labelled GPU in a timeline
//	point:decode:5   the sixth point of the chart series named decode
//	guide:ridge      the chart guide (reference line or band) with that ID
//	row:2            the third row of a table
//	entry:R1:3       logical block 3 in R1's block table
//	lookup:offset    one link of a block-table lookup (token, logical, physical, offset, address)
//	pool:paged       one pool of a KindPools figure
//	queue:paged:R35  request R35 in the queue of the paged pool
//
// Renderers put the same string in the element's data-ref attribute, so a
// mention in the narration and the element find each other.
type Mark struct {
	Ref   string `json:"ref"`
	Label string `json:"label,omitempty"` // a short callout drawn beside the element, e.g. "refused"
}

// Mention links a phrase of a step's narration to the element it names:
// hovering or focusing the phrase highlights the element, and the element's
// tooltip repeats the phrase.
type Mention struct {
	Text  string `json:"text"`  // the phrase as it appears in the narration (its first occurrence is linked)
	Scene string `json:"scene"` // the ID of the scene that draws the element
	Ref   string `json:"ref"`   // the element, as in Mark.Ref
}

// Timeline is a Gantt chart: lanes of bars on a shared time axis (steps of a
// scheduler, CPU launches against GPU kernels).
type Timeline struct {
	Unit   string   `json:"unit"` // of Start and End, e.g. "ms"
	Lanes  []Lane   `json:"lanes"`
	Cursor *float64 `json:"cursor,omitempty"` // a time to mark
	// Zoom, when set, is the window the step talks about (the stall, the
	// first layers): the lanes are drawn over it, and the whole run above
	// them, small, with the window outlined, as context.
	Zoom *Window `json:"zoom,omitempty"`
	// Groups name stretches of time above the lanes (a layer, attention,
	// an all-reduce, a scheduler step), drawn as labelled brackets.
	Groups []Span `json:"groups,omitempty"`
}

// Window is a stretch of a Timeline's axis.
type Window struct {
	Start float64 `json:"start"`
	End   float64 `json:"end"`
	Label string  `json:"label,omitempty"` // says what the window shows, e.g. "the first 3 layers"
}

// Lane is one row of a Timeline.
type Lane struct {
	Label string `json:"label"`
	Bars  []Span `json:"bars"`
	// Key, when set, names the lane in references (span:KEY:i) instead of
	// its label.
	Key string `json:"key,omitempty"`
}

// Span is one interval of a Lane. Class names what it is (prefill, decode,
// cpu, gpu, idle, wait); renderers style by class and always print Label or
// a pattern, never colour alone.
type Span struct {
	Start     float64 `json:"start"`
	End       float64 `json:"end"`
	Label     string  `json:"label,omitempty"`
	Class     string  `json:"class"`
	Highlight bool    `json:"hl,omitempty"`
}

// Free is the Owner of a block or segment that belongs to nobody.
const Free = -1

// BlockGrid is a pool of fixed-size KV blocks, drawn as a grid of cells.
type BlockGrid struct {
	BlockSize int     `json:"block_size"` // tokens per block
	Blocks    []Block `json:"blocks"`     // index = physical block id
	// Columns is the number of cells per row; 0 lets the renderer choose
	// (as many as fit, or a compact near-square for a large pool).
	Columns int `json:"columns,omitempty"`
}

// Block is one physical block of a BlockGrid.
type Block struct {
	Owner     int    `json:"owner"`            // request id, or Free
	Label     string `json:"label"`            // text drawn in the cell (request name), never colour alone
	Used      int    `json:"used"`             // tokens stored, 0..BlockSize
	Refs      int    `json:"refs,omitempty"`   // reference count when more than one table holds it
	Cached    bool   `json:"cached,omitempty"` // holds a prefix-cache entry (may be free yet reusable)
	Highlight bool   `json:"hl,omitempty"`     // changed in this step
	// Colour is the owner's style (palette slot + 1, see Colours); 0 lets
	// the renderer derive one from Owner.
	Colour int `json:"colour,omitempty"`
}

// BlockTables shows requests' block tables: logical block i → physical block.
// When its scene also carries a Grid (the physical pool), the renderer draws
// the pool beside the tables with one line per entry to the block it names,
// and a ×k badge on blocks k tables hold.
type BlockTables struct {
	BlockSize int        `json:"block_size"`
	Rows      []TableRow `json:"rows"`
	// Lookup, when set, walks one token through a table to its byte
	// address.
	Lookup *Lookup `json:"lookup,omitempty"`
}

// Lookup is one token's way through a block table: token t → logical
// block ⌊t/B⌋ → physical block → offset t mod B → byte address.
type Lookup struct {
	Row      int    `json:"row"` // index in Rows of the table used
	Token    int    `json:"token"`
	Logical  int    `json:"logical"`
	Physical int    `json:"physical"`
	Offset   int    `json:"offset"`
	Expr     string `json:"expr"`    // the address formula, e.g. "base + (physical × B + offset) × bytes per token"
	Address  string `json:"address"` // its value with the live numbers plugged in
}

// TableRow is one request's block table.
type TableRow struct {
	Owner  int    `json:"owner"`
	Label  string `json:"label"`
	Tokens int    `json:"tokens"`
	Blocks []int  `json:"blocks"` // physical block of each logical block
	// Focus is the logical block to highlight, or -1.
	Focus int `json:"focus"`
	// Shared marks logical blocks whose physical block other tables hold too.
	Shared []bool `json:"shared,omitempty"`
	Colour int    `json:"colour,omitempty"` // as Block.Colour
}

// MemoryStrip is a contiguous token pool: reserved runs and the holes between.
type MemoryStrip struct {
	Total    int       `json:"total"`    // slots in the pool
	Segments []Segment `json:"segments"` // sorted by Start, non-overlapping; gaps are free
	// Bay, when set, draws the strip as rows of Bay slots (one row per
	// max-context reservation) instead of one bar.
	Bay int `json:"bay,omitempty"`
}

// Segment is one reserved run of a MemoryStrip.
type Segment struct {
	Start     int    `json:"start"`
	Len       int    `json:"len"`   // slots reserved
	Used      int    `json:"used"`  // slots holding a token (≤ Len)
	Owner     int    `json:"owner"` // request id
	Label     string `json:"label"`
	Highlight bool   `json:"hl,omitempty"`
	Colour    int    `json:"colour,omitempty"` // as Block.Colour
}

// Queue is the line of requests waiting for one pool, first in line
// first. Its items are referenced as queue:POOL:LABEL (queue:contiguous:R5).
type Queue struct {
	Pool  string      `json:"pool"` // which pool it waits for: "paged" or "contiguous" in KindPools
	Items []QueueItem `json:"items"`
	// More counts waiting requests not listed.
	More int `json:"more,omitempty"`
}

// QueueItem is one request of a Queue.
type QueueItem struct {
	Owner  int    `json:"owner"`
	Label  string `json:"label"`
	Tokens int    `json:"tokens"` // what it asks for
	// State is "waiting"; "refused" for the head of the line turned away
	// this step (no room, or no hole large enough); "preempted" for a
	// request sent back to the line this step.
	State string `json:"state"`
	// Why says, for a refused request, what it lacked (e.g. "needs 8,192
	// contiguous slots; 0 free").
	Why string `json:"why,omitempty"`
}

// ChartType is an ECharts series type.
type ChartType string

// Chart types a renderer supports.
const (
	Line    ChartType = "line"
	Bar     ChartType = "bar"
	Scatter ChartType = "scatter"
)

// Chart is a data-only chart specification; the browser turns it into
// ECharts options (built with go-echarts) and the CLI into a small table.
type Chart struct {
	Type   ChartType `json:"type"`
	XLabel string    `json:"x_label"`
	YLabel string    `json:"y_label"`
	XUnit  string    `json:"x_unit,omitempty"`
	YUnit  string    `json:"y_unit,omitempty"`
	XLog   bool      `json:"x_log,omitempty"`
	YLog   bool      `json:"y_log,omitempty"`
	Series []Series  `json:"series"`
	// Cursor, when set, marks the x position of the current step.
	Cursor *float64 `json:"cursor,omitempty"`
	// Note is the chart's subtitle in plain words (what to look at);
	// renderers describe the axes when it is empty.
	Note string `json:"note,omitempty"`
	// Guides are reference lines and bands (a ridge, an SLO).
	Guides []Guide `json:"guides,omitempty"`
	// XNames, when set, name a bar chart's categories in the order of its
	// first series' X ("median", "p99"), where the numbers would mean
	// nothing; without them the X values name the categories.
	XNames []string `json:"x_names,omitempty"`
}

// CategoryName is the name of a bar chart's category i: XNames[i] when
// given, else the number x.
func (c *Chart) CategoryName(i int, x float64) string {
	if i >= 0 && i < len(c.XNames) && c.XNames[i] != "" {
		return c.XNames[i]
	}
	return strconv.FormatFloat(x, 'f', -1, 64)
}

// Guide is a reference line (From == To) or band across a chart, at
// values of one axis.
type Guide struct {
	ID    string  `json:"id"`   // names it in references (guide:ID)
	Axis  string  `json:"axis"` // "x" or "y"
	From  float64 `json:"from"`
	To    float64 `json:"to"`
	Label string  `json:"label"`
}

// Series is one named line or set of bars.
type Series struct {
	Name string    `json:"name"`
	Type ChartType `json:"type,omitempty"` // overrides the chart's type for this series
	X    []float64 `json:"x"`
	Y    []float64 `json:"y"`
	// Labels, when set, name each point on the chart (its batch size, its
	// offered rate); "" leaves a point unlabelled.
	Labels []string `json:"labels,omitempty"`
	// Curve marks a model curve (a roof, a bound): drawn as a line with no
	// marker per sample, so it never reads as data.
	Curve bool `json:"curve,omitempty"`
	// Step draws each Y as holding since the previous X (the gap before a
	// token): flat steps, not a slope between points.
	Step bool `json:"step,omitempty"`
}

// Card is one figure in a row of metric cards.
type Card struct {
	Label string  `json:"label"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit,omitempty"`
	Note  string  `json:"note,omitempty"` // e.g. "article: 54.2%"
}

// Formula is an equation shown with the values the model plugged into it.
type Formula struct {
	Expr   string `json:"expr"`   // the symbolic form, plain Unicode
	Terms  []Term `json:"terms"`  // each symbol with its live value
	Result string `json:"result"` // the evaluated right-hand side, formatted
}

// Term is one symbol of a Formula and its value.
type Term struct {
	Symbol  string `json:"symbol"`
	Meaning string `json:"meaning"`
	Value   string `json:"value"`
}

// Table is a small grid of text, used for "article claim vs this model".
type Table struct {
	Columns []string   `json:"columns"`
	Rows    [][]string `json:"rows"`
}

// SlotChart shows servers' batch slots over time, as small multiples on one
// time axis: a lane per server, a row per slot, and on each row the
// requests that held the slot (Class prefill or decode), the padding a
// finished request kept computing until its batch ended (padding), and the
// slot left empty while the GPU ran (idle). Marks: "lane:KEY" (a server),
// "slot:KEY:R7" (request R7's prefill and decode in lane KEY), "pad:KEY:R7"
// (its padding there), "idle:KEY" (a lane's idle slots).
type SlotChart struct {
	Unit string `json:"unit"` // of the times, e.g. "s"
	// From and To are the window shown; bars outside it are left out.
	From   float64    `json:"from"`
	To     float64    `json:"to"`
	Lanes  []SlotLane `json:"lanes"`
	Cursor *float64   `json:"cursor,omitempty"`
}

// SlotLane is one server of a SlotChart.
type SlotLane struct {
	Key   string    `json:"key"` // stable, used in mark references
	Label string    `json:"label"`
	Slots int       `json:"slots"`
	Bars  []SlotBar `json:"bars"`
	Note  string    `json:"note,omitempty"` // a figure printed beside the lane, e.g. "1,234 tok/s"
}

// SlotBar is one interval of one slot.
type SlotBar struct {
	Slot      int     `json:"slot"`
	Start     float64 `json:"start"`
	End       float64 `json:"end"`
	Req       int     `json:"req"` // request id, or Free for an idle slot
	Label     string  `json:"label,omitempty"`
	Class     string  `json:"class"` // prefill, decode, padding, idle
	Highlight bool    `json:"hl,omitempty"`
}

// TokenStrip shows speculative decoding's steps, one row each: the tokens
// the draft proposed and what the target's one verifying pass made of
// them. Token states: accepted (the target agrees), rejected (the first
// disagreement, struck), discarded (drafted after a rejection, never
// checked), resampled (the target's own token in place of the rejected
// one) and bonus (the target's extra token when every draft was
// accepted). Marks: "row:KEY" (a step), "tok:KEY:I" (its I-th token).
type TokenStrip struct {
	Rows []TokenRow `json:"rows"`
}

// TokenRow is one step of a TokenStrip.
type TokenRow struct {
	Key       string  `json:"key"`
	Label     string  `json:"label"`
	Tokens    []Token `json:"tokens"`
	Note      string  `json:"note,omitempty"` // e.g. "3 accepted + 1 bonus"
	Highlight bool    `json:"hl,omitempty"`
}

// Token is one token of a TokenRow.
type Token struct {
	Text  string `json:"text"`
	State string `json:"state"`
}

// MemoryStack is one GPU's memory as a stacked bar (Parts from 0 up to
// Total, Lines marking levels such as total · gpu_memory_utilization),
// one token's KV bytes for several attention kinds side by side, and the
// requests of a given length the pool holds as a row of marks. Marks:
// "part:KEY", "attn:KEY", "fit:requests".
type MemoryStack struct {
	Unit     string      `json:"unit"` // of Total, Parts and Lines, e.g. "GiB"
	Total    float64     `json:"total"`
	Parts    []MemPart   `json:"parts"`
	Lines    []MemLine   `json:"lines,omitempty"`
	PerToken []TokenCost `json:"per_token,omitempty"`
	Fit      *RequestFit `json:"fit,omitempty"`
}

// MemPart is one region of a MemoryStack's bar. Class names what it holds
// (weights, reserve, graphs, kv, headroom); renderers print Label and a
// pattern per class, never colour alone.
type MemPart struct {
	Key       string  `json:"key"`
	Label     string  `json:"label"`
	Size      float64 `json:"size"`
	Class     string  `json:"class"`
	Highlight bool    `json:"hl,omitempty"`
}

// MemLine marks a level of a MemoryStack's bar.
type MemLine struct {
	At    float64 `json:"at"`
	Label string  `json:"label"`
}

// TokenCost is one model's KV bytes per token (per GPU) and its attention
// kind (MHA, GQA, MQA, MLA).
type TokenCost struct {
	Key       string  `json:"key"`
	Label     string  `json:"label"`
	Kind      string  `json:"kind"`
	Bytes     float64 `json:"bytes"`
	Note      string  `json:"note,omitempty"` // e.g. "2 · 32 layers · 8 heads · 128 · 2 B"
	Highlight bool    `json:"hl,omitempty"`
}

// RequestFit is how many requests of Context tokens the pool holds: Count
// may be fractional (the last mark drawn in part).
type RequestFit struct {
	Count   float64 `json:"count"`
	Context int     `json:"context"`
	Label   string  `json:"label"`
}
