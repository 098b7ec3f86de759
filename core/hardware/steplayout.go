package hardware

import "math"

// This file prices a step without laying out every kernel. Every decoder
// layer has the same shapes, so a step is a head (embedding), one layer's
// kernels repeated Layers times, and a tail (final norm, lm_head,
// sampler): stepLayout holds those three parts, priced once. Kernels
// expands them into the full list for the lessons that draw kernels; Seconds,
// which the scheduler calls every step, walks the layout instead.
//
// The walk adds the kernels' GPU times one by one in launch order, exactly
// as Step's timeline does, rather than multiplying one layer's time by the
// layer count: the product would differ from the sum in the last bits, and
// every figure the lessons print must stay the same.

// Most kernels one layer issues (12 at TP > 1) and the most the head and
// tail issue together (embedding and its all-reduce; final norm, lm_head,
// logits gather, sampler).
const (
	maxLayerKernels = 12
	maxEdgeKernels  = 6
)

// unrolledLayer is the number of terms oneLaunchSeconds adds per layer in
// one line: it must be maxLayerKernels (the two constants below do not
// compile otherwise), or a layer's last kernels would be dropped.
const (
	unrolledLayer      = 12
	_             uint = unrolledLayer - maxLayerKernels
	_             uint = maxLayerKernels - unrolledLayer
)

// stepLayout is one step's kernels with the layers folded: buf holds the
// head, then layer 0, then the tail, each priced.
type stepLayout struct {
	buf               [maxLayerKernels + maxEdgeKernels]Kernel
	head, layer, tail int
	layers            int
}

func (l *stepLayout) headKernels() []Kernel  { return l.buf[:l.head] }
func (l *stepLayout) layerKernels() []Kernel { return l.buf[l.head : l.head+l.layer] }
func (l *stepLayout) tailKernels() []Kernel {
	return l.buf[l.head+l.layer : l.head+l.layer+l.tail]
}

// count is the number of kernels in the expanded step.
func (l *stepLayout) count() int { return l.head + l.layers*l.layer + l.tail }

// layout fills l with the priced head, layer and tail of a step over b
// with nLin tokens through the linear layers (docs/SOURCES.md#kernels-per-layer,
// #step-time-model; see
// Kernels for the list).
func (m *StepModel) layout(l *stepLayout, b Batch, nLin int) {
	m.layoutWith(l, b, nLin, m.attention(b))
}

// attention is a step's attention FLOPs and KV bytes (attentionSums) and
// its new tokens (Batch.Tokens), from one walk over the sequences: pricing
// a step of a thousand sequences walks them once instead of twice.
type attention struct {
	flops, kv float64
	tokens    int
}

// attention sums b's sequences for layoutWith and the token count.
func (m *StepModel) attention(b Batch) attention {
	md, tp := m.Model, m.tp()
	hd := float64(md.HeadDim)
	qh := float64(md.QHeads) / float64(tp)
	kvh := float64(md.KVHeads) / float64(min(tp, md.KVHeads))
	bkv := float64(m.KVBytesPerElement)
	var a attention
	a.flops, a.kv, a.tokens = m.attentionSums(b, qh, hd, kvh, bkv)
	return a
}

// layoutWith is layout with b's attention sums already made.
func (m *StepModel) layoutWith(l *stepLayout, b Batch, nLin int, att attention) {
	md, tp := m.Model, m.tp()
	N := float64(nLin)
	S := float64(len(b.Seqs))
	d := float64(md.Hidden)
	hd := float64(md.HeadDim)
	qh := float64(md.QHeads) / float64(tp)
	// With tp > kv_heads each GPU holds one replicated KV head, as in
	// KVCapacity.
	kvh := float64(md.KVHeads) / float64(min(tp, md.KVHeads))
	inter := float64(md.Intermediate) / float64(tp)
	vocab := float64(md.Vocab) / float64(tp)
	bw := m.WeightBytesPerParam
	// The embedding and lm_head read BF16 weights when EdgesBF16 keeps them.
	bwEdge := bw
	if m.EdgesBF16 {
		bwEdge = 2
	}
	ba := float64(activationBytes)
	bkv := float64(m.KVBytesPerElement)

	// Attention over the real sequences (padding slots attend to nothing),
	// summed per sequence: FLOPs 4·n_q·hd·(n·c + n(n+1)/2) (QKᵀ and PV,
	// causal), bytes every cached and new key and value read once, plus q
	// in and the output out (docs/SOURCES.md#step-time-model).
	attnFLOPs, attnKV := att.flops, att.kv
	attnBytes := attnKV + 2*N*qh*hd*ba

	gemm := func(name string, layer int, tokens, in, out float64) Kernel {
		return Kernel{Name: name, Layer: layer, Kind: GEMM,
			FLOPs: 2 * tokens * in * out,
			Bytes: bw*in*out + ba*tokens*(in+out)}
	}
	// Fused residual-add + RMSNorm reads x and the residual and writes
	// both (4 activations per element), plus the weight vector. FLOPs of
	// elementwise kernels are nominal (a few per element); they never set
	// the time.
	norm := func(name string, layer int) Kernel {
		return Kernel{Name: name, Layer: layer, Kind: Elementwise,
			FLOPs: 5 * N * d, Bytes: 4*N*d*ba + d*ba}
	}
	allReduce := func(name string, layer int) Kernel {
		msg := N * d * ba
		return Kernel{Name: name, Layer: layer, Kind: Collective,
			Bytes: msg, GPUTime: m.AllReduce.Time(msg, tp)}
	}

	ks := l.buf[:0]
	// Embedding lookup: read N rows, write N activations. Vocabulary-
	// parallel at TP > 1, so an all-reduce combines the shards. A pipeline
	// stage after the first has none (NoEmbedding).
	if !m.NoEmbedding {
		ks = append(ks, Kernel{Name: "embedding", Layer: -1, Kind: Elementwise, Bytes: N * d * (bwEdge + ba)})
		if tp > 1 {
			ks = append(ks, allReduce("all_reduce_embedding", -1))
		}
	}
	l.head = len(ks)
	ks = append(ks,
		norm("input_norm", 0),
		gemm("qkv_proj", 0, N, d, (qh+2*kvh)*hd),
		// Rotary embedding reads and rewrites q and k.
		Kernel{Name: "rotary", Layer: 0, Kind: Elementwise,
			FLOPs: 3 * N * (qh + kvh) * hd, Bytes: 2 * N * (qh + kvh) * hd * ba},
		// reshape_and_cache reads the new k and v and writes them into
		// the cache.
		Kernel{Name: "kv_cache_write", Layer: 0, Kind: Elementwise,
			Bytes: N * 2 * kvh * hd * (ba + bkv)},
		Kernel{Name: "attention", Layer: 0, Kind: Attention, FLOPs: attnFLOPs, Bytes: attnBytes},
		gemm("o_proj", 0, N, qh*hd, d),
	)
	if tp > 1 {
		ks = append(ks, allReduce("all_reduce_attn", 0))
	}
	if md.MoE() {
		ks = append(ks, norm("post_attn_norm", 0))
		ks = m.appendExperts(ks, N, d, ba, bw)
	} else {
		ks = append(ks,
			norm("post_attn_norm", 0),
			gemm("gate_up_proj", 0, N, d, 2*inter),
			// SiLU-and-mul reads gate and up, writes their product.
			Kernel{Name: "silu_mul", Layer: 0, Kind: Elementwise,
				FLOPs: 5 * N * inter, Bytes: 3 * N * inter * ba},
			gemm("down_proj", 0, N, inter, d),
		)
	}
	if tp > 1 {
		ks = append(ks, allReduce("all_reduce_mlp", 0))
	}
	l.layer = len(ks) - l.head
	if m.NoOutput {
		// A pipeline stage before the last ends at its last layer.
		l.tail, l.layers = 0, md.Layers
		m.rooflineAll(ks)
		return
	}
	head := gemm("lm_head", -1, S, d, vocab)
	head.Bytes = bwEdge*d*vocab + ba*S*(d+vocab)
	ks = append(ks, norm("final_norm", -1), head)
	if tp > 1 {
		msg := S * float64(md.Vocab) * ba
		ks = append(ks, Kernel{Name: "logits_gather", Layer: -1, Kind: Collective,
			Bytes: msg, GPUTime: m.AllReduce.GatherTime(msg, tp)})
	}
	// Sampling reads each sequence's logits a few times (softmax, top-k,
	// draw); counted as two passes over fp32 logits.
	ks = append(ks, Kernel{Name: "sampler", Layer: -1, Kind: Elementwise,
		FLOPs: 5 * S * float64(md.Vocab), Bytes: 2 * S * float64(md.Vocab) * 4})
	l.tail = len(ks) - l.head - l.layer
	l.layers = md.Layers
	m.rooflineAll(ks)
}

// rooflineAll prices ks: collectives come priced by the all-reduce model;
// the rest by the roofline.
func (m *StepModel) rooflineAll(ks []Kernel) {
	for i := range ks {
		if ks[i].Kind != Collective {
			m.roofline(&ks[i], m.EdgesBF16 && ks[i].Layer < 0)
		}
	}
}

// exactFloat is 2^53: every integer up to it is a float64, so float64
// sums and products of such integers that stay within it are exact.
const exactFloat = 1 << 53

// maxExactSeqs bounds the sequences attentionSums adds in integers: each
// term is below 2^49 (n, c < 2^24), so 2^13 of them cannot overflow an
// int64 before the sums are checked against exactFloat at the end.
const maxExactSeqs = 1 << 13

// attentionSums are the attention FLOPs and KV bytes of a step, summed
// per sequence (see layout), and its new tokens. Every term is an integer
// (head counts divide evenly, n(n+1) is even), so when the totals stay
// within 2^53 the float sums in sequence order are exact and equal the
// integer sums computed here faster; otherwise they are summed in floats,
// in that order.
func (m *StepModel) attentionSums(b Batch, qh, hd, kvh, bkv float64) (flops, kv float64, newTokens int) {
	fq, fk := 4*qh*hd, 2*kvh*hd*bkv
	iq, ik := int64(fq), int64(fk)
	if float64(iq) == fq && float64(ik) == fk && iq > 0 && ik > 0 {
		// Bounds on the integer sums under which every float term and
		// partial sum is an integer within 2^53.
		maxTokens, maxKV := int64(exactFloat)/iq, int64(exactFloat)/ik
		var tokens, kvTokens int64
		var all uint64 // every n and c ORed: below 2^24 when they all are
		for _, s := range b.Seqs {
			n, c := int64(s.NewTokens), int64(s.Context)
			all |= uint64(n) | uint64(c) // a negative one is huge unsigned
			newTokens += s.NewTokens
			tokens += n*c + n*(n+1)/2
			kvTokens += c + n
		}
		// The checks come after the walk (no branch in it): with at most
		// maxExactSeqs terms each below 2^49 nothing overflowed, and as
		// the terms are not negative the partial sums grew, so the last
		// within the bound means all were.
		if all < 1<<24 && len(b.Seqs) <= maxExactSeqs && tokens <= maxTokens && kvTokens <= maxKV {
			return float64(tokens * iq), float64(kvTokens * ik), newTokens
		}
	}
	newTokens = 0
	for _, s := range b.Seqs {
		n, c := float64(s.NewTokens), float64(s.Context)
		flops += 4 * qh * hd * (n*c + n*(n+1)/2)
		kv += (c + n) * 2 * kvh * hd * bkv
		newTokens += s.NewTokens
	}
	return flops, kv, newTokens
}

// OneLaunch is implemented by dispatchers that issue some steps with a
// single launch, a captured graph replayed whole, after which every kernel
// may start. Seconds prices such a step from its layout alone, without a
// kernel list or a launch list.
type OneLaunch interface {
	Dispatcher
	// OneLaunch reports whether a step over b is issued by one launch. If
	// so, the returned Dispatch has no Launches: every kernel may start at
	// its CPUTime, when the launch ends. Mode and PaddedTokens are as
	// Dispatch would return them.
	OneLaunch(b Batch) (Dispatch, bool)
}

// OneLaunch implements the OneLaunch interface: every step is one launch.
func (r Replay) OneLaunch(b Batch) (Dispatch, bool) {
	return Dispatch{Mode: "replay", CPUTime: r.Launch}, true
}

// oneLaunchSeconds is Step(b).Total for a step issued by one launch ending
// at d.CPUTime: the kernels run back to back from there. Their GPU times
// are added one by one in launch order, as Step's timeline adds them.
func (m *StepModel) oneLaunchSeconds(b Batch, d Dispatch) float64 {
	return m.oneLaunchSecondsWith(b, d, m.attention(b))
}

// oneLaunchSecondsWith is oneLaunchSeconds with b's attention sums
// already made.
func (m *StepModel) oneLaunchSecondsWith(b Batch, d Dispatch, att attention) float64 {
	var l stepLayout
	m.layoutWith(&l, b, max(att.tokens, d.PaddedTokens), att)
	end := d.CPUTime
	for _, k := range l.headKernels() {
		end += k.GPUTime
	}
	// One layer's GPU times, padded with zeros to maxLayerKernels: adding
	// +0 leaves a non-negative sum exactly as it was, so every layer adds
	// all twelve in one unrolled line, still one by one in launch order
	// (in WebAssembly each turn of a loop is a trip through the function's
	// dispatch table, and a step has hundreds of kernels).
	var t [unrolledLayer]float64
	for j, k := range l.layerKernels() {
		t[j] = k.GPUTime
	}
	for range l.layers {
		end = end + t[0] + t[1] + t[2] + t[3] + t[4] + t[5] + t[6] + t[7] + t[8] + t[9] + t[10] + t[11]
	}
	for _, k := range l.tailKernels() {
		end += k.GPUTime
	}
	return m.total(b, math.Max(end, d.CPUTime))
}

// total adds the host overhead to the device time of a step over b.
func (m *StepModel) total(b Batch, device float64) float64 {
	device += m.SeqDevice * float64(len(b.Seqs))
	host := m.Host.Time(b)
	if m.OverlapHost {
		return math.Max(device, host)
	}
	return device + host
}

// Streaming is implemented by dispatchers whose launches can be computed
// kernel by kernel in launch order, without the whole kernel list. Seconds
// prices their steps from the layout, with no list of kernels or launches.
type Streaming interface {
	Dispatcher
	// Stream starts the dispatch of a step over b. The returned Dispatch
	// has Mode and PaddedTokens as Dispatch would return them, and no
	// Launches; the LaunchStream gives each kernel's launch in turn. The
	// launches depend on b only through the returned Mode and the
	// kernels: a Pricer remembers a streamed step's price by its Mode and
	// the step's shape.
	Stream(b Batch) (Dispatch, LaunchStream)
}

// LaunchStream yields the launches of one step's kernels in order.
type LaunchStream interface {
	// Next returns when kernel k, the next in launch order, has been
	// issued and may start on the GPU.
	Next(k Kernel) float64
	// CPU is the dispatch CPU time, read after the last kernel.
	CPU() float64
}

// Stream implements Streaming.
func (e Eager) Stream(b Batch) (Dispatch, LaunchStream) {
	return Dispatch{Mode: "eager"}, &eagerStream{per: e.PerLaunch}
}

type eagerStream struct {
	per float64
	n   int
}

// Next is the end of the kernel's launch, (i+1)·PerLaunch as in Dispatch.
func (s *eagerStream) Next(Kernel) float64 {
	s.n++
	return float64(s.n) * s.per
}

func (s *eagerStream) CPU() float64 { return float64(s.n) * s.per }

// streamSeconds is Step(b).Total for a streamed dispatch: kernel i starts
// at max(end of kernel i−1, its launch), walked over the layout.
func (m *StepModel) streamSeconds(b Batch, d Dispatch, st LaunchStream) float64 {
	return m.streamSecondsWith(b, d, st, m.attention(b))
}

// streamSecondsWith is streamSeconds with b's attention sums already
// made.
func (m *StepModel) streamSecondsWith(b Batch, d Dispatch, st LaunchStream, att attention) float64 {
	var l stepLayout
	m.layoutWith(&l, b, max(att.tokens, d.PaddedTokens), att)
	end := 0.0
	run := func(ks []Kernel) {
		for _, k := range ks {
			end = math.Max(end, st.Next(k)) + k.GPUTime
		}
	}
	run(l.headKernels())
	for range l.layers {
		run(l.layerKernels())
	}
	run(l.tailKernels())
	return m.total(b, math.Max(end, st.CPU()))
}
