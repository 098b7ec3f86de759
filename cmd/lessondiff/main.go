// Command lessondiff records what every lesson prints for a fixed set of
// knob settings, so that a refactoring can be checked to change no output
// byte:
//
//	go run ./cmd/lessondiff -out /tmp/before   # on the old commit
//	go run ./cmd/lessondiff -out /tmp/after    # on the new one
//	diff -r /tmp/before /tmp/after
//
// For each lesson it runs the defaults, every knob at its minimum and at its
// maximum (every choice of a choice knob) with the others at their defaults,
// and three seeded random knob sets. Each case writes one file holding the
// exact bytes of `inferlab run SLUG --format json` (or the refusal's text)
// and the SHA-256 of the whole Script as JSON (steps with their scenes,
// metrics, claims), which the browser draws and the CLI JSON leaves out.
//
// -only limits the run to lessons whose slug contains the text; -skip-heavy
// leaves out the cases listed in heavyCases (minutes each before every
// lesson bounded its work: docs/ARCHITECTURE.md#the-lesson-contract).
package main

import (
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/inferlab/inferlab/export"
	"github.com/inferlab/inferlab/lessons"
	_ "github.com/inferlab/inferlab/lessons/all" // every lesson registers itself
)

func main() {
	out := flag.String("out", "", "directory to write one file per case into (created)")
	only := flag.String("only", "", "only lessons whose slug contains this text")
	list := flag.Bool("list", false, "print the cases and exit")
	flag.Parse()
	if *out == "" && !*list {
		fmt.Fprintln(os.Stderr, "lessondiff: -out DIR is required")
		os.Exit(2)
	}
	if !*list {
		if err := os.MkdirAll(*out, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "lessondiff:", err)
			os.Exit(1)
		}
	}
	n := 0
	for _, l := range lessons.All() {
		if *only != "" && !strings.Contains(l.Slug, *only) {
			continue
		}
		for _, c := range cases(l) {
			if *list {
				fmt.Println(l.Slug, c.name, c.set)
				continue
			}
			start := time.Now()
			body := runCase(l, c.set)
			file := filepath.Join(*out, l.Slug+"__"+c.name+".txt")
			if err := os.WriteFile(file, body, 0o644); err != nil {
				fmt.Fprintln(os.Stderr, "lessondiff:", err)
				os.Exit(1)
			}
			if d := time.Since(start); d > 2*time.Second {
				fmt.Fprintf(os.Stderr, "lessondiff: %s %s took %s\n", l.Slug, c.name, d.Round(time.Millisecond))
			}
			n++
		}
	}
	if !*list {
		fmt.Printf("lessondiff: %d cases written to %s\n", n, *out)
	}
}

type knobCase struct {
	name string
	set  map[string]string
}

// cases lists the knob settings compared for one lesson.
func cases(l *lessons.Lesson) []knobCase {
	out := []knobCase{{name: "default", set: map[string]string{}}}
	for _, p := range l.Params {
		if p.Kind == lessons.Choice {
			for _, c := range p.Choices {
				out = append(out, knobCase{name: p.Key + "=" + c, set: map[string]string{p.Key: c}})
			}
			continue
		}
		for _, x := range []float64{p.Min, p.Max} {
			t := formatNum(p, x)
			out = append(out, knobCase{name: p.Key + "=" + t, set: map[string]string{p.Key: t}})
		}
	}
	for i := 1; i <= 3; i++ {
		r := rand.New(rand.NewPCG(uint64(i), 7))
		set := map[string]string{}
		for _, p := range l.Params {
			if r.IntN(2) == 0 {
				continue // half the knobs keep their defaults
			}
			if p.Kind == lessons.Choice {
				set[p.Key] = p.Choices[r.IntN(len(p.Choices))]
				continue
			}
			// Between the default and one end, so that random sets stay
			// near what a reader would pick instead of at the corners.
			lo, hi := p.Default, p.Max
			if r.IntN(2) == 0 {
				lo, hi = p.Min, p.Default
			}
			x := lo + r.Float64()*(hi-lo)
			if p.Step > 0 {
				x = p.Min + math.Round((x-p.Min)/p.Step)*p.Step
			}
			x = math.Max(p.Min, math.Min(p.Max, x))
			if p.Kind == lessons.Int {
				x = math.Round(x)
			}
			set[p.Key] = formatNum(p, x)
		}
		out = append(out, knobCase{name: "random" + strconv.Itoa(i), set: set})
	}
	return out
}

func formatNum(p lessons.Param, x float64) string {
	if p.Kind == lessons.Int {
		return strconv.FormatInt(int64(x), 10)
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// runCase returns the bytes compared for one case.
func runCase(l *lessons.Lesson, set map[string]string) []byte {
	var b strings.Builder
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "--set %s=%s\n", k, set[k])
	}
	s, v, err := l.Run(set)
	if err != nil {
		fmt.Fprintf(&b, "error: %v\n", err)
		return []byte(b.String())
	}
	j, err := export.RunJSON(l.Slug, v, s)
	if err != nil {
		fmt.Fprintf(&b, "export error: %v\n", err)
		return []byte(b.String())
	}
	whole, err := json.Marshal(s)
	if err != nil {
		fmt.Fprintf(&b, "script marshal error: %v\n", err)
	}
	fmt.Fprintf(&b, "script sha256: %x\n", sha256.Sum256(whole))
	b.Write(j)
	return []byte(b.String())
}
