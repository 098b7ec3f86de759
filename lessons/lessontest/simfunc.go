package lessontest

import (
	"github.com/inferlab/inferlab/lessons"
)

// SimFunc adapts a func to simulation, for tests that build fake lessons.
// Registered lessons must not use it: a func value is a reference the
// linker keeps, which would pull the simulation back into the page's
// WebAssembly (see lessons.Simulation; TestRegisteredSimulationsAreMethods).
type SimFunc func(lessons.Values) (*lessons.Script, error)

func (f SimFunc) Simulate(v lessons.Values) (*lessons.Script, error) { return f(v) }
