package radixcache

// Served is what Tree.Serve did with one request.
type Served struct {
	Tokens int // the request's tokens, whole pages
	// Matched is the tokens found cached. When the request is admitted they
	// stay locked from the match to the insert, so all of them are reused.
	Matched  int
	Inserted int // tokens newly cached
	Evicted  int // tokens evicted to make room
	Splits   int // edges split by the match (even when the request waits) and the insert
	// Waits is true when the request's new tokens do not fit even with every
	// unlocked token evicted: like SGLang's PrefillAdder (NO_TOKEN) it is
	// not admitted, nothing is evicted or inserted, and it stays queued.
	Waits bool
	// Node is the request's last node after the insert (nil when it waits).
	Node *Node
	// Touched lists the nodes the match and the insert created: split
	// points and the new leaf.
	Touched []int
}

// Serve runs one request through the tree as SGLang's scheduler does in a
// KV pool of capacity tokens: match_prefix, then lock the matched path
// (PrefillAdder.add_one_req runs under _lock_node(req.last_node), and the
// running request holds inc_lock_ref on it), so that making room cannot
// evict the prefix being reused; admit only when the new tokens fit in the
// free and evictable room (rem_total_tokens), evict least-recently-used
// unlocked leaves for them, insert the whole request (cache_finished_req),
// and release the match's lock. With hold the request keeps one lock chain
// on its whole path, as a running request does; Unlock(Served.Node)
// releases it. Simplified: no output tokens are reserved, and the request
// is computed and cached in one go.
func (t *Tree) Serve(tokens []int, capacity int, hold bool) (Served, error) {
	off := t.off
	t.off = false
	mark := len(t.events)
	out, err := t.serve(tokens, capacity, hold)
	for _, e := range t.events[mark:] {
		switch e.Kind {
		case Split:
			out.Splits++
			out.Touched = append(out.Touched, e.Node)
		case Inserted:
			out.Inserted += e.Len
			out.Touched = append(out.Touched, e.Node)
		}
	}
	if off {
		t.events, t.off = nil, true
	}
	return out, err
}

func (t *Tree) serve(tokens []int, capacity int, hold bool) (Served, error) {
	out := Served{Tokens: len(t.aligned(tokens))}
	matched, last := t.Match(tokens)
	out.Matched = matched
	if err := t.Lock(last); err != nil {
		return out, err
	}
	need := t.TotalSize() + out.Tokens - matched - capacity
	if need > t.EvictableSize() {
		out.Waits = true
		return out, t.Unlock(last)
	}
	if need > 0 {
		out.Evicted = t.Evict(need)
	}
	t.Insert(tokens)
	if err := t.Unlock(last); err != nil {
		return out, err
	}
	_, out.Node = t.Match(tokens)
	if hold {
		return out, t.Lock(out.Node)
	}
	return out, nil
}
