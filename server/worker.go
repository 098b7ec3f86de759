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
//   - install takes a file whose address carries its content hash (?v=…,
//     the addresses the page itself uses) in the default cache mode: an
//     immutable address cannot be stale, so the copy the page already
//     fetched is used and nothing is downloaded twice; every other address
//     (pages, app.js, the manifest) is fetched with cache:"no-cache", a
//     revalidation (304 when unchanged), so a static host's HTTP cache
//     (GitHub Pages: max-age=600) cannot put stale files into the new
//     version's cache (docs/SOURCES.md#go-app);
//   - page navigations match the cache ignoring the query string, so a
//     lesson page with ?step=…&… opens offline from its cached page (the
//     wasm then reads the query);
//   - a navigation the cache does not hold (an /embed/ page, /lesson/x/ or
//     /lesson/x.html on a static host) that fails on the network (offline)
//     gets a cached lesson page as the shell: the wasm routes by the
//     address, so the right lesson or embed runs.
//
// Every lesson page is in CacheableResources, so after one visit the whole
// lab works offline. A new deployment changes the Version (a hash of the web
// files), so the browser sees new worker bytes on the next navigation,
// installs them, and go-app calls OnAppUpdate: the page shows its "reload"
// banner.
const (
	workerInstallFrom = "await cache.addAll(resourcesToCache);"
	workerInstallTo   = `await cache.addAll(resourcesToCache.map((u) => new Request(u, { cache: u.includes("?v=") ? "default" : "no-cache" })));`
	workerMatchFrom   = "const cachedResponse = await caches.match(request);"
	workerMatchTo     = `const cachedResponse = await caches.match(request, { ignoreSearch: request.mode === "navigate" });`
	workerFetchFrom   = "  return await fetch(request);\n}"
	workerFetchTo     = `  try {
    return await fetch(request);
  } catch (err) {
    // Offline and not cached: boot any page of the lab from a cached lesson
    // page (the app routes by the address).
    if (request.mode === "navigate") {
      const shell = resourcesToCache.find((u) => u.includes("/lesson/"));
      const cached = shell && (await caches.match(shell));
      if (cached) {
        return cached;
      }
    }
    throw err;
  }
}`
)

// ReloadingWorker is the patched service worker template.
var ReloadingWorker = patchWorker(goapp.DefaultAppWorkerJS)

func patchWorker(tpl string) string {
	tpl = strings.Replace(tpl, workerInstallFrom, workerInstallTo, 1)
	tpl = strings.Replace(tpl, workerMatchFrom, workerMatchTo, 1)
	return strings.Replace(tpl, workerFetchFrom, workerFetchTo, 1)
}
