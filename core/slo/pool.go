package slo

import "math"

// pool is the probes near the capacity, every seed's pooled (see Steady's
// doc): the first seed's bracket and each later seed's probe, as margins
// against the logarithm of the rate.
type pool struct {
	o    Objective
	runs []pooledRun
	// failed marks the limits some pooled probe failed: only their lines
	// can say where the capacity lies.
	failed [3]bool
}

// pooledRun is one probe: the logarithm of its rate and its margins.
type pooledRun struct {
	x float64
	m [3]float64
}

// newPool pools the first seed's bracket (its probes at Met and Above),
// for an objective o with its limits on waiting set (waitLimits).
func newPool(o Objective, first SeedCapacity) *pool {
	p := &pool{o: o}
	p.add(first.outcomeAt(first.Met))
	p.add(first.outcomeAt(first.Above))
	return p
}

// add pools one probe.
func (p *pool) add(out Outcome) {
	m := margins(p.o, out)
	for i := range m {
		p.failed[i] = p.failed[i] || m[i] > 0
	}
	p.runs = append(p.runs, pooledRun{x: math.Log(out.Rate), m: m})
}

// line is one limit's least-squares line through the pooled margins:
// margin = level + slope·(x − mean), with the residuals' variance.
type line struct {
	n, mean, sxx       float64
	level, slope, rvar float64
}

// fit is the line of limit i.
func (p *pool) fit(i int) line {
	var l line
	for _, r := range p.runs {
		l.n, l.mean, l.level = l.n+1, l.mean+r.x, l.level+r.m[i]
	}
	l.mean, l.level = l.mean/l.n, l.level/l.n
	var sxy float64
	for _, r := range p.runs {
		dx := r.x - l.mean
		l.sxx, sxy = l.sxx+dx*dx, sxy+dx*(r.m[i]-l.level)
	}
	if l.sxx > 0 {
		l.slope = sxy / l.sxx
	}
	if l.n > 2 {
		for _, r := range p.runs {
			d := r.m[i] - l.level - l.slope*(r.x-l.mean)
			l.rvar += d * d / (l.n - 2)
		}
	}
	return l
}

// crossing is the logarithm of the rate where the line crosses 0.
func (l line) crossing() float64 { return l.mean - l.level/l.slope }

// interval is the 95% interval of the crossing by Fieller's theorem for
// the ratio of the level to the slope (the logarithms of the rates where
// the line, within its own uncertainty, may cross 0), and whether it is
// bounded: it is not while the slope is not surely above 0.
func (l line) interval() (lo, hi float64, ok bool) {
	if l.n < 3 {
		return 0, 0, false
	}
	t2 := math.Pow(studentT95(int(l.n)-2), 2)
	// The u = x − mean where (level + slope·u)² ≤ t²·rvar·(1/n + u²/sxx).
	a := l.slope*l.slope - t2*l.rvar/l.sxx
	b := 2 * l.level * l.slope
	c := l.level*l.level - t2*l.rvar/l.n
	if !(a > 0) || b*b-4*a*c < 0 {
		return 0, 0, false
	}
	d := math.Sqrt(b*b - 4*a*c)
	return l.mean + (-b-d)/(2*a), l.mean + (-b+d)/(2*a), true
}

// binding is the line of the limit that crosses first (the lowest
// crossing of the failed limits whose margins rise with the rate); false
// when none rises.
func (p *pool) binding() (line, bool) {
	var best line
	found := false
	for i, failed := range p.failed {
		if !failed {
			continue
		}
		l := p.fit(i)
		if !(l.slope > 0) {
			continue // flat or falling: this limit says nothing here
		}
		if !found || l.crossing() < best.crossing() {
			best, found = l, true
		}
	}
	return best, found
}

// rate is the pooled capacity, or fallback when no line rises.
func (p *pool) rate(fallback float64) float64 {
	if l, ok := p.binding(); ok {
		return math.Exp(l.crossing())
	}
	return fallback
}

// span is the lowest and highest rate pooled.
func (p *pool) span() (lo, hi float64) {
	lo, hi = math.Inf(1), 0
	for _, r := range p.runs {
		lo, hi = min(lo, math.Exp(r.x)), max(hi, math.Exp(r.x))
	}
	return lo, hi
}

// bounds are the pooled capacity's 95% interval, as rates; false while it
// is unbounded.
func (p *pool) bounds() (lo, hi float64, ok bool) {
	l, ok := p.binding()
	if !ok {
		return 0, 0, false
	}
	x0, x1, ok := l.interval()
	return math.Exp(x0), math.Exp(x1), ok
}

// steady reports whether the pooled capacity's 95% interval lies within a
// factor 1 + tolerance.
func (p *pool) steady(tolerance float64) bool {
	lo, hi, ok := p.bounds()
	return ok && hi <= lo*(1+tolerance)
}

// studentT95 is the two-sided 95% quantile of Student's t with df degrees
// of freedom (df ≥ 1): tabulated to 30, then 1.96 + 2.4 / df, within 0.1%.
func studentT95(df int) float64 {
	table := [...]float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
		2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
		2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}
	if df <= len(table) {
		return table[max(df, 1)-1]
	}
	return 1.96 + 2.4/float64(df)
}
