package garage

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/core/record"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/scene"
)

func garageScript(t *testing.T, set map[string]string) *lessons.Script {
	t.Helper()
	s, _, err := lesson.Run(set)
	if err != nil {
		t.Fatalf("garage %v: %v", set, err)
	}
	return s
}

// garageRunOf simulates garage with the given knobs and returns the typed run.
func garageRunOf(t *testing.T, set map[string]string) garageRun {
	t.Helper()
	v, err := lesson.ResolveChecked(set)
	if err != nil {
		t.Fatalf("garage %v: %v", set, err)
	}
	run, err := runGarage(v)
	if err != nil {
		t.Fatalf("garage %v: %v", set, err)
	}
	return run
}

func metric(t *testing.T, s *lessons.Script, key string) float64 {
	t.Helper()
	v, ok := s.Metric(key)
	if !ok {
		t.Fatalf("no metric %q", key)
	}
	return v
}

// With equal prompts, no output and more requests than fit, the peak counts
// follow from the pool geometry alone: ⌊pool / max_context⌋ contiguous
// reservations against ⌊pool blocks / ⌈prompt / B⌉⌋ paged requests.
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
		for pool/b > kit.MaxGridBlocks {
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
		for _, h := range []*record.History{&run.served.paged, &run.served.contig} {
			if served := finishedOnce(t, h); served != len(run.setup.reqs) {
				t.Errorf("%v: %d of %d requests served", set, served, len(run.setup.reqs))
			}
		}
		if s := run.Script(); len(s.Steps) < 3 {
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
		_, _, err := lesson.Run(tc.set)
		var pe *lessons.ParamError
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

// The defaults are the article's setup: its script's pool
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
	script := run.Script()
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
	if intro := other.Script().Steps[0].Narration; !strings.Contains(intro, "The article's setup is the defaults") {
		t.Errorf("a non-default run does not point to the article's setup: %q", intro)
	}
}

// The work bound (docs/ARCHITECTURE.md#the-lesson-contract): requests × (output_max + 1) over
// 500,000 is refused naming the knobs; the heaviest settings accepted count
// work within MaxWork, and the counted work grows with the stream.
func TestGarageWorkBound(t *testing.T) {
	for _, set := range []map[string]string{
		{"requests": "248", "prompt_min": "1", "prompt_max": "1", "output_min": "131071", "output_max": "131071", "max_context": "131072", "pool_tokens": "1048576", "block_size": "256"},
		{"requests": "2000", "output_min": "1000", "output_max": "4096"},
	} {
		_, _, err := lesson.Run(set)
		var pe *lessons.ParamError
		if !errors.As(err, &pe) || pe.Key != "requests" || !strings.Contains(err.Error(), "requests × (output_max + 1) ≤ 500,000") {
			t.Errorf("%v: err = %v, want a refusal stating the bound", set, err)
		}
	}
	small := garageScript(t, nil)
	if small.Work <= 0 || small.Work > lesson.MaxWork/100 {
		t.Errorf("defaults counted %d units of work", small.Work)
	}
	if testing.Short() {
		return
	}
	for _, set := range lesson.HeavyCorners {
		s := garageScript(t, set)
		if s.Work > lesson.MaxWork || s.Work < lesson.MaxWork/20 {
			t.Errorf("heavy corner %v counted %d, MaxWork %d: the bound should hold and not be loose by 20×", set, s.Work, lesson.MaxWork)
		}
	}
}

// Each mechanism the issue lists appears in some step's narration.
func TestGarageStepsTeachEachMechanism(t *testing.T) {
	all := func(s *lessons.Script) string {
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
func finishedOnce(t *testing.T, h *record.History) int {
	t.Helper()
	seen := map[int]bool{}
	for i := range h.Len() {
		tk, _ := h.At(i)
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
	s := run.Script()
	for i, tick := range run.ticks {
		st := s.Steps[i+1] // after the introduction
		var cards []scene.Card
		for _, sc := range st.Scenes {
			if sc.ID == "now" {
				cards = sc.Cards
			}
		}
		p, _ := run.served.paged.At(min(tick, run.served.paged.Len()-1))
		c, _ := run.served.contig.At(min(tick, run.served.contig.Len()-1))
		if len(cards) != 8 || cards[0].Value != float64(p.Usage.Resident) || cards[4].Value != float64(c.Usage.Resident) {
			t.Fatalf("tick %d: cards %+v, loop resident %d and %d", tick, cards, p.Usage.Resident, c.Usage.Resident)
		}
	}
}

// The contiguous pool's runs at any tick, as the first pass logs them
// (record.RunLog, read by its Replay), are the runs a pool serving the
// stream again has at the end of that tick: checked at every tick, and
// after the last, for random garage setups of every reservation policy,
// with outputs from none to many. (core/record's tests check the log, the
// quiet ticks and the ticks picked on the loop alone.)
func TestGarageContigRunsLogged(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial := range 40 {
		pmin := 1 + r.IntN(300)
		pmax := pmin + r.IntN(300)
		omin := r.IntN(3) * r.IntN(40)
		omax := omin + r.IntN(80)
		mc := 16 * ((pmax + omax + r.IntN(400) + 15) / 16)
		pool, b := 256*(1+(mc*(1+r.IntN(6)))/256), 1<<r.IntN(6)
		for pool/b > kit.MaxGridBlocks {
			b *= 2
		}
		set := map[string]string{
			"block_size": fmt.Sprint(b), "max_context": fmt.Sprint(mc), "pool_tokens": fmt.Sprint(pool),
			"prompt_min": fmt.Sprint(pmin), "prompt_max": fmt.Sprint(pmax), "output_min": fmt.Sprint(omin), "output_max": fmt.Sprint(omax),
			"requests": fmt.Sprint(1 + r.IntN(60)), "reserve": []string{"max", "pow2", "exact"}[trial%3], "seed": fmt.Sprint(trial),
		}
		_, s, served := servedGarage(t, set)
		ct, cl, err := garageContig(s)
		if err != nil {
			t.Fatal(err)
		}
		logged := served.contigRuns.Replay()
		ticks := 0
		for tick := 0; !cl.Done(); tick++ {
			if _, err := cl.Step(); err != nil {
				t.Fatal(err)
			}
			if got, want := logged.At(tick), ct.Runs(); !slices.Equal(got, want) {
				t.Fatalf("%v tick %d: logged runs %v, the pool has %v", set, tick, got, want)
			}
			ticks++
		}
		if end := served.contig.Len(); end != ticks || logged.At(end+5) != nil {
			t.Fatalf("%v: %d ticks recorded, %d served again; runs after the last: %v", set, end, ticks, logged.At(end+5))
		}
	}
}

// servedGarage resolves set and serves the garage's stream with both
// pools (serveGarage), failing tb on an error.
func servedGarage(tb testing.TB, set map[string]string) (lessons.Values, garageSetup, *garageServed) {
	tb.Helper()
	v, err := lesson.ResolveChecked(set)
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

// The garage's paged pool frees blocks as vLLM v0.8–v0.10 did
// (core/allocator.Paged.Free); its engine line names that version.
func TestGarageFreeOrderVersion(t *testing.T) {
	if !strings.Contains(lesson.Engine, "v0.8–v0.10") {
		t.Errorf("engine line %q does not name the free order's version", lesson.Engine)
	}
}

// With placement = buddy every contiguous run, at every tick, is a block
// of a power of two of slots aligned to its size, as a binary buddy
// allocator hands out; with lengths = sharegpt every request passes vLLM's
// ShareGPT filter and the ranges' knobs are unused.
func TestGarageBuddyAndShareGPT(t *testing.T) {
	for _, reserve := range []string{"max", "pow2", "exact"} {
		set := map[string]string{"pool_tokens": "15700", "max_context": "2048", "requests": "300", "reserve": reserve,
			"placement": "buddy", "lengths": "sharegpt", "prompt_min": "700", "prompt_max": "700"}
		_, s, served := servedGarage(t, set)
		ranged := 0
		for _, q := range s.reqs {
			if q.Prompt < 4 || q.Output < 4 || q.Prompt > 1024 || q.Prompt+q.Output > 2048 {
				t.Fatalf("%s: request %+v outside vLLM's ShareGPT filter", reserve, q)
			}
			if q.Prompt == 700 {
				ranged++
			}
		}
		if ranged == len(s.reqs) {
			t.Fatalf("%s: every prompt is prompt_min = prompt_max = 700", reserve)
		}
		logged := served.contigRuns.Replay()
		for tick := range served.contig.Len() {
			for _, run := range logged.At(tick) {
				if run.Len&(run.Len-1) != 0 || run.Start%run.Len != 0 || run.Asked > run.Len {
					t.Fatalf("%s tick %d: run %+v is not an aligned power-of-two block holding its reservation", reserve, tick, run)
				}
			}
		}
	}
}
