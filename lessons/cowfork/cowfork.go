// Package cowfork holds the lesson cow-fork: Part 14 §3.1. One prompt, n
// samples. In cow mode (vLLM v0) the samples fork from one sequence and share
// every block, the partial last one included, until a write copies it; in
// prefix mode (vLLM v1) they are n independent requests that share only full
// prompt blocks through the prefix cache.
package cowfork

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/inferlab/inferlab/core/allocator"
	"github.com/inferlab/inferlab/core/kvhash"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/scene"
)

var lesson = &lessons.Lesson{
	Slug:    "cow-fork",
	Title:   "Parallel sampling: shared prompt blocks and copy-on-write",
	Part:    "Part 14 §3.1",
	Summary: "n samples of one prompt share its KV blocks; see the reference counts, the copy on first write, and how much memory sharing saves.",
	Engine: "cow: vLLM v0's block manager (CopyOnWriteTracker; fork shares all blocks). prefix: vLLM v1's ParentRequest, n independent requests sharing full blocks through prefix caching. " +
		"beam: vLLM v0's beam search on the same block manager (every step the best n candidates survive: a beam with none is freed, one with several forks, sharing all its blocks, and the first write to a shared partial block copies it). " +
		"Simplified: every sample decodes one token per step, in lockstep; beam survivors are drawn from a seeded process that favours better-ranked beams, not from a model's scores.",
	Group: "memory", Rank: 40, Thumb: scene.KindBlockTables,
	Terms: []lessons.Term{
		{Term: "copy-on-write", Aliases: []string{"cow"}, Definition: "Share a block until someone writes to it; the writer gets a private copy.", Find: "copy on write"},
		{Term: "parallel sampling", Aliases: []string{"n > 1"}, Definition: "Several outputs sampled from one prompt, sharing its KV blocks.", Find: "sampled"},
		{Term: "reference count", Aliases: []string{"ref count"}, Definition: "How many block tables hold a physical block; it returns to the pool at zero.", Find: "reference count"},
		{Term: "prefix caching", Aliases: []string{"automatic prefix caching", "apc"}, Definition: "Reuse the KV blocks of an identical prompt prefix, found by chain hashes of full blocks.", Find: "prefix cache", Set: "mode=prefix"},
	},
	Params: []lessons.Param{
		{Key: "n", Label: "Samples n", Help: "Parallel samples of the same prompt.", Kind: lessons.Int, Default: 4, Min: 1, Max: 16, Step: 1},
		{Key: "mode", Label: "Sharing mode", Help: "cow: vLLM v0 parallel sampling, fork with copy-on-write. prefix: vLLM v1 prefix caching. beam: vLLM v0 beam search of width n, beams forking and dying each step.", Kind: lessons.Choice, Choices: []string{"cow", "prefix", "beam"}},
		{Key: "prompt", Label: "Prompt", Unit: "tokens", Kind: lessons.Int, Default: 40, Min: 1, Max: 2048, Step: 1},
		{Key: "output", Label: "Output per sample", Unit: "tokens", Kind: lessons.Int, Default: 10, Min: 0, Max: 2048, Step: 1},
		{Key: "block_size", Label: "Block size B", Unit: "tokens", Kind: lessons.Int, Default: 16, Min: 1, Max: 128, Step: 1},
		kit.SeedParam,
	},
	Check: func(v lessons.Values) error {
		need := v.Int("n") * allocator.BlocksNeeded(v.Int("prompt")+v.Int("output"), v.Int("block_size"))
		if need > kit.MaxGridBlocks {
			return lessons.Relation("n", strconv.Itoa(v.Int("n")), fmt.Sprintf("small enough that n unshared copies fit in %d blocks (needs %d)", kit.MaxGridBlocks, need), "prompt", "output", "block_size")
		}
		if w := beamWork(v.Int("n"), v.Int("prompt"), v.Int("output"), v.Int("block_size")); v.Choice("mode") == "beam" && w > maxBeamWork {
			return lessons.Relation("output", strconv.Itoa(v.Int("output")), fmt.Sprintf("small enough in beam mode that n × output × ⌈(prompt + output)/B⌉ ≤ %s (this setting: %s): each step forks and frees whole block tables", kit.Comma(maxBeamWork), kit.Comma(w)), "n", "prompt", "block_size", "mode")
		}
		return nil
	},
	Sim: sim{},
	// Script.Work counts, over both passes, the samples' token writes
	// (n·output), the prompt tokens admitted (n·prompt) and the blocks and
	// table entries drawn at up to maxForkDecodeSteps + 5 steps, each at
	// most the 4,096 blocks Check allows and as many entries: about 350,000
	// at most, so no knob combination needs refusing beyond Check's.
	// Beam mode and the beam-versus-parallel comparison add at most
	// 2·maxBeamWork and 2·beamCompareWork (forks and frees walk block
	// tables).
	MaxWork: 1_000_000,
	HeavyCorners: []map[string]string{
		{"n": "1", "block_size": "1", "prompt": "2047", "output": "2048"},
		{"n": "16", "block_size": "8", "prompt": "1", "output": "2040"},
		{"n": "16", "block_size": "1", "prompt": "1", "output": "255", "mode": "prefix"},
		{"n": "16", "block_size": "1", "prompt": "1", "output": "95", "mode": "beam"},
		{"n": "16", "block_size": "8", "prompt": "1", "output": "240", "mode": "beam"},
		{"n": "16", "block_size": "128", "prompt": "1000", "output": "650", "mode": "beam"},
	},
}

func init() { lessons.Register(lesson) }

// maxBeamWork bounds n × output × ⌈(prompt + output)/B⌉ in beam mode: each
// step forks and frees up to n − 1 tables of at most that many blocks.
const maxBeamWork = 150_000

// beamCompareWork bounds the comparison runs: 2 · n · steps · blocks.
const beamCompareWork = 250_000

// beamWork is n × steps × the blocks of a table at the end.
func beamWork(n, prompt, steps, b int) int {
	return n * steps * allocator.BlocksNeeded(prompt+steps, b)
}

// compareHorizon is the decode steps the beam-versus-parallel comparison
// averages over: the whole output, or the most steps within
// beamCompareWork.
func compareHorizon(n, prompt, output, b int) int {
	h := output
	for h > 0 && 2*beamWork(n, prompt, h, b) > beamCompareWork {
		h--
	}
	return h
}

// sim is the lesson's simulation: a method, not a func value, so that the
// page's WebAssembly leaves it out (see lessons.Simulation).
type sim struct{}

func (sim) Simulate(v lessons.Values) (*lessons.Script, error) {
	return lessons.ScriptOf(runCowFork(v))
}

// ---- Simulation: the typed run ----

// forkStats is the outcome of one run of the scenario.
type forkStats struct {
	inUse, unshared   int // blocks at the end, with and without sharing
	afterFork         int // blocks right after every sample has its prompt
	unsharedAfterFork int
	copies            int
	recomputed        int // prompt tokens children computed again
	forks, dropped    int // beam mode: beams forked from a survivor, beams freed
}

// forkView is the pool at one moment: every block, every sample's table
// (with which of its blocks are shared) and the sharing counts.
type forkView struct {
	blocks          []allocator.BlockState
	rows            []forkRow
	inUse, unshared int
	copies          int
}

type forkRow struct {
	req, tokens int
	blocks      []int
	shared      []bool
}

func viewFork(p *allocator.Paged) forkView {
	v := forkView{blocks: p.Snapshot(), copies: p.Copies()}
	v.inUse, v.unshared = p.Sharing()
	for _, req := range p.Requests() {
		row := forkRow{req: req, tokens: p.Tokens(req), blocks: p.Table(req)}
		for _, b := range row.blocks {
			row.shared = append(row.shared, p.Refs(b) > 1)
		}
		v.rows = append(v.rows, row)
	}
	return v
}

// forkDecode is a decode step shown as a step: the samples wrote output
// token token+1, making newCopies copies and taking newBlocks blocks.
type forkDecode struct {
	token, newCopies, newBlocks int
	forked, dropped             int // beam mode: beams forked and freed before the step
	view                        forkView
}

// cowForkRun is what runCowFork simulated.
type cowForkRun struct {
	n, promptLen, output, b, numBlocks int
	mode                               string
	start, prefilled, shared, final    forkView
	prefillBlocks                      int // blocks S1's prompt took
	hitBlocks                          int // prefix mode: prompt blocks the cache finds for samples 2..n
	decodes                            []forkDecode
	stats                              forkStats
	// beamSaved and parallelSaved are the memory saved averaged over the
	// first horizon decode steps of one request, n beams of beam search
	// and n parallel samples (cow), for the claims row against the vLLM
	// paper.
	beamSaved, parallelSaved float64
	// beamCurve and parallelCurve are the memory saved after each of those
	// decode steps, as fractions (the comparison step's chart).
	beamCurve, parallelCurve []float64
	horizon                  int
	work                     int64 // Script.Work: samples' token writes, prompt tokens admitted, blocks drawn; both passes
}

// admitPrompt admits sample s with the prompt, reusing what the prefix
// cache holds of it; it returns the prompt tokens found cached.
func admitPrompt(p *allocator.Paged, s *allocator.Request, prompt []int) (int, error) {
	hits, hit := p.ComputedBlocks(kvhash.Extend(nil, prompt, p.BlockSize(), ""), len(prompt))
	s.Computed = hits
	return hit, p.AllocateSlots(s, len(prompt)-hit)
}

// maxForkDecodeSteps bounds the decode steps narrated: with small blocks
// every output token opens new blocks, and each step draws the whole pool.
const maxForkDecodeSteps = 16

// runCowFork simulates the scenario once to find the decode steps worth
// narrating, then again, identically, drawing the pool at those steps.
func runCowFork(v lessons.Values) (cowForkRun, error) {
	first, err := simulateFork(v, nil)
	if err != nil {
		return first, err
	}
	r, err := simulateFork(v, chooseDecodes(first.decodes, first.mode == "beam"))
	r.work += first.work
	if err != nil {
		return r, err
	}
	var w1, w2 int64
	r.horizon = compareHorizon(r.n, r.promptLen, r.output, r.b)
	if r.beamSaved, r.beamCurve, w1, err = meanSaving(v, true); err != nil {
		return r, err
	}
	r.parallelSaved, r.parallelCurve, w2, err = meanSaving(v, false)
	r.work += w1 + w2
	return r, err
}

// meanSaving runs n samples of the prompt once more, undrawn, as beam
// search (beam) or parallel sampling (cow), and returns the memory saved
// averaged over the decode steps, 1 − Σ blocks in use / Σ blocks n
// independent copies would hold, as the vLLM paper averages it over time,
// the memory saved after each decode step, and the work done.
func meanSaving(v lessons.Values, beam bool) (float64, []float64, int64, error) {
	n, b, promptLen := v.Int("n"), v.Int("block_size"), v.Int("prompt")
	output := compareHorizon(n, promptLen, v.Int("output"), b)
	rng := kit.NewRand(v.Int("seed"))
	prompt := make([]int, promptLen)
	for i := range prompt {
		prompt[i] = rng.IntN(128000)
	}
	pool, err := allocator.NewPaged(n*allocator.BlocksNeeded(promptLen+output, b)+2, b)
	if err != nil {
		return 0, nil, 0, err
	}
	samples := make([]allocator.Request, n)
	for i := range samples {
		samples[i].ID, samples[i].TokenIDs = i, slices.Clip(prompt)
	}
	if err := pool.AllocateSlots(&samples[0], promptLen); err != nil {
		return 0, nil, 0, err
	}
	if _, err := shareFork(pool, prompt, samples, true); err != nil {
		return 0, nil, 0, err
	}
	work := int64(n * promptLen)
	var inUse, unshared int
	curve := make([]float64, 0, output)
	for t := 0; t < output; t++ {
		if beam && t > 0 {
			_, _, w, err := selectBeams(pool, samples, rng)
			if err != nil {
				return 0, nil, work, err
			}
			work += w
		}
		if _, _, err := decodeFork(pool, samples, t, rng); err != nil {
			return 0, nil, work, err
		}
		work += int64(n)
		u, un := pool.Sharing()
		inUse, unshared = inUse+u, unshared+un
		curve = append(curve, savedFrac(u, un))
	}
	return savedFrac(inUse, unshared), curve, work, nil
}

// selectBeams is one step of beam search's memory bookkeeping over beams,
// as vLLM v0's beam search does it: the n best candidates survive, each the
// continuation of one beam; a beam none continues is freed, and a beam k
// continue forks k − 1 new beams into the freed slots, sharing every block.
// Which beams survive is drawn: each survivor's parent is beam ⌊n·u²⌋ for a
// uniform u, so better-ranked beams (lower slots) more often continue. It
// returns the beams forked and freed and the table entries they walked.
func selectBeams(pool *allocator.Paged, beams []allocator.Request, rng *rand.Rand) (forked, dropped int, work int64, err error) {
	k := len(beams)
	count := make([]int, k)
	for j := 0; j < k; j++ {
		u := rng.Float64()
		count[min(k-1, int(float64(k)*u*u))]++
	}
	var free []int
	for j, c := range count {
		if c == 0 {
			work += int64(len(pool.Table(j)))
			if err = pool.Free(&beams[j]); err != nil {
				return
			}
			free = append(free, j)
			dropped++
		}
	}
	for j, c := range count {
		for ; c > 1; c-- {
			s := free[0]
			free = free[1:]
			beams[s].TokenIDs = slices.Clip(slices.Clone(beams[j].TokenIDs))
			if err = pool.Fork(&beams[j], &beams[s]); err != nil {
				return
			}
			work += int64(len(pool.Table(s)))
			forked++
		}
	}
	return
}

// chooseDecodes picks the decode steps to narrate: the first, every one that
// copies (in beam search, where nearly every step copies, only the first),
// and the others evenly spaced, the last included, up to maxForkDecodeSteps
// in all.
func chooseDecodes(ds []forkDecode, beam bool) map[int]bool {
	show := map[int]bool{}
	var others []int
	for _, d := range ds {
		if d.token == 0 || !beam && d.newCopies > 0 {
			show[d.token] = true
		} else {
			others = append(others, d.token)
		}
	}
	room := max(1, maxForkDecodeSteps-len(show))
	for i, t := range others {
		if len(others) <= room || i*room/len(others) != (i+1)*room/len(others) || i == len(others)-1 {
			show[t] = true
		}
	}
	return show
}

// simulateFork runs the scenario, keeping the decode steps that copy, come
// first or open blocks, drawn when show lists them (nil: none drawn, none
// filtered).
func simulateFork(v lessons.Values, show map[int]bool) (cowForkRun, error) {
	r := cowForkRun{n: v.Int("n"), mode: v.Choice("mode"), b: v.Int("block_size"), promptLen: v.Int("prompt"), output: v.Int("output")}
	rng := kit.NewRand(v.Int("seed"))
	prompt := make([]int, r.promptLen)
	for i := range prompt {
		prompt[i] = rng.IntN(128000)
	}
	r.numBlocks = r.n*allocator.BlocksNeeded(r.promptLen+r.output, r.b) + 2
	pool, err := allocator.NewPaged(r.numBlocks, r.b)
	if err != nil {
		return r, err
	}
	if r.mode == "prefix" {
		pool.EnablePrefixCaching()
	}
	// Every picture drawn counts the blocks and table entries it walks.
	view := func() forkView {
		fv, w := viewForkCounted(pool)
		r.work += w
		return fv
	}
	r.start = view()
	samples := make([]allocator.Request, r.n)
	for i := range samples {
		// Each sample's ids: the prompt's, then its own outputs (clipped,
		// so that each sample's first append copies).
		samples[i].ID, samples[i].TokenIDs = i, slices.Clip(prompt)
	}
	if _, err := admitPrompt(pool, &samples[0], prompt); err != nil {
		return r, err
	}
	r.work += int64(r.n * r.promptLen) // S1 prefills; the others fork or are admitted through the cache
	r.prefillBlocks, r.prefilled = len(pool.Table(0)), view()
	sh, err := shareFork(pool, prompt, samples, r.mode != "prefix")
	if err != nil {
		return r, err
	}
	r.stats.recomputed, r.stats.afterFork, r.stats.unsharedAfterFork, r.hitBlocks = sh.recomputed, sh.afterFork, sh.unsharedAfterFork, sh.hitBlocks
	r.shared = view()
	for t := 0; t < r.output; t++ {
		forked, dropped := 0, 0
		if r.mode == "beam" && t > 0 {
			var w int64
			if forked, dropped, w, err = selectBeams(pool, samples, rng); err != nil {
				return r, err
			}
			r.stats.forks, r.stats.dropped, r.work = r.stats.forks+forked, r.stats.dropped+dropped, r.work+w
		}
		d, notable, err := decodeFork(pool, samples, t, rng)
		d.forked, d.dropped = forked, dropped
		notable = notable || forked > 0
		if err != nil {
			return r, err
		}
		r.work += int64(r.n)
		if !notable || show != nil && !show[t] {
			continue
		}
		if show != nil {
			d.view = view()
		}
		r.decodes = append(r.decodes, d)
	}
	r.final = view()
	r.stats.inUse, r.stats.unshared = pool.Sharing()
	r.stats.copies = pool.Copies()
	return r, nil
}

// viewForkCounted draws the pool now, with the blocks and table entries it
// walked, counted as work.
func viewForkCounted(p *allocator.Paged) (forkView, int64) {
	v := viewFork(p)
	work := int64(len(v.blocks))
	for _, row := range v.rows {
		work += int64(len(row.blocks))
	}
	return v, work
}

// forkShare is the pool once samples 2..n have the prompt: the blocks in
// use with and without sharing, the prompt tokens computed again, and (in
// prefix mode) the prompt blocks the cache finds.
type forkShare struct {
	afterFork, unsharedAfterFork int
	recomputed, hitBlocks        int
}

// shareFork gives samples 2..n the prompt: a fork of S1 (cow), or their own
// admission through the prefix cache.
func shareFork(pool *allocator.Paged, prompt []int, samples []allocator.Request, cow bool) (forkShare, error) {
	var sh forkShare
	for i := 1; i < len(samples); i++ {
		if cow {
			if err := pool.Fork(&samples[0], &samples[i]); err != nil {
				return sh, err
			}
			continue
		}
		hit, err := admitPrompt(pool, &samples[i], prompt)
		if err != nil {
			return sh, err
		}
		sh.recomputed += len(prompt) - hit
	}
	sh.afterFork, sh.unsharedAfterFork = pool.Sharing()
	hits, _ := pool.ComputedBlocks(kvhash.Extend(nil, prompt, pool.BlockSize(), ""), len(prompt))
	sh.hitBlocks = len(hits)
	return sh, nil
}

// decodeFork has every sample write output token t+1 (a fresh id
// each); the step is notable when it copied, was the first, or took new
// blocks.
func decodeFork(pool *allocator.Paged, samples []allocator.Request, t int, rng *rand.Rand) (d forkDecode, notable bool, err error) {
	before, _ := pool.Sharing()
	copiesBefore := pool.Copies()
	for i := range samples {
		s := &samples[i]
		s.TokenIDs = append(s.TokenIDs, rng.IntN(128000))
		if err := pool.AllocateSlots(s, 1); err != nil {
			return d, false, err
		}
	}
	after, _ := pool.Sharing()
	d = forkDecode{token: t, newCopies: pool.Copies() - copiesBefore, newBlocks: after - before}
	return d, !(d.newCopies == 0 && t > 0 && after <= before), nil
}

// ---- Formatting: scenes and text from the run ----

// forkText formats one run; prevRefs are the reference counts of the last
// picture drawn, so a picture highlights the blocks whose count changed.
type forkText struct {
	cowForkRun
	prevRefs map[int]int
	steps    []lessons.Step
	colours  *scene.Colours
}

func forkLabel(req int) string { return "S" + strconv.Itoa(req+1) }

// tables draws the samples' block tables over the physical pool, a line
// from each entry to its block and a ×k badge on blocks k tables share
// (the step's main figure).
func (f *forkText) tables(v forkView) scene.Scene {
	var on []int
	for _, row := range v.rows {
		on = append(on, row.req)
	}
	f.colours.Resident(on)
	g := &scene.BlockGrid{BlockSize: f.b}
	for i, bs := range v.blocks {
		blk := scene.Block{Owner: bs.Owner, Used: bs.Used, Refs: bs.Refs, Cached: bs.Cached, Highlight: f.prevRefs[i] != bs.Refs, Colour: f.colours.Of(bs.Owner)}
		if bs.Owner >= 0 {
			blk.Label = forkLabel(bs.Owner)
		}
		f.prevRefs[i] = bs.Refs
		g.Blocks = append(g.Blocks, blk)
	}
	bt := &scene.BlockTables{BlockSize: f.b}
	for _, row := range v.rows {
		bt.Rows = append(bt.Rows, scene.TableRow{Owner: row.req, Label: forkLabel(row.req), Tokens: row.tokens, Blocks: row.blocks, Focus: -1, Shared: row.shared, Colour: f.colours.Of(row.req)})
	}
	return scene.Scene{Kind: scene.KindBlockTables, ID: "tables", Main: true,
		Title: fmt.Sprintf("Block tables over the %d physical blocks of %d tokens; ×k marks a block k tables share", f.numBlocks, f.b), Tables: bt, Grid: g}
}

func forkCards(v forkView) scene.Scene {
	return scene.Scene{Kind: scene.KindCards, ID: "now", Title: "Memory now", Cards: []scene.Card{
		{Label: "blocks in use", Value: float64(v.inUse)},
		{Label: "blocks without sharing", Value: float64(v.unshared)},
		{Label: "saved", Value: kit.Round1(100 * savedFrac(v.inUse, v.unshared)), Unit: "%"},
		{Label: "copy-on-write copies", Value: float64(v.copies)},
	}}
}

// forkSubject is a phrase of a step and the element of the tables it names.
type forkSubject struct{ text, ref, label string }

// step appends a step drawing v, its subjects marked and linked; it
// returns the step so a quiz can be set.
func (f *forkText) step(v forkView, title, text string, subj ...forkSubject) *lessons.Step {
	sc := f.tables(v)
	var mentions []scene.Mention
	for _, s := range subj {
		if s.ref == "" || !strings.Contains(text, s.text) {
			continue
		}
		sc.Marks = append(sc.Marks, kit.MarkRef(s.ref, s.label))
		mentions = append(mentions, kit.Mention(s.text, sc.ID, s.ref))
	}
	f.steps = append(f.steps, lessons.Step{Title: title, Narration: text, Scenes: []scene.Scene{sc, forkCards(v)}, Mentions: mentions, Cursor: float64(len(f.steps))})
	return &f.steps[len(f.steps)-1]
}

// entry is the reference of logical block j in sample req's table, or ""
// when the view has no such entry.
func entry(v forkView, req, j int) string {
	for _, row := range v.rows {
		if row.req == req && j >= 0 && j < len(row.blocks) {
			return "entry:" + forkLabel(req) + ":" + strconv.Itoa(j)
		}
	}
	return ""
}

// physOf is the physical block of logical block j in sample req's table,
// or -1.
func physOf(v forkView, req, j int) int {
	for _, row := range v.rows {
		if row.req == req && j >= 0 && j < len(row.blocks) {
			return row.blocks[j]
		}
	}
	return -1
}

// blockSubject names physical block p of a view, or nothing for -1.
func blockSubject(text string, p int, label string) forkSubject {
	if p < 0 {
		return forkSubject{}
	}
	return forkSubject{text, "block:" + strconv.Itoa(p), label}
}

func (r cowForkRun) Script() *lessons.Script {
	f := &forkText{cowForkRun: r, prevRefs: map[int]int{}, colours: scene.NewColours()}
	s := &lessons.Script{Metrics: r.metrics(), Claims: r.claims()}
	full := r.promptLen / r.b
	blocksText := fmt.Sprintf("Blocks hold %d tokens", r.b)
	f.step(r.start, "One prompt, n samples", fmt.Sprintf("A %d-token prompt will be sampled %d times, %d output tokens each. %s, so the prompt fills %d full %s and %d tokens of a partial one.",
		r.promptLen, r.n, r.output, blocksText, full, kit.Plural(full, "block", "blocks"), r.promptLen%r.b),
		blockSubject(blocksText, 0, fmt.Sprintf("block 0: %d token slots", r.b)))
	cachedNote := ""
	if r.mode == "prefix" {
		cachedNote = fmt.Sprintf(" With prefix caching on, its %d full %s are hashed into the cache as they fill.", full, kit.Plural(full, "block is", "blocks are"))
	}
	last := r.prefillBlocks - 1
	intoText := fmt.Sprintf("into %d blocks", r.prefillBlocks)
	f.step(r.prefilled, "S1 computes the prompt", fmt.Sprintf("The first sample prefills the prompt %s.%s", intoText, cachedNote),
		forkSubject{intoText, entry(r.prefilled, 0, last), fmt.Sprintf("L%d: %d of %d slots", last, r.promptLen-last*r.b, r.b)}).Quiz =
		lessons.NumberQuiz(fmt.Sprintf("How many %d-token blocks does the %d-token prompt take?", r.b, r.promptLen), float64(r.prefillBlocks), 0,
			fmt.Sprintf("⌈%d/%d⌉ = %d: the last one only partly full.", r.promptLen, r.b, r.prefillBlocks))
	if r.n > 1 {
		f.shareStep()
	}
	for _, d := range r.decodes {
		f.decodeStep(d)
	}
	st := r.stats
	saved := savedFrac(st.inUse, st.unshared)
	holdText := fmt.Sprintf("%d blocks hold what %d independent copies would", st.inUse, st.unshared)
	f.step(r.final, "What sharing saved",
		fmt.Sprintf("At the end %s: %.1f%% saved, with %d %s and %d recomputed prompt tokens. Right after every sample had its prompt the saving was %.1f%%; each private output block lowers it.",
			holdText, 100*saved, st.copies, kit.Plural(st.copies, "copy", "copies"), st.recomputed, 100*savedFrac(st.afterFork, st.unsharedAfterFork)),
		blockSubject(holdText, physOf(r.final, 0, 0), fmt.Sprintf("×%d: still shared", r.n)))
	if r.n > 1 && r.output > 0 {
		f.beamStep()
	}
	s.Steps = f.steps
	s.Steps[len(s.Steps)-1].Scenes = append(s.Steps[len(s.Steps)-1].Scenes, kit.ClaimsTable(s.Claims))
	s.Work = r.work
	return s
}

// shareStep narrates how samples 2..n got the prompt.
func (f *forkText) shareStep() {
	st := f.stats
	last := f.prefillBlocks - 1
	if f.mode != "prefix" {
		refText := fmt.Sprintf("reference count %d", f.n)
		f.step(f.shared, "Fork: the tables share every block", fmt.Sprintf("The other %d samples fork from S1: each gets a copy of S1's block table, not of its blocks, so every prompt block now has %s, the partial last block included. "+
			"%d blocks hold what %d would without sharing.", f.n-1, refText, st.afterFork, st.unsharedAfterFork),
			blockSubject(refText, physOf(f.shared, 0, last), fmt.Sprintf("×%d, partial", f.n)))
		return
	}
	recompute := f.promptLen - f.hitBlocks*f.b
	findText := fmt.Sprintf("The prefix cache finds %d of the prompt's blocks", f.hitBlocks)
	f.step(f.shared, "Prefix hits: only full blocks are shared", fmt.Sprintf("Each other sample is its own request. %s (%s), "+
		"so each sample allocates its own copy of the rest and recomputes %d prompt tokens: %d recomputed in all. %d blocks hold what %d would without sharing.",
		findText, f.missWords(), recompute, st.recomputed, st.afterFork, st.unsharedAfterFork),
		blockSubject(findText, physOf(f.shared, 0, 0), "cached, shared")).Quiz =
		lessons.NumberQuiz(fmt.Sprintf("Sample 2 asks the prefix cache for the same %d-token prompt. How many prompt tokens will it have to compute itself?", f.promptLen),
			float64(recompute), 0, "Only full blocks are hashed and cached: a partial last block has no hash to find. And a lookup covers at most all tokens but the last, which must be computed to produce logits, so a prompt of whole blocks misses its last one.")
}

// missWords says why the prefix cache stops where it does: at the partial
// last block, which is never hashed (vLLM hashes only full blocks), or,
// for a prompt of whole blocks, one block short, since a lookup covers at
// most all tokens but the last (docs/SOURCES.md#vllm-prefix-caching).
func (f *forkText) missWords() string {
	if f.promptLen%f.b != 0 {
		return fmt.Sprintf("it stops at the last block, which holds only %d of %d tokens: vLLM hashes full blocks only, so a partial block has no hash to find", f.promptLen%f.b, f.b)
	}
	return "it stops one block short: the prompt fills its blocks exactly, and a lookup covers at most all tokens but the last, which must be computed to produce logits"
}

// decodeStep narrates one kept decode step.
func (f *forkText) decodeStep(d forkDecode) {
	full := f.promptLen / f.b
	switch {
	case f.mode == "beam" && d.token > 0:
		keptText := fmt.Sprintf("keeps the %d best candidates", f.n)
		f.step(d.view, fmt.Sprintf("Output token %d: beams fork and die", d.token+1), fmt.Sprintf("Beam search %s. %d %s no surviving continuation and %s freed, returning the blocks only %s; "+
			"%d %s forked from a beam that continues more than once, sharing every block it holds. Then every beam writes its token: %d %s on write, and the blocks in use change by %+d. S1's table now holds %d blocks, %d of them shared.",
			keptText, d.dropped, kit.Plural(d.dropped, "beam had", "beams had"), kit.Plural(d.dropped, "was", "were"), kit.Plural(d.dropped, "it held", "they held"),
			d.forked, kit.Plural(d.forked, "survivor", "survivors"), d.newCopies, kit.Plural(d.newCopies, "copy", "copies"), d.newBlocks,
			len(d.view.rows[0].blocks), sharedCount(d.view.rows[0])),
			forkSubject{keptText, entry(d.view, 0, 0), "S1's first block"})
	case d.newCopies > 0:
		copyText, placeText := "copy it into a new block", "writes in place"
		f.step(d.view, fmt.Sprintf("Output token %d: copy on write", d.token+1), fmt.Sprintf("Each sample writes a different token. The shared partial block has reference count > 1, so the first %d writers each %s (the KV of its %d prompt tokens moves with it) and write there; "+
			"the last sample finds itself the only holder and %s. %d %s made, no tokens recomputed.", d.newCopies, copyText, f.promptLen%f.b, placeText, d.newCopies, kit.Plural(d.newCopies, "copy", "copies")),
			forkSubject{copyText, entry(d.view, 0, full), fmt.Sprintf("S1's copy: block %d", physOf(d.view, 0, full))},
			blockSubject(placeText, physOf(d.view, f.n-1, full), fmt.Sprintf("S%d writes in place", f.n))).Quiz =
			&lessons.Quiz{Question: fmt.Sprintf("Every sample now writes a token into the partial prompt block, which %d block tables share. What must the block manager do before the first write?", f.n),
				Kind: lessons.QuizTerm, Answer: "copy-on-write", Accept: []string{"cow", "copy on write"},
				Explain: "Copy-on-write: the writer gets a private copy of the shared block, so the others still see the prompt alone."}
	case d.token == 0:
		onlyText := "a block only it holds"
		j := len(d.view.rows[0].blocks) - 1
		f.step(d.view, "Output token 1: the samples diverge", fmt.Sprintf("Each sample writes a different token into %s; %d new %s.", onlyText, d.newBlocks, kit.Plural(d.newBlocks, "block was", "blocks were")),
			forkSubject{onlyText, entry(d.view, 0, j), fmt.Sprintf("S1's own block %d", physOf(d.view, 0, j))})
	default:
		privText := "each takes a private block"
		j := len(d.view.rows[0].blocks) - 1
		f.step(d.view, fmt.Sprintf("Output token %d: new blocks", d.token+1), fmt.Sprintf("The samples' last blocks filled, so %s: %d new. Shared prompt blocks stay shared.", privText, d.newBlocks),
			forkSubject{privText, entry(d.view, 0, j), fmt.Sprintf("S1's new block %d", physOf(d.view, 0, j))})
	}
}

// horizonWords names the decode steps the comparison averages over.
func (r cowForkRun) horizonWords() string {
	if r.horizon == r.output {
		return fmt.Sprintf("the %d decode steps", r.output)
	}
	return fmt.Sprintf("the first %d of the %d decode steps (the lesson's work bound)", r.horizon, r.output)
}

// sharedCount counts the blocks of a table that other tables share.
func sharedCount(row forkRow) int {
	n := 0
	for _, sh := range row.shared {
		if sh {
			n++
		}
	}
	return n
}

// beamStep compares beam search with parallel sampling of the same prompt,
// both simulated, by the memory saved averaged over the decode steps: its
// figure is those two runs step by step, not the lesson's own run, whose
// block tables the steps before show.
func (f *forkText) beamStep() {
	beamName, parName := fmt.Sprintf("beam search, width %d", f.n), fmt.Sprintf("%d parallel samples", f.n)
	c := &scene.Chart{Type: scene.Line, XLabel: "decode step", YLabel: "memory saved", YUnit: "%",
		Note:   "Blocks saved against n independent copies, after each decode step of the two runs",
		Series: []scene.Series{{Name: beamName}, {Name: parName}}}
	for i, y := range f.beamCurve {
		c.Series[0].X, c.Series[0].Y = append(c.Series[0].X, float64(i+1)), append(c.Series[0].Y, kit.Round2(100*y))
	}
	for i, y := range f.parallelCurve {
		c.Series[1].X, c.Series[1].Y = append(c.Series[1].X, float64(i+1)), append(c.Series[1].Y, kit.Round2(100*y))
	}
	sc := kit.MainScene(scene.Scene{Kind: scene.KindChart, ID: "beam-vs-parallel", Title: "Memory saved at each decode step: beam search and parallel sampling", Chart: c})
	text := fmt.Sprintf("Run the same prompt once more as beam search of width %d and once as %d parallel samples, and average the memory saved over %s: beam search saves %.1f%%, parallel sampling %.1f%%. ",
		f.n, f.n, f.horizonWords(), 100*f.beamSaved, 100*f.parallelSaved)
	var mentions []scene.Mention
	if last := len(f.beamCurve) - 1; last >= 0 && last == len(f.parallelCurve)-1 {
		beamEnd := fmt.Sprintf("beam search %.1f%%", 100*f.beamCurve[last])
		parEnd := fmt.Sprintf("parallel sampling %.1f%%", 100*f.parallelCurve[last])
		text += fmt.Sprintf("The chart draws both runs step by step (the block tables of the steps before are this lesson's %s run): after the last step, %s and %s. ", modeWords(f.mode), beamEnd, parEnd)
		bRef, pRef := "point:"+beamName+":"+strconv.Itoa(last), "point:"+parName+":"+strconv.Itoa(last)
		sc.Marks = append(sc.Marks, kit.MarkRef(bRef, beamEnd), kit.MarkRef(pRef, parEnd))
		mentions = []scene.Mention{kit.Mention(beamEnd, sc.ID, bRef), kit.Mention(parEnd, sc.ID, pRef)}
	}
	text += "Beams share the prompt and whatever output prefix the survivors still have in common, and a dead beam frees its private blocks; parallel samples share only the prompt, and every output token is private. The vLLM paper measured 37.6%–55.2% against 6.1%–9.8%."
	f.steps = append(f.steps, lessons.Step{Title: "Beam search beside parallel sampling", Narration: text, Scenes: []scene.Scene{sc}, Mentions: mentions, Cursor: float64(len(f.steps))})
}

func (r cowForkRun) metrics() []lessons.Metric {
	st := r.stats
	return []lessons.Metric{
		{Key: "blocks_shared", Label: "Blocks in use with sharing (end)", Unit: "blocks", Better: lessons.LowerIsBetter, Value: float64(st.inUse)},
		{Key: "blocks_unshared", Label: "Blocks n independent copies would use (end)", Unit: "blocks", Value: float64(st.unshared)},
		{Key: "memory_saved_pct", Label: "Memory saved at the end", Unit: "%", Better: lessons.HigherIsBetter, Value: kit.Round2(100 * savedFrac(st.inUse, st.unshared))},
		{Key: "memory_saved_after_fork_pct", Label: "Memory saved once every sample has its prompt", Unit: "%", Better: lessons.HigherIsBetter, Value: kit.Round2(100 * savedFrac(st.afterFork, st.unsharedAfterFork))},
		{Key: "copies", Label: "Copy-on-write block copies", Unit: "block copies", Value: float64(st.copies)},
		{Key: "recomputed_tokens", Label: "Prompt tokens recomputed by samples 2..n", Unit: "tokens", Better: lessons.LowerIsBetter, Value: float64(st.recomputed)},
		{Key: "beam_saved_mean_pct", Label: "Memory saved averaged over the decode steps, beam search of width n", Unit: "%", Better: lessons.HigherIsBetter, Value: kit.Round2(100 * r.beamSaved)},
		{Key: "parallel_saved_mean_pct", Label: "Memory saved averaged over the decode steps, n parallel samples", Unit: "%", Better: lessons.HigherIsBetter, Value: kit.Round2(100 * r.parallelSaved)},
	}
}

func (r cowForkRun) claims() []lessons.Claim {
	return []lessons.Claim{{
		What:    "Children share the parent's prompt blocks and allocate new blocks only for unique output tokens",
		Article: "stated (Part 14 §3.1)",
		Model:   claimModel(r.mode, r.stats, r.promptLen, r.b),
		Why:     "The article describes vLLM v0's copy-on-write; vLLM v1 replaced it with prefix caching, which shares only full blocks.",
	}, {
		What:    "Memory saved by sharing",
		Article: "vLLM paper (OPT-13B, Alpaca): 6.1%–9.8% parallel sampling, 37.6%–55.2% beam search (measured; §6.3, Fig. 15)",
		Model:   fmt.Sprintf("%.2f%% for this prompt, n = %d, %d output tokens each", 100*savedFrac(r.stats.inUse, r.stats.unshared), r.n, r.output),
		Why:     "The paper averages over a whole serving run where outputs are long and requests come and go; this is one request at its end. Longer outputs per sample shrink the shared share.",
	}, {
		What:    "Beam search shares far more than parallel sampling",
		Article: "vLLM paper (https://arxiv.org/abs/2309.06180, §6.3): 37.6%–55.2% saved for beam search against 6.1%–9.8% for parallel sampling (Alpaca, ShareGPT)",
		Model:   fmt.Sprintf("averaged over %s of this request, width n = %d: beam search %.1f%%, parallel sampling %.1f%%", r.horizonWords(), r.n, 100*r.beamSaved, 100*r.parallelSaved),
		Why:     "Beams that survive share the prompt and the output prefix they still have in common, and dead beams free theirs, so the shared share stays high; parallel samples share only the prompt. The lab's survivors are drawn, not scored by a model, and one request stands for the paper's traces.",
	}}
}

func savedFrac(inUse, unshared int) float64 {
	if unshared == 0 {
		return 0
	}
	return 1 - float64(inUse)/float64(unshared)
}

func claimModel(mode string, st forkStats, prompt, b int) string {
	if mode == "beam" {
		return fmt.Sprintf("holds for beams too: a fork shares every block, the partial one included, and copies on first write (%d copies; %d beams forked, %d freed)", st.copies, st.forks, st.dropped)
	}
	if mode == "cow" {
		if prompt%b == 0 {
			return "holds exactly: the prompt ends on a block boundary, so no shared block is ever written"
		}
		return fmt.Sprintf("holds, except that the shared partial prompt block is copied on first write (%d copies)", st.copies)
	}
	return fmt.Sprintf("partly: only full prompt blocks are shared; each sample recomputes and stores its own partial block (%d tokens recomputed in all)", st.recomputed)
}

// modeWords names a sharing mode in the narration.
func modeWords(mode string) string {
	switch mode {
	case "beam":
		return "beam search"
	case "prefix":
		return "prefix-caching"
	}
	return "copy-on-write parallel sampling"
}
