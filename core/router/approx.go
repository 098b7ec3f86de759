package router

import "fmt"

// Dynamo's no-events mode defaults (KvRouterConfig, docs/SOURCES.md#dynamo-kv-router).
const (
	DefaultRouterTTL              = 120.0   // router_ttl_secs, simulated seconds
	DefaultRouterMaxTreeSize      = 1 << 20 // router_max_tree_size, blocks
	DefaultRouterPruneTargetRatio = 0.8     // router_prune_target_ratio
)

// ApproxIndex is Dynamo's ApproxKvIndexer (--no-kv-events): with no events
// from the workers, the router assumes a worker caches the blocks of every
// request it was sent, for TTL seconds after the last such request. When
// more than MaxTreeSize (worker, block) entries are held, the least recently
// routed are pruned down to PruneTargetRatio of it. Time is simulated and
// must not go backwards; an earlier time is taken as the latest seen.
type ApproxIndex struct {
	TTL              float64
	MaxTreeSize      int
	PruneTargetRatio float64

	idx    *Index
	expiry map[approxKey]float64
	queue  []approxEntry // by expiry time, which is routing order
	head   int
	now    float64
}

type approxKey struct {
	worker int
	hash   uint64
}

type approxEntry struct {
	approxKey
	expires float64
}

// NewApproxIndex returns an empty approximate index with Dynamo's defaults;
// ttl ≤ 0 means DefaultRouterTTL.
func NewApproxIndex(ttl float64) *ApproxIndex {
	if ttl <= 0 {
		ttl = DefaultRouterTTL
	}
	return &ApproxIndex{
		TTL:              ttl,
		MaxTreeSize:      DefaultRouterMaxTreeSize,
		PruneTargetRatio: DefaultRouterPruneTargetRatio,
		idx:              NewIndex(),
		expiry:           map[approxKey]float64{},
	}
}

// Advance moves the clock to now and forgets every entry that has expired
// (expiry time ≤ now).
func (a *ApproxIndex) Advance(now float64) {
	a.now = max(a.now, now)
	for a.head < len(a.queue) && a.queue[a.head].expires <= a.now {
		a.pop()
	}
	a.compact()
}

// Record notes that the request whose full-block chain hashes are hashes was
// routed to worker at time now: each block is (re)stamped to expire TTL
// later. Within one request the last block is queued first, so pruning
// shortens cached prefixes from the tail.
func (a *ApproxIndex) Record(worker int, hashes []uint64, now float64) {
	a.Advance(now)
	exp := a.now + a.TTL
	for i := len(hashes) - 1; i >= 0; i-- {
		k := approxKey{worker, hashes[i]}
		if _, ok := a.expiry[k]; !ok {
			parent := RootHash
			if i > 0 {
				parent = hashes[i-1]
			}
			a.idx.add(worker, hashes[i], parent)
		}
		a.expiry[k] = exp
		a.queue = append(a.queue, approxEntry{k, exp})
	}
	if a.MaxTreeSize > 0 && len(a.expiry) > a.MaxTreeSize {
		target := int(float64(a.MaxTreeSize) * a.PruneTargetRatio)
		for len(a.expiry) > target && a.head < len(a.queue) {
			a.pop()
		}
		a.compact()
	}
}

// pop removes the queue head and, unless a later routing refreshed it, the
// entry it stands for.
func (a *ApproxIndex) pop() {
	e := a.queue[a.head]
	a.head++
	if exp, ok := a.expiry[e.approxKey]; ok && exp == e.expires {
		delete(a.expiry, e.approxKey)
		a.idx.drop(e.worker, e.hash, 1)
	}
}

func (a *ApproxIndex) compact() {
	if a.head > 1024 && a.head*2 > len(a.queue) {
		a.queue = append(a.queue[:0], a.queue[a.head:]...)
		a.head = 0
	}
}

// Overlap is Index.Overlap over the unexpired entries as of the last
// Advance or Record.
func (a *ApproxIndex) Overlap(hashes []uint64) map[int]int { return a.idx.Overlap(hashes) }

// Blocks is the number of blocks the router assumes worker caches.
func (a *ApproxIndex) Blocks(worker int) int { return a.idx.Blocks(worker) }

// Entries is the number of (worker, block) entries held.
func (a *ApproxIndex) Entries() int { return len(a.expiry) }

// Snapshot is Index.Snapshot of the assumed contents.
func (a *ApproxIndex) Snapshot() []BlockView { return a.idx.Snapshot() }

// Check verifies the underlying index and that it holds exactly one copy of
// each unexpired entry, none of which has expired.
func (a *ApproxIndex) Check() error {
	if err := a.idx.Check(); err != nil {
		return err
	}
	n := 0
	for w, m := range a.idx.workers {
		for h, c := range m {
			exp, ok := a.expiry[approxKey{w, h}]
			if !ok || c != 1 {
				return fmt.Errorf("router: approx index holds %d copies of %#x on worker %d, expiry known %v", c, h, w, ok)
			}
			if exp <= a.now {
				return fmt.Errorf("router: approx entry %#x on worker %d expired at %g, now %g", h, w, exp, a.now)
			}
			n++
		}
	}
	if n != len(a.expiry) {
		return fmt.Errorf("router: approx index holds %d entries, %d stamped", n, len(a.expiry))
	}
	return nil
}
