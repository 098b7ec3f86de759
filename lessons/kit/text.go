package kit

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/inferlab/inferlab/core/cluster"
	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/internal/detmath"
	"github.com/inferlab/inferlab/internal/textfmt"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/scene"
)

// SeedParam is the knob every seeded lesson shares; `inferlab run --seed N`
// sets it.
var SeedParam = lessons.Param{Key: "seed", Label: "Random seed", Help: "Same seed, same requests, same steps.",
	Kind: lessons.Int, Default: 42, Min: 0, Max: 1 << 31, Step: 1}

// NewRand returns the lesson's deterministic generator. PCG gives the same
// sequence natively and in WebAssembly.
func NewRand(seed int) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), 0x1a9b5eed))
}

// Uniform draws an integer in [lo, hi].
func Uniform(r *rand.Rand, lo, hi int) int {
	if hi <= lo {
		return lo
	}
	return lo + r.IntN(hi-lo+1)
}

// ReqName is how requests are labelled everywhere: R1, R2, …
func ReqName(id int) string { return "R" + strconv.Itoa(id+1) }

// Comma formats an integer with thousands separators.
func Comma(n int) string { return textfmt.Comma(n) }

// Pct formats a fraction as a percentage with one decimal.
func Pct(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" }

// Plural picks the singular or plural noun for n.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// CheckOrdered reports the first pair of knobs whose low value exceeds its
// high one, e.g. prompt_min > prompt_max, naming the low knob.
func CheckOrdered(v lessons.Values, pairs ...[2]string) error {
	for _, p := range pairs {
		if lo, hi := v.Float(p[0]), v.Float(p[1]); lo > hi {
			return lessons.Relation(p[0], v.TextOf(p[0]), fmt.Sprintf("at most %s (%s)", p[1], v.TextOf(p[1])), p[1])
		}
	}
	return nil
}

// LengthPairs are the min/max knobs of prompt and output lengths.
var LengthPairs = [][2]string{{"prompt_min", "prompt_max"}, {"output_min", "output_max"}}

// IndexCursors places each step's chart cursor (Step.Cursor) at the step's
// own index.
func IndexCursors(steps []lessons.Step) {
	for i := range steps {
		steps[i].Cursor = float64(i)
	}
}

func Round1(x float64) float64 { return float64(int64(x*10+0.5)) / 10 }

func Round2(x float64) float64 {
	if x < 0 {
		return -Round2(-x)
	}
	return float64(int64(x*100+0.5)) / 100
}

// ChartScene is the chart c as scene id, titled, with the step's cursor at
// x (a copy: the steps share c's series).
func ChartScene(id, title string, c *scene.Chart, x float64) scene.Scene {
	cc := *c
	cc.Cursor = &x
	return scene.Scene{Kind: scene.KindChart, ID: id, Title: title, Chart: &cc}
}

// ClaimsTable renders claims as a table scene.
func ClaimsTable(claims []lessons.Claim) scene.Scene {
	tbl := &scene.Table{Columns: []string{"Claim", "Article", "This model", "Why they differ"}}
	for _, c := range claims {
		tbl.Rows = append(tbl.Rows, []string{c.What, c.Article, c.Model, c.Why})
	}
	return scene.Scene{Kind: scene.KindTable, ID: "claims", Title: "Article claim vs this model", Table: tbl}
}

func Ms(x float64) float64 { return Round2(1000 * x) }

// Us is seconds as microseconds, two decimals.
func Us(x float64) float64 { return Round2(1e6 * x) }

func Round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// Msr is seconds as milliseconds to 0.1 µs, for timelines.
func Msr(x float64) float64 { return math.Round(x*1e7) / 1e4 }

// MsText formats seconds as milliseconds with about three significant
// digits.
func MsText(s float64) string {
	x, d := 1000*s, 3
	switch {
	case x >= 100:
		d = 0
	case x >= 10:
		d = 1
	case x >= 1:
		d = 2
	}
	return strconv.FormatFloat(x, 'f', d, 64) + " ms"
}

func GBps(bw float64) string { return strconv.FormatFloat(bw/1e9, 'f', 1, 64) + " GB/s" }

func BytesText(b float64) string {
	switch {
	case b >= 1e9:
		return strconv.FormatFloat(b/1e9, 'f', 2, 64) + " GB"
	case b >= 1e6:
		return strconv.FormatFloat(b/1e6, 'f', 1, 64) + " MB"
	}
	return strconv.FormatFloat(b/1e3, 'f', 1, 64) + " kB"
}

func Comma64(n int64) string {
	return Comma(int(n))
}

func Logspace(lo, hi float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = lo * detmath.Pow(hi/lo, float64(i)/float64(n-1)) // same natively and in the browser
	}
	return out
}

// MaxGridBlocks keeps the block grid drawable and the simulation small
// enough to re-run while a slider moves.
const MaxGridBlocks = 4096

// StepCounter is a scheduler.Timer that counts the steps it prices, for
// Script.Work.
type StepCounter struct {
	scheduler.Timer
	Steps int64
}

// StepSeconds prices one step and counts it.
func (c *StepCounter) StepSeconds(b []scheduler.Work) float64 {
	c.Steps++
	return c.Timer.StepSeconds(b)
}

// WorkBound refuses a knob combination whose work estimate exceeds bound,
// naming key, the knob that carries most of it; rule says in the knobs'
// own terms how the estimate adds up.
func WorkBound(v lessons.Values, key, rule string, work, bound int64) error {
	if work <= bound {
		return nil
	}
	return lessons.Relation(key, v.TextOf(key), fmt.Sprintf("a setting whose work (%s) is at most %s; this one needs %s. The bound keeps every setting to about a second of simulation",
		rule, Comma64(bound), Comma64(work)))
}

// The serving lessons' work bounds (smart-routing, disaggregation,
// sandbox), in cluster.Counts.Work units. Check refuses a setting whose
// work without preemption (RequestWork over what it simulates) exceeds
// ServingCheckWork; recomputation after preemption adds to that — at most
// 3% in searches of 60 and 78 accepted sandbox settings on small KV pools
// (L4, L40S, A100-40GB; up to 765 preemptions) — and ServingMaxWork
// leaves 14% for it. The heaviest accepted
// settings (each lesson's HeavyCorners, BenchmarkServingHeavyCorners) took
// 0.2–0.84 s of CPU and at most 230 MB of peak memory natively.
const (
	ServingCheckWork = 7_000_000
	ServingMaxWork   = 8_000_000
)

// RequestWork is the most work cluster.Counts.Work counts for serving reqs
// once without preemption: 2 × prompt + cluster.DecodeWeight × output per
// request.
func RequestWork(reqs []workload.Request) int64 {
	var w int64
	for _, r := range reqs {
		w += 2*int64(r.Prompt) + cluster.DecodeWeight*int64(r.Output)
	}
	return w
}

// Linked returns the mentions of a step's narration in one scene: pairs
// are phrase, reference, phrase, reference…; a phrase the narration does
// not contain is left out (the lesson's tests check what each step links).
func Linked(narration, sceneID string, pairs ...string) []scene.Mention {
	var out []scene.Mention
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i] != "" && strings.Contains(narration, pairs[i]) {
			out = append(out, scene.Mention{Text: pairs[i], Scene: sceneID, Ref: pairs[i+1]})
		}
	}
	return out
}

// MarksFor returns one mark per mentioned reference (deduplicated), with
// the callout label labels gives it, if any.
func MarksFor(ms []scene.Mention, labels map[string]string) []scene.Mark {
	var out []scene.Mark
	seen := map[string]bool{}
	for _, m := range ms {
		if !seen[m.Ref] {
			seen[m.Ref] = true
			out = append(out, scene.Mark{Ref: m.Ref, Label: labels[m.Ref]})
		}
	}
	return out
}

// Mention links the first occurrence of text in a step's narration to the
// element ref of scene sceneID (which must mark it: the contract test
// checks both).
func Mention(text, sceneID, ref string) scene.Mention {
	return scene.Mention{Text: text, Scene: sceneID, Ref: ref}
}

// MarkRef is a mark of ref with a short callout label.
func MarkRef(ref, label string) scene.Mark { return scene.Mark{Ref: ref, Label: label} }

// MainScene flags sc as its step's main figure, with marks.
func MainScene(sc scene.Scene, marks ...scene.Mark) scene.Scene {
	sc.Main = true
	sc.Marks = append(sc.Marks, marks...)
	return sc
}

// SpanRef is the reference of bar j of the timeline lane keyed key
// (scene.Lane.Key).
func SpanRef(key string, j int) string { return "span:" + key + ":" + strconv.Itoa(j) }

// Annotator collects a step's marks on one scene and the mentions that
// link the narration to them. When drawn is set, refs it lacks (elements
// the figure does not draw) are skipped; a ref marked twice keeps its
// first label.
type Annotator struct {
	Marks    []scene.Mark
	Mentions []scene.Mention
	Scene    string
	Drawn    map[string]bool
}

func (a *Annotator) Mark(ref, label, text, narration string) {
	if a.Drawn != nil && !a.Drawn[ref] {
		return
	}
	for _, m := range a.Marks {
		if m.Ref == ref {
			return
		}
	}
	a.Marks = append(a.Marks, scene.Mark{Ref: ref, Label: label})
	if text != "" && strings.Contains(narration, text) {
		a.Mentions = append(a.Mentions, scene.Mention{Text: text, Scene: a.Scene, Ref: ref})
	}
}

// FirstIn is the first of phrases that text contains, or "".
func FirstIn(text string, phrases ...string) string {
	for _, p := range phrases {
		if strings.Contains(text, p) {
			return p
		}
	}
	return ""
}

// Ordinal is "1st", "2nd", "3rd", "11th", "22nd", "1,000th", ….
func Ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return Comma(n) + suffix
}
