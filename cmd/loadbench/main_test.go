package main

import (
	"strings"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	for p, want := range map[float64]time.Duration{0.5: 50 * time.Millisecond, 0.99: 99 * time.Millisecond, 1: 100 * time.Millisecond, 0: time.Millisecond} {
		if got := percentile(ds, p); got != want {
			t.Errorf("p%v = %v, want %v", p*100, got, want)
		}
	}
	if percentile(nil, 0.5) != 0 {
		t.Error("empty")
	}
}

// The mix has the three classes in the stated shares; no-heavy has none.
func TestMix(t *testing.T) {
	count := func(ts []target) map[string]int {
		m := map[string]int{}
		for _, x := range ts {
			m[x.class]++
			if !strings.HasPrefix(x.path, "/") {
				t.Errorf("address %q", x.path)
			}
		}
		return m
	}
	full := count(mix("full"))
	n := full["page"] + full["heavy"] + full["asset"]
	if full["heavy"]*10 != n || full["page"]*2 != n || full["asset"]*20 != 8*n {
		t.Errorf("full mix %v", full)
	}
	if nh := count(mix("no-heavy")); nh["heavy"] != 0 || nh["page"]*20 != 12*n {
		t.Errorf("no-heavy mix %v", nh)
	}
	wasm := 0
	for _, x := range mix("full") {
		if x.path == "/web/app.wasm" {
			wasm++
		}
	}
	if wasm == 0 {
		t.Error("the mix never asks for app.wasm")
	}
}

func TestConfigCheck(t *testing.T) {
	good := config{conns: 200, duration: 30 * time.Second, abandon: 20, timeout: 10 * time.Second, guardMB: 2048, mix: "full", format: "text"}
	if err := good.check(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []func(c *config){
		func(c *config) { c.conns = 0 }, func(c *config) { c.duration = time.Hour }, func(c *config) { c.guardMB = 1 },
		func(c *config) { c.mix = "x" }, func(c *config) { c.timeout = 0 },
	} {
		c := good
		bad(&c)
		if c.check() == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}
