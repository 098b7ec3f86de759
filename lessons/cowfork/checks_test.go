package cowfork

import (
	"testing"

	"github.com/inferlab/inferlab/core/allocator"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/lessontest"
)

// TestLessonChecks runs the shared checks (lessontest.Checks) on the
// cow-fork lesson. Its narration check: the sharing counts are the pool's.
func TestLessonChecks(t *testing.T) {
	lessontest.Run(t, lesson, lessontest.Checks{
		Paced: true,
		Narration: func(v lessons.Values) ([]string, error) {
			r, err := runCowFork(v)
			return cowForkNarration(r), err
		},
	})
}

func cowForkNarration(r cowForkRun) (out lessontest.Problems) {
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
			out.Addf("sample %d holds %d tokens, want the %d-token prompt and %d outputs", row.req+1, row.tokens, r.promptLen, r.output)
		}
		for i, b := range row.blocks {
			if row.shared[i] != (f.blocks[b].Refs > 1) {
				out.Addf("sample %d's block %d drawn shared %v with %d references", row.req+1, b, row.shared[i], f.blocks[b].Refs)
			}
		}
	}
	if len(f.rows) != r.n || r.stats.inUse != inUse || r.stats.unshared != unshared || r.stats.copies != f.copies {
		out.Addf("narrated %d samples, %d blocks in use, %d without sharing, %d copies; the pool: %d samples, %d, %d, %d",
			r.n, r.stats.inUse, r.stats.unshared, r.stats.copies, len(f.rows), inUse, unshared, f.copies)
	}
	if r.prefillBlocks != allocator.BlocksNeeded(r.promptLen, r.b) {
		out.Addf("S1's prompt took %d blocks, want ⌈%d/%d⌉", r.prefillBlocks, r.promptLen, r.b)
	}
	return out
}
