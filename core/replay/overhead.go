package replay

// Constants are the replay's fitted constants: what the engine's and the
// API server's source and the step-time model do not give.
type Constants struct {
	// API is the time a request spends outside the engine's steps on its
	// way in and out, in seconds: inference-perf's new connection and
	// HTTP request, the API server's parsing and tokenization and the hop
	// to the engine core; for each output the hop back, detokenization and
	// the streamed chunk to the client. Half of it is counted before the
	// engine core sees the request, half after each output.
	API float64
	// SeqStep is device time per running request per engine step beyond
	// the kernels core/hardware lists (hardware.StepModel.SeqDevice), in
	// seconds.
	SeqStep float64
}

// Fitted are the constants fitted on the visible measured runs
// (docs/SOURCES.md#replay-fit says how).
var Fitted = Constants{API: 7.7e-3, SeqStep: 10e-6}

// inbound is the part of API before the engine core sees a request.
func (c Constants) inbound() float64 { return c.API / 2 }
