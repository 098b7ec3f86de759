package lessons

import (
	"fmt"
	"github.com/inferlab/inferlab/internal/textfmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// seedParam is the knob every seeded lesson shares; `inferlab run --seed N`
// sets it.
var seedParam = Param{Key: "seed", Label: "Random seed", Help: "Same seed, same requests, same steps.",
	Kind: Int, Default: 42, Min: 0, Max: 1 << 31, Step: 1}

// newRand returns the lesson's deterministic generator. PCG gives the same
// sequence natively and in WebAssembly.
func newRand(seed int) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), 0x1a9b5eed))
}

// uniform draws an integer in [lo, hi].
func uniform(r *rand.Rand, lo, hi int) int {
	if hi <= lo {
		return lo
	}
	return lo + r.IntN(hi-lo+1)
}

// reqName is how requests are labelled everywhere: R1, R2, …
func reqName(id int) string { return "R" + strconv.Itoa(id+1) }

// names lists request labels, eliding the middle of long lists.
func names(ids []int) string {
	const show = 6
	parts := make([]string, 0, show+1)
	for i, id := range ids {
		if i == show-1 && len(ids) > show {
			parts = append(parts, fmt.Sprintf("… (%d more)", len(ids)-i))
			break
		}
		parts = append(parts, reqName(id))
	}
	return strings.Join(parts, ", ")
}

// comma formats an integer with thousands separators.
func comma(n int) string { return textfmt.Comma(n) }

// pct formats a fraction as a percentage with one decimal.
func pct(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" }

// plural picks the singular or plural noun for n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// checkOrdered reports the first pair of knobs whose low value exceeds its
// high one, e.g. prompt_min > prompt_max, naming the low knob.
func checkOrdered(v Values, pairs ...[2]string) error {
	for _, p := range pairs {
		if lo, hi := v.Float(p[0]), v.Float(p[1]); lo > hi {
			return Relation(p[0], v.TextOf(p[0]), fmt.Sprintf("at most %s (%s)", p[1], v.TextOf(p[1])))
		}
	}
	return nil
}

// lengthPairs are the min/max knobs of prompt and output lengths.
var lengthPairs = [][2]string{{"prompt_min", "prompt_max"}, {"output_min", "output_max"}}

// indexCursors places each step's chart cursor (Step.Cursor) at the step's
// own index.
func indexCursors(steps []Step) {
	for i := range steps {
		steps[i].Cursor = float64(i)
	}
}
