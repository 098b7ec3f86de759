package scheduler

// RequestTimes are a finished request's arrival and the times its first
// and last output tokens appeared, in seconds.
type RequestTimes struct {
	ID                   int
	Arrival, First, Last float64
	Prompt, Output       int
}

// Times returns every finished request's RequestTimes, by arrival: what
// Requests gives without the gaps between tokens, for a run too long to
// keep one figure per token (a replayed benchmark streams millions).
func (l *batchLoop) Times() []RequestTimes {
	out := make([]RequestTimes, 0, l.Finished())
	for _, r := range l.reqs {
		if r.status != finished {
			continue
		}
		first := r.tokens.cur
		if len(r.tokens.done) > 0 {
			first = r.tokens.done[0]
		}
		last := r.tokens.cur
		out = append(out, RequestTimes{ID: r.ID, Arrival: r.Arrival, Prompt: r.Prompt, Output: r.Output,
			First: l.ends[first.start], Last: l.ends[last.start+last.n-1]})
	}
	return out
}
