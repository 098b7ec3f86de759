package lessons

import (
	"fmt"
	"strconv"

	"github.com/inferlab/inferlab/core/allocator"
	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/scene"
)

// block-table: Part 14, formulation 1. One request grows token by token
// while neighbours come and go, so its blocks land wherever the free queue's
// head happens to be; then one token's address is translated step by step.
var blockTable = &Lesson{
	Slug:    "block-table",
	Title:   "The block table: from token index to byte address",
	Part:    "Part 14, formulation 1",
	Summary: "A request's tokens live in scattered 16-token blocks; follow one token through ⌊t/B⌋, t mod B and the block table to its byte address.",
	Engine: "vLLM v1 block pool (blocks from the head of the free queue, tail-first free). Simplified: the address uses the article's all-layer S_entry; " +
		"vLLM actually keeps one K and one V tensor per layer, so the per-layer formula is shown beside it.",
	Params: []Param{
		{Key: "model", Label: "Model", Help: "Sets S_entry, the bytes of one token's K and V across all layers.", Kind: Choice, Choices: modelIDs()},
		{Key: "kv_dtype", Label: "KV cache type", Help: "bf16 stores 2 bytes per element, fp8 one.", Kind: Choice, Choices: []string{"bf16", "fp8"}},
		{Key: "block_size", Label: "Block size B", Unit: "tokens", Kind: Int, Default: 16, Min: 1, Max: 128, Step: 1},
		{Key: "length", Label: "Request length", Unit: "tokens", Help: "Tokens the request grows to.", Kind: Int, Default: 72, Min: 1, Max: 1024, Step: 1},
		{Key: "token", Label: "Token t", Help: "The token whose address is looked up (0-based).", Kind: Int, Default: 37, Min: 0, Max: 1023, Step: 1},
		{Key: "neighbours", Label: "Other requests", Help: "Requests growing and finishing alongside, which scatter the free blocks.", Kind: Int, Default: 3, Min: 0, Max: 8, Step: 1},
		seedParam,
	},
	Check: func(v Values) error {
		if t, n := v.Int("token"), v.Int("length"); t >= n {
			return Relation("token", strconv.Itoa(t), fmt.Sprintf("a token of the %d-token request: 0 to %d", n, n-1))
		}
		return nil
	},
	Build: buildBlockTable,
}

func init() { register(blockTable) }

func kvBytes(dtype string) int {
	if dtype == "fp8" {
		return 1
	}
	return 2
}

// maxTableSteps bounds the block-by-block steps of a long request.
const maxTableSteps = 16

func buildBlockTable(v Values) (*Script, error) {
	m, err := hardware.ModelByID(v.Choice("model"))
	if err != nil {
		return nil, err
	}
	b, length, target := v.Int("block_size"), v.Int("length"), v.Int("token")
	bpe := kvBytes(v.Choice("kv_dtype"))
	sEntry := m.KVBytesPerToken(bpe)
	sLayer := m.KVBytesPerTokenPerLayer(bpe) / 2 // one of K or V in one layer
	k := v.Int("neighbours")
	// Room for the request and every neighbour at its longest (3 blocks), so
	// nobody ever waits and the only thing that varies is where blocks land.
	pool, err := allocator.NewPaged(allocator.BlocksNeeded(length, b)+3*k+2, b)
	if err != nil {
		return nil, err
	}
	rng := newRand(v.Int("seed"))
	const me = 0
	type neighbour struct{ id, left int }
	var others []neighbour
	next := 1
	spawn := func() neighbour {
		n := neighbour{id: next, left: uniform(rng, b, 3*b)}
		next++
		_ = pool.Admit(n.id, 0)
		return n
	}
	for i := 0; i < k; i++ {
		others = append(others, spawn())
	}
	_ = pool.Admit(me, 0)

	s := &Script{}
	tables := func(focus int) scene.Scene {
		bt := &scene.BlockTables{BlockSize: b}
		for _, req := range pool.Requests() {
			row := scene.TableRow{Owner: req, Label: tableLabel(req), Tokens: pool.Tokens(req), Blocks: pool.Table(req), Focus: -1}
			if req == me {
				row.Focus = focus
			}
			bt.Rows = append(bt.Rows, row)
		}
		return scene.Scene{Kind: scene.KindBlockTables, ID: "tables", Title: "Block tables (logical → physical)", Tables: bt}
	}
	grid := func(focusBlock int) scene.Scene {
		g := &scene.BlockGrid{BlockSize: b}
		for i, st := range pool.Snapshot() {
			g.Blocks = append(g.Blocks, scene.Block{Owner: st.Owner, Label: tableLabel(st.Owner), Used: st.Used, Highlight: i == focusBlock})
		}
		return scene.Scene{Kind: scene.KindBlockGrid, ID: "pool", Title: fmt.Sprintf("Physical blocks (%d × %d tokens)", pool.NumBlocks(), b), Grid: g}
	}
	s.Steps = append(s.Steps, Step{
		Title: "An empty block table",
		Narration: fmt.Sprintf("Request A will grow to %d tokens, one at a time, while %d other %s start, grow and finish beside it. "+
			"Each takes a %d-token block from the head of the free queue whenever its last block is full.", length, k, plural(k, "request", "requests"), b),
		Scenes: []scene.Scene{grid(-1), tables(-1)},
	})
	// Grow: each tick one request, chosen at random, writes a token.
	blocksShown := 0
	totalBlocks := allocator.BlocksNeeded(length, b)
	every := max(1, totalBlocks/maxTableSteps)
	for pool.Tokens(me) < length {
		pick := rng.IntN(len(others) + 1)
		if pick == len(others) {
			before := len(pool.Table(me))
			_ = pool.Append(me, 1)
			tbl := pool.Table(me)
			if len(tbl) > before {
				blocksShown++
				logical := len(tbl) - 1
				if logical%every == 0 || logical == totalBlocks-1 {
					s.Steps = append(s.Steps, Step{
						Title: fmt.Sprintf("Token %d opens logical block %d", pool.Tokens(me)-1, logical),
						Narration: fmt.Sprintf("Token %d does not fit in A's last block, so A takes the block at the head of the free queue: physical block %d. "+
							"A's table now maps logical %s. %s",
							pool.Tokens(me)-1, tbl[logical], mapping(tbl), contiguity(tbl)),
						Scenes: []scene.Scene{grid(tbl[logical]), tables(logical)},
						Cursor: float64(pool.Tokens(me)),
					})
				}
			}
			continue
		}
		n := &others[pick]
		_ = pool.Append(n.id, 1)
		if n.left--; n.left == 0 {
			_ = pool.Free(n.id)
			others[pick] = spawn()
		}
	}
	tbl := pool.Table(me)
	a, err := pool.Translate(me, target, sEntry)
	if err != nil {
		return nil, err
	}
	layerAddr := int64(a.Physical)*int64(b)*sLayer + int64(a.Offset)*sLayer
	f := &scene.Formula{
		Expr: "Addr(t) = T[⌊t/B⌋] · B · S_entry + (t mod B) · S_entry",
		Terms: []scene.Term{
			{Symbol: "t", Meaning: "token index", Value: strconv.Itoa(target)},
			{Symbol: "B", Meaning: "tokens per block", Value: strconv.Itoa(b)},
			{Symbol: "⌊t/B⌋", Meaning: "logical block", Value: strconv.Itoa(a.Logical)},
			{Symbol: "t mod B", Meaning: "offset in the block", Value: strconv.Itoa(a.Offset)},
			{Symbol: "T[⌊t/B⌋]", Meaning: "physical block from A's table", Value: strconv.Itoa(a.Physical)},
			{Symbol: "S_entry", Meaning: fmt.Sprintf("2 · %d layers · %d KV heads · %d head dim · %d B (%s)", m.Layers, m.KVHeads, m.HeadDim, bpe, m.Name), Value: comma(int(sEntry)) + " B"},
		},
		Result: fmt.Sprintf("%d · %d · %s + %d · %s = %s B", a.Physical, b, comma(int(sEntry)), a.Offset, comma(int(sEntry)), comma64(a.Byte)),
	}
	perLayer := &scene.Formula{
		Expr: "Addr_K,layer(t) = T[⌊t/B⌋] · B · S_K + (t mod B) · S_K, inside that layer's K tensor",
		Terms: []scene.Term{
			{Symbol: "S_K", Meaning: fmt.Sprintf("%d KV heads · %d head dim · %d B: one token's K in one layer", m.KVHeads, m.HeadDim, bpe), Value: comma(int(sLayer)) + " B"},
		},
		Result: fmt.Sprintf("%d · %d · %s + %d · %s = %s B", a.Physical, b, comma(int(sLayer)), a.Offset, comma(int(sLayer)), comma64(layerAddr)),
	}
	s.Metrics = []Metric{
		{Key: "token", Label: "Token looked up", Value: float64(target)},
		{Key: "logical_block", Label: "Logical block ⌊t/B⌋", Value: float64(a.Logical)},
		{Key: "offset", Label: "Offset t mod B", Unit: "tokens", Value: float64(a.Offset)},
		{Key: "physical_block", Label: "Physical block from the table", Value: float64(a.Physical)},
		{Key: "physical_address_bytes", Label: "Byte address (all-layer layout)", Unit: "B", Value: float64(a.Byte)},
		{Key: "per_layer_address_bytes", Label: "Byte offset inside one layer's K tensor", Unit: "B", Value: float64(layerAddr)},
		{Key: "s_entry_bytes", Label: "S_entry: K and V of one token, all layers", Unit: "B", Value: float64(sEntry)},
		{Key: "block_bytes", Label: "One block: B · S_entry", Unit: "B", Value: float64(int64(b) * sEntry)},
		{Key: "table_blocks", Label: "Blocks in A's table", Value: float64(len(tbl))},
		{Key: "contiguous_runs", Label: "Runs of consecutive physical blocks in A's table", Value: float64(runs(tbl))},
	}
	s.Claims = []Claim{{
		What:    "S_entry = 2 · N_layers · N_KV heads · d_head · bytes",
		Article: "formula only; no figure given",
		Model:   fmt.Sprintf("%s B for %s with a %s cache", comma(int(sEntry)), m.Name, v.Choice("kv_dtype")),
		Why:     "Same formula, evaluated with the model's config.json shape (sources: " + joinTags(m.Sources) + ").",
	}, {
		What:    "Blocks need not be contiguous",
		Article: "the block table maps logical blocks to wherever free blocks exist",
		Model:   fmt.Sprintf("A's %d blocks fall into %d contiguous runs", len(tbl), runs(tbl)),
		Why:     "Agrees: blocks come from the head of the free queue, which neighbours' frees keep reordering.",
	}}
	s.Steps = append(s.Steps, Step{
		Quiz: numberQuiz(fmt.Sprintf("Which physical block holds token %d? (Look up logical block ⌊%d/%d⌋ in A's table.)", target, target, b), float64(a.Physical), 0,
			fmt.Sprintf("Logical block %d maps to physical block %d in A's table.", a.Logical, a.Physical)),
		Title: fmt.Sprintf("Where does token %d live?", target),
		Narration: fmt.Sprintf("Token %d is in logical block ⌊%d/%d⌋ = %d at offset %d mod %d = %d. A's block table maps logical block %d to physical block %d, "+
			"so its K and V start %s bytes into the KV pool (%s per block, %s per token for %s). Inside one layer's K tensor, the same block and offset give byte %s.",
			target, target, b, a.Logical, target, b, a.Offset, a.Logical, a.Physical, comma64(a.Byte),
			comma64(int64(b)*sEntry), comma(int(sEntry)), m.Name, comma64(layerAddr)),
		Scenes: []scene.Scene{grid(a.Physical), tables(a.Logical),
			{Kind: scene.KindFormula, ID: "addr", Title: "Formulation 1: address translation", Formula: f},
			{Kind: scene.KindFormula, ID: "layer", Title: "The same lookup inside one layer (vLLM's layout)", Formula: perLayer}},
		Cursor: float64(target),
	})
	return s, nil
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
