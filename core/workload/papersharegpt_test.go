package workload

import (
	"math/rand/v2"
	"testing"
)

// Every pair passes vLLM's ShareGPT filter, and the filter, which drops the
// lognormals' long tails, leaves means a little under their 161.31 and
// 337.99.
func TestPaperShareGPT(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 1))
	const n = 20000
	var sumP, sumO int
	for range n {
		p, o := PaperShareGPT{}.Draw(r)
		if p < 4 || o < 4 || p > 1024 || p+o > PaperShareGPTMaxTotal {
			t.Fatalf("drew prompt %d, output %d: outside vLLM's filter", p, o)
		}
		sumP, sumO = sumP+p, sumO+o
	}
	mp, mo := float64(sumP)/n, float64(sumO)/n
	t.Logf("mean prompt %.1f, mean output %.1f", mp, mo)
	if mp < 130 || mp > 161.31 || mo < 280 || mo > 337.99 {
		t.Errorf("mean prompt %.1f, output %.1f: want a little under 161.31 and 337.99", mp, mo)
	}
}
