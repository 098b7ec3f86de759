package scheduler

import (
	"errors"

	"github.com/inferlab/inferlab/core/allocator"
)

// preemptFor is recompute preemption as vLLM v1's scheduler makes it
// (vllm/v1/core/sched/scheduler.py, schedule(), v0.8–v0.10): while running
// request q cannot get the room it asked for, the lowest-priority running
// request, which under first come, first served is the last one admitted,
// is preempted, until q fits or q itself was the one preempted. err is the
// refusal of q's first try, retry asks again, and evict is the serving
// loop's preemption of a victim already taken off the end of *running: it
// frees the victim's memory and sends it back to the head of the waiting
// queue. It reports whether q got its room. Both serving loops use it:
// Scheduler, which grows a request by its share of the step's token
// budget, and Loop, by one token per tick.
func preemptFor[Q comparable](running *[]Q, q Q, err error, retry func() error, evict func(Q) error) (bool, error) {
	for {
		if _, short := errors.AsType[*allocator.NoSpaceError](err); !short {
			return false, err
		}
		list := *running
		victim := list[len(list)-1]
		*running = list[:len(list)-1]
		if err := evict(victim); err != nil {
			return false, err
		}
		if victim == q {
			return false, nil
		}
		if err = retry(); err == nil {
			return true, nil
		}
	}
}
