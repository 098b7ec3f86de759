package scheduler

// Yield, when not nil, is called after every step a simulation runs
// (Scheduler.Step, Loop.StepInto, Loop.StepQuiet, and core/batching's
// decode steps) with the work that step did, counted in requests handled.
// It is how a host that must share one thread with the simulation gets a
// turn: Go's js/wasm port runs every goroutine on one thread and cannot
// preempt one, so a simulation computing for hundreds of milliseconds
// starves the garbage collector's mark worker (the browser's entry points
// set it to app/sim/gcturn.Work, which yields every few thousand units).
// Natively it stays nil and costs one test per step.
//
// Set it before any simulation starts; it is read without synchronisation.
var Yield func(work int)

// yield calls Yield when it is set.
func yield(work int) {
	if Yield != nil {
		Yield(work)
	}
}
