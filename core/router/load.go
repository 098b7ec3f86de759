package router

import (
	"fmt"
	"slices"
)

// ActiveLoad is Dynamo's router-side load tracking (ActiveSequences,
// docs/SOURCES.md#dynamo-kv-router): for every routed request it holds the prefill tokens the
// worker still has to compute, until the first token, and the request's
// blocks, counted once per worker however many active requests share them,
// until the request ends. Output blocks are not tracked
// (router_track_output_blocks defaults to false).
type ActiveLoad struct {
	blockSize int
	workers   map[int]*workerLoad
	reqs      map[int]*activeReq
}

type workerLoad struct {
	tokens   int
	hashes   map[uint64]int // block → active requests using it
	requests int
}

type activeReq struct {
	worker     int
	hashes     []uint64
	prefill    int
	prefilling bool
}

// NewActiveLoad returns an empty tracker; blockSize ≤ 0 means
// DefaultBlockSize.
func NewActiveLoad(blockSize int) *ActiveLoad {
	if blockSize <= 0 {
		blockSize = DefaultBlockSize
	}
	return &ActiveLoad{blockSize: blockSize, workers: map[int]*workerLoad{}, reqs: map[int]*activeReq{}}
}

func (l *ActiveLoad) worker(w int) *workerLoad {
	x := l.workers[w]
	if x == nil {
		x = &workerLoad{hashes: map[uint64]int{}}
		l.workers[w] = x
	}
	return x
}

// Add records req as routed to worker, where overlap of its leading blocks
// were cached: its prefill tokens max(0, Tokens − overlap·block size) join
// the worker's active tokens and its blocks the worker's active blocks.
func (l *ActiveLoad) Add(worker int, req Request, overlap int) error {
	if _, ok := l.reqs[req.ID]; ok {
		return fmt.Errorf("router: request %d already active", req.ID)
	}
	r := &activeReq{
		worker:     worker,
		hashes:     slices.Clone(req.Hashes),
		prefill:    max(0, req.Tokens-overlap*l.blockSize),
		prefilling: true,
	}
	l.reqs[req.ID] = r
	x := l.worker(worker)
	x.tokens += r.prefill
	x.requests++
	for _, h := range r.hashes {
		x.hashes[h]++
	}
	return nil
}

// PrefillDone marks the request's first token: its prefill tokens leave the
// worker's active tokens (Dynamo mark_prefill_completed).
func (l *ActiveLoad) PrefillDone(id int) error {
	r, ok := l.reqs[id]
	if !ok {
		return fmt.Errorf("router: request %d not active", id)
	}
	if r.prefilling {
		r.prefilling = false
		l.workers[r.worker].tokens -= r.prefill
	}
	return nil
}

// Free ends the request: its prefill (if still pending) and its blocks leave
// the worker's load.
func (l *ActiveLoad) Free(id int) error {
	if err := l.PrefillDone(id); err != nil {
		return err
	}
	r := l.reqs[id]
	delete(l.reqs, id)
	x := l.workers[r.worker]
	x.requests--
	for _, h := range r.hashes {
		if x.hashes[h]--; x.hashes[h] == 0 {
			delete(x.hashes, h)
		}
	}
	return nil
}

// Tokens is the worker's active prefill tokens.
func (l *ActiveLoad) Tokens(worker int) int {
	if x := l.workers[worker]; x != nil {
		return x.tokens
	}
	return 0
}

// Blocks is the number of unique blocks of the worker's active requests.
func (l *ActiveLoad) Blocks(worker int) int {
	if x := l.workers[worker]; x != nil {
		return len(x.hashes)
	}
	return 0
}

// Requests is the number of the worker's active requests.
func (l *ActiveLoad) Requests(worker int) int {
	if x := l.workers[worker]; x != nil {
		return x.requests
	}
	return 0
}

// Fill sets ActiveTokens, ActiveBlocks and ActiveHashes of each worker
// state. ActiveHashes shares the tracker's map: read it, do not change it.
func (l *ActiveLoad) Fill(ws []WorkerState) {
	for i := range ws {
		x := l.worker(ws[i].ID)
		ws[i].ActiveTokens = x.tokens
		ws[i].ActiveBlocks = len(x.hashes)
		ws[i].ActiveHashes = x.hashes
	}
}

// Check verifies that every worker's tokens, block references and request
// count are the sums over its active requests (so both return to 0 once its
// requests are past their first token and freed).
func (l *ActiveLoad) Check() error {
	type sum struct {
		tokens, requests int
		hashes           map[uint64]int
	}
	want := map[int]*sum{}
	for _, r := range l.reqs {
		s := want[r.worker]
		if s == nil {
			s = &sum{hashes: map[uint64]int{}}
			want[r.worker] = s
		}
		s.requests++
		if r.prefilling {
			s.tokens += r.prefill
		}
		for _, h := range r.hashes {
			s.hashes[h]++
		}
	}
	for w, x := range l.workers {
		s := want[w]
		if s == nil {
			s = &sum{hashes: map[uint64]int{}}
		}
		if x.tokens != s.tokens || x.requests != s.requests || len(x.hashes) != len(s.hashes) {
			return fmt.Errorf("router: worker %d load %d tokens %d requests %d blocks, requests sum to %d, %d, %d",
				w, x.tokens, x.requests, len(x.hashes), s.tokens, s.requests, len(s.hashes))
		}
		for h, c := range s.hashes {
			if x.hashes[h] != c {
				return fmt.Errorf("router: worker %d block %#x used by %d requests, counted %d", w, h, c, x.hashes[h])
			}
		}
		delete(want, w)
	}
	if len(want) > 0 {
		return fmt.Errorf("router: %d workers with active requests are not tracked", len(want))
	}
	return nil
}
