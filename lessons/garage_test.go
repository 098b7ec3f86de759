package lessons

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/scene"
)

func garageScript(t *testing.T, set map[string]string) *Script {
	t.Helper()
	s, _, err := garage.Run(set)
	if err != nil {
		t.Fatalf("garage %v: %v", set, err)
	}
	return s
}

// garageRunOf simulates garage with the given knobs and returns the typed run.
func garageRunOf(t *testing.T, set map[string]string) garageRun {
	t.Helper()
	v, err := garage.resolveChecked(set)
	if err != nil {
		t.Fatalf("garage %v: %v", set, err)
	}
	run, err := runGarage(v)
	if err != nil {
		t.Fatalf("garage %v: %v", set, err)
	}
	return run
}

func metric(t *testing.T, s *Script, key string) float64 {
	t.Helper()
	v, ok := s.Metric(key)
	if !ok {
		t.Fatalf("no metric %q", key)
	}
	return v
}

// With equal prompts, no output and more requests than fit, the peak counts
// follow from the pool geometry alone (issue #2's acceptance formula).
func TestGarageAdmittedFormula(t *testing.T) {
	for _, tc := range []struct{ pool, mc, b, l int }{
		{32768, 2048, 16, 1000}, {32768, 2048, 16, 1024}, {32768, 2048, 16, 1025},
		{10000, 1000, 8, 300}, {65536, 4096, 32, 4000}, {4096, 512, 1, 77}, {50000, 3000, 64, 65},
	} {
		set := map[string]string{
			"pool_tokens": fmt.Sprint(tc.pool), "max_context": fmt.Sprint(tc.mc), "block_size": fmt.Sprint(tc.b),
			"prompt_min": fmt.Sprint(tc.l), "prompt_max": fmt.Sprint(tc.l), "output_min": "0", "output_max": "0",
			"requests": "2000",
		}
		f := garageRunOf(t, set).figures
		wantC := tc.pool / tc.mc
		wantP := (tc.pool / tc.b) / ((tc.l + tc.b - 1) / tc.b)
		if f.contigAdmitted != wantC || f.pagedAdmitted != wantP {
			t.Errorf("%+v: %d contiguous and %d paged resident at once, want %d and %d", tc, f.contigAdmitted, f.pagedAdmitted, wantC, wantP)
		}
	}
}

func TestGarageDeterministic(t *testing.T) {
	set := map[string]string{"seed": "7", "reserve": "exact"}
	a, _ := json.Marshal(garageScript(t, set))
	b, _ := json.Marshal(garageScript(t, set))
	if string(a) != string(b) {
		t.Fatal("same parameters and seed gave different scripts")
	}
	c, _ := json.Marshal(garageScript(t, map[string]string{"seed": "8", "reserve": "exact"}))
	if string(a) == string(c) {
		t.Fatal("a different seed gave the same script; the seed is not used")
	}
}

// Over random setups: paged waste stays under its bound, paged never holds
// fewer requests than contiguous max-context reservations, and both pools
// serve every request.
func TestGarageProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 60; trial++ {
		b := 1 << r.IntN(7)
		pmin := 1 + r.IntN(600)
		pmax := pmin + r.IntN(600)
		omax := r.IntN(100)
		mc := pmax + omax + r.IntN(500)
		pool := max(mc, b) * (1 + r.IntN(12))
		for pool/b > maxGridBlocks {
			b *= 2
		}
		if (mc+b-1)/b > pool/b {
			pool = ((mc + b - 1) / b) * b
		}
		set := map[string]string{
			"block_size": fmt.Sprint(b), "max_context": fmt.Sprint(mc), "pool_tokens": fmt.Sprint(pool),
			"prompt_min": fmt.Sprint(pmin), "prompt_max": fmt.Sprint(pmax), "output_min": "0", "output_max": fmt.Sprint(omax),
			"requests": fmt.Sprint(1 + r.IntN(120)), "seed": fmt.Sprint(trial),
		}
		run := garageRunOf(t, set)
		f := run.figures
		if f.pagedWaste > f.wasteBound+0.01 {
			t.Errorf("%v: paged waste %.2f%% above bound %.2f%%", set, f.pagedWaste, f.wasteBound)
		}
		if f.pagedAdmitted < f.contigAdmitted {
			t.Errorf("%v: paged held %d requests, contiguous %d", set, f.pagedAdmitted, f.contigAdmitted)
		}
		for _, h := range []*poolHistory{&run.served.paged, &run.served.contig} {
			if served := finishedOnce(t, h); served != len(run.setup.reqs) {
				t.Errorf("%v: %d of %d requests served", set, served, len(run.setup.reqs))
			}
		}
		if s := run.script(); len(s.Steps) < 3 {
			t.Errorf("%v: only %d steps", set, len(s.Steps))
		}
	}
}

func TestGarageBadParams(t *testing.T) {
	for _, tc := range []struct {
		set  map[string]string
		key  string
		want string
	}{
		{map[string]string{"block_size": "0"}, "block_size", "1 to 256"},
		{map[string]string{"block_size": "sixteen"}, "block_size", "integer"},
		{map[string]string{"block_size": "16.5"}, "block_size", "integer"},
		{map[string]string{"requests": "1000000000"}, "requests", "1 to 2000"},
		{map[string]string{"prompt_min": "900", "prompt_max": "800"}, "prompt_min", "prompt_max"},
		{map[string]string{"output_min": "9", "output_max": "3"}, "output_min", "output_max"},
		{map[string]string{"max_context": "1024"}, "max_context", "prompt_max + output_max"},
		{map[string]string{"reserve": "some"}, "reserve", "max, pow2, exact"},
		{map[string]string{"pool_tokens": "131072", "block_size": "1"}, "pool_tokens", "4096 blocks"},
	} {
		_, _, err := garage.Run(tc.set)
		var pe *ParamError
		if !errors.As(err, &pe) {
			t.Errorf("%v: err = %v, want a ParamError", tc.set, err)
			continue
		}
		if pe.Key != tc.key || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), pe.Value) {
			t.Errorf("%v: error %q, want it to name %s, its value and %q", tc.set, err, tc.key, tc.want)
		}
	}
}

func TestGarageShowsArticleBesideModel(t *testing.T) {
	s := garageScript(t, nil)
	text, _ := json.Marshal(s.Claims)
	for _, want := range []string{"14 vs 31", "54.2% vs 98.9%", "1.46%"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("claims do not show the article's %q", want)
		}
	}
	if p := metric(t, s, "paged_admitted"); p < 2*metric(t, s, "contiguous_admitted") {
		t.Errorf("paged_admitted = %v, want at least twice the contiguous count", p)
	}
	last := s.Steps[len(s.Steps)-1]
	if !strings.Contains(last.Narration, "paged pool held up to") {
		t.Errorf("the last step is not the comparison: %q", last.Title)
	}
}

// The defaults are the article's setup (issue 11 item 5): its script's pool
// (4 × 512 blocks × 16) and stream (40 requests, prompts 512–1,536, outputs
// 32–64), with the 8,192-token reservations its text describes. That pool
// holds 4 such reservations, and the waste lands inside the article's
// 60–90%; the lesson says it runs the article's setup, and the claims say
// why the script's typed-in 14 streams and 54.2% differ.
func TestGarageRunsTheArticleSetup(t *testing.T) {
	run := garageRunOf(t, nil)
	s := run.setup
	if s.pool != 4*512*16 || s.b != 16 || len(s.reqs) != 40 || s.reserve.MaxContext != 8192 || s.reserve.Policy != "max" ||
		s.promptMin < 512 || s.promptMax > 1536 || s.outputMin < 32 || s.outputMax > 64 || !run.isArticle {
		t.Fatalf("defaults %+v are not the article's setup", s)
	}
	f := run.figures
	if f.contigAdmitted != 32768/8192 || f.contigWaste < 60 || f.contigWaste > 90 {
		t.Errorf("article setup: %d contiguous streams, %.2f%% waste; want 4 and inside 60–90%%", f.contigAdmitted, f.contigWaste)
	}
	if run.article != run.figures {
		t.Errorf("the claims' article figures %+v are not this run's %+v", run.article, run.figures)
	}
	script := run.script()
	if intro := script.Steps[0].Narration; !strings.Contains(intro, "These are the article's numbers") || !strings.Contains(intro, "8,192") {
		t.Errorf("the introduction does not say it runs the article's setup: %q", intro)
	}
	claims, _ := json.Marshal(script.Claims)
	for _, want := range []string{"8,192-token reservations", "holds 4 such reservations", "typed into the article's script", "would need a 98,304-slot pool"} {
		if !strings.Contains(string(claims), want) {
			t.Errorf("claims do not say %q", want)
		}
	}
	other := garageRunOf(t, map[string]string{"max_context": "2048"})
	if other.isArticle || other.article != run.figures || other.figures.contigAdmitted != 16 {
		t.Errorf("max_context=2048: article figures %+v, own %d contiguous streams; want the article's beside 16", other.article, other.figures.contigAdmitted)
	}
	if intro := other.script().Steps[0].Narration; !strings.Contains(intro, "The article's setup is the defaults") {
		t.Errorf("a non-default run does not point to the article's setup: %q", intro)
	}
}

// The work bound (issue 13 item 2): requests × (output_max + 1) over
// 500,000 is refused naming the knobs; the heaviest settings accepted count
// work within MaxWork, and the counted work grows with the stream.
func TestGarageWorkBound(t *testing.T) {
	for _, set := range []map[string]string{
		{"requests": "248", "prompt_min": "1", "prompt_max": "1", "output_min": "131071", "output_max": "131071", "max_context": "131072", "pool_tokens": "1048576", "block_size": "256"},
		{"requests": "2000", "output_min": "1000", "output_max": "4096"},
	} {
		_, _, err := garage.Run(set)
		var pe *ParamError
		if !errors.As(err, &pe) || pe.Key != "requests" || !strings.Contains(err.Error(), "requests × (output_max + 1) ≤ 500,000") {
			t.Errorf("%v: err = %v, want a refusal stating the bound", set, err)
		}
	}
	small := garageScript(t, nil)
	if small.Work <= 0 || small.Work > garage.MaxWork/100 {
		t.Errorf("defaults counted %d units of work", small.Work)
	}
	if testing.Short() {
		return
	}
	for _, set := range garage.HeavyCorners {
		s := garageScript(t, set)
		if s.Work > garage.MaxWork || s.Work < garage.MaxWork/20 {
			t.Errorf("heavy corner %v counted %d, MaxWork %d: the bound should hold and not be loose by 20×", set, s.Work, garage.MaxWork)
		}
	}
}

// Each mechanism the issue lists appears in some step's narration.
func TestGarageStepsTeachEachMechanism(t *testing.T) {
	all := func(s *Script) string {
		var b strings.Builder
		for _, st := range s.Steps {
			b.WriteString(st.Title + " " + st.Narration + "\n")
		}
		return b.String()
	}
	def := all(garageScript(t, nil))
	for _, want := range []string{"admitted", "allocated on demand", "leaving a hole", "rejected for now", "internal fragmentation", "first fit"} {
		if !strings.Contains(def, want) {
			t.Errorf("default garage never says %q", want)
		}
	}
	exact := all(garageScript(t, map[string]string{"reserve": "exact", "requests": "120"}))
	if !strings.Contains(exact, "external fragmentation") {
		t.Errorf("reserve=exact never shows external fragmentation")
	}
}

// finishedOnce counts the requests a pool served, failing if one finished
// twice.
func finishedOnce(t *testing.T, h *poolHistory) int {
	t.Helper()
	seen := map[int]bool{}
	for i := range h.ticks.len() {
		tk, _ := h.tickOf(i)
		for _, id := range tk.Finished {
			if seen[id] {
				t.Fatalf("request %d finished twice", id)
			}
			seen[id] = true
		}
	}
	return len(seen)
}

// Every step's "At this tick" cards show the pools' state at that tick as
// the loop recorded it.
func TestGarageCardsShowTheLoopState(t *testing.T) {
	run := garageRunOf(t, map[string]string{"requests": "120", "reserve": "exact"})
	s := run.script()
	for i, tick := range run.ticks {
		st := s.Steps[i+1] // after the introduction
		var cards []scene.Card
		for _, sc := range st.Scenes {
			if sc.ID == "now" {
				cards = sc.Cards
			}
		}
		p, _ := run.served.paged.tickOf(min(tick, run.served.paged.ticks.len()-1))
		c, _ := run.served.contig.tickOf(min(tick, run.served.contig.ticks.len()-1))
		if len(cards) != 8 || cards[0].Value != float64(p.Usage.Resident) || cards[4].Value != float64(c.Usage.Resident) {
			t.Fatalf("tick %d: cards %+v, loop resident %d and %d", tick, cards, p.Usage.Resident, c.Usage.Resident)
		}
	}
}

// A tick log returns every record written into it, across its chunks,
// each full at tickChunk records, the first grown to it and the others
// made whole; a new record is zero.
func TestTickLog(t *testing.T) {
	var l tickLog
	const n = 3*tickChunk + 5
	for i := range n {
		r := l.next()
		if *r != (tickRecord{}) {
			t.Fatalf("record %d starts as %+v", i, *r)
		}
		r.stored, r.at = int32(i), int32(-i)
	}
	if l.len() != n || len(l.chunks) != 4 {
		t.Fatalf("%d records in %d chunks, want %d in 4", l.len(), len(l.chunks), n)
	}
	for i := range n {
		if r := l.at(i); r.stored != int32(i) || r.at != int32(-i) {
			t.Fatalf("record %d is %+v", i, *r)
		}
	}
	for k, c := range l.chunks[:3] {
		if len(c) != tickChunk || (k > 0 && cap(c) != tickChunk) {
			t.Errorf("chunk %d holds %d records in room for %d, want %d", k, len(c), cap(c), tickChunk)
		}
	}
	// Single records and runs of copies mixed from the start, as a
	// contiguous pool's history is written: every chunk but the last
	// holds exactly tickChunk records, whatever the first grew to.
	var mixed tickLog
	for i := 0; mixed.len() < 3*tickChunk; i++ {
		if i%2 == 0 {
			r := mixed.next()
			r.stored = int32(mixed.len() - 1)
			continue
		}
		for m := 1 + i*37%900; m > 0; {
			recs := mixed.appendCopies(tickRecord{}, m)
			for j := range recs {
				recs[j].stored = int32(mixed.len() - len(recs) + j)
			}
			m -= len(recs)
		}
	}
	for k, c := range mixed.chunks[:len(mixed.chunks)-1] {
		if len(c) != tickChunk {
			t.Fatalf("chunk %d of %d holds %d records, want %d", k, len(mixed.chunks), len(c), tickChunk)
		}
	}
	for i := range mixed.len() {
		if r := mixed.at(i); r.stored != int32(i) {
			t.Fatalf("mixed record %d is %+v", i, *r)
		}
	}
	// Runs of copies, as quiet ticks are recorded, fill a chunk to its
	// end and go on in the next.
	for m := n; l.len() < n+2*tickChunk+7; {
		recs := l.appendCopies(tickRecord{at: 7}, n+2*tickChunk+7-l.len())
		for i := range recs {
			recs[i].stored = int32(m + i)
		}
		m += len(recs)
	}
	for i := range l.len() {
		if r := l.at(i); (i < n && r.stored != int32(i)) || (i >= n && (r.stored != int32(i) || r.at != 7)) {
			t.Fatalf("record %d is %+v", i, *r)
		}
	}
}

// The contiguous pool's runs at any tick, as the first pass logs them
// (runLog, read by runReplay.at), are the runs a pool serving the stream again has at the end
// of that tick: checked at every tick, and after the last, for random
// setups of every reservation policy, with outputs from none to many.
func TestGarageContigRunsLogged(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	checked, unchanged := 0, 0
	for trial := range 40 {
		pmin := 1 + r.IntN(300)
		pmax := pmin + r.IntN(300)
		omin := r.IntN(3) * r.IntN(40)
		omax := omin + r.IntN(80)
		mc := 16 * ((pmax + omax + r.IntN(400) + 15) / 16)
		pool, b := 256*(1+(mc*(1+r.IntN(6)))/256), 1<<r.IntN(6)
		for pool/b > maxGridBlocks {
			b *= 2
		}
		set := map[string]string{
			"block_size": fmt.Sprint(b), "max_context": fmt.Sprint(mc), "pool_tokens": fmt.Sprint(pool),
			"prompt_min": fmt.Sprint(pmin), "prompt_max": fmt.Sprint(pmax), "output_min": fmt.Sprint(omin), "output_max": fmt.Sprint(omax),
			"requests": fmt.Sprint(1 + r.IntN(60)), "reserve": []string{"max", "pow2", "exact"}[trial%3], "seed": fmt.Sprint(trial),
		}
		_, s, served := servedGarage(t, set)
		// The contiguous history, its quiet ticks recorded at once, is the
		// one recorded tick by tick; the steps chosen from the busy ticks
		// are those chosen from every tick.
		one := contigTickByTick(t, s)
		sameHistory(t, fmt.Sprint(set), &served.contig, &one)
		sameChoice(t, fmt.Sprint(set), served)
		ct, cl, err := garageContig(s)
		if err != nil {
			t.Fatal(err)
		}
		logged := runReplay{log: &served.contigRuns}
		for tick := 0; !cl.Done(); tick++ {
			step, err := cl.Step()
			if err != nil {
				t.Fatal(err)
			}
			if got, want := logged.at(tick), ct.Runs(); !slices.Equal(got, want) {
				t.Fatalf("%v tick %d: logged runs %v, the pool has %v", set, tick, got, want)
			}
			if len(step.Admitted)+len(step.Finished)+len(step.Preempted) == 0 {
				unchanged++
			}
			checked++
		}
		if end := served.contig.ticks.len(); logged.at(end+5) != nil {
			t.Fatalf("%v: runs after the last tick: %v", set, logged.at(end+5))
		}
	}
	if unchanged == 0 || unchanged == checked {
		t.Errorf("%d of %d ticks left the runs unchanged: the test never tried both kinds", unchanged, checked)
	}
}

// contigTickByTick serves s's contiguous pool one tick at a time, each
// recorded by record, as serveContig did before it ran quiet ticks at once.
func contigTickByTick(t *testing.T, s garageSetup) poolHistory {
	t.Helper()
	ct, cl, err := garageContig(s)
	if err != nil {
		t.Fatal(err)
	}
	h := poolHistory{pool: s.pool, holes: ct, bay: s.reserve.MaxContext}
	for !cl.Done() {
		if err := stepInto(cl, &h); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// sameHistory fails unless two histories of a pool hold the same ticks,
// lists and sums.
func sameHistory(t *testing.T, name string, got, want *poolHistory) {
	t.Helper()
	if got.ticks.len() != want.ticks.len() {
		t.Fatalf("%s: %d ticks, want %d", name, got.ticks.len(), want.ticks.len())
	}
	for i := range want.ticks.len() {
		if *got.ticks.at(i) != *want.ticks.at(i) {
			t.Fatalf("%s: tick %d is %+v, want %+v", name, i, *got.ticks.at(i), *want.ticks.at(i))
		}
	}
	type sums struct {
		maxResident, peakTick, preemptions, reuses int
		work, stored, reserved, pool, n, unusable  int64
	}
	sumsOf := func(h *poolHistory) sums {
		return sums{h.maxResident, h.peakTick, h.preemptions, h.reuses, h.work, h.sumStored, h.sumReserved, h.sumPool, h.sumN, h.sumUnusable}
	}
	if !slices.Equal(got.ids, want.ids) || !slices.Equal(got.shorts, want.shorts) || !slices.Equal(got.busy, want.busy) || sumsOf(got) != sumsOf(want) {
		t.Fatalf("%s: history %+v (%d ids, %d shortfalls, %d busy ticks), want %+v (%d, %d, %d)", name,
			sumsOf(got), len(got.ids), len(got.shorts), len(got.busy), sumsOf(want), len(want.ids), len(want.shorts), len(want.busy))
	}
}

// servedGarage resolves set and serves the garage's stream with both
// pools (serveGarage), failing tb on an error.
func servedGarage(tb testing.TB, set map[string]string) (Values, garageSetup, *garageServed) {
	tb.Helper()
	v, err := garage.resolveChecked(set)
	if err != nil {
		tb.Fatalf("%v: %v", set, err)
	}
	s := newGarageSetup(v)
	served, err := serveGarage(s)
	if err != nil {
		tb.Fatalf("%v: %v", set, err)
	}
	return v, s, served
}

// A long stream's contiguous history (12k ticks across chunks, most of
// them quiet and recorded as batches) is the one recorded tick by tick.
func TestGarageQuietTicksLongStream(t *testing.T) {
	_, s, served := servedGarage(t, map[string]string{"requests": "1000"})
	one := contigTickByTick(t, s)
	if one.ticks.len() <= 2*tickChunk {
		t.Fatalf("only %d ticks: the stream no longer spans chunks", one.ticks.len())
	}
	sameHistory(t, "requests=1000", &served.contig, &one)
	sameChoice(t, "requests=1000", served)
}

// sameChoice fails unless the steps chosen from the pools' busy ticks
// are those chosen by noting every tick of both pools.
func sameChoice(t *testing.T, name string, r *garageServed) {
	t.Helper()
	every := func(n int) []int32 {
		ticks := make([]int32, n)
		for i := range ticks {
			ticks[i] = int32(i)
		}
		return ticks
	}
	if got, want := chooseTicks(r), chooseFrom(r, every(r.paged.ticks.len()), every(r.contig.ticks.len())); !slices.Equal(got, want) {
		t.Fatalf("%s: steps %v from the busy ticks, %v from every tick", name, got, want)
	}
}

// stepInto runs one tick of l, unless it is done, and records it in h.
func stepInto(l *scheduler.Loop, h *poolHistory) error {
	if l.Done() {
		return nil
	}
	if err := l.StepInto(&h.last); err != nil {
		return err
	}
	h.record(&h.last)
	return nil
}
