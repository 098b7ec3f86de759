package scheduler

import (
	"fmt"

	"github.com/inferlab/inferlab/core/allocator"
)

// capacityRule is what separates TensorRT-LLM's capacity scheduler from
// vLLM's admission in the paged engines (Config.Capacity): whether the
// waiting request r, whose cached prefix blocks are hits, may start this
// step, and the invariant that promise keeps.
type capacityRule interface {
	admits(s *Scheduler, r *req, hits []int) bool
	check(s *Scheduler, st Step) error
}

// capacityRules are the rules by CapacityPolicy.
var capacityRules = [...]capacityRule{PackForStep: packForStep{}, GuaranteedNoEvict: guaranteedNoEvict{}}

// packForStep is vLLM v1's admission (TensorRT-LLM's MAX_UTILIZATION): a
// request starts when the pool has the blocks of this step's tokens, which
// AllocateSlots finds out; a running request short of a block later
// preempts the last one started.
type packForStep struct{}

func (packForStep) admits(*Scheduler, *req, []int) bool { return true }
func (packForStep) check(*Scheduler, Step) error        { return nil }

// guaranteedNoEvict is TensorRT-LLM's GUARANTEED_NO_EVICT: a request
// starts only if the blocks it needs to reach its full length fit in what
// the running requests' claims leave free, so nothing is ever preempted.
type guaranteedNoEvict struct{}

func (guaranteedNoEvict) admits(s *Scheduler, r *req, hits []int) bool {
	return claimedBlocks(s)+blocksToFinish(s, r, hits) <= s.pool.FreeBlocks()
}

func (guaranteedNoEvict) check(s *Scheduler, st Step) error {
	if len(st.Preempted) > 0 {
		return fmt.Errorf("GuaranteedNoEvict preempted %v", st.Preempted)
	}
	if c := claimedBlocks(s); c > s.pool.FreeBlocks() {
		return fmt.Errorf("running requests claim %d blocks to finish, %d free", c, s.pool.FreeBlocks())
	}
	return nil
}

// claimedBlocks is what GuaranteedNoEvict keeps free for the running
// requests: the blocks each still needs to reach its full length
// (TensorRT-LLM's getRemainingBlocksToCompletion, summed by
// NoEvictScheduledBlocksManager).
func claimedBlocks(s *Scheduler) int {
	n := 0
	for _, q := range s.running {
		n += allocator.BlocksNeeded(q.Prompt+q.Output, s.cfg.BlockSize) - len(s.pool.Table(q.ID))
	}
	return n
}

// blocksToFinish is the free blocks waiting request r would take to reach
// its full length, given its cached prefix blocks hits: all its blocks but
// the hits another request already holds (a cached block nobody holds sits
// in the free queue, and reusing it takes it from there).
func blocksToFinish(s *Scheduler, r *req, hits []int) int {
	n := allocator.BlocksNeeded(r.Prompt+r.Output, s.cfg.BlockSize)
	for _, b := range hits {
		if s.pool.Refs(b) > 0 {
			n--
		}
	}
	return n
}
