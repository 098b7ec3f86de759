package cudagraph

import (
	"fmt"
	"strings"

	"github.com/inferlab/inferlab/core/hardware"
)

// Mode is vLLM's CUDAGraphMode: which graphs are captured and used
// ([VLLM-CG]).
type Mode int

// The modes, in vLLM's naming.
const (
	// None launches every kernel eagerly (enforce_eager, -O0).
	None Mode = iota
	// Piecewise replays captured pieces between the attention ops, which
	// run eagerly, for every batch (the default before Sept 2025, -O1).
	Piecewise
	// Full replays one graph for the whole step for every batch; it needs
	// an attention backend that can be captured for mixed batches (FA3).
	Full
	// FullDecodeOnly replays full graphs for uniform decode batches and
	// runs everything else eagerly (for disaggregated decode instances).
	FullDecodeOnly
	// FullAndPiecewise replays full graphs for uniform decode batches and
	// piecewise graphs for mixed and prefill batches: vLLM's default
	// (-O2, since PR #25444 [VLLM-25444]).
	FullAndPiecewise
)

// Default is vLLM's default mode.
const Default = FullAndPiecewise

var modeNames = [...]string{"NONE", "PIECEWISE", "FULL", "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE"}

// String is vLLM's name, e.g. "FULL_AND_PIECEWISE".
func (m Mode) String() string {
	if m < 0 || int(m) >= len(modeNames) {
		return fmt.Sprintf("Mode(%d)", int(m))
	}
	return modeNames[m]
}

// Key is the lower-case name used in URLs and knobs, e.g.
// "full_and_piecewise".
func (m Mode) Key() string { return strings.ToLower(m.String()) }

// Modes returns every mode, default first.
func Modes() []Mode { return []Mode{FullAndPiecewise, Piecewise, Full, FullDecodeOnly, None} }

// ParseMode reads a mode name in any case, with '-' or '_' between words;
// "eager" is taken as NONE.
func ParseMode(s string) (Mode, error) {
	k := strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(s), "-", "_"))
	if k == "EAGER" {
		return None, nil
	}
	for i, n := range modeNames {
		if k == n {
			return Mode(i), nil
		}
	}
	keys := make([]string, 0, len(modeNames))
	for _, m := range Modes() {
		keys = append(keys, m.Key())
	}
	return 0, fmt.Errorf("cudagraph: mode %q, want one of %s", s, strings.Join(keys, ", "))
}

// hasFull reports whether the mode captures full graphs for uniform decode
// batches.
func (m Mode) hasFull() bool { return m == Full || m == FullDecodeOnly || m == FullAndPiecewise }

// hasPiecewise reports whether the mode captures piecewise graphs.
func (m Mode) hasPiecewise() bool { return m == Piecewise || m == FullAndPiecewise }

// Runtime is how one step actually runs: the runtime mode vLLM's
// CudagraphDispatcher picks for a batch.
type Runtime string

// The runtime modes.
const (
	RunEager     Runtime = "eager"
	RunPiecewise Runtime = "piecewise"
	RunFull      Runtime = "full"
)

// maxCaptureLimit is vLLM's cap on the default largest capture size
// ([VLLM-CG]).
const maxCaptureLimit = 512

// CaptureSizes returns vLLM's default capture list for the scheduler's
// limits: 1, 2, 4, the multiples of 8 below 256 and the multiples of 16
// from 256, up to min(2·max_num_seqs, 512, max_num_batched_tokens), and
// max_num_batched_tokens itself when it is within that maximum but off the
// stride, so that a full batch is captured too ([VLLM-CG]; the append follows vLLM main @ 000fc94, vllm/config/vllm.py
// _set_cudagraph_sizes [VLLM-CGSIZES]). The largest size in the list is
// the effective maximum: vLLM truncates the maximum to it. A non-positive
// maxNumBatchedTokens means no token limit. That vLLM raises the 512
// ceiling to 1,024 on Blackwell data-centre GPUs is not modelled: every GPU
// keeps 512.
func CaptureSizes(maxNumSeqs, maxNumBatchedTokens int) []int {
	return captureSizes(maxNumSeqs, maxNumBatchedTokens, 1)
}

// SpecCaptureSizes is the capture list with num_speculative_tokens = k
// drafted tokens per sequence ([VLLM-CGSPEC]): the maximum becomes
// min(2·max_num_seqs·(1 + k), 512, max_num_batched_tokens), since a decode
// step verifies 1 + k tokens per sequence; and, where the mode captures
// full decode graphs, every size is rounded up to a multiple of 1 + k
// (those above the maximum dropped; 1 + k alone when none is left), so
// that a batch of whole sequences lands exactly on a captured size, as
// CompilationConfig.adjust_cudagraph_sizes_for_spec_decode does. k = 0 is
// CaptureSizes.
func SpecCaptureSizes(mode Mode, maxNumSeqs, maxNumBatchedTokens, k int) []int {
	q := 1 + max(k, 0)
	sizes := captureSizes(maxNumSeqs, maxNumBatchedTokens, q)
	if q == 1 || !mode.hasFull() || len(sizes) == 0 {
		return sizes
	}
	hi := sizes[len(sizes)-1]
	var out []int
	for _, s := range sizes {
		r := (s + q - 1) / q * q
		if r <= hi && (len(out) == 0 || out[len(out)-1] < r) {
			out = append(out, r)
		}
	}
	if len(out) == 0 && q <= hi {
		out = []int{q}
	}
	return out
}

// captureSizes is the default list for decode steps of q tokens per
// sequence (1 without speculative decoding).
func captureSizes(maxNumSeqs, maxNumBatchedTokens, q int) []int {
	hi := min(2*maxNumSeqs*q, maxCaptureLimit)
	if maxNumBatchedTokens > 0 {
		hi = min(hi, maxNumBatchedTokens)
	}
	var sizes []int
	for _, s := range []int{1, 2, 4} {
		if s <= hi {
			sizes = append(sizes, s)
		}
	}
	for s := 8; s < 256 && s <= hi; s += 8 {
		sizes = append(sizes, s)
	}
	for s := 256; s <= hi; s += 16 {
		sizes = append(sizes, s)
	}
	if maxNumBatchedTokens > 0 && maxNumBatchedTokens <= hi && (len(sizes) == 0 || sizes[len(sizes)-1] < maxNumBatchedTokens) {
		sizes = append(sizes, maxNumBatchedTokens)
	}
	return sizes
}

// Dispatcher is vLLM's CUDA-graph dispatch for one engine: the mode, the
// captured sizes and the CPU cost of each way of issuing kernels. It
// implements hardware.Dispatcher.
type Dispatcher struct {
	Mode Mode
	// Sizes are the captured token counts in ascending order; the last is
	// the largest. Empty means no graphs: every step runs eagerly.
	Sizes []int
	// MaxNumSeqs bounds the full decode graphs: vLLM keys them only for
	// sizes from DecodeQuery to DecodeQuery · max_num_seqs.
	MaxNumSeqs int
	// DecodeQuery is vLLM's uniform_decode_query_len, the tokens each
	// sequence computes in a decode step: 1 + num_speculative_tokens (0
	// means 1, no speculative decoding). Only a batch of sequences that all
	// compute exactly this many is a uniform decode batch.
	DecodeQuery int
	// PerLaunch is the CPU seconds of one eagerly launched kernel: the
	// framework's per-op work plus cudaLaunchKernel. From Python,
	// hardware.PerLaunchPython (24 µs, calibrated; docs/VALIDATION.md); from C++,
	// hardware.PerLaunchCPP (5 µs [PEGA-3]).
	PerLaunch float64
	// GraphLaunch is the CPU seconds of replaying a full-step graph,
	// input copy included: hardware.GraphLaunch, vLLM's 0.07–0.09 ms
	// [VIDUR-CPU]. A piecewise step pays it for its first piece.
	GraphLaunch float64
	// PieceLaunch is the CPU seconds of replaying each further piece of a
	// piecewise step: one Python-level call that issues one launch, priced
	// like an eager op. Zero means PerLaunch.
	PieceLaunch float64
}

// New returns vLLM's dispatcher for a mode and the scheduler's limits: the
// default capture sizes (none for None), launches from Python.
func New(mode Mode, maxNumSeqs, maxNumBatchedTokens int) Dispatcher {
	d := Dispatcher{Mode: mode, MaxNumSeqs: maxNumSeqs,
		PerLaunch: hardware.PerLaunchPython, GraphLaunch: hardware.GraphLaunch}
	if mode != None {
		d.Sizes = CaptureSizes(maxNumSeqs, maxNumBatchedTokens)
	}
	return d
}

// NewSpec is New for an engine that speculates k tokens per sequence
// (num_speculative_tokens): SpecCaptureSizes, and full decode graphs for
// verify steps of 1 + k tokens per sequence.
func NewSpec(mode Mode, maxNumSeqs, maxNumBatchedTokens, k int) Dispatcher {
	d := New(mode, maxNumSeqs, maxNumBatchedTokens)
	d.DecodeQuery = 1 + max(k, 0)
	if mode != None {
		d.Sizes = SpecCaptureSizes(mode, maxNumSeqs, maxNumBatchedTokens, k)
	}
	return d
}

// decodeQuery is DecodeQuery, at least 1.
func (d Dispatcher) decodeQuery() int { return max(d.DecodeQuery, 1) }

// uniformDecode reports whether every sequence of b computes exactly q
// tokens on top of a cached context: vLLM's uniform decode batch, for q > 1
// a verify step of speculative decoding.
func uniformDecode(b hardware.Batch, q int) bool {
	if q == 1 {
		return b.IsUniformDecode()
	}
	if len(b.Seqs) == 0 {
		return false
	}
	for _, s := range b.Seqs {
		if s.NewTokens != q || s.Prefill {
			return false
		}
	}
	return true
}

// fullDecodeSize reports whether vLLM keys a full uniform decode graph at
// padded tokens: from q to q · max_num_seqs.
func (d Dispatcher) fullDecodeSize(padded int) bool {
	q := d.decodeQuery()
	return padded >= q && padded <= q*d.MaxNumSeqs
}

// MaxCaptureSize is the largest captured size, 0 without graphs.
func (d Dispatcher) MaxCaptureSize() int {
	if len(d.Sizes) == 0 {
		return 0
	}
	return d.Sizes[len(d.Sizes)-1]
}

// Pad returns the smallest captured size ≥ n, vLLM's
// _compute_bs_to_padded_graph_size; ok is false when n is above the largest
// size (or below 1), and such a batch runs eagerly and unpadded.
func (d Dispatcher) Pad(n int) (padded int, ok bool) {
	if n < 1 {
		return n, false
	}
	for _, s := range d.Sizes {
		if s >= n {
			return s, true
		}
	}
	return n, false
}

// Choice is the dispatcher's decision for one batch.
type Choice struct {
	Runtime Runtime
	// Tokens is the batch's token count; Padded what the GPU computes
	// (Tokens when the step runs eagerly).
	Tokens, Padded int
}

// Select picks the runtime mode and padded size for a batch, as vLLM's
// CudagraphDispatcher.dispatch does ([VLLM-CG]): eager when the mode
// is NONE or the batch is above the largest captured size; a full graph for
// a uniform decode batch (every sequence computing DecodeQuery tokens) whose
// padded size is within DecodeQuery · max_num_seqs under FULL,
// FULL_DECODE_ONLY and FULL_AND_PIECEWISE, and for any batch under FULL;
// otherwise a piecewise graph where the mode has them, else eager.
func (d Dispatcher) Select(b hardware.Batch) Choice {
	n := b.Tokens()
	eager := Choice{Runtime: RunEager, Tokens: n, Padded: n}
	if d.Mode == None {
		return eager
	}
	padded, ok := d.Pad(n)
	if !ok {
		return eager
	}
	c := Choice{Tokens: n, Padded: padded}
	switch {
	case d.Mode == Full:
		c.Runtime = RunFull
	case d.Mode.hasFull() && uniformDecode(b, d.decodeQuery()) && d.fullDecodeSize(padded):
		c.Runtime = RunFull
	case d.Mode.hasPiecewise():
		c.Runtime = RunPiecewise
	default:
		return eager
	}
	return c
}

// Splitting reports whether vLLM's piecewise graphs leave a kernel out: the
// attention op (vLLM's splitting ops, [VLLM-CG]), whose backend issues
// the KV-cache write and the attention kernel, runs eagerly between pieces.
func Splitting(k hardware.Kernel) bool {
	return k.Kind == hardware.Attention || k.Name == "kv_cache_write"
}

// LaunchKind is what one CPU dispatch action issues.
type LaunchKind string

// The kinds of launch.
const (
	KernelLaunch LaunchKind = "kernel" // one eager kernel
	GraphReplay  LaunchKind = "graph"  // a full-step graph
	PieceReplay  LaunchKind = "piece"  // one piece of a piecewise step
)

// Launch is one CPU action of a step's dispatch: it runs on the CPU from
// Start to End (seconds from the start of the step) and issues kernels
// First…Last (inclusive indices into the step's kernel list), which may
// start on the GPU from End on.
type Launch struct {
	Kind        LaunchKind
	Start, End  float64
	First, Last int
}

// Plan is the CPU side of one step.
type Plan struct {
	Choice
	Launches []Launch
	// CPU is the dispatch CPU time, the end of the last launch.
	CPU float64
}

// Plan lays out the CPU launches of a step over b whose kernels are ks, in
// the runtime mode Select picks.
func (d Dispatcher) Plan(b hardware.Batch, ks []hardware.Kernel) Plan {
	p := Plan{Choice: d.Select(b)}
	t := 0.0
	add := func(kind LaunchKind, cost float64, first, last int) {
		p.Launches = append(p.Launches, Launch{Kind: kind, Start: t, End: t + cost, First: first, Last: last})
		t += cost
	}
	switch p.Runtime {
	case RunFull:
		if len(ks) > 0 {
			add(GraphReplay, d.GraphLaunch, 0, len(ks)-1)
		}
	case RunPiecewise:
		piece := d.PieceLaunch
		if piece == 0 {
			piece = d.PerLaunch
		}
		for i := 0; i < len(ks); {
			if Splitting(ks[i]) {
				add(KernelLaunch, d.PerLaunch, i, i)
				i++
				continue
			}
			j := i
			for j+1 < len(ks) && !Splitting(ks[j+1]) {
				j++
			}
			cost := piece
			if i == 0 {
				cost = d.GraphLaunch
			}
			add(PieceReplay, cost, i, j)
			i = j + 1
		}
	default:
		for i := range ks {
			add(KernelLaunch, d.PerLaunch, i, i)
		}
	}
	p.CPU = t
	return p
}

// Dispatch implements hardware.Dispatcher: the plan's launch end for each
// kernel, the CPU time and the padded token count.
func (d Dispatcher) Dispatch(b hardware.Batch, ks []hardware.Kernel) hardware.Dispatch {
	p := d.Plan(b, ks)
	out := hardware.Dispatch{Mode: string(p.Runtime), CPUTime: p.CPU, Launches: make([]float64, len(ks))}
	for _, l := range p.Launches {
		for i := l.First; i <= l.Last; i++ {
			out.Launches[i] = l.End
		}
	}
	if p.Padded > p.Tokens {
		out.PaddedTokens = p.Padded
	}
	return out
}

// Pieces counts the captured pieces of a piecewise step over ks: the runs
// of kernels between splitting ops, L+1 for an L-layer decoder.
func Pieces(ks []hardware.Kernel) int {
	n := 0
	for i, k := range ks {
		if !Splitting(k) && (i == 0 || Splitting(ks[i-1])) {
			n++
		}
	}
	return n
}

// Published capture cost: a vLLM log captured 53 shapes
// in 2 s using 0.45 GiB [VLLM-23739]. The model does not derive capture
// cost; it scales these per-shape averages by the graphs a mode captures.
const (
	publishedShapes       = 53
	publishedCaptureSecs  = 2.0
	publishedCaptureBytes = 0.45 * (1 << 30)
	// CaptureSecondsPerGraph and CaptureBytesPerGraph are the averages.
	CaptureSecondsPerGraph = publishedCaptureSecs / publishedShapes
	CaptureBytesPerGraph   = publishedCaptureBytes / publishedShapes
)

// Capture is the start-up cost of a dispatcher's graphs.
type Capture struct {
	// FullGraphs and PiecewiseGraphs count the sizes captured each way;
	// each piecewise size is L+1 pieces replayed together.
	FullGraphs, PiecewiseGraphs int
	// Seconds and Bytes scale the published per-shape averages.
	Seconds, Bytes float64
}

// Capture returns the graphs the mode captures at start-up and their cost:
// full decode graphs for sizes from DecodeQuery to DecodeQuery ·
// max_num_seqs (every size under FULL),
// piecewise graphs for every size under PIECEWISE and FULL_AND_PIECEWISE.
func (d Dispatcher) Capture() Capture {
	var c Capture
	for _, s := range d.Sizes {
		if d.Mode == Full || (d.Mode.hasFull() && d.fullDecodeSize(s)) {
			c.FullGraphs++
		}
		if d.Mode.hasPiecewise() {
			c.PiecewiseGraphs++
		}
	}
	n := float64(c.FullGraphs + c.PiecewiseGraphs)
	c.Seconds = n * CaptureSecondsPerGraph
	c.Bytes = n * CaptureBytesPerGraph
	return c
}

// OneLaunch implements hardware.OneLaunch: a step that runs as a full graph
// is one replay, after which every kernel may start.
func (d Dispatcher) OneLaunch(b hardware.Batch) (hardware.Dispatch, bool) {
	c := d.Select(b)
	if c.Runtime != RunFull {
		return hardware.Dispatch{}, false
	}
	out := hardware.Dispatch{Mode: string(c.Runtime), CPUTime: 0 + d.GraphLaunch}
	if c.Padded > c.Tokens {
		out.PaddedTokens = c.Padded
	}
	return out, true
}

// Stream implements hardware.Streaming: the launches Plan would lay out,
// computed kernel by kernel with the same additions.
func (d Dispatcher) Stream(b hardware.Batch) (hardware.Dispatch, hardware.LaunchStream) {
	c := d.Select(b)
	out := hardware.Dispatch{Mode: string(c.Runtime)}
	if c.Padded > c.Tokens {
		out.PaddedTokens = c.Padded
	}
	piece := d.PieceLaunch
	if piece == 0 {
		piece = d.PerLaunch
	}
	return out, &launchStream{rt: c.Runtime, perLaunch: d.PerLaunch, piece: piece, graph: d.GraphLaunch}
}

// launchStream is Plan's CPU timeline, one kernel at a time: t is the end
// of the latest launch.
type launchStream struct {
	rt                      Runtime
	perLaunch, piece, graph float64
	t                       float64
	i                       int
	inPiece                 bool
}

// Next implements hardware.LaunchStream.
func (s *launchStream) Next(k hardware.Kernel) float64 {
	first := s.i == 0
	s.i++
	switch s.rt {
	case RunFull:
		if first {
			s.t += s.graph
		}
	case RunPiecewise:
		switch {
		case Splitting(k):
			s.t += s.perLaunch
			s.inPiece = false
		case !s.inPiece:
			// A piece starts: the first carries the input copy.
			if first {
				s.t += s.graph
			} else {
				s.t += s.piece
			}
			s.inPiece = true
		}
	default:
		s.t += s.perLaunch
	}
	return s.t
}

// CPU implements hardware.LaunchStream.
func (s *launchStream) CPU() float64 { return s.t }
