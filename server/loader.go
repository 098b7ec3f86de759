//go:build !wasm

package server

import "strings"

// go-app's app.js registers the service worker and fetches, compiles and
// starts app.wasm as soon as the page is parsed. The lab's pages are
// readable and steppable without it (web/lab.js steps the prerendered
// steps), so app.js is patched to start both only when the page asks:
// window.goappStart(), which web/lab.js calls at the reader's first use of
// something only the app does (inferlab.start; docs/ARCHITECTURE.md,
// "Light until it is used"). A page that asked before app.js ran
// (inferlab.started, set by lab.js in the head) starts at once. Checked by
// a unit test, so a go-app upgrade that changes app.js fails loudly.
const (
	appStartFrom = "goappInitServiceWorker();\ngoappWatchForUpdate();\ngoappWatchForInstallable();\ngoappInitWebAssembly();\n"
	appStartTo   = `goappWatchForUpdate();
goappWatchForInstallable();
// Inference Lab: the service worker and the app's WebAssembly start when the
// page asks (web/lab.js, inferlab.start), not at load.
let goappStarted = false;
window.goappStart = function () {
  if (goappStarted) {
    return;
  }
  goappStarted = true;
  goappInitServiceWorker();
  goappInitWebAssembly();
};
if (window.inferlab && window.inferlab.started) {
  window.goappStart();
}
`
)

// patchAppJS applies the deferred start to go-app's generated app.js; ok
// is false when go-app's text changed and the patch no longer applies.
func patchAppJS(js []byte) (out []byte, ok bool) {
	s := string(js)
	if !strings.Contains(s, appStartFrom) {
		return js, false
	}
	return []byte(strings.Replace(s, appStartFrom, appStartTo, 1)), true
}
