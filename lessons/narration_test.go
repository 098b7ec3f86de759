package lessons

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/core/allocator"
	"github.com/inferlab/inferlab/core/cudagraph"
	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/record"
	"github.com/inferlab/inferlab/core/router"
	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/core/specdec"
	"github.com/inferlab/inferlab/core/workload"
)

// Issue 11's property test: for random accepted knob sets (seeded), every
// count a lesson narrates (running requests, cached tokens, blocks,
// sequences that fit) equals the simulated state it claims to report.
// Each lesson's entry runs its typed run (run<Lesson>) and compares the
// fields its narration prints with the core's state, recomputed from that
// state (the steps, the pools, the index, a fresh pool of the size vLLM
// would allocate) rather than read back from the same field. A registered
// lesson without an entry fails the test: a new lesson must add one.
//
// Each checker is a plain function of the typed run, so a test can feed it
// a run whose narrated count was altered and see it complain
// (TestNarrationChecksCatchMismatches).
// narrationSets is how many random knob sets each lesson is checked with.
var narrationSets, narrationSeed = 8, uint64(17)

var narrationChecks = map[string]func(v Values) ([]string, error){
	"kv-budget": func(v Values) ([]string, error) {
		r, err := runKVBudget(v)
		return kvBudgetNarration(r), err
	},
	"garage": func(v Values) ([]string, error) {
		r, err := runGarage(v)
		return garageNarration(r), err
	},
	"block-table": func(v Values) ([]string, error) {
		r, err := runBlockTable(v)
		return blockTableNarration(r), err
	},
	"cow-fork": func(v Values) ([]string, error) {
		r, err := runCowFork(v)
		return cowForkNarration(r), err
	},
	"prefix-cache": func(v Values) ([]string, error) {
		r, err := runPrefixCache(v)
		if err != nil {
			return nil, err
		}
		return prefixCacheNarration(r), nil
	},
	"batching": func(v Values) ([]string, error) {
		r, err := runBatching(v)
		return batchingNarration(r), err
	},
	"chunked-prefill": func(v Values) ([]string, error) {
		r, err := runChunkedPrefill(v)
		return chunkedPrefillNarration(r), err
	},
	"cuda-graphs": func(v Values) ([]string, error) {
		r, err := runCUDAGraphs(v)
		return cudaGraphsNarration(r), err
	},
	"roofline": func(v Values) ([]string, error) {
		r, err := runRoofline(v)
		return rooflineNarration(r), err
	},
	"speculative-decoding": func(v Values) ([]string, error) {
		r, err := runSpecDecoding(v)
		return specNarration(r, v), err
	},
	"smart-routing": func(v Values) ([]string, error) {
		r, err := runSmartRouting(v)
		if err != nil {
			return nil, err
		}
		return smartRoutingNarration(r), nil
	},
	"disaggregation": func(v Values) ([]string, error) {
		r, err := runDisaggregation(v)
		if err != nil {
			return nil, err
		}
		return disaggNarration(r), nil
	},
	"kv-tiers": func(v Values) ([]string, error) {
		r, err := runKVTiers(v)
		if err != nil {
			return nil, err
		}
		return kvTiersNarration(r), nil
	},
	"measuring": func(v Values) ([]string, error) {
		r, err := runMeasuring(v)
		return measuringNarration(r), err
	},
	"sandbox": func(v Values) ([]string, error) {
		w, cut := sandboxGenerated(v)
		r, err := runSandbox(v, w, "")
		if err != nil {
			return nil, err
		}
		r.cut = cut
		return sandboxNarration(r, sandboxDraw(v), w), nil
	},
}

func TestNarratedCountsMatchTheSimulation(t *testing.T) {
	for _, l := range All() {
		check, ok := narrationChecks[l.Slug]
		if !ok {
			t.Errorf("%s has no entry in narrationChecks: add a check that its narrated counts equal the simulated state", l.Slug)
			continue
		}
		t.Run(l.Slug, func(t *testing.T) {
			t.Parallel()
			n := narrationSets
			if testing.Short() {
				n = 2
			}
			accepted := 0
			for _, set := range append([]map[string]string{{}}, randomKnobSets(l, n, narrationSeed)...) {
				v, errs := l.Resolve(set)
				if len(errs) > 0 || (l.Check != nil && l.Check(v) != nil) {
					continue // refused: the contract test's business
				}
				accepted++
				problems, err := check(v)
				if err != nil {
					t.Errorf("%v: accepted by Check, then %v", set, err)
				}
				for _, p := range problems {
					t.Errorf("%v: %s", set, p)
				}
			}
			if accepted == 0 {
				t.Fatal("no knob set was accepted")
			}
		})
	}
}

// problems collects what a checker found.
type problems []string

func (p *problems) addf(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

// narrates reports whether some step's narration contains s.
func narrates(s *Script, sub string) bool {
	return slices.ContainsFunc(s.Steps, func(st Step) bool { return strings.Contains(st.Narration, sub) })
}

// ---- kv-budget: the pool's blocks hold what the narration says ----

func kvBudgetNarration(r kvBudgetRun) (out problems) {
	p, b := r.pool, r.budget
	per := int64(b.BlockSize) * p.BytesPerToken
	if p.Tokens != p.Blocks*int64(b.BlockSize) || p.Blocks*per > p.Available || (p.Blocks+1)*per <= p.Available {
		out.addf("%d blocks, %d tokens of %d B from %d B available: not the whole blocks that fit", p.Blocks, p.Tokens, per, p.Available)
	}
	// "Maximum concurrency": requests of max_model_len tokens, placed in a
	// paged pool of the narrated blocks.
	pool, err := allocator.NewPaged(int(p.Blocks), b.BlockSize)
	if err != nil {
		out.addf("pool of %d blocks: %v", p.Blocks, err)
		return out
	}
	fit := 0
	for fit < 100_000 && pool.AllocateSlots(&allocator.Request{ID: fit}, b.MaxModelLen) == nil {
		fit++
	}
	if fit != int(math.Floor(p.Concurrency)) {
		out.addf("narrated concurrency %.2f, but %d requests of %d tokens fit the %d blocks", p.Concurrency, fit, b.MaxModelLen, p.Blocks)
	}
	if s := r.script(); !narrates(s, fmt.Sprintf("holds %s blocks", comma(int(p.Blocks)))) || !narrates(s, fmt.Sprintf("GPU KV cache size: %s tokens", comma(int(p.Tokens)))) {
		out.addf("the narration does not state the %d blocks and %d tokens", p.Blocks, p.Tokens)
	}
	return out
}

// ---- garage: the ticks the narration reads are the pools' state ----

func garageNarration(r garageRun) (out problems) {
	for _, t := range r.ticks {
		snap, ok := r.served.snaps[t]
		if !ok {
			out.addf("tick %d is narrated but was not captured", t)
			continue
		}
		if g, ok := r.served.paged.At(t); ok {
			owners, stored := map[int]bool{}, 0
			for i, o := range snap.owners {
				if o >= 0 {
					owners[o] = true
				}
				stored += snap.used[i]
			}
			if g.Usage.Resident != len(owners) || g.Usage.Stored != stored {
				out.addf("tick %d, paged: narrated %d resident, %d tokens; the pool holds %d requests, %d tokens", t, g.Usage.Resident, g.Usage.Stored, len(owners), stored)
			}
		}
		if g, ok := r.served.contig.At(t); ok {
			tokens, reserved := 0, 0
			for _, run := range snap.runs {
				tokens += run.Tokens
				reserved += run.Len
			}
			if g.Usage.Resident != len(snap.runs) || g.Usage.Stored != tokens || g.Usage.Reserved != reserved {
				out.addf("tick %d, contiguous: narrated %d resident, %d tokens in %d reserved; the pool holds %d runs, %d tokens in %d",
					t, g.Usage.Resident, g.Usage.Stored, g.Usage.Reserved, len(snap.runs), tokens, reserved)
			}
		}
	}
	// The most requests ever resident (the admitted figures) are what the
	// ticks recorded.
	for _, h := range []struct {
		name   string
		hist   *record.History
		figure int
	}{{"paged", &r.served.paged, r.figures.pagedAdmitted}, {"contiguous", &r.served.contig, r.figures.contigAdmitted}} {
		peak := 0
		for i := range h.hist.Len() {
			g, _ := h.hist.At(i)
			peak = max(peak, g.Usage.Resident)
		}
		if peak != h.figure {
			out.addf("%s: narrated %d admitted at once, the ticks peak at %d", h.name, h.figure, peak)
		}
	}
	return out
}

// ---- block-table: the translation narrated is the pool's table ----

func blockTableNarration(r blockTableRun) (out problems) {
	a := r.addr
	if len(r.table) != allocator.BlocksNeeded(r.length, r.b) {
		out.addf("A's table has %d entries for %d tokens of %d-token blocks", len(r.table), r.length, r.b)
	}
	if a.Logical != r.target/r.b || a.Offset != r.target%r.b || a.Logical >= len(r.table) || a.Physical != r.table[a.Logical] {
		out.addf("token %d: narrated logical %d, offset %d, physical %d; the table says %v", r.target, a.Logical, a.Offset, a.Physical, r.table)
	}
	if want := int64(a.Physical)*int64(r.b)*r.sLayer + int64(a.Offset)*r.sLayer; r.layerAddr != want {
		out.addf("narrated byte offset %d, the block and offset give %d", r.layerAddr, want)
	}
	for _, b := range r.table {
		if b < 0 || b >= len(r.final.blocks) || r.final.blocks[b].Owner != requestA {
			out.addf("A's table lists block %d, which the pool does not give A", b)
		}
	}
	for _, o := range r.opened {
		if o.token != o.logical*r.b || len(o.table) != o.logical+1 || !slices.Equal(o.table, r.table[:len(o.table)]) {
			out.addf("token %d opened logical block %d with table %v; A's final table is %v", o.token, o.logical, o.table, r.table)
		}
	}
	return out
}

// ---- cow-fork: the sharing counts are the pool's ----

func cowForkNarration(r cowForkRun) (out problems) {
	f := r.final
	inUse, unshared := 0, 0
	for _, b := range f.blocks {
		if b.Refs > 0 {
			inUse++
		}
	}
	for _, row := range f.rows {
		unshared += allocator.BlocksNeeded(row.tokens, r.b)
		if row.tokens != r.promptLen+r.output {
			out.addf("sample %d holds %d tokens, want the %d-token prompt and %d outputs", row.req+1, row.tokens, r.promptLen, r.output)
		}
		for i, b := range row.blocks {
			if row.shared[i] != (f.blocks[b].Refs > 1) {
				out.addf("sample %d's block %d drawn shared %v with %d references", row.req+1, b, row.shared[i], f.blocks[b].Refs)
			}
		}
	}
	if len(f.rows) != r.n || r.stats.inUse != inUse || r.stats.unshared != unshared || r.stats.copies != f.copies {
		out.addf("narrated %d samples, %d blocks in use, %d without sharing, %d copies; the pool: %d samples, %d, %d, %d",
			r.n, r.stats.inUse, r.stats.unshared, r.stats.copies, len(f.rows), inUse, unshared, f.copies)
	}
	if r.prefillBlocks != allocator.BlocksNeeded(r.promptLen, r.b) {
		out.addf("S1's prompt took %d blocks, want ⌈%d/%d⌉", r.prefillBlocks, r.promptLen, r.b)
	}
	return out
}

// ---- prefix-cache: cached and reused tokens are the tree's ----

func prefixCacheNarration(r *prefixCacheRun) (out problems) {
	for i, f := range r.frames {
		total, protected := 0, 0
		for _, n := range f.nodes {
			if n.Parent < 0 {
				continue
			}
			total += len(n.Key)
			if n.LockRef > 0 {
				protected += len(n.Key)
			}
		}
		if f.total != total || f.protected != protected || total > r.capacity || f.nodeCount != len(f.nodes) {
			out.addf("frame %d: narrated %d cached (%d protected, %d nodes) of %d; the tree holds %d (%d protected, %d nodes)",
				i, f.total, f.protected, f.nodeCount, r.capacity, total, protected, len(f.nodes))
		}
	}
	// Each of R1–R4 matched, in the tree as it stood before it, the longest
	// cached prefix of its tokens: what it reused was resident.
	reused := 0
	for i, s := range r.r {
		want := treeMatch(r.frames[i].nodes, r.voc.encode(r.requests[i]))
		if s.Matched != want {
			out.addf("R%d: narrated %d tokens matched, the tree before it held a %d-token prefix of it", i+1, s.Matched, want)
		}
		if !s.Waits {
			reused += s.Matched
		}
	}
	if r.frames[4].reused != reused {
		out.addf("after R4 the narration counts %d reused tokens, R1–R4 matched %d", r.frames[4].reused, reused)
	}
	return out
}

// treeMatch is the longest prefix of ids spelled by a path of the tree.
func treeMatch(nodes []router.NodeView, ids []int) int {
	children := map[int][]router.NodeView{}
	root := -1
	for _, n := range nodes {
		if n.Parent < 0 {
			root = n.ID
			continue
		}
		children[n.Parent] = append(children[n.Parent], n)
	}
	matched, at := 0, root
	for {
		next := -1
		for _, c := range children[at] {
			k := 0
			for k < len(c.Key) && matched+k < len(ids) && c.Key[k] == ids[matched+k] {
				k++
			}
			if k == 0 {
				continue
			}
			matched += k
			if k == len(c.Key) {
				next = c.ID
			}
			break
		}
		if next < 0 {
			return matched
		}
		at = next
	}
}

// ---- batching: every server served every request within its slots ----

func batchingNarration(r batchingRun) (out problems) {
	for _, s := range []*servedRun{r.static, r.dynamic, r.cont, r.wide} {
		if len(s.reqs) != r.requests {
			out.addf("%s: narrated %d requests, served %d", s.name, r.requests, len(s.reqs))
		}
		if s != r.wide && s.slots != r.slots {
			out.addf("%s: %d slots, the knob says %d", s.name, s.slots, r.slots)
		}
		// The slot lanes never hold two requests at once.
		bySlot := map[int][]slotSpan{}
		for _, sp := range s.spans {
			if sp.slot < 0 || sp.slot >= s.slots {
				out.addf("%s: a span in slot %d of %d", s.name, sp.slot, s.slots)
			}
			bySlot[sp.slot] = append(bySlot[sp.slot], sp)
		}
		for sl, spans := range bySlot {
			slices.SortFunc(spans, func(a, b slotSpan) int { return cmp.Compare(a.start, b.start) })
			for i := 1; i < len(spans); i++ {
				if spans[i].start < spans[i-1].end-1e-9 {
					out.addf("%s: slot %d holds R%d and R%d at once", s.name, sl+1, spans[i-1].req+1, spans[i].req+1)
				}
			}
		}
		if s.batches == 0 {
			continue // continuous: the scheduler admits into free slots (checked above)
		}
		// Request-level servers: a request holds its slot from admission to
		// its return, and no more requests than slots are in at once.
		type edge struct {
			at    float64
			delta int
		}
		var edges []edge
		for _, q := range s.reqs {
			if q.slot < 0 || q.slot >= s.slots {
				out.addf("%s: R%d in slot %d of %d", s.name, q.id+1, q.slot, s.slots)
			}
			edges = append(edges, edge{q.admitted, 1}, edge{q.returns, -1})
		}
		slices.SortFunc(edges, func(a, b edge) int {
			if a.at != b.at {
				return cmp.Compare(a.at, b.at)
			}
			return a.delta - b.delta // a return frees its slot before an admission at the same instant
		})
		busy, peak := 0, 0
		for _, e := range edges {
			busy += e.delta
			peak = max(peak, busy)
		}
		if peak > s.slots {
			out.addf("%s: %d requests at once in %d slots", s.name, peak, s.slots)
		}
		members := 0
		for _, g := range s.groups {
			members += len(g.members)
			if len(g.members) > s.slots {
				out.addf("%s: a batch of %d in %d slots", s.name, len(g.members), s.slots)
			}
		}
		if s.batches != len(s.groups) || (s.batches > 0 && members != len(s.reqs)) {
			out.addf("%s: narrated %d batches, %d ran holding %d requests", s.name, s.batches, len(s.groups), members)
		}
	}
	return out
}

// ---- chunked-prefill: the running decodes are the scheduler's ----

func chunkedPrefillNarration(r chunkedPrefillRun) (out problems) {
	for _, c := range []struct {
		name    string
		run     *prefillRun
		chunked bool
	}{{"whole", r.whole, false}, {"chunked", r.chunk, true}} {
		p := c.run
		preempted, chunks := 0, 0
		for _, st := range p.steps {
			preempted += len(st.Preempted)
			long := false
			for _, w := range st.Work {
				if w.Req == longID && w.Prefill {
					long = true
				}
			}
			if st.Start < p.arrival {
				continue
			}
			if long {
				chunks++
				// "each step first serves the N running decodes": every
				// step carrying the prompt carries them all.
				if st.DecodeTokens != p.running {
					out.addf("%s: a step with the prompt carried %d decodes, the narration says %d", c.name, st.DecodeTokens, p.running)
				}
				if c.chunked && st.PrefillTokens > r.budget-p.running {
					out.addf("%s: a chunk of %d tokens, the narration says up to %d", c.name, st.PrefillTokens, r.budget-p.running)
				}
			}
		}
		if p.running != r.decodes || preempted != p.preemptions || preempted != 0 {
			out.addf("%s: narrated %d decodes running (knob %d), %d preemptions; the steps preempted %d", c.name, p.running, r.decodes, p.preemptions, preempted)
		}
		if chunks != p.chunks || (!c.chunked && chunks != 1) {
			out.addf("%s: narrated %d chunks, %d steps carried the prompt", c.name, p.chunks, chunks)
		}
	}
	return out
}

// ---- cuda-graphs: what fits and what pads ----

func cudaGraphsNarration(r graphsRun) (out problems) {
	e := r.e
	// "Beyond batch N the KV cache … would not fit": N sequences of
	// context + 1 tokens in the paged pool vLLM would allocate, N + 1 not.
	per := allocator.BlocksNeeded(r.context+1, 16)
	fits := func(n int) bool {
		p, err := hardware.Fit{GPU: e.gpu, Model: e.model, TP: e.tp, BatchedTokens: e.budget}.Pool(16)
		return err == nil && int64(n*per) <= p.Blocks-1
	}
	if (r.kvFit > 0 && !fits(r.kvFit)) || (r.kvFit < e.seqs && fits(r.kvFit+1)) {
		out.addf("narrated %d sequences of %d tokens fit; the pool (%d blocks each) says otherwise", r.kvFit, r.context+1, per)
	}
	d := e.dispatcher(cudagraph.FullAndPiecewise)
	for n := 1; n <= len(r.padTo); n++ {
		want := -1
		for _, s := range d.Sizes {
			if s >= n {
				want = s
				break
			}
		}
		if r.padTo[n-1] != want {
			out.addf("%d tokens narrated to pad to %d, the smallest captured size ≥ it is %d", n, r.padTo[n-1], want)
		}
	}
	cross := 0
	for _, p := range r.sweep {
		if slices.Contains(d.Sizes, p.batch) && p.eager <= 1.02*p.full {
			cross = p.batch
			break
		}
	}
	if cross != r.crossover {
		out.addf("narrated crossover at batch %d, the sweep's first is %d", r.crossover, cross)
	}
	if c := e.dispatcher(e.mode).Capture(); c.FullGraphs+c.PiecewiseGraphs != r.capture.FullGraphs+r.capture.PiecewiseGraphs {
		out.addf("narrated %d graphs, the dispatcher captures %d", r.capture.FullGraphs+r.capture.PiecewiseGraphs, c.FullGraphs+c.PiecewiseGraphs)
	}
	return out
}

// ---- roofline: the sequences whose KV fits ----

func rooflineNarration(r rooflineRun) (out problems) {
	per := allocator.BlocksNeeded(r.context+1, 16)
	fits := func(n int) bool {
		p, err := hardware.Fit{GPU: r.gpu, Model: r.model, FixedTP: true, BatchedTokens: n}.Pool(16)
		return err == nil && int64(n*per) <= p.Blocks-1
	}
	if (r.maxBatch > 0 && !fits(r.maxBatch)) || (r.maxBatch < maxCrossoverBatch && fits(r.maxBatch+1)) {
		out.addf("narrated: the KV cache holds at most %d sequences of %d tokens; vLLM's paged pool (%d blocks each) says otherwise", r.maxBatch, r.context+1, per)
	}
	for _, b := range r.sweepBatches {
		if b > r.maxBatch {
			out.addf("the sweep prices batch %d, beyond the %d that fit", b, r.maxBatch)
		}
	}
	return out
}

// ---- speculative-decoding: the strip is the acceptance process ----

func specNarration(r specRun, v Values) (out problems) {
	a := specdec.NewAcceptance(r.alpha, uint64(v.Int("seed")))
	pos, total := 1, 0
	for i := 0; i < r.roundsDrawn; i++ {
		k := a.Verify(r.gamma)
		if i < len(r.strip) && (r.strip[i].accepted != k || r.strip[i].start != pos) {
			out.addf("round %d: narrated %d accepted from position %d, the process drew %d from %d", i+1, r.strip[i].accepted, r.strip[i].start, k, pos)
		}
		pos += k + 1
		total += k + 1
	}
	if got := float64(total) / float64(r.roundsDrawn); math.Abs(got-r.measured) > 1e-12 {
		out.addf("narrated %.4f tokens per pass, the rounds drawn average %.4f", r.measured, got)
	}
	// The sweep's largest batch holds the target's and the draft's KV beside
	// each other, the next does not.
	fits := func(n int) bool {
		return draftFit(r.gpu, r.draft, n, r.context, r.gamma).Check() == nil && targetFit(r.gpu, r.model, r.draft, r.tp, n, r.context, r.gamma).Check() == nil
	}
	if (r.maxBatch > 0 && !fits(r.maxBatch)) || (r.maxBatch < 1024 && fits(r.maxBatch+1)) {
		out.addf("narrated largest batch %d does not bound what fits", r.maxBatch)
	}
	return out
}

// ---- smart-routing: the hits narrated are the index's, and real ----

func smartRoutingNarration(r *smartRoutingRun) (out problems) {
	shown := r.shownIndex()
	for k, rt := range r.shownRoutes() {
		view := r.watch.views[shown[k]]
		if rt.Group >= 0 && view.perPrompt[rt.Worker][rt.Group] != rt.Overlap {
			out.addf("R%d: narrated %d cached blocks on W%d, the index held %d of its prompt", rt.Request+1, rt.Overlap, rt.Worker+1, view.perPrompt[rt.Worker][rt.Group])
		}
		// The index never claims more than the worker's cache gave back.
		if got := r.kv.res.Requests[rt.Request].CachedHit; got < 16*rt.Overlap {
			out.addf("R%d: the index said W%d caches %d blocks, the worker found %d tokens", rt.Request+1, rt.Worker+1, rt.Overlap, got)
		}
	}
	for _, run := range []routingRun{r.rr, r.kv, r.rnd, r.ll, r.aff, r.kvHot} {
		hits, served := 0, 0
		for _, m := range run.res.Requests {
			if m.CachedHit > 0 {
				hits++
			}
		}
		for _, w := range run.res.Workers {
			served += w.Requests
		}
		if want := float64(hits) / float64(len(run.res.Requests)); math.Abs(run.hitRequests-want) > 1e-12 || served != len(run.res.Requests) {
			out.addf("%s: narrated %.1f%% of requests hit; %d of %d found a prefix, workers served %d", run.name, 100*run.hitRequests, hits, len(run.res.Requests), served)
		}
	}
	return out
}

// ---- disaggregation: who served what, within the engines' limits ----

func disaggNarration(r *disaggRun) (out problems) {
	c := r.cmp
	if len(c.Monolithic.Requests) != len(r.reqs) || len(c.Disagg.Requests) != len(r.reqs) {
		out.addf("narrated %d requests; monolithic served %d, disaggregated %d", len(r.reqs), len(c.Monolithic.Requests), len(c.Disagg.Requests))
	}
	remote := 0
	for _, j := range c.Disagg.Journeys {
		if j.Remote {
			remote++
		}
	}
	if remote != c.Disagg.Remote || c.Disagg.Remote+c.Disagg.Local != len(r.reqs) || (!r.conditional && remote != len(r.reqs)) {
		out.addf("%d remote + %d local narrated; %d journeys went remote of %d", c.Disagg.Remote, c.Disagg.Local, remote, len(r.reqs))
	}
	out = append(out, disaggStepLimits(r)...)
	if r.stallI >= 0 {
		st := c.Monolithic.DecodeSteps[r.stallW][r.stallI]
		if st.DecodeTokens != r.stallDecodes || st.PrefillTokens == 0 {
			out.addf("narrated stall: %d decodes beside a prompt; the step carried %d decodes and %d prompt tokens", r.stallDecodes, st.DecodeTokens, st.PrefillTokens)
		}
		for _, steps := range c.Monolithic.DecodeSteps {
			for _, o := range steps {
				if o.PrefillTokens > 0 && o.DecodeTokens > 0 && o.Duration > st.Duration {
					out.addf("narrated the worst stall at %.1f ms; a %.1f ms step also carried both", 1000*st.Duration, 1000*o.Duration)
				}
			}
		}
	}
	if r.probeIdx >= 0 {
		j := c.Disagg.Journeys[r.probeIdx]
		if !j.Remote || len(r.reqs[r.probeIdx].PromptIDs) != r.probePrompt || r.probeBlocks != allocator.BlocksNeeded(r.probePrompt, disaggBlock) {
			out.addf("the followed request: remote %v, %d prompt tokens in %d blocks; narrated %d in %d", j.Remote, len(r.reqs[r.probeIdx].PromptIDs), allocator.BlocksNeeded(len(r.reqs[r.probeIdx].PromptIDs), disaggBlock), r.probePrompt, r.probeBlocks)
		}
	}
	return out
}

// disaggStepLimits checks every worker's steps against the narrated
// max_num_seqs and token budget.
func disaggStepLimits(r *disaggRun) (out problems) {
	c := r.cmp
	for _, res := range []struct {
		name  string
		steps [][]scheduler.Step
	}{{"monolithic", c.Monolithic.DecodeSteps}, {"prefill", c.Disagg.PrefillSteps}, {"decode", c.Disagg.DecodeSteps}} {
		for w, steps := range res.steps {
			for _, st := range steps {
				if st.Running > r.seqs || st.PrefillTokens+st.DecodeTokens > r.budget {
					out.addf("%s worker %d: a step ran %d requests and %d tokens; narrated limits %d and %d", res.name, w+1, st.Running, st.PrefillTokens+st.DecodeTokens, r.seqs, r.budget)
				}
			}
		}
	}
	return out
}

// ---- kv-tiers: the prefix and the GPU pool ----

func kvTiersNarration(r *kvTiersRun) (out problems) {
	if r.prefix%kvTiersBlock != 0 || r.prefix+r.suffix != r.prompt || r.prefix >= r.prompt {
		out.addf("narrated prefix %d + rest %d of a %d-token prompt, in %d-token blocks", r.prefix, r.suffix, r.prompt, kvTiersBlock)
	}
	if want := float64(r.prefix) * r.sEntry; r.bytes != want {
		out.addf("narrated %g B of prefix KV, %d tokens of %g B are %g", r.bytes, r.prefix, r.sEntry, want)
	}
	// The G1 pool the picture states is the engine's, and a G1 hit means
	// the prefix is resident there.
	p, err := hardware.Fit{GPU: r.e.gpu, Model: r.e.model, FixedTP: true, BatchedTokens: kvTiersBudget}.Pool(kvTiersBlock)
	if err != nil || r.e.kvBlocks != int(p.Blocks)-1 {
		out.addf("G1 pool %d blocks, vLLM's is %d − 1 (%v)", r.e.kvBlocks, p.Blocks, err)
	}
	if r.prefix > r.e.kvBlocks*kvTiersBlock || r.maxN > r.e.kvBlocks*kvTiersBlock {
		out.addf("a %d-token prefix (search to %d) narrated resident in a %d-token G1 pool", r.prefix, r.maxN, r.e.kvBlocks*kvTiersBlock)
	}
	return out
}

// ---- measuring: what held requests back ----

func measuringNarration(r measuringRun) (out problems) {
	for _, p := range r.points {
		if p.peakRunning > r.seqs || p.atSeqs > p.queued || p.fullBudget > p.queued || (p.peakRunning < r.seqs && p.atSeqs > 0) {
			out.addf("%s: peak %d running of max_num_seqs %d, %d steps with a queue, %d at the limit, %d with the budget spent",
				rateText(p.rate), p.peakRunning, r.seqs, p.queued, p.atSeqs, p.fullBudget)
		}
		if p.sum.Preemptions != p.stepPreemptions {
			out.addf("%s: narrated %d preemptions, the steps preempted %d", rateText(p.rate), p.sum.Preemptions, p.stepPreemptions)
		}
		if p.missTTFT+p.missTPOT != p.sum.Requests-int(math.Round(p.sum.SLOAttainment*float64(p.sum.Requests))) {
			out.addf("%s: %d + %d requests miss the SLO, %.1f%% of %d meet it", rateText(p.rate), p.missTTFT, p.missTPOT, 100*p.sum.SLOAttainment, p.sum.Requests)
		}
		if p.sum.MeanRunningAtStep > float64(p.peakRunning) {
			out.addf("%s: %.1f running on average, at most %d", rateText(p.rate), p.sum.MeanRunningAtStep, p.peakRunning)
		}
	}
	return out
}

// ---- sandbox: the requests served and cut ----

func sandboxNarration(r *sandboxRun, drawn, served []workload.Request) (out problems) {
	if len(r.res.Requests) != r.requests || r.requests != len(served) {
		out.addf("narrated %d requests, the cluster served %d of %d", r.requests, len(r.res.Requests), len(served))
	}
	perWorker, preempted := 0, 0
	for _, w := range r.res.Workers {
		perWorker += w.Requests
		preempted += w.Summary.Preemptions
	}
	if perWorker != len(r.res.Requests) || preempted != r.preemptions {
		out.addf("narrated %d preemptions; the workers served %d requests and preempted %d", r.preemptions, perWorker, preempted)
	}
	cut := 0
	for i := range drawn {
		if drawn[i].Prompt != served[i].Prompt || drawn[i].Output != served[i].Output {
			cut++
		}
		if served[i].Prompt+served[i].Output > r.e.model.MaxPositions {
			out.addf("R%d: %d tokens on %d positions", i+1, served[i].Prompt+served[i].Output, r.e.model.MaxPositions)
		}
	}
	if cut != r.cut.requests {
		out.addf("narrated %d requests cut to the context, %d were", r.cut.requests, cut)
	}
	if r.e.kvBlocks+1 != int(r.e.pool.Blocks) {
		out.addf("the workers' pools: %d blocks, vLLM's %d less the null block", r.e.kvBlocks, r.e.pool.Blocks)
	}
	return out
}

// The checks fail when the narration and the state disagree: each case
// alters one narrated count of a default run and expects its checker to
// say so (the unaltered run passes). Before this test, two real
// mismatches were found this way: roofline and cuda-graphs counted the
// sequences whose KV fits in tokens, not in the paged pool's blocks (435
// and 425 sequences of 1,025 tokens on an H100, where vLLM's pools, sized
// at their token budgets, hold 428 and 419),
// and chunked-prefill without chunking narrated its long prompt "alongside
// the decodes" when its budget had made it wait for them (decodes 16,
// long_prompt 23,488 on an A100-40GB).
func TestNarrationChecksCatchMismatches(t *testing.T) {
	values := func(l *Lesson) Values {
		v, errs := l.Resolve(nil)
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		return v
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name  string
		check func(alter bool) []string
	}{
		{"chunked-prefill: one decode more narrated running", func(alter bool) []string {
			r, err := runChunkedPrefill(values(chunkedPrefill))
			must(err)
			if alter {
				r.chunk.running++
			}
			return chunkedPrefillNarration(r)
		}},
		{"prefix-cache: R2 narrated to match a token more than the tree held", func(alter bool) []string {
			r, err := runPrefixCache(values(prefixCache))
			must(err)
			if alter {
				r.r[1].Matched++
			}
			return prefixCacheNarration(r)
		}},
		{"prefix-cache: a frame narrating a token more cached than its tree", func(alter bool) []string {
			r, err := runPrefixCache(values(prefixCache))
			must(err)
			if alter {
				r.frames[5].total++
			}
			return prefixCacheNarration(r)
		}},
		{"garage: a paged tick narrating one token fewer than the pool holds", func(alter bool) []string {
			r, err := runGarage(values(garage))
			must(err)
			if alter {
				r.served.snaps[r.ticks[1]].used[0]++
			}
			return garageNarration(r)
		}},
		{"smart-routing: a route narrating a cached block more than the index held", func(alter bool) []string {
			r, err := runSmartRouting(values(smartRouting))
			must(err)
			if alter {
				r.kv.res.Routes[r.shownIndex()[2]].Overlap++
			}
			return smartRoutingNarration(r)
		}},
		{"roofline: one sequence more than the pool holds", func(alter bool) []string {
			r, err := runRoofline(values(roofline))
			must(err)
			if alter {
				r.maxBatch++
			}
			return rooflineNarration(r)
		}},
		{"measuring: a preemption the steps did not make", func(alter bool) []string {
			r, err := runMeasuring(values(measuring))
			must(err)
			if alter {
				r.points[0].sum.Preemptions++
			}
			return measuringNarration(r)
		}},
		{"sandbox: a request narrated cut that was not", func(alter bool) []string {
			v := values(sandbox)
			w, cut := sandboxGenerated(v)
			r, err := runSandbox(v, w, "")
			must(err)
			r.cut = cut
			if alter {
				r.cut.requests++
			}
			return sandboxNarration(r, sandboxDraw(v), w)
		}},
		{"kv-budget: a concurrency the blocks do not hold", func(alter bool) []string {
			r, err := runKVBudget(values(kvBudget))
			must(err)
			if alter {
				r.pool.Concurrency++
			}
			return kvBudgetNarration(r)
		}},
	}
	for _, c := range cases {
		if p := c.check(false); len(p) != 0 {
			t.Errorf("%s: the unaltered run fails: %v", c.name, p)
		}
		if p := c.check(true); len(p) == 0 {
			t.Errorf("%s: not caught", c.name)
		}
	}
}
