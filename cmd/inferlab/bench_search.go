package main

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"

	"github.com/inferlab/inferlab/cmd/internal/bench"
	"github.com/inferlab/inferlab/cmd/internal/bench/suite"
	"github.com/inferlab/inferlab/lessons"
)

// The seeded search for each lesson's heaviest allowed setting (bench
// --search): a hill-climb over the lesson's knobs whose every step is one
// build in a fresh child process, as bench --corners measures a corner, so
// that it finds what CPU time costs rather than what a work estimate
// thinks. The declared corners are a lesson author's guesses; the search
// starts from them and from the defaults, moves one or two knobs at a time
// (to a bound, to a random value, or by a factor), pulls a refused setting
// back towards the last allowed one until it is allowed (the heaviest
// settings sit at the edge of what Check allows), and keeps a move that
// costs more CPU.
const (
	searchMaxCPU    = 1.0 // s: what no allowed setting may cost natively
	searchRemeasure = 3   // fresh processes for the worst setting found
	// The reference scenario the search times before each lesson, and its
	// CPU time on a quiet machine (BENCHMARKS.md, "Core, natively": 40 ms
	// median): on a machine shared with other work every CPU time grows
	// alike, and "scaled" is a time × quiet / reference measured now.
	searchRef        = "core-10k-uniform"
	searchRefQuietMS = 40.0
)

// refCPU is the reference scenario's CPU time now, the median of five runs
// in this process (ms; 0 when the platform reports none).
func refCPU() float64 {
	for _, s := range suite.Scenarios() {
		if s.Name == searchRef {
			if r, err := bench.Measure(s, 5); err == nil {
				return r.CPUMedianMS
			}
		}
	}
	return 0
}

// searchResult is one lesson's search.
type searchResult struct {
	Lesson  string            `json:"lesson"`
	Evals   int               `json:"evals"`
	Refused int               `json:"refused"`      // proposals Check refused (before the pull back)
	Worst   map[string]string `json:"worst"`        // the knobs set (others at their defaults)
	From    string            `json:"from"`         // where the climb that found it started
	CPUS    float64           `json:"cpu_s"`        // median of searchRemeasure processes
	RefMS   float64           `json:"ref_cpu_ms"`   // the reference scenario's CPU time just before
	Scaled  float64           `json:"scaled_cpu_s"` // CPUS at the reference's quiet speed
	WallS   float64           `json:"wall_s"`
	PeakMB  float64           `json:"peak_rss_mb"`
	Work    int64             `json:"work"`
	MaxWork int64             `json:"max_work"`
}

func (r searchResult) setting() string { return cornerCase{Set: r.Worst}.setting() }

// searchCmd runs the search for every lesson whose slug contains only.
func searchCmd(evals int, seed uint64, only, format string, stdout, stderr io.Writer) int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(stderr, "inferlab bench --search: cannot find this program to run it again:", err)
		return 1
	}
	var chosen []*lessons.Lesson
	for _, l := range lessons.All() {
		if strings.Contains(l.Slug, only) {
			chosen = append(chosen, l)
		}
	}
	if len(chosen) == 0 {
		fmt.Fprintf(stderr, "inferlab bench --search: --only = %q matches no lesson\n", only)
		return 2
	}
	const row = "%-20s %5s %8s %8s %7s %8s %9s %10s %-5s %s\n"
	if format == "text" {
		fmt.Fprintf(stdout, "seeded search (seed %d, %d builds per lesson, each in a fresh process; the worst again in %d, median CPU); load average %s\n",
			seed, evals, searchRemeasure, bench.LoadAverage())
		fmt.Fprintf(stdout, "scaled = cpu × %.0f ms / the CPU time of %s measured before the lesson (%.0f ms on a quiet machine); OVER past %.0f s scaled\n",
			searchRefQuietMS, searchRef, searchRefQuietMS, searchMaxCPU)
		fmt.Fprintf(stdout, row, "lesson", "evals", "cpu", "scaled", "ref", "wall", "peak RSS", "work", "", "worst setting found")
	}
	var results []searchResult
	overs := 0
	for _, l := range chosen {
		ref := refCPU()
		r, err := searchLesson(self, l, evals, seed)
		if err != nil {
			fmt.Fprintf(stderr, "inferlab bench --search: %s: %v\n", l.Slug, err)
			return 1
		}
		r.RefMS, r.Scaled = ref, r.CPUS
		if ref > 0 {
			r.Scaled = r.CPUS * searchRefQuietMS / ref
		}
		results = append(results, r)
		flag := "ok"
		if r.Scaled > searchMaxCPU {
			flag, overs = "OVER", overs+1
		}
		if format == "text" {
			fmt.Fprintf(stdout, row, l.Slug, strconv.Itoa(r.Evals), fmt.Sprintf("%.2f s", r.CPUS), fmt.Sprintf("%.2f s", r.Scaled), fmt.Sprintf("%.0f ms", r.RefMS), fmt.Sprintf("%.2f s", r.WallS),
				fmt.Sprintf("%.0f MB", r.PeakMB), strconv.FormatInt(r.Work, 10), flag, r.setting())
		}
	}
	if format == "json" {
		b, err := json.MarshalIndent(map[string]any{"seed": seed, "evals": evals, "load_average": bench.LoadAverage(), "results": results}, "", "  ")
		if err != nil {
			fmt.Fprintln(stderr, "inferlab bench --search:", err)
			return 1
		}
		stdout.Write(append(b, '\n'))
	} else {
		fmt.Fprintf(stdout, "%d of %d lessons with a setting found over %.0f s of CPU, scaled; load average now %s\n", overs, len(results), searchMaxCPU, bench.LoadAverage())
	}
	return 0
}

// climber is one lesson's search state.
type climber struct {
	l     *lessons.Lesson
	rng   *rand.Rand
	knobs []lessons.Param // the knobs it moves (not the seed: it only reshuffles)
}

// allowed reports whether the lesson accepts set.
func (c *climber) allowed(set map[string]string) bool {
	v, errs := c.l.Resolve(set)
	return len(errs) == 0 && c.l.CheckValues(v) == nil
}

// newClimber is the search of l's knobs with this seed: the proposals are
// the seed's and the lesson's, the same on every run.
func newClimber(l *lessons.Lesson, seed uint64) *climber {
	h := fnv.New64a()
	h.Write([]byte(l.Slug))
	c := &climber{l: l, rng: rand.New(rand.NewPCG(seed, h.Sum64()))}
	for _, p := range l.Params {
		if p.Key != "seed" {
			c.knobs = append(c.knobs, p)
		}
	}
	return c
}

// searchLesson climbs from the defaults and each declared corner in turn,
// evals builds in all, then measures the worst found again.
func searchLesson(self string, l *lessons.Lesson, evals int, seed uint64) (searchResult, error) {
	c := newClimber(l, seed)
	res := searchResult{Lesson: l.Slug, MaxWork: l.MaxWork}
	measure := func(set map[string]string) (float64, error) {
		res.Evals++
		m, err := measureCorner(self, cornerCase{Lesson: l.Slug, Label: "search", Set: set}, 1)
		return m.CPUS, err
	}
	starts := append([]map[string]string{{}}, l.HeavyCorners...)
	bestCPU := -1.0
	per := max(1, evals/len(starts))
	for si, start := range starts {
		from := "defaults"
		if si > 0 {
			from = fmt.Sprintf("corner %d", si)
		}
		cur := maps.Clone(start)
		if !c.allowed(cur) {
			continue
		}
		curCPU, err := measure(cur)
		if err != nil {
			return res, fmt.Errorf("%s %v: %w", from, cur, err)
		}
		for i := 1; i < per && res.Evals < evals; i++ {
			next, refused := c.propose(cur)
			res.Refused += refused
			if next == nil {
				break
			}
			cpu, err := measure(next)
			if err != nil {
				return res, fmt.Errorf("%v: %w", next, err)
			}
			if cpu > curCPU {
				cur, curCPU = next, cpu
			}
		}
		if curCPU > bestCPU {
			bestCPU, res.Worst, res.From = curCPU, cur, from
		}
	}
	if res.Worst == nil {
		return res, fmt.Errorf("no allowed starting setting")
	}
	m, err := measureCorner(self, cornerCase{Lesson: l.Slug, Label: "worst", Set: res.Worst}, searchRemeasure)
	if err != nil {
		return res, err
	}
	res.CPUS, res.WallS, res.PeakMB, res.Work = m.CPUS, m.WallS, m.PeakMB, m.Work
	return res, nil
}

// propose moves one or two knobs of cur and returns an allowed setting
// (nil when none was found), with the number of proposals Check refused.
func (c *climber) propose(cur map[string]string) (map[string]string, int) {
	refused := 0
	for try := 0; try < 40; try++ {
		next := maps.Clone(cur)
		for range 1 + c.rng.IntN(2) {
			p := c.knobs[c.rng.IntN(len(c.knobs))]
			next[p.Key] = c.move(p, c.value(p, cur))
		}
		if c.allowed(next) {
			return next, refused
		}
		refused++
		if pulled := c.pullBack(cur, next); pulled != nil {
			return pulled, refused
		}
	}
	return nil, refused
}

// value is a knob's value in set (its default when set does not name it).
func (c *climber) value(p lessons.Param, set map[string]string) string {
	if s, ok := set[p.Key]; ok {
		return s
	}
	return p.DefaultText()
}

// move draws a new value for p from its current text: a bound, a random
// value (log-uniform over a wide range), or the value times or over a factor.
func (c *climber) move(p lessons.Param, cur string) string {
	if p.Kind == lessons.Choice {
		return p.Choices[c.rng.IntN(len(p.Choices))]
	}
	x, _ := strconv.ParseFloat(cur, 64)
	switch c.rng.IntN(4) {
	case 0:
		x = p.Max
	case 1:
		x = p.Min
	case 2:
		if p.Min > 0 && p.Max/p.Min > 100 {
			x = p.Min * math.Pow(p.Max/p.Min, c.rng.Float64())
		} else {
			x = p.Min + (p.Max-p.Min)*c.rng.Float64()
		}
	default:
		f := 1.25 + 2.75*c.rng.Float64()
		if c.rng.IntN(2) == 0 {
			f = 1 / f
		}
		x *= f
	}
	return knobText(p, x)
}

// knobText is x within p's range as the knob's text: an integer, or four
// significant digits.
func knobText(p lessons.Param, x float64) string {
	x = math.Max(p.Min, math.Min(p.Max, x))
	if p.Kind == lessons.Int {
		return strconv.FormatInt(int64(math.Round(x)), 10)
	}
	s := strconv.FormatFloat(x, 'g', 4, 64)
	if v, err := strconv.ParseFloat(s, 64); err == nil && v >= p.Min && v <= p.Max {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(x, 'f', -1, 64)
}

// pullBack moves each numeric knob that next changed halfway back towards
// cur, up to eight times, and returns the first allowed setting: the edge
// of what Check allows in that direction, where the heaviest settings are.
func (c *climber) pullBack(cur, next map[string]string) map[string]string {
	lo := maps.Clone(cur)
	hi := maps.Clone(next)
	for range 8 {
		mid := maps.Clone(hi)
		changed := false
		for _, p := range c.knobs {
			a, b := c.value(p, lo), c.value(p, hi)
			if a == b {
				continue
			}
			if p.Kind == lessons.Choice {
				continue // a choice stays as proposed
			}
			x, _ := strconv.ParseFloat(a, 64)
			y, _ := strconv.ParseFloat(b, 64)
			if m := knobText(p, (x+y)/2); m != b {
				mid[p.Key], changed = m, true
			}
		}
		if !changed {
			return nil
		}
		if c.allowed(mid) {
			return mid
		}
		hi = mid
	}
	return nil
}
