package hardware

import "math"

// Pricer prices the steps of one simulation as StepModel.Seconds does, to
// the last bit, and remembers the price of each step shape its dispatcher
// issues with one launch (OneLaunch) or launch by launch (Streaming). Such
// a step's price depends on the batch only through four numbers: the
// tokens its linear layers run (the batch's, or the captured graph's
// padded count), its sequences, and its attention FLOPs and KV bytes
// (attentionSums); with the dispatch (the one launch's CPU time, or the
// streamed dispatch's Mode) they are the key. A small batch's shapes
// recur: measuring's capacity search at two sequences and 64-token chunks
// prices about two million steps of about fifty thousand shapes, and a
// step priced afresh adds its kernels' times layer by layer, several
// hundred additions in a chain.
//
// A Pricer is for one goroutine; it copies the model, so a later change to
// the caller's StepModel does not reach the prices it remembers.
type Pricer struct {
	model StepModel
	// once and stream are the model's dispatcher when it implements
	// OneLaunch or Streaming, else nil.
	once   OneLaunch
	stream Streaming
	// modes are the streamed dispatches' modes seen, in order: a key
	// holds the index of its step's mode, plus one (0 is one launch).
	modes  []string
	prices map[stepShape]float64
	// priced and hits count the steps looked up and those found, for the
	// check that stops remembering.
	priced, hits int
}

// stepShape is what the price of a step issued with one launch or
// streamed depends on besides the model. The floats are held as their
// bits: the key is then hashed and compared as plain memory, and equal
// bits give equal prices.
type stepShape struct {
	linearTokens, seqs, mode int
	flops, kv, cpu           uint64
}

// Bounds on what a Pricer remembers: at most pricerMaxShapes shapes
// (about 1 MB; a probe of measuring's search at two sequences meets up to
// about 10,000), and once pricerTrial steps are looked up, nothing more
// unless at least one in pricerMinHitShare was found: a run of large
// batches, whose shapes seldom recur, then pays for no map.
const (
	pricerMaxShapes   = 1 << 14
	pricerTrial       = 4096
	pricerMinHitShare = 4
)

// NewPricer returns a Pricer for m.
func NewPricer(m StepModel) *Pricer {
	p := &Pricer{model: m, prices: make(map[stepShape]float64)}
	disp := m.dispatcher()
	p.once, _ = disp.(OneLaunch)
	p.stream, _ = disp.(Streaming)
	return p
}

// Seconds is m.Seconds(b): the same paths, taken in the same order.
func (p *Pricer) Seconds(b Batch) float64 {
	m := &p.model
	var (
		d    Dispatch
		st   LaunchStream
		once bool
	)
	if p.once != nil {
		d, once = p.once.OneLaunch(b)
	}
	if !once {
		if p.stream == nil {
			return m.listSeconds(b)
		}
		d, st = p.stream.Stream(b)
	}
	att := m.attention(b)
	price := func() float64 {
		if once {
			return m.oneLaunchSecondsWith(b, d, att)
		}
		return m.streamSecondsWith(b, d, st, att)
	}
	if p.prices == nil {
		return price()
	}
	key := stepShape{linearTokens: max(att.tokens, d.PaddedTokens), seqs: len(b.Seqs), flops: math.Float64bits(att.flops), kv: math.Float64bits(att.kv)}
	if once {
		key.cpu = math.Float64bits(d.CPUTime)
	} else {
		key.mode = p.modeKey(d.Mode)
	}
	p.priced++
	if s, ok := p.prices[key]; ok {
		p.hits++
		return s
	}
	s := price()
	if p.priced == pricerTrial && p.hits*pricerMinHitShare < p.priced {
		p.prices = nil
	} else if len(p.prices) < pricerMaxShapes {
		p.prices[key] = s
	}
	return s
}

// modeKey is a streamed mode's part of a key.
func (p *Pricer) modeKey(mode string) int {
	for i, m := range p.modes {
		if m == mode {
			return i + 1
		}
	}
	p.modes = append(p.modes, mode)
	return len(p.modes)
}
