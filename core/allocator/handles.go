package allocator

import "iter"

// handles maps resident requests' ids to their Requests. Ids
// in [0, denseIDs) index a slice, others a map: the lab numbers requests
// from 0, and in WebAssembly, which has no AES instructions, a map's hash
// is computed in software, so the lookups of every admission, growth by id
// and free cost several times a slice index. H is a pointer type; its zero
// value means "none".
type handles[H comparable] struct {
	dense  []H
	sparse map[int]H
	n      int
}

// denseIDs bounds the slice: 8 MiB of pointers at most.
const denseIDs = 1 << 20

// get returns id's handle, or the zero H.
func (m *handles[H]) get(id int) H {
	if uint(id) < uint(len(m.dense)) {
		return m.dense[id]
	}
	if uint(id) >= denseIDs {
		return m.sparse[id]
	}
	var none H
	return none
}

// set gives id the handle h, which is not the zero H.
func (m *handles[H]) set(id int, h H) {
	var none H
	if uint(id) >= denseIDs {
		if m.sparse == nil {
			m.sparse = map[int]H{}
		}
		if m.sparse[id] == none {
			m.n++
		}
		m.sparse[id] = h
		return
	}
	if id >= len(m.dense) {
		// Never past denseIDs: get and del look in the slice first, so
		// an id the map holds must not fall inside it.
		grown := make([]H, min(max(id+1, 2*len(m.dense), 64), denseIDs))
		copy(grown, m.dense)
		m.dense = grown
	}
	if m.dense[id] == none {
		m.n++
	}
	m.dense[id] = h
}

// del forgets id's handle, if it has one.
func (m *handles[H]) del(id int) {
	var none H
	switch {
	case uint(id) < uint(len(m.dense)):
		if m.dense[id] != none {
			m.dense[id] = none
			m.n--
		}
	case uint(id) >= denseIDs:
		if _, ok := m.sparse[id]; ok {
			delete(m.sparse, id)
			m.n--
		}
	}
}

// len is the number of ids with a handle.
func (m *handles[H]) len() int { return m.n }

// all yields every id with its handle: the dense ids in ascending order,
// then the others in no particular order.
func (m *handles[H]) all() iter.Seq2[int, H] {
	return func(yield func(int, H) bool) {
		var none H
		for id, h := range m.dense {
			if h != none && !yield(id, h) {
				return
			}
		}
		for id, h := range m.sparse {
			if !yield(id, h) {
				return
			}
		}
	}
}
