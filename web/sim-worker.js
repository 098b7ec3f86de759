// Inference Lab simulation worker: runs lessons off the page's thread.
//
// The page (inferlab.sim in lab.js) starts this worker with web/sim.wasm
// (wasm/sim: the lessons and the core, no UI): the first worker fetches and
// compiles it and hands the compiled module back, later ones get that module.
// Then one request at a time:
//   {type: "init", url} or {type: "init", module}
//        → ({type: "module", module}) {type: "ready"} or {type: "failed", message}
//   {type: "run", id, body: sim.Request JSON}    → {type: "reply", id, bytes: Uint8Array, ms}
//                                                  or {type: "reply", id, error, dead: true}
//   {type: "prefetch", path, search}            → {type: "prefetch-body", body} (the request the
//        page's address asks for, as the page will send it; null: no lesson), then its reply
//        as for run, with id 0: the page's first simulation starts before its app has loaded
// The reply's bytes are package sim's wire format (app/sim/wire.go); their
// buffer is transferred, not copied. A request the page no longer wants is
// cancelled by terminating the worker.
"use strict";
// go-app serves Go's wasm_exec.js at the site's root (under its sub-path on
// a static host), one level above web/.
importScripts("../wasm_exec.js");

self.onmessage = async (e) => {
  let m = e.data;
  if (m.type === "init") {
    try {
      let mod = m.module;
      if (!mod) {
        const viaBytes = () => fetch(m.url).then((r) => {
          if (!r.ok) throw new Error(m.url + ": HTTP " + r.status);
          return r.arrayBuffer();
        }).then((b) => WebAssembly.compile(b));
        // Streaming needs application/wasm; a host that sends another type
        // gets the bytes compiled instead.
        mod = await (WebAssembly.compileStreaming ? WebAssembly.compileStreaming(fetch(m.url)).catch(viaBytes) : viaBytes());
        self.postMessage({ type: "module", module: mod });
      }
      const go = new Go();
      const inst = await WebAssembly.instantiate(mod, go.importObject);
      // run executes main() until it waits for calls: by then it has
      // published inferlabSimulate.
      go.run(inst);
      if (typeof self.inferlabSimulate !== "function") throw new Error("sim.wasm did not start");
      self.postMessage({ type: "ready" });
    } catch (err) {
      self.postMessage({ type: "failed", message: String(err && err.message ? err.message : err) });
    }
    return;
  }
  if (m.type === "prefetch") {
    let body;
    try {
      body = self.inferlabRequestFor(m.path, m.search);
    } catch (err) {
      body = null;
    }
    self.postMessage({ type: "prefetch-body", body });
    if (body === null) return;
    m = { type: "run", id: 0, body };
  }
  if (m.type === "run") {
    const t0 = performance.now();
    try {
      const out = self.inferlabSimulate(m.body);
      self.postMessage({ type: "reply", id: m.id, bytes: out, ms: performance.now() - t0 }, [out.buffer]);
    } catch (err) {
      // The Go program stopped (out of memory, a fatal error): this worker
      // is done; the page starts another for the next request.
      self.postMessage({ type: "reply", id: m.id, error: String(err && err.message ? err.message : err), dead: true });
    }
  }
};
