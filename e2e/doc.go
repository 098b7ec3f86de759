//go:build !wasm

// Package e2e drives the real site (the native server handler over loopback HTTP, the
// real app.wasm) in headless Chromium with chromedp, against the DOM contract of
// docs/DOM.md. It has only tests.
//
// TestMain builds web/app.wasm (incrementally, with the flags of the Makefile so the
// build cache is shared) and checks that web/echarts.min.js exists (`make deps build`).
// Without /usr/bin/chromium the browser tests skip, unless CI=true, in which case they
// fail. They also skip under -short. Screenshots go to e2e/test-output/ (git-ignored).
// Each load logs a line `E2E_TIMING garage cold_ms=N warm_ms=N ...`.
package e2e
