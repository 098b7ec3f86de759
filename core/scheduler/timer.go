package scheduler

import "github.com/inferlab/inferlab/core/hardware"

// HardwareTimer prices steps with core/hardware's step-time model.
type HardwareTimer struct {
	Model hardware.StepModel
}

// StepSeconds implements Timer.
func (h HardwareTimer) StepSeconds(work []Work) float64 {
	return h.Model.Seconds(hardware.Batch{Seqs: work})
}
