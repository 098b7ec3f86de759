package blocktable

import (
	"slices"
	"testing"

	"github.com/inferlab/inferlab/core/allocator"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/lessontest"
)

// TestLessonChecks runs the shared checks (lessontest.Checks) on the
// block-table lesson. Its narration check: the translation narrated is the
// pool's table.
func TestLessonChecks(t *testing.T) {
	lessontest.Run(t, lesson, lessontest.Checks{
		Paced: true,
		Refusals: []lessontest.Refusal{
			// A relation is refused on the knob the reader set (length), not on
			// token left at its default, with token's value.
			{Set: map[string]string{"length": "1"}, Key: "length", Want: `length = "1" is not allowed with token = "37" (token: want a token of the 1-token request: 0 to 0)`},
			{Set: map[string]string{"length": "1", "neighbours": "8"}, Key: "length", Want: `length = "1" is not allowed with token = "37"`},
			{Set: map[string]string{"token": "80"}, Key: "token", Want: `token = "80" is not allowed: want a token of the 72-token request: 0 to 71`},
		},
		Narration: func(v lessons.Values) ([]string, error) {
			r, err := runBlockTable(v)
			return blockTableNarration(r), err
		},
	})
}

func blockTableNarration(r blockTableRun) (out lessontest.Problems) {
	a := r.addr
	if len(r.table) != allocator.BlocksNeeded(r.lengthA, r.blockSize) {
		out.Addf("A's table has %d entries for %d tokens of %d-token blocks", len(r.table), r.lengthA, r.blockSize)
	}
	if a.Logical != r.lookup/r.blockSize || a.Offset != r.lookup%r.blockSize || a.Logical >= len(r.table) || a.Physical != r.table[a.Logical] {
		out.Addf("token %d: narrated logical %d, offset %d, physical %d; the table says %v", r.lookup, a.Logical, a.Offset, a.Physical, r.table)
	}
	if want := int64(a.Physical)*int64(r.blockSize)*r.sLayer + int64(a.Offset)*r.sLayer; r.layerAddr != want {
		out.Addf("narrated byte offset %d, the block and offset give %d", r.layerAddr, want)
	}
	for _, b := range r.table {
		if b < 0 || b >= len(r.final.blocks) || r.final.blocks[b].Owner != requestA {
			out.Addf("A's table lists block %d, which the pool does not give A", b)
		}
	}
	for _, o := range r.opened {
		if o.token != o.logical*r.blockSize || len(o.table) != o.logical+1 || !slices.Equal(o.table, r.table[:len(o.table)]) {
			out.Addf("token %d opened logical block %d with table %v; A's final table is %v", o.token, o.logical, o.table, r.table)
		}
	}
	return out
}
