package lessons_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/lessontest"
)

// Every registered lesson's simulation is an empty struct type whose build
// (and SimulateTrace) are methods: neither a func adapter nor a struct carrying
// a func value, either of which the page's wasm would have to link. The
// sandbox is the lesson that takes a trace; no other does.
func TestRegisteredSimulationsAreMethods(t *testing.T) {
	for _, l := range lessons.All() {
		if l.Sim == nil {
			t.Errorf("%s: no simulation", l.Slug)
			continue
		}
		typ := reflect.TypeOf(l.Sim)
		if typ.Kind() != reflect.Struct || typ.NumField() != 0 {
			t.Errorf("%s: simulation is a %s (%s), want an empty struct type with a build method", l.Slug, typ, typ.Kind())
		}
	}
}

// A lesson without a trace simulation refuses BuildTrace and RunTrace with
// an error naming the lesson, and a lesson without a simulation refuses
// Build, instead of panicking.
func TestBuildWithoutSimulationIsAnError(t *testing.T) {
	l := &lessons.Lesson{Slug: "plain", Sim: lessontest.SimFunc(func(lessons.Values) (*lessons.Script, error) { return &lessons.Script{}, nil })}
	if l.TakesTrace() {
		t.Error("a lesson whose simulation has no buildTrace takes a trace")
	}
	v, errs := l.Resolve(nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	trace := []workload.Request{{ID: 0, Prompt: 8, Output: 4, PrefixGroup: -1}}
	if _, err := l.BuildTrace(v, trace, "t.jsonl"); err == nil || !strings.Contains(err.Error(), "plain: the lesson takes no trace") {
		t.Errorf("BuildTrace: err %v, want the lesson takes no trace", err)
	}
	if _, _, err := l.RunTrace(nil, trace, "t.jsonl"); err == nil || !strings.Contains(err.Error(), "takes no trace") {
		t.Errorf("RunTrace: err %v, want the lesson takes no trace", err)
	}
	bare := &lessons.Lesson{Slug: "bare"}
	if _, err := bare.Build(lessons.Values{}); err == nil || !strings.Contains(err.Error(), "bare: the lesson has no simulation") {
		t.Errorf("bare Build: err %v, want no simulation", err)
	}
	if bare.TakesTrace() {
		t.Error("a lesson without a simulation takes a trace")
	}
}
