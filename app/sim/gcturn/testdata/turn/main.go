// Command turn checks, built for WebAssembly, that gcturn.Work yields: a
// goroutine started before a loop that only calls Work gets to run within
// Period units of work (js/wasm never preempts a goroutine, so without a
// yield it would run only after the loop). It prints "ran after N".
package main

import (
	"fmt"
	"sync/atomic"

	"github.com/inferlab/inferlab/app/sim/gcturn"
)

func main() {
	var ran atomic.Bool
	go ran.Store(true)
	n := 0
	for ; n < 4*gcturn.Period && !ran.Load(); n++ {
		gcturn.Work(1)
	}
	if ran.Load() {
		fmt.Println("ran after", n)
	} else {
		fmt.Println("did not run")
	}
}
