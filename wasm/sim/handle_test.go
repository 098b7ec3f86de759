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

func TestRequestFor(t *testing.T) {
	body, ok := requestFor("/lesson/block-table", "step=3&block_size=32")
	if !ok || !strings.Contains(string(body), `"block_size":"32"`) {
		t.Fatalf("requestFor: %v %s", ok, body)
	}
	if _, s, err := sim.Decode(handle(body)); err != nil || s == nil {
		t.Fatalf("its reply: %v", err)
	}
	if _, ok := requestFor("/", ""); ok {
		t.Error("the index asked for a lesson")
	}
	// The defaults, however written, are the page's own script: nothing to
	// prefetch. A comparison whose A is the defaults is one of them.
	for _, q := range []string{"", "step=4", "block_size=16", "b.block_size=32", "utm_source=blog"} {
		if body, ok := requestFor("/lesson/block-table", q); ok {
			t.Errorf("requestFor(block-table, %q) = %s, want nothing (the defaults)", q, body)
		}
	}
}
