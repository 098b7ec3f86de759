package cluster

// Host offload, after NVIDIA Dynamo's KV Block Manager (docs/SOURCES.md#dyn-kvbm):
// one vLLM v1 engine (core/scheduler, prefix caching on) whose GPU pool is
// tier G1, with a pool of pinned host memory beside it, tier G2.
//
// The flow:
//  1. Every block the engine registers in its prefix cache (a KV event
//     "stored") is copied to G2 as well, deduplicated by its chain hash
//     (KVBM offloads registered blocks; each tier deduplicates on
//     registration). G2 holds HostBlocks blocks and drops its least
//     recently used one to make room. G1 evicts as vLLM does, lazily, when
//     a free cached block is handed out again; G2 keeps its copy.
//  2. When a request arrives, its prompt's leading full blocks are looked
//     up in G1 (vLLM's get_computed_blocks) and then, past the last G1
//     hit, in G2. The blocks found only in G2 are onboarded: they cross
//     the host link (PCIe, Link.Transfer of their bytes; one onboarding at
//     a time) and are placed in G1 and held for the request
//     (scheduler.ReceiveKV), as disaggregated serving places arrived KV
//     (disagg.go), so that the request's admission finds them cached. The
//     request reaches the scheduler when its blocks have landed; its
//     latencies are counted from its real arrival.
//  3. Without G2 (HostBlocks 0) a block evicted from G1 is gone, and the
//     prompt past the G1 hit is recomputed.
//
// Simplifications: offloads are free (KVBM copies them asynchronously,
// off the critical path), an onboarding blocks its request until all of
// it has landed (no layer-by-layer overlap), and a prompt whose onboarded
// blocks do not fit in G1's free blocks, or that arrives while another
// request's onboarded blocks wait for their admission or while requests
// queue, recomputes them.

import (
	"container/list"
	"errors"
	"fmt"
	"sort"

	"github.com/inferlab/inferlab/core/allocator"
	"github.com/inferlab/inferlab/core/kvhash"
	"github.com/inferlab/inferlab/core/scheduler"
)

// OffloadConfig describes one engine with an optional host tier.
type OffloadConfig struct {
	Scheduler  scheduler.Config // G1: the engine (prefix caching and KV events are turned on)
	Timer      scheduler.Timer
	HostBlocks int     // G2's capacity in blocks; 0: no host tier
	BlockBytes float64 // KV bytes of one block (all layers)
	Link       Link    // G2 → G1
}

// Onboard is what the host tier did for one request.
type Onboard struct {
	G1Tokens, G2Tokens int     // prompt tokens found in G1, and past them in G2
	Wait               float64 // seconds from arrival until its G2 blocks had landed (0: none)
}

// OffloadResult is a whole run.
type OffloadResult struct {
	Requests    []scheduler.RequestMetrics // by arrival; latencies from the real arrival
	Onboards    []Onboard                  // by request, in the order given
	Offloaded   int                        // blocks copied G1 → G2 (new to G2)
	HostEvicted int                        // blocks G2 dropped (LRU)
	Onboarded   int                        // blocks copied G2 → G1
	Counts      Counts
	Busy        Busy // the engine's time, by phase
}

// hostTier is G2: block hashes in least-recently-used order.
type hostTier struct {
	cap   int
	order *list.List // front: most recent
	at    map[uint64]*list.Element
}

func newHostTier(blocks int) *hostTier {
	return &hostTier{cap: blocks, order: list.New(), at: map[uint64]*list.Element{}}
}

// put stores h (or refreshes it) and reports whether it was new and how
// many blocks were dropped for it.
func (t *hostTier) put(h uint64) (added bool, dropped int) {
	if t.cap <= 0 {
		return false, 0
	}
	if e, ok := t.at[h]; ok {
		t.order.MoveToFront(e)
		return false, 0
	}
	for t.order.Len() >= t.cap {
		old := t.order.Back()
		delete(t.at, old.Value.(uint64))
		t.order.Remove(old)
		dropped++
	}
	t.at[h] = t.order.PushFront(h)
	return true, dropped
}

// touch reports whether h is held, refreshing it.
func (t *hostTier) touch(h uint64) bool {
	e, ok := t.at[h]
	if ok {
		t.order.MoveToFront(e)
	}
	return ok
}

// offload is a run in progress.
type offload struct {
	cfg      OffloadConfig
	s        *scheduler.Scheduler
	host     *hostTier
	res      *OffloadResult
	pending  []pendingReq    // onboarding, by landing time
	linkFree float64         // when the host link is next free
	arrival  map[int]float64 // each request's real arrival, by id
}

type pendingReq struct {
	at float64
	r  scheduler.Request
}

// RunOffload serves reqs (each with PromptIDs) on one engine with an
// optional host tier.
func RunOffload(cfg OffloadConfig, reqs []scheduler.Request) (*OffloadResult, error) {
	if cfg.Timer == nil {
		return nil, errors.New("cluster: a timer is required")
	}
	if cfg.HostBlocks < 0 || !(cfg.BlockBytes > 0) {
		return nil, fmt.Errorf("cluster: HostBlocks %d, BlockBytes %g: want ≥ 0 and > 0", cfg.HostBlocks, cfg.BlockBytes)
	}
	if cfg.HostBlocks > 0 {
		if err := cfg.Link.Validate(); err != nil {
			return nil, err
		}
	}
	sc := cfg.Scheduler
	sc.PrefixCaching, sc.KVEvents = true, true
	s, err := scheduler.New(sc, cfg.Timer, nil)
	if err != nil {
		return nil, err
	}
	o := &offload{cfg: cfg, s: s, host: newHostTier(cfg.HostBlocks), res: &OffloadResult{Onboards: make([]Onboard, len(reqs))},
		arrival: map[int]float64{}}
	order := make([]int, len(reqs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return reqs[order[a]].Arrival < reqs[order[b]].Arrival })
	for _, i := range order {
		r := reqs[i]
		if err := o.flush(r.Arrival); err != nil {
			return nil, err
		}
		if err := o.arrive(i, r); err != nil {
			return nil, err
		}
	}
	if err := o.flush(-1); err != nil {
		return nil, err
	}
	if err := o.advance(-1); err != nil {
		return nil, err
	}
	return o.finish()
}

// advance runs the steps that start before t (all of them if t < 0),
// offloading what they register.
func (o *offload) advance(t float64) error {
	for o.s.Busy() && (t < 0 || o.s.Clock() < t) {
		st, err := o.s.Step()
		if err != nil {
			return err
		}
		o.res.Counts.add(st)
		o.res.Busy.Add(st)
		o.s.DrainKVEvents(func(e allocator.Event) {
			if e.Kind == allocator.Stored {
				added, dropped := o.host.put(e.Hash)
				if added {
					o.res.Offloaded++
				}
				o.res.HostEvicted += dropped
			}
		})
	}
	return nil
}

// flush adds the onboarding requests whose blocks land before t (all if
// t < 0), in landing order.
func (o *offload) flush(t float64) error {
	for len(o.pending) > 0 && (t < 0 || o.pending[0].at <= t) {
		p := o.pending[0]
		o.pending = o.pending[1:]
		if err := o.advance(p.at); err != nil {
			return err
		}
		if err := o.s.Add(p.r); err != nil {
			return err
		}
	}
	return nil
}

// arrive looks request i up in G1 and G2 and either adds it or onboards
// its G2 blocks first.
func (o *offload) arrive(i int, r scheduler.Request) error {
	if err := o.advance(r.Arrival); err != nil {
		return err
	}
	o.arrival[r.ID] = r.Arrival
	o.res.Counts.PromptTokens += int64(len(r.PromptIDs))
	pool := o.s.Pool()
	bs := pool.BlockSize()
	n := len(r.PromptIDs)
	hashes := kvhash.Extend(nil, r.PromptIDs, bs, "")
	g1, g1Tok := pool.ComputedBlocks(hashes, n)
	k := len(g1)
	for k < len(hashes) && (k+1)*bs <= n-1 && o.host.touch(hashes[k]) {
		k++
	}
	ob := Onboard{G1Tokens: g1Tok}
	extra := k - len(g1)
	// Room for the onboarded blocks and the rest of the prompt, with one
	// block to spare for every running request; one onboarded prefix is
	// held at a time, so that holds never starve a request that needs the
	// whole pool, and only when nothing waits, so that the request is
	// admitted as its blocks land (KVBM onboards into the blocks the
	// scheduler allocates at admission; a hold kept through a queue would
	// take G1 from the requests ahead of it).
	if extra > 0 && o.s.ReceivedKV() == 0 && o.s.Load().Waiting == 0 && pool.FreeBlocks() >= pool.BlocksFor(n)-len(g1)+o.s.Load().Running {
		// ReceiveKV finds the same G1 hit: the G1 walk stopped at a miss
		// before block k.
		err := o.s.ReceiveKV(r, k*bs)
		if _, short := errors.AsType[*allocator.NoSpaceError](err); short {
			// The free count included the G1 hit's own cached blocks: no
			// room after all, and the pool is unchanged (all or nothing).
			o.res.Onboards[i] = ob
			return o.s.Add(r)
		}
		if err != nil {
			return err
		}
		o.res.Onboarded += extra
		start := max(r.Arrival, o.linkFree)
		o.linkFree = start + o.cfg.Link.Transfer(float64(extra)*o.cfg.BlockBytes)
		ob.G2Tokens, ob.Wait = extra*bs, o.linkFree-r.Arrival
		o.res.Onboards[i] = ob
		p := pendingReq{at: o.linkFree, r: r}
		p.r.Arrival = o.linkFree
		at := sort.Search(len(o.pending), func(j int) bool { return o.pending[j].at > p.at })
		o.pending = append(o.pending, pendingReq{})
		copy(o.pending[at+1:], o.pending[at:])
		o.pending[at] = p
		return nil
	}
	o.res.Onboards[i] = ob
	// Requests still onboarding land after r.Arrival (flush added the
	// others), so r is added in arrival order.
	return o.s.Add(r)
}

func (o *offload) finish() (*OffloadResult, error) {
	if n := o.s.ReceivedKV(); n > 0 {
		return nil, fmt.Errorf("cluster: %d onboarded prefixes were never admitted", n)
	}
	ms := o.s.Requests()
	// The scheduler counts from when a request reached it: after its
	// onboarding, or after the step that straddled its arrival.
	for j := range ms {
		d := ms[j].Arrival - o.arrival[ms[j].ID]
		ms[j].Arrival -= d
		ms[j].TTFT += d
		ms[j].E2E += d
	}
	o.res.Requests = ms
	return o.res, nil
}
