package main

import (
	"strings"
	"testing"

	"github.com/inferlab/inferlab/app/sim"
)

func TestHandle(t *testing.T) {
	rep, s, err := sim.Decode(handle([]byte(`{"slug":"block-table","params":{"block_size":"32"}}`)))
	if err != nil || rep.Failure != nil || s == nil || s.Count() == 0 {
		t.Fatalf("%v %+v", err, rep.Failure)
	}
	rep, s, err = sim.Decode(handle([]byte(`{"slug":`)))
	if err != nil || s != nil || rep.Failure == nil || !strings.Contains(rep.Failure.Message, "request") {
		t.Fatalf("bad request: %v %+v", err, rep.Failure)
	}
}
