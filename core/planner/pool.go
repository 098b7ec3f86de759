package planner

import "sort"

// Pool is one kind of worker under declarative scaling: the workers
// serving and the start-up times of those launched but not yet serving.
type Pool struct {
	serving int
	ready   []float64 // when each starting worker begins to serve, ascending
}

// NewPool is a pool of n workers, all serving.
func NewPool(n int) *Pool { return &Pool{serving: n} }

// Scale sets the pool's replica count to target at time now: workers
// beyond it go at once (those still starting first); missing ones are
// launched and serve from now + startup.
func (p *Pool) Scale(now float64, target int, startup float64) {
	p.advance(now)
	have := p.serving + len(p.ready)
	switch {
	case target > have:
		for i := have; i < target; i++ {
			p.ready = append(p.ready, now+startup)
		}
		sort.Float64s(p.ready)
	case target < have:
		drop := have - target
		// The workers launched last are the furthest from serving.
		cut := min(drop, len(p.ready))
		p.ready = p.ready[:len(p.ready)-cut]
		p.serving -= drop - cut
	}
}

// advance moves the workers whose start-up has ended by t into service.
func (p *Pool) advance(t float64) {
	i := 0
	for i < len(p.ready) && p.ready[i] <= t {
		i++
	}
	p.serving += i
	p.ready = p.ready[i:]
}

// Serving is the workers serving at t (t at or after the last Scale).
func (p *Pool) Serving(t float64) int {
	n := p.serving
	for _, r := range p.ready {
		if r <= t {
			n++
		}
	}
	return n
}

// Target is the replica count last set: serving and starting.
func (p *Pool) Target() int { return p.serving + len(p.ready) }

// Changes are the times in (from, to) at which starting workers begin to
// serve, ascending and without repeats.
func (p *Pool) Changes(from, to float64) []float64 {
	var out []float64
	for _, r := range p.ready {
		if r > from && r < to && (len(out) == 0 || out[len(out)-1] != r) {
			out = append(out, r)
		}
	}
	return out
}
