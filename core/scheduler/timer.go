package scheduler

import (
	"sync"

	"github.com/inferlab/inferlab/core/hardware"
)

// HardwareTimer prices steps with core/hardware's step-time model.
type HardwareTimer struct {
	Model hardware.StepModel
}

// Batch converts a step's work to the step model's batch.
func Batch(work []Work) hardware.Batch {
	return hardware.Batch{Seqs: chunks(make([]hardware.Chunk, 0, len(work)), work)}
}

func chunks(dst []hardware.Chunk, work []Work) []hardware.Chunk {
	for _, w := range work {
		dst = append(dst, hardware.Chunk{NewTokens: w.NewTokens, Context: w.Context})
	}
	return dst
}

// chunkBufs hold the batches StepSeconds builds, so that pricing a step
// allocates nothing; a pool rather than a field keeps HardwareTimer a value
// that concurrent simulations may share.
var chunkBufs = sync.Pool{New: func() any { return new([]hardware.Chunk) }}

// StepSeconds implements Timer.
func (h HardwareTimer) StepSeconds(work []Work) float64 {
	buf := chunkBufs.Get().(*[]hardware.Chunk)
	*buf = chunks((*buf)[:0], work)
	t := h.Model.Seconds(hardware.Batch{Seqs: *buf})
	chunkBufs.Put(buf)
	return t
}
