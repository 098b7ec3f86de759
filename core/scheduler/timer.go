package scheduler

import "github.com/inferlab/inferlab/core/hardware"

// HardwareTimer prices steps with core/hardware's step-time model.
type HardwareTimer struct {
	Model hardware.StepModel
}

// Batch converts a step's work to the step model's batch.
func Batch(work []Work) hardware.Batch {
	b := hardware.Batch{Seqs: make([]hardware.Chunk, len(work))}
	for i, w := range work {
		b.Seqs[i] = hardware.Chunk{NewTokens: w.NewTokens, Context: w.Context}
	}
	return b
}

// StepSeconds implements Timer.
func (h HardwareTimer) StepSeconds(work []Work) float64 {
	return h.Model.Seconds(Batch(work))
}
