package scheduler

import "fmt"

// Config holds the scheduler and cache knobs, named as in vLLM.
type Config struct {
	MaxNumBatchedTokens       int  // token budget per step
	MaxNumSeqs                int  // most requests holding KV at once
	LongPrefillTokenThreshold int  // 0: off; else a prompt chunk is at most this long
	ChunkedPrefill            bool // false: a prompt is prefilled whole, in one step
	BlockSize                 int  // tokens per KV block
	NumBlocks                 int  // KV blocks in the pool
	PrefixCaching             bool // reuse cached full blocks of identical prefixes
	KVEvents                  bool // keep the pool's events (stored/removed blocks) for DrainKVEvents
}

// Validate checks the knobs, naming the one that is wrong.
func (c Config) Validate() error {
	switch {
	case c.MaxNumBatchedTokens < 1:
		return fmt.Errorf("scheduler: MaxNumBatchedTokens = %d, want ≥ 1", c.MaxNumBatchedTokens)
	case c.MaxNumSeqs < 1:
		return fmt.Errorf("scheduler: MaxNumSeqs = %d, want ≥ 1", c.MaxNumSeqs)
	case c.LongPrefillTokenThreshold < 0:
		return fmt.Errorf("scheduler: LongPrefillTokenThreshold = %d, want ≥ 0", c.LongPrefillTokenThreshold)
	case c.BlockSize < 1:
		return fmt.Errorf("scheduler: BlockSize = %d, want ≥ 1", c.BlockSize)
	case c.NumBlocks < 1:
		return fmt.Errorf("scheduler: NumBlocks = %d, want ≥ 1", c.NumBlocks)
	}
	return nil
}

// Work is one request's share of a step: NewTokens computed on top of
// Context tokens already in its KV cache. A decode has NewTokens = 1.
type Work struct {
	Req       int
	NewTokens int
	Context   int
	Prefill   bool // part of the prompt (or a recompute after preemption)
}

// Timer prices a step: the seconds a batch takes on the modelled hardware.
type Timer interface {
	StepSeconds(batch []Work) float64
}

// TimerFunc adapts a function to Timer.
type TimerFunc func([]Work) float64

// StepSeconds calls f.
func (f TimerFunc) StepSeconds(b []Work) float64 { return f(b) }
