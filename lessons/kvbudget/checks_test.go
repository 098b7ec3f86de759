package kvbudget

import (
	"fmt"
	"math"
	"strconv"
	"testing"

	"github.com/inferlab/inferlab/core/allocator"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/lessons/lessontest"
)

// TestLessonChecks runs the shared checks (lessontest.Checks) on the
// kv-budget lesson. Its narration check: the pool's blocks hold what the
// narration says.
func TestLessonChecks(t *testing.T) {
	lessontest.Run(t, lesson, lessontest.Checks{
		Narration: func(v lessons.Values) ([]string, error) {
			r, err := runKVBudget(v)
			return kvBudgetNarration(r), err
		},
		Mismatches: []lessontest.Mismatch{
			{Name: "a concurrency the blocks do not hold", Check: func(t *testing.T, v lessons.Values, alter bool) []string {
				r, err := runKVBudget(v)
				lessontest.MustRun(t, err)
				if alter {
					r.pool.Concurrency++
				}
				return kvBudgetNarration(r)
			}},
		},
	})
}

func kvBudgetNarration(r kvBudgetRun) (out lessontest.Problems) {
	p, b := r.pool, r.budget
	per := int64(b.BlockSize) * p.BytesPerToken
	if p.Tokens != p.Blocks*int64(b.BlockSize) || p.Blocks*per > p.Available || (p.Blocks+1)*per <= p.Available {
		out.Addf("%d blocks, %d tokens of %d B from %d B available: not the whole blocks that fit", p.Blocks, p.Tokens, per, p.Available)
	}
	// "Maximum concurrency": requests of max_model_len tokens, placed in a
	// paged pool of the narrated blocks.
	pool, err := allocator.NewPaged(int(p.Blocks), b.BlockSize)
	if err != nil {
		out.Addf("pool of %d blocks: %v", p.Blocks, err)
		return out
	}
	fit := 0
	for fit < 100_000 && pool.AllocateSlots(&allocator.Request{ID: fit}, b.MaxModelLen) == nil {
		fit++
	}
	if fit != int(math.Floor(p.Concurrency)) {
		out.Addf("narrated concurrency %.2f, but %d requests of %d tokens fit the %d blocks", p.Concurrency, fit, b.MaxModelLen, p.Blocks)
	}
	if s := r.Script(); !lessontest.Narrates(s, fmt.Sprintf("holds %s blocks", kit.Comma(int(p.Blocks)))) || !lessontest.Narrates(s, fmt.Sprintf("GPU KV cache size: %s tokens", kit.Comma(int(p.Tokens)))) {
		out.Addf("the narration does not state the %d blocks and %d tokens", p.Blocks, p.Tokens)
	}
	return out
}

// kv-budget's figure for a GPU, model and token budget (0.9 utilization,
// BF16, TP 1) is the pool the lessons' engines simulate (NewEngineAt), with
// vLLM's null block.
func TestKVBudgetIsTheEnginesPool(t *testing.T) {
	n := 0
	for _, g := range kit.GPUParam.Choices {
		for _, m := range kit.ModelParam.Choices {
			for _, budget := range []int{2048, 8192, 32768} {
				e, err := kit.NewEngineAt(lessontest.EngineValues(t, g, m), 16, budget)
				if err != nil {
					continue // TestEnginePoolIsVLLMs checks the refusals
				}
				n++
				s, _, err := lesson.Run(map[string]string{"gpu": g, "model": m, "max_num_batched_tokens": strconv.Itoa(budget), "max_model_len": "16"})
				if err != nil {
					t.Errorf("%s on %s at %d tokens: the engine runs, kv-budget refuses: %v", m, g, budget, err)
					continue
				}
				if blocks, _ := s.Metric("kv_blocks"); int(blocks) != e.KVBlocks+1 {
					t.Errorf("%s on %s at %d tokens: engine %d blocks + the null block, kv-budget %v", m, g, budget, e.KVBlocks, blocks)
				}
			}
		}
	}
	if n < 30 {
		t.Errorf("only %d engines built", n)
	}
}
