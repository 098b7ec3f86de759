// Package blocktable holds the lesson block-table: Part 14, formulation 1.
// One request grows token by token while neighbours come and go, so its
// blocks land wherever the free queue's head happens to be; then one token's
// address is translated step by step.
package blocktable

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/inferlab/inferlab/core/allocator"
	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/scene"
)

var lesson = &lessons.Lesson{
	Slug:    "block-table",
	Title:   "The block table: from token index to byte address",
	Part:    "Part 14, formulation 1",
	Summary: "A request's tokens live in scattered 16-token blocks; follow one token through ⌊t/B⌋, t mod B and the block table to its byte address.",
	Engine: "vLLM v1 block pool as of v0.8–v0.10 (blocks from the head of the free queue; a freed request's blocks appended tail first; newer vLLM puts freed blocks without a hash at the head instead, which the lab does not). Simplified: the address uses the article's all-layer S_entry; " +
		"vLLM actually keeps one K and one V tensor per layer, so the per-layer formula is shown beside it.",
	Group: "memory", Rank: 30, Thumb: scene.KindBlockTables,
	Terms: []lessons.Term{
		{Term: "block table", Definition: "A request's map from logical block (⌊t/B⌋) to the physical block holding it.", Find: "table"},
		{Term: "S_entry", Aliases: []string{"kv bytes per token"}, Definition: "Bytes of one token's K and V across all layers: 2 · layers · KV heads · head dim · bytes per element.", Find: "per token"},
	},
	Params: []lessons.Param{
		{Key: "model", Label: "Model", Help: "Sets S_entry, the bytes of one token's K and V across all layers.", Kind: lessons.Choice, Choices: kit.ModelIDs()},
		{Key: "kv_dtype", Label: "KV cache type", Help: "bf16 stores 2 bytes per element, fp8 one.", Kind: lessons.Choice, Choices: []string{"bf16", "fp8"}},
		{Key: "block_size", Label: "Block size B", Unit: "tokens", Kind: lessons.Int, Default: 16, Min: 1, Max: 128, Step: 1},
		{Key: "length", Label: "Request length", Unit: "tokens", Help: "Tokens the request grows to.", Kind: lessons.Int, Default: 72, Min: 1, Max: 1024, Step: 1},
		{Key: "token", Label: "Token t", Help: "The token whose address is looked up (0-based).", Kind: lessons.Int, Default: 37, Min: 0, Max: 1023, Step: 1},
		{Key: "neighbours", Label: "Other requests", Help: "Requests growing and finishing alongside, which scatter the free blocks.", Kind: lessons.Int, Default: 3, Min: 0, Max: 8, Step: 1},
		kit.SeedParam,
	},
	Check: func(v lessons.Values) error {
		if t, n := v.Int("token"), v.Int("length"); t >= n {
			return lessons.Relation("token", strconv.Itoa(t), fmt.Sprintf("a token of the %d-token request: 0 to %d", n, n-1), "length")
		}
		return nil
	},
	Sim: sim{},
	// Script.Work counts the tokens written (A's length, about (neighbours +
	// 1) times over) and the blocks and table entries drawn at up to
	// 2·maxTableSteps + 2 steps: at most about 40,000 for every accepted
	// setting, so no knob combination needs refusing.
	MaxWork:      200_000,
	HeavyCorners: []map[string]string{{"length": "1024", "block_size": "1", "neighbours": "8", "token": "1023"}},
}

func init() { lessons.Register(lesson) }

// sim is the lesson's simulation: a method, not a func value, so that the
// page's WebAssembly leaves it out (see lessons.Simulation).
type sim struct{}

func (sim) Simulate(v lessons.Values) (*lessons.Script, error) {
	return lessons.ScriptOf(runBlockTable(v))
}

func kvBytes(dtype string) int {
	if dtype == "fp8" {
		return 1
	}
	return 2
}

// maxTableSteps bounds the block-by-block steps of a long request.
const maxTableSteps = 16

// ---- Simulation: the typed run ----

// tableView is the pool at one moment: every physical block and every
// request's block table.
type tableView struct {
	blocks []allocator.BlockState
	rows   []tableRow
}

type tableRow struct {
	req, tokens int
	blocks      []int
}

func viewTables(p *allocator.Paged) tableView {
	v := tableView{blocks: p.Snapshot()}
	for _, req := range p.Requests() {
		v.rows = append(v.rows, tableRow{req: req, tokens: p.Tokens(req), blocks: p.Table(req)})
	}
	return v
}

// blockOpened is a moment A's growth took a new block.
type blockOpened struct {
	token   int   // the token that did not fit A's last block
	logical int   // the logical block it opened
	table   []int // A's table then
	view    tableView
}

// blockTableRun is what runBlockTable simulated.
type blockTableRun struct {
	model          hardware.Model
	dtype          string
	elemBytes      int // bytes per K or V element in dtype
	blockSize      int // tokens per block
	lengthA        int // the tokens A grows to
	lookup         int // the token of A followed to its byte address
	neighbours     int // requests growing beside A
	sEntry, sLayer int64
	numBlocks      int
	blockGrowth
	final     tableView
	table     []int // A's final table
	addr      allocator.Address
	layerAddr int64 // byte offset inside one layer's K tensor
	work      int64 // Script.Work: tokens written, blocks and table entries drawn
}

// blockGrowth is A's growth among its neighbours: the pool as A starts,
// the openings of A's blocks shown as steps, and the work it counted.
type blockGrowth struct {
	start  tableView
	opened []blockOpened // the openings shown as steps
	work   int64
}

// requestA is A, the request whose table the lesson follows.
const requestA = 0

// neighbour is another request: it writes left more tokens, then finishes.
type neighbour struct {
	kv   *allocator.Request
	left int
}

// tableGrowth is the pool and the requests growing in it, one token per
// tick, written by a request picked at random.
type tableGrowth struct {
	pool   *allocator.Paged
	a      *allocator.Request // request A
	rng    *rand.Rand
	b      int
	next   int
	others []neighbour
}

// spawn admits a new neighbour that will write B to 3B tokens.
func (g *tableGrowth) spawn() (neighbour, error) {
	n := neighbour{kv: &allocator.Request{ID: g.next}, left: kit.Uniform(g.rng, g.b, 3*g.b)}
	g.next++
	return n, g.pool.AllocateSlots(n.kv, 0)
}

// tick lets one request, picked at random, write a token; it reports
// whether A wrote it.
func (g *tableGrowth) tick() (bool, error) {
	pick := g.rng.IntN(len(g.others) + 1)
	if pick == len(g.others) {
		return true, g.pool.AllocateSlots(g.a, 1)
	}
	n := &g.others[pick]
	if err := g.pool.AllocateSlots(n.kv, 1); err != nil {
		return false, err
	}
	if n.left--; n.left > 0 {
		return false, nil
	}
	if err := g.pool.Free(n.kv); err != nil {
		return false, err
	}
	var err error
	g.others[pick], err = g.spawn()
	return false, err
}

func runBlockTable(v lessons.Values) (blockTableRun, error) {
	m, err := hardware.ModelByID(v.Choice("model"))
	if err != nil {
		return blockTableRun{}, err
	}
	dtype := v.Choice("kv_dtype")
	bs, lengthA, neighbours := v.Int("block_size"), v.Int("length"), v.Int("neighbours")
	// Room for the request and every neighbour at its longest (3 blocks), so
	// nobody ever waits and the only thing that varies is where blocks land.
	pool, err := allocator.NewPaged(allocator.BlocksNeeded(lengthA, bs)+3*neighbours+2, bs)
	if err != nil {
		return blockTableRun{}, err
	}
	growth, err := growTable(&tableGrowth{pool: pool, a: &allocator.Request{ID: requestA}, rng: kit.NewRand(v.Int("seed")), b: bs, next: 1}, lengthA, neighbours)
	if err != nil {
		return blockTableRun{}, err
	}
	final, finalWork := viewCounted(pool)
	r := blockTableRun{model: m, dtype: dtype, elemBytes: kvBytes(dtype), blockSize: bs, lengthA: lengthA, lookup: v.Int("token"), neighbours: neighbours,
		numBlocks: pool.NumBlocks(), blockGrowth: growth, final: final, table: pool.Table(requestA)}
	r.work = growth.work + finalWork
	r.sEntry = m.KVBytesPerToken(r.elemBytes)
	r.sLayer = m.KVBytesPerTokenPerLayer(r.elemBytes) / 2 // one of K or V in one layer
	if r.addr, err = pool.Translate(requestA, r.lookup, r.sEntry); err != nil {
		return r, err
	}
	r.layerAddr = int64(r.addr.Physical)*int64(r.blockSize)*r.sLayer + int64(r.addr.Offset)*r.sLayer
	return r, nil
}

// growTable admits the neighbours and A, then lets them write until A
// holds lengthA tokens, recording the openings of A's blocks shown as steps
// (at most about maxTableSteps, the last always).
func growTable(g *tableGrowth, lengthA, neighbours int) (blockGrowth, error) {
	var out blockGrowth
	for i := 0; i < neighbours; i++ {
		n, err := g.spawn()
		if err != nil {
			return out, err
		}
		g.others = append(g.others, n)
	}
	if err := g.pool.AllocateSlots(g.a, 0); err != nil {
		return out, err
	}
	view := func() tableView {
		v, w := viewCounted(g.pool)
		out.work += w
		return v
	}
	out.start = view()
	totalBlocks := allocator.BlocksNeeded(lengthA, g.b)
	every := max(1, totalBlocks/maxTableSteps)
	for g.pool.Tokens(requestA) < lengthA {
		before := len(g.pool.Table(requestA))
		mine, err := g.tick()
		if err != nil {
			return out, err
		}
		out.work++
		tbl := g.pool.Table(requestA)
		if !mine || len(tbl) == before {
			continue
		}
		if logical := len(tbl) - 1; logical%every == 0 || logical == totalBlocks-1 {
			out.opened = append(out.opened, blockOpened{token: g.pool.Tokens(requestA) - 1, logical: logical, table: tbl, view: view()})
		}
	}
	return out, nil
}

// viewCounted draws the pool now, with the blocks and table entries it
// walked, counted as work.
func viewCounted(p *allocator.Paged) (tableView, int64) {
	v := viewTables(p)
	work := int64(len(v.blocks))
	for _, row := range v.rows {
		work += int64(len(row.blocks))
	}
	return v, work
}

// ---- Formatting: scenes and text from the run ----

// tables draws the block tables over the physical pool (one line per
// entry), A's entry focus highlighted and the block hl taken this step.
// Requests keep one style while they hold blocks (scene.Colours, fed the
// steps in order).
func (r blockTableRun) tables(v tableView, focus, hl int, col *scene.Colours) scene.Scene {
	var on []int
	for _, row := range v.rows {
		on = append(on, row.req)
	}
	col.Resident(on)
	g := &scene.BlockGrid{BlockSize: r.blockSize}
	for i, st := range v.blocks {
		g.Blocks = append(g.Blocks, scene.Block{Owner: st.Owner, Label: tableLabel(st.Owner), Used: st.Used, Highlight: i == hl, Colour: col.Of(st.Owner)})
	}
	bt := &scene.BlockTables{BlockSize: r.blockSize}
	for _, row := range v.rows {
		tr := scene.TableRow{Owner: row.req, Label: tableLabel(row.req), Tokens: row.tokens, Blocks: row.blocks, Focus: -1, Colour: col.Of(row.req)}
		if row.req == requestA {
			tr.Focus = focus
		}
		bt.Rows = append(bt.Rows, tr)
	}
	return scene.Scene{Kind: scene.KindBlockTables, ID: "tables", Main: true,
		Title: fmt.Sprintf("Block tables (logical → physical) over the %d physical blocks of %d tokens", r.numBlocks, r.blockSize), Tables: bt, Grid: g}
}

func (r blockTableRun) Script() *lessons.Script {
	s := &lessons.Script{Metrics: r.metrics(), Claims: r.claims()}
	col := scene.NewColours()
	first := r.tables(r.start, -1, -1, col)
	aText := "Request A"
	first.Marks = []scene.Mark{kit.MarkRef("req:A", fmt.Sprintf("A: %d tokens to come", r.lengthA))}
	s.Steps = append(s.Steps, lessons.Step{
		Title: "An empty block table",
		Narration: fmt.Sprintf("%s will grow to %d tokens, one at a time, while %d other %s start, grow and finish beside it. "+
			"Each takes a %d-token block from the head of the free queue whenever its last block is full.", aText, r.lengthA, r.neighbours, kit.Plural(r.neighbours, "request", "requests"), r.blockSize),
		Scenes:   []scene.Scene{first},
		Mentions: []scene.Mention{kit.Mention(aText, "tables", "req:A")},
	})
	for _, o := range r.opened {
		phys := o.table[o.logical]
		sc := r.tables(o.view, o.logical, phys, col)
		physText := fmt.Sprintf("physical block %d", phys)
		mapText := fmt.Sprintf("A's table now maps logical %s", mapping(o.table))
		entry := "entry:A:" + strconv.Itoa(o.logical)
		sc.Marks = []scene.Mark{kit.MarkRef("block:"+strconv.Itoa(phys), fmt.Sprintf("block %d: from the free queue", phys)),
			kit.MarkRef(entry, fmt.Sprintf("logical %d → %d", o.logical, phys))}
		s.Steps = append(s.Steps, lessons.Step{
			Title: fmt.Sprintf("Token %d opens logical block %d", o.token, o.logical),
			Narration: fmt.Sprintf("Token %d does not fit in A's last block, so A takes the block at the head of the free queue: %s. "+
				"%s. %s", o.token, physText, mapText, contiguity(o.table)),
			Scenes:   []scene.Scene{sc},
			Mentions: []scene.Mention{kit.Mention(physText, "tables", "block:"+strconv.Itoa(phys)), kit.Mention(mapText, "tables", entry)},
			Cursor:   float64(o.token + 1),
		})
	}
	s.Steps = append(s.Steps, r.lookupStep(col))
	s.Work = r.work
	return s
}

func (r blockTableRun) lookupStep(col *scene.Colours) lessons.Step {
	a, m := r.addr, r.model
	f := &scene.Formula{
		Expr: "Addr(t) = T[⌊t/B⌋] · B · S_entry + (t mod B) · S_entry",
		Terms: []scene.Term{
			{Symbol: "t", Meaning: "token index", Value: strconv.Itoa(r.lookup)},
			{Symbol: "B", Meaning: "tokens per block", Value: strconv.Itoa(r.blockSize)},
			{Symbol: "⌊t/B⌋", Meaning: "logical block", Value: strconv.Itoa(a.Logical)},
			{Symbol: "t mod B", Meaning: "offset in the block", Value: strconv.Itoa(a.Offset)},
			{Symbol: "T[⌊t/B⌋]", Meaning: "physical block from A's table", Value: strconv.Itoa(a.Physical)},
			{Symbol: "S_entry", Meaning: fmt.Sprintf("2 · %d layers · %d KV heads · %d head dim · %d B (%s)", m.Layers, m.KVHeads, m.HeadDim, r.elemBytes, m.Name), Value: kit.Comma(int(r.sEntry)) + " B"},
		},
		Result: fmt.Sprintf("%d · %d · %s + %d · %s = %s B", a.Physical, r.blockSize, kit.Comma(int(r.sEntry)), a.Offset, kit.Comma(int(r.sEntry)), kit.Comma64(a.Byte)),
	}
	perLayer := &scene.Formula{
		Expr: "Addr_K,layer(t) = T[⌊t/B⌋] · B · S_K + (t mod B) · S_K, inside that layer's K tensor",
		Terms: []scene.Term{
			{Symbol: "S_K", Meaning: fmt.Sprintf("%d KV heads · %d head dim · %d B: one token's K in one layer", m.KVHeads, m.HeadDim, r.elemBytes), Value: kit.Comma(int(r.sLayer)) + " B"},
		},
		Result: fmt.Sprintf("%d · %d · %s + %d · %s = %s B", a.Physical, r.blockSize, kit.Comma(int(r.sLayer)), a.Offset, kit.Comma(int(r.sLayer)), kit.Comma64(r.layerAddr)),
	}
	sc := r.tables(r.final, a.Logical, -1, col)
	row := 0
	for i, tr := range sc.Tables.Rows {
		if tr.Owner == requestA {
			row = i
		}
	}
	sc.Tables.Lookup = &scene.Lookup{Row: row, Token: r.lookup, Logical: a.Logical, Physical: a.Physical, Offset: a.Offset,
		Expr:    fmt.Sprintf("%d · %d · %s + %d · %s", a.Physical, r.blockSize, kit.Comma(int(r.sEntry)), a.Offset, kit.Comma(int(r.sEntry))),
		Address: kit.Comma64(a.Byte) + " B"}
	logicalText := fmt.Sprintf("logical block ⌊%d/%d⌋ = %d", r.lookup, r.blockSize, a.Logical)
	offsetText := fmt.Sprintf("offset %d mod %d = %d", r.lookup, r.blockSize, a.Offset)
	physText := fmt.Sprintf("physical block %d", a.Physical)
	addrText := fmt.Sprintf("start %s bytes into the KV pool", kit.Comma64(a.Byte))
	blk := "block:" + strconv.Itoa(a.Physical)
	sc.Marks = []scene.Mark{kit.MarkRef("lookup:logical", fmt.Sprintf("logical %d", a.Logical)), kit.MarkRef("lookup:offset", fmt.Sprintf("slot %d", a.Offset)),
		kit.MarkRef(blk, fmt.Sprintf("block %d holds token %d", a.Physical, r.lookup)), kit.MarkRef("lookup:address", kit.Comma64(a.Byte)+" B")}
	narration := fmt.Sprintf("Token %d is in %s at %s. A's block table maps logical block %d to %s, "+
		"so its K and V %s (%s per block, %s per token for %s). Inside one layer's K tensor, the same block and offset give byte %s.",
		r.lookup, logicalText, offsetText, a.Logical, physText, addrText,
		kit.Comma64(int64(r.blockSize)*r.sEntry), kit.Comma(int(r.sEntry)), m.Name, kit.Comma64(r.layerAddr))
	return lessons.Step{
		Quiz: lessons.NumberQuiz(fmt.Sprintf("Which physical block holds token %d? (Look up logical block ⌊%d/%d⌋ in A's table.)", r.lookup, r.lookup, r.blockSize), float64(a.Physical), 0,
			fmt.Sprintf("Logical block %d maps to physical block %d in A's table.", a.Logical, a.Physical)),
		Title:     fmt.Sprintf("Where does token %d live?", r.lookup),
		Narration: narration,
		Scenes: []scene.Scene{sc,
			{Kind: scene.KindFormula, ID: "addr", Title: "Formulation 1: address translation", Formula: f},
			{Kind: scene.KindFormula, ID: "layer", Title: "The same lookup inside one layer (vLLM's layout)", Formula: perLayer}},
		Mentions: []scene.Mention{kit.Mention(logicalText, "tables", "lookup:logical"), kit.Mention(offsetText, "tables", "lookup:offset"),
			kit.Mention(physText, "tables", blk), kit.Mention(addrText, "tables", "lookup:address")},
		Cursor: float64(r.lookup),
	}
}

func (r blockTableRun) metrics() []lessons.Metric {
	a := r.addr
	return []lessons.Metric{
		{Key: "token", Label: "Token looked up", Unit: "token index", Value: float64(r.lookup)},
		{Key: "logical_block", Label: "Logical block ⌊t/B⌋", Unit: "block index", Value: float64(a.Logical)},
		{Key: "offset", Label: "Offset t mod B", Unit: "tokens", Value: float64(a.Offset)},
		{Key: "physical_block", Label: "Physical block from the table", Unit: "block index", Value: float64(a.Physical)},
		{Key: "physical_address_bytes", Label: "Byte address (all-layer layout)", Unit: "B", Value: float64(a.Byte)},
		{Key: "per_layer_address_bytes", Label: "Byte offset inside one layer's K tensor", Unit: "B", Value: float64(r.layerAddr)},
		{Key: "s_entry_bytes", Label: "S_entry: K and V of one token, all layers", Unit: "B", Value: float64(r.sEntry)},
		{Key: "block_bytes", Label: "One block: B · S_entry", Unit: "B", Value: float64(int64(r.blockSize) * r.sEntry)},
		{Key: "table_blocks", Label: "Blocks in A's table", Unit: "blocks", Value: float64(len(r.table))},
		{Key: "contiguous_runs", Label: "Runs of consecutive physical blocks in A's table", Unit: "runs", Value: float64(runs(r.table))},
	}
}

func (r blockTableRun) claims() []lessons.Claim {
	return []lessons.Claim{{
		What:    "S_entry = 2 · N_layers · N_KV heads · d_head · bytes",
		Article: "formula only; no figure given",
		Model:   fmt.Sprintf("%s B for %s with a %s cache", kit.Comma(int(r.sEntry)), r.model.Name, r.dtype),
		Why:     "Same formula, evaluated with the model's config.json shape (sources: " + joinTags(r.model.Sources) + ").",
	}, {
		What:    "Blocks need not be contiguous",
		Article: "the block table maps logical blocks to wherever free blocks exist",
		Model:   fmt.Sprintf("A's %d blocks fall into %d contiguous runs", len(r.table), runs(r.table)),
		Why:     "Agrees: blocks come from the head of the free queue, which neighbours' frees keep reordering.",
	}}
}

func tableLabel(req int) string {
	if req < 0 {
		return ""
	}
	if req == 0 {
		return "A"
	}
	return "N" + strconv.Itoa(req)
}

func mapping(tbl []int) string {
	const show = 8
	out := ""
	for i, p := range tbl {
		if i == show && len(tbl) > show+1 {
			out += fmt.Sprintf(", … %d→%d", len(tbl)-1, tbl[len(tbl)-1])
			break
		}
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%d→%d", i, p)
	}
	return out
}

func runs(tbl []int) int {
	n := 0
	for i := range tbl {
		if i == 0 || tbl[i] != tbl[i-1]+1 {
			n++
		}
	}
	return n
}

func contiguity(tbl []int) string {
	if len(tbl) < 2 {
		return ""
	}
	if r := runs(tbl); r > 1 {
		return fmt.Sprintf("Its %d blocks sit in %d separate runs of physical memory: the table, not the layout, keeps them in order.", len(tbl), r)
	}
	return "So far its blocks happen to be adjacent; nothing requires it."
}

func joinTags(tags []string) string {
	out := ""
	for i, t := range tags {
		if i > 0 {
			out += ", "
		}
		out += "[" + t + "]"
	}
	return out
}
