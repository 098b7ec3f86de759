package bench

import "testing"

// The Backend benchmarks time the shapes of code a serving loop is made
// of, so that what Go's WebAssembly backend costs against amd64 can
// be read apart from the lab's own code (BENCHMARKS.md, "What WebAssembly
// costs per shape of code"). Run them both ways and divide:
//
//	go test -run XXX -bench Backend ./cmd/internal/bench/
//	GOOS=js GOARCH=wasm go test -exec "$(go env GOROOT)/lib/wasm/go_js_wasm_exec" -run XXX -bench Backend ./cmd/internal/bench/
//
// The backend keeps a function's values in Go's stack in linear memory
// across calls and turns every jump into a trip through the function's
// dispatch table (br_table), so the ratio differs by shape.

// backendReq is a running request as the serving loop sees it: a pointer
// to a small struct whose counters move every tick.
type backendReq struct {
	produced, output int
	held, room       int
}

func backendRunning(n int) []*backendReq {
	reqs := make([]backendReq, n)
	out := make([]*backendReq, n)
	for i := range reqs {
		reqs[i] = backendReq{output: 1 << 40, room: 1 << 40}
		out[i] = &reqs[i]
	}
	return out
}

// BenchmarkBackendUpdateLoop is one decode tick over 256 running requests:
// test the request, store one token, count it if it was its last.
func BenchmarkBackendUpdateLoop(b *testing.B) {
	running, done := backendRunning(256), 0
	for b.Loop() {
		for _, q := range running {
			if q.produced == q.output || q.held == q.room {
				break
			}
			q.held++
			q.produced++
			if q.produced == q.output {
				done++
			}
		}
	}
	sinkInt = done
}

//go:noinline
func backendStore(q *backendReq) bool {
	if q.held == q.room {
		return false
	}
	q.held++
	return true
}

// BenchmarkBackendCallLoop is the same tick with the store behind a call
// the compiler may not inline, as the allocator's slower paths are.
func BenchmarkBackendCallLoop(b *testing.B) {
	running, n := backendRunning(256), 0
	for b.Loop() {
		for _, q := range running {
			if backendStore(q) {
				n++
			}
		}
	}
	sinkInt = n
}

// backendSlots is a small request passed by value, as Slots and Run are
// in the allocators' calls.
type backendSlots struct{ req, start, length, tokens, now, final int }

//go:noinline
func backendAdmit(s backendSlots) bool { return s.now <= s.final && s.length > 0 }

// BenchmarkBackendStructCall is the tick with a 48-byte struct passed by
// value to the call: in WebAssembly the argument goes through Go's stack
// in linear memory with a memory.copy.
func BenchmarkBackendStructCall(b *testing.B) {
	running, n := backendRunning(256), 0
	for b.Loop() {
		for _, q := range running {
			if backendAdmit(backendSlots{req: q.output, start: q.held, length: q.room, tokens: q.produced, now: q.held, final: q.room}) {
				n++
			}
		}
	}
	sinkInt = n
}

// BenchmarkBackendCopy copies a 64 KiB table, as a tick log grows and the
// pictures fill their grids: bulk memory, memory.copy in WebAssembly.
func BenchmarkBackendCopy(b *testing.B) {
	src, dst := make([]int32, 16<<10), make([]int32, 16<<10)
	for i := range src {
		src[i] = int32(i)
	}
	for b.Loop() {
		copy(dst, src)
	}
	sinkInt = int(dst[len(dst)-1])
}

var sinkInt int

// backendStorer is the store as a pool behind an interface offers it.
type backendStorer interface{ store(q *backendReq) bool }

type backendPool struct{ stored int }

func (p *backendPool) store(q *backendReq) bool {
	if q.held == q.room {
		return false
	}
	q.held++
	p.stored++
	return true
}

// BenchmarkBackendInterfaceCall is the tick with the store behind an
// interface method call, as a serving loop over any pool makes it.
func BenchmarkBackendInterfaceCall(b *testing.B) {
	running, n := backendRunning(256), 0
	var pool backendStorer = &backendPool{}
	for b.Loop() {
		for _, q := range running {
			if pool.store(q) {
				n++
			}
		}
	}
	sinkInt = n
}
