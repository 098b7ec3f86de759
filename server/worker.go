//go:build !wasm

package server

import (
	"strings"

	goapp "github.com/maxence-charriere/go-app/v10/pkg/app"
)

// The service worker is go-app's default (cache-first, versioned) with two
// patches, each checked by a unit test so a go-app upgrade that changes the
// template fails loudly:
//
//   - install fetches with cache:"reload", so a static host's HTTP cache
//     (GitHub Pages: max-age=600) cannot put stale files into the new
//     version's cache (stack.md §5, pitfall 2);
//   - page navigations match the cache ignoring the query string, so a
//     lesson page with ?step=…&… opens offline from its cached page (the
//     wasm then reads the query).
const (
	workerInstallFrom = "await cache.addAll(resourcesToCache);"
	workerInstallTo   = `await cache.addAll(resourcesToCache.map((u) => new Request(u, { cache: "reload" })));`
	workerMatchFrom   = "const cachedResponse = await caches.match(request);"
	workerMatchTo     = `const cachedResponse = await caches.match(request, { ignoreSearch: request.mode === "navigate" });`
)

// ReloadingWorker is the patched service worker template.
var ReloadingWorker = patchWorker(goapp.DefaultAppWorkerJS)

func patchWorker(tpl string) string {
	tpl = strings.Replace(tpl, workerInstallFrom, workerInstallTo, 1)
	return strings.Replace(tpl, workerMatchFrom, workerMatchTo, 1)
}
