// Package gcturn gives Go's garbage collector a turn during a long
// simulation in WebAssembly.
//
// Go's js/wasm port runs every goroutine on one thread and cannot preempt
// one, so the collector's background mark worker runs only when the
// running goroutine blocks or yields. A simulation that computes for
// hundreds of milliseconds without either leaves a collection cycle it
// started to the allocation assists alone, which the pacer sizes on the
// assumption that the worker does most of the marking: the cycle stays
// open for the rest of the simulation (GODEBUG=gctrace=1 in `make
// bench-wasm`'s children: mark phases of 492–973 ms wall clock with
// 2.6–9.8 ms of assists), every pointer write meanwhile goes through the
// write barrier, and everything allocated meanwhile survives the cycle
// (core-10k-chat's heap went from 12 to 35 MB with 30 MB kept). Yielding
// every millisecond or two lets the worker close a cycle in 14–66 ms.
//
// The core does not import this package: it calls core/scheduler.Yield
// after every step, which package sim sets to [Work] in WebAssembly only.
// Natively the worker runs on a thread of its own, Yield stays nil and
// [Work] compiles to nothing, so native runs (the CLI, the server's
// prerender, the benchmarks' native side) are unchanged.
package gcturn

// Period is the work, in the callers' units (a request handled in a
// step), between two turns: 1–2 ms of a simulation in WebAssembly on the
// lab's 2-vCPU machine (core-10k-uniform makes about 2.5 million such
// updates in 119 ms, BENCHMARKS.md), against a few microseconds for a
// Gosched while no collection runs.
const Period = 1 << 15
