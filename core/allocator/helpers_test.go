package allocator

// reqSet gives each request id of a test its *Request, made on first use,
// as a serving loop keeps one per request.
type reqSet map[int]*Request

func (s reqSet) get(id int) *Request {
	r := s[id]
	if r == nil {
		r = &Request{ID: id}
		s[id] = r
	}
	return r
}

// store asks p for n more tokens of request id, whose ids are ids (len n)
// or unknown (nil): the request's TokenIDs are cut to the tokens it holds
// and extended with them, as a caller that learns a token's id as it is
// made would keep them.
func (s reqSet) store(p KVPool, id, n int, ids []int) error {
	r := s.get(id)
	at := min(len(r.TokenIDs), r.tokens())
	r.TokenIDs = r.TokenIDs[:at:at]
	if ids != nil {
		for len(r.TokenIDs) < r.tokens() {
			r.TokenIDs = append(r.TokenIDs, unknownToken)
		}
		r.TokenIDs = append(r.TokenIDs, ids...)
	}
	return p.AllocateSlots(r, n)
}

// admit stores n tokens of request id, admitting it with final tokens at
// most.
func (s reqSet) admit(p KVPool, id, n, final int) error {
	s.get(id).Final = final
	return s.store(p, id, n, nil)
}

// free releases request id.
func (s reqSet) free(p KVPool, id int) error { return p.Free(s.get(id)) }

// shortOf reads AllocateSlots' error as a serving loop does: the shortfall
// and false for want of room, true when the tokens fitted, or the error of
// a call that was wrong.
func shortOf(err error) (NoSpaceError, bool, error) {
	if s, ok := err.(*NoSpaceError); ok {
		return *s, false, nil
	}
	return NoSpaceError{}, err == nil, err
}
