package lessons

import (
	"fmt"
	"strconv"

	"github.com/inferlab/inferlab/core/allocator"
	"github.com/inferlab/inferlab/scene"
)

// cow-fork: Part 14 §3.1. One prompt, n samples. In cow mode (vLLM v0) the
// samples fork from one sequence and share every block, the partial last one
// included, until a write copies it; in prefix mode (vLLM v1) they are n
// independent requests that share only full prompt blocks through the prefix
// cache.
var cowFork = &Lesson{
	Slug:    "cow-fork",
	Title:   "Parallel sampling: shared prompt blocks and copy-on-write",
	Part:    "Part 14 §3.1",
	Summary: "n samples of one prompt share its KV blocks; see the reference counts, the copy on first write, and how much memory sharing saves.",
	Engine: "cow: vLLM v0's block manager (CopyOnWriteTracker; fork shares all blocks). prefix: vLLM v1's ParentRequest, n independent requests sharing full blocks through prefix caching. " +
		"Simplified: every sample decodes one token per step, in lockstep.",
	Params: []Param{
		{Key: "n", Label: "Samples n", Help: "Parallel samples of the same prompt.", Kind: Int, Default: 4, Min: 1, Max: 16, Step: 1},
		{Key: "mode", Label: "Sharing mode", Help: "cow: vLLM v0 fork with copy-on-write. prefix: vLLM v1 prefix caching.", Kind: Choice, Choices: []string{"cow", "prefix"}},
		{Key: "prompt", Label: "Prompt", Unit: "tokens", Kind: Int, Default: 40, Min: 1, Max: 2048, Step: 1},
		{Key: "output", Label: "Output per sample", Unit: "tokens", Kind: Int, Default: 10, Min: 0, Max: 2048, Step: 1},
		{Key: "block_size", Label: "Block size B", Unit: "tokens", Kind: Int, Default: 16, Min: 1, Max: 128, Step: 1},
		seedParam,
	},
	Check: func(v Values) error {
		need := v.Int("n") * allocator.BlocksNeeded(v.Int("prompt")+v.Int("output"), v.Int("block_size"))
		if need > maxGridBlocks {
			return Relation("n", strconv.Itoa(v.Int("n")), fmt.Sprintf("small enough that n unshared copies fit in %d blocks (needs %d)", maxGridBlocks, need))
		}
		return nil
	},
	Build: buildCowFork,
}

func init() { register(cowFork) }

// forkStats is the outcome of one run of the scenario.
type forkStats struct {
	inUse, unshared   int // blocks at the end, with and without sharing
	afterFork         int // blocks right after every sample has its prompt
	unsharedAfterFork int
	copies            int
	recomputed        int // prompt tokens children computed again
}

func buildCowFork(v Values) (*Script, error) {
	n, mode, b := v.Int("n"), v.Choice("mode"), v.Int("block_size")
	promptLen, output := v.Int("prompt"), v.Int("output")
	rng := newRand(v.Int("seed"))
	prompt := make([]int, promptLen)
	for i := range prompt {
		prompt[i] = rng.IntN(128000)
	}
	blocks := n*allocator.BlocksNeeded(promptLen+output, b) + 2
	pool, err := allocator.NewPaged(blocks, b)
	if err != nil {
		return nil, err
	}
	if mode == "prefix" {
		pool.EnablePrefixCaching()
	}
	s := &Script{}
	var st forkStats
	label := func(req int) string { return "S" + strconv.Itoa(req+1) }
	prev := map[int]int{}
	grid := func() scene.Scene {
		g := &scene.BlockGrid{BlockSize: b}
		for i, bs := range pool.Snapshot() {
			blk := scene.Block{Owner: bs.Owner, Used: bs.Used, Refs: bs.Refs, Cached: bs.Cached, Highlight: prev[i] != bs.Refs}
			if bs.Owner >= 0 {
				blk.Label = label(bs.Owner) // renderers add ×k for a block k tables share
			}
			prev[i] = bs.Refs
			g.Blocks = append(g.Blocks, blk)
		}
		return scene.Scene{Kind: scene.KindBlockGrid, ID: "pool", Title: fmt.Sprintf("Physical blocks (%d × %d tokens); ×k marks a block k tables share", blocks, b), Grid: g}
	}
	tables := func() scene.Scene {
		bt := &scene.BlockTables{BlockSize: b}
		for _, req := range pool.Requests() {
			row := scene.TableRow{Owner: req, Label: label(req), Tokens: pool.Tokens(req), Blocks: pool.Table(req), Focus: -1}
			for _, p := range row.Blocks {
				row.Shared = append(row.Shared, pool.Refs(p) > 1)
			}
			bt.Rows = append(bt.Rows, row)
		}
		return scene.Scene{Kind: scene.KindBlockTables, ID: "tables", Title: "Block tables", Tables: bt}
	}
	cards := func() scene.Scene {
		inUse, unshared := pool.Sharing()
		return scene.Scene{Kind: scene.KindCards, ID: "now", Title: "Memory now", Cards: []scene.Card{
			{Label: "blocks in use", Value: float64(inUse)},
			{Label: "blocks without sharing", Value: float64(unshared)},
			{Label: "saved", Value: round1(100 * savedFrac(inUse, unshared)), Unit: "%"},
			{Label: "copy-on-write copies", Value: float64(pool.Copies())},
		}}
	}
	step := func(title, text string) {
		s.Steps = append(s.Steps, Step{Title: title, Narration: text, Scenes: []scene.Scene{grid(), tables(), cards()}, Cursor: float64(len(s.Steps))})
	}
	step("One prompt, n samples", fmt.Sprintf("A %d-token prompt will be sampled %d times, %d output tokens each. Blocks hold %d tokens, so the prompt fills %d full %s and %d tokens of a partial one.",
		promptLen, n, output, b, promptLen/b, plural(promptLen/b, "block", "blocks"), promptLen%b))

	// Prefill.
	if _, err := pool.AdmitTokens(0, prompt, ""); err != nil {
		return nil, err
	}
	cachedNote := ""
	if mode == "prefix" {
		cachedNote = fmt.Sprintf(" With prefix caching on, its %d full %s are hashed into the cache as they fill.", promptLen/b, plural(promptLen/b, "block is", "blocks are"))
	}
	step("S1 computes the prompt", fmt.Sprintf("The first sample prefills the prompt into %d blocks.%s", len(pool.Table(0)), cachedNote))
	s.Steps[len(s.Steps)-1].Quiz = numberQuiz(fmt.Sprintf("How many %d-token blocks does the %d-token prompt take?", b, promptLen), float64(len(pool.Table(0))), 0,
		fmt.Sprintf("⌈%d/%d⌉ = %d: the last one only partly full.", promptLen, b, len(pool.Table(0))))

	// The other samples get the prompt.
	for i := 1; i < n; i++ {
		if mode == "cow" {
			if err := pool.Fork(0, i); err != nil {
				return nil, err
			}
			continue
		}
		hit, err := pool.AdmitTokens(i, prompt, "")
		if err != nil {
			return nil, err
		}
		st.recomputed += promptLen - hit
	}
	st.afterFork, st.unsharedAfterFork = pool.Sharing()
	if n > 1 {
		if mode == "cow" {
			step("Fork: the tables share every block", fmt.Sprintf("The other %d samples fork from S1: each gets a copy of S1's block table, not of its blocks, so every prompt block now has reference count %d, the partial last block included. "+
				"%d blocks hold what %d would without sharing.", n-1, n, st.afterFork, st.unsharedAfterFork))
		} else {
			hitBlocks := len(pool.Lookup(prompt, ""))
			step("Prefix hits: only full blocks are shared", fmt.Sprintf("Each other sample is its own request. The prefix cache finds %d of the prompt's blocks (it stops before the block holding the last prompt token, which must be computed to produce logits), "+
				"so each sample allocates its own copy of the rest and recomputes %d prompt tokens: %d recomputed in all. %d blocks hold what %d would without sharing.",
				hitBlocks, promptLen-hitBlocks*b, st.recomputed, st.afterFork, st.unsharedAfterFork))
			s.Steps[len(s.Steps)-1].Quiz = numberQuiz(fmt.Sprintf("Sample 2 asks the prefix cache for the same %d-token prompt. How many prompt tokens will it have to compute itself?", promptLen),
				float64(promptLen-hitBlocks*b), 0, "Only full blocks are cached, and never the block holding the last prompt token: that block is recomputed.")
		}
	}

	// Decode in lockstep; narrate the first step and each step that needs new blocks.
	for t := 0; t < output; t++ {
		before, _ := pool.Sharing()
		copiesBefore := pool.Copies()
		for i := 0; i < n; i++ {
			if err := pool.AppendTokens(i, []int{rng.IntN(128000)}); err != nil {
				return nil, err
			}
		}
		after, _ := pool.Sharing()
		newCopies := pool.Copies() - copiesBefore
		switch {
		case newCopies > 0:
			step(fmt.Sprintf("Output token %d: copy on write", t+1), fmt.Sprintf("Each sample writes a different token. The shared partial block has reference count > 1, so the first %d writers each copy it into a new block (the KV of its %d prompt tokens moves with it) and write there; "+
				"the last sample finds itself the only holder and writes in place. %d %s made, no tokens recomputed.", newCopies, promptLen%b, newCopies, plural(newCopies, "copy", "copies")))
			s.Steps[len(s.Steps)-1].Quiz = &Quiz{Question: fmt.Sprintf("Every sample now writes a token into the partial prompt block, which %d block tables share. What must the block manager do before the first write?", n),
				Kind: QuizTerm, Answer: "copy-on-write", Accept: []string{"cow", "copy on write"},
				Explain: "Copy-on-write: the writer gets a private copy of the shared block, so the others still see the prompt alone."}
		case t == 0:
			step("Output token 1: the samples diverge", fmt.Sprintf("Each sample writes a different token into a block only it holds; %d new %s.", after-before, plural(after-before, "block was", "blocks were")))
		case after > before:
			step(fmt.Sprintf("Output token %d: new blocks", t+1), fmt.Sprintf("The samples' last blocks filled, so each takes a private block: %d new. Shared prompt blocks stay shared.", after-before))
		}
	}
	st.inUse, st.unshared = pool.Sharing()
	st.copies = pool.Copies()
	saved := savedFrac(st.inUse, st.unshared)
	s.Metrics = []Metric{
		{Key: "blocks_shared", Label: "Blocks in use with sharing (end)", Value: float64(st.inUse)},
		{Key: "blocks_unshared", Label: "Blocks n independent copies would use (end)", Value: float64(st.unshared)},
		{Key: "memory_saved_pct", Label: "Memory saved at the end", Unit: "%", Value: round2(100 * saved)},
		{Key: "memory_saved_after_fork_pct", Label: "Memory saved once every sample has its prompt", Unit: "%", Value: round2(100 * savedFrac(st.afterFork, st.unsharedAfterFork))},
		{Key: "copies", Label: "Copy-on-write block copies", Value: float64(st.copies)},
		{Key: "recomputed_tokens", Label: "Prompt tokens recomputed by samples 2..n", Unit: "tokens", Value: float64(st.recomputed)},
	}
	s.Claims = []Claim{{
		What:    "Children share the parent's prompt blocks and allocate new blocks only for unique output tokens",
		Article: "stated (Part 14 §3.1)",
		Model:   claimModel(mode, st, promptLen, b),
		Why:     "The article describes vLLM v0's copy-on-write; vLLM v1 replaced it with prefix caching, which shares only full blocks.",
	}, {
		What:    "Memory saved by sharing",
		Article: "vLLM paper (OPT-13B, Alpaca): 6.1%–9.8% parallel sampling, 37.6%–55.2% beam search (measured; engines.md §6)",
		Model:   fmt.Sprintf("%.2f%% for this prompt, n = %d, %d output tokens each", 100*saved, n, output),
		Why:     "The paper averages over a whole serving run where outputs are long and requests come and go; this is one request at its end. Longer outputs per sample shrink the shared share.",
	}}
	s.Steps = append(s.Steps, Step{
		Title: "What sharing saved",
		Narration: fmt.Sprintf("At the end %d blocks hold what %d independent copies would: %.1f%% saved, with %d %s and %d recomputed prompt tokens. Right after every sample had its prompt the saving was %.1f%%; each private output block lowers it.",
			st.inUse, st.unshared, 100*saved, st.copies, plural(st.copies, "copy", "copies"), st.recomputed, 100*savedFrac(st.afterFork, st.unsharedAfterFork)),
		Scenes: []scene.Scene{grid(), tables(), cards(), claimsTable(s.Claims)},
		Cursor: float64(len(s.Steps)),
	})
	return s, nil
}

func savedFrac(inUse, unshared int) float64 {
	if unshared == 0 {
		return 0
	}
	return 1 - float64(inUse)/float64(unshared)
}

func claimModel(mode string, st forkStats, prompt, b int) string {
	if mode == "cow" {
		if prompt%b == 0 {
			return "holds exactly: the prompt ends on a block boundary, so no shared block is ever written"
		}
		return fmt.Sprintf("holds, except that the shared partial prompt block is copied on first write (%d copies)", st.copies)
	}
	return fmt.Sprintf("partly: only full prompt blocks are shared; each sample recomputes and stores its own partial block (%d tokens recomputed in all)", st.recomputed)
}
