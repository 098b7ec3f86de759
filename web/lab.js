// Inference Lab: the player (stepping a lesson, before the app runs and
// after: the one implementation), small DOM helpers the Go app calls (a
// step change costs one WebAssembly→JS call instead of one per grid cell),
// the colour theme, the ? and / shortcuts, clipboard and downloads, the
// embed's height report, the simulation worker's client (inferlab.sim),
// and the mark on a prerendered figure that is not the state the address
// asks for.
// A plain file loaded in <head> before the page body (no inline script), so
// the Content-Security-Policy stays script-src 'self', and the theme is set
// before the first paint. Under Node (web/test/) it is only the player's
// stepping logic, below, as a module.
"use strict";

// inferlabStepping is the player's stepping as plain logic, with no DOM and
// no timers of its own: which step a key or a button asks for, the step
// shown, playback (one step per delay at the chosen speed, stopping at the
// last step and at a question the learner has not answered), the motion
// (step changes closer than motionGap jump instead of animating, so a held
// key or a dragged scrubber never queues movements and the latest step
// wins) and the address (written once stepping pauses for urlSettle:
// Safari refuses more than 100 history writes in 30 s, which a held arrow
// key reaches). The page gives it a view: the prerendered page's (web/
// lab.js swaps each step's markup in) or the app's (app/player.go renders
// the step asked for). docs/ARCHITECTURE.md, "One player".
const inferlabStepping = (() => {
  const motionGap = 250;
  const urlSettle = 250;
  // baseDelay is the time per step while playing at 1× (app/playback
  // BaseDelay, carried by #steps-data as delayMs).
  const baseDelay = 1600;

  // keyAction is what a key does to the player, with the focus on an
  // element of tag (upper case; BUTTON for role=button): "prev", "next",
  // "first", "last", "play", or "" (not the player's: a form field takes
  // its keys, a focused button, link or summary its space).
  const keyAction = (key, tag) => {
    if (/^(INPUT|SELECT|TEXTAREA)$/.test(tag)) return "";
    switch (key) {
      case "ArrowLeft": return "prev";
      case "ArrowRight": return "next";
      case "Home": return "first";
      case "End": return "last";
      case " ":
      case "Spacebar": return /^(BUTTON|A|SUMMARY)$/.test(tag) ? "" : "play";
      default: return "";
    }
  };

  // delayOf is the time per step at speed (a number as text; anything
  // else, or not above 0, is 1×).
  const delayOf = (speed, base) => {
    const f = parseFloat(speed);
    return f > 0 && isFinite(f) ? base / f : base;
  };

  // createStepper steps view, whose methods are:
  //   count()            the number of steps;
  //   drawn()            what the page shows: {step (0-based), seq (the
  //                      last show() it drew, -1 for none), playing};
  //   show(step, {playing, speed}, seq)  draw this step and toolbar;
  //   motion(jump)       step changes jump (true) or animate;
  //   url(step)          write the step into the address; urlPending(on);
  //   asks()             the step drawn asks a question;
  //   ask()              playback stopped at it: show it, focus it;
  //   delayMs()          the time per step at 1×.
  // clock is {now() in ms, set(fn, ms) → id, clear(id)}.
  const createStepper = (view, clock) => {
    // passAt: the question playback plays past (the learner pressed Play
    // where playback had stopped for it); stoppedAt: where it stopped.
    const st = { step: 0, playing: false, speed: "1", passAt: -1, stoppedAt: -1 };
    let sent = -1; // the last show() asked
    let lastMove = -Infinity;
    let settle = null;
    let tick = null;
    let urlTimer = null;
    // sync adopts what the page draws once it has drawn the latest show():
    // the app moves by itself too (a question answered, a new run placed,
    // playback stopped by a new run).
    const sync = () => {
      const d = view.drawn();
      if (!d || d.seq < sent) return;
      st.step = d.step;
      if (st.playing && !d.playing) stop();
    };
    const publish = () => {
      sent++;
      view.show(st.step, { playing: st.playing, speed: st.speed }, sent);
    };
    const writeSoon = () => {
      clock.clear(urlTimer);
      view.urlPending(true);
      urlTimer = clock.set(() => {
        urlTimer = null;
        view.url(st.step);
        view.urlPending(false);
      }, urlSettle);
    };
    // to shows step i (clamped); false when it is shown already.
    const to = (i) => {
      const n = view.count();
      if (!n) return false;
      i = Math.max(0, Math.min(n - 1, i));
      if (i === st.step) return false;
      const now = clock.now();
      const jump = now - lastMove < motionGap;
      lastMove = now;
      clock.clear(settle);
      settle = null;
      view.motion(jump);
      if (jump) {
        settle = clock.set(() => {
          settle = null;
          view.motion(false);
        }, motionGap);
      }
      st.step = i;
      publish();
      writeSoon();
      return true;
    };
    const schedule = () => {
      clock.clear(tick);
      tick = clock.set(advance, delayOf(st.speed, view.delayMs() || baseDelay));
    };
    // askHere stops playback at the question the step drawn asks, unless
    // it is the one to play past.
    const askHere = () => {
      if (!st.playing || st.step === st.passAt || !view.asks()) return false;
      stop();
      st.stoppedAt = st.step;
      view.ask();
      return true;
    };
    function advance() {
      tick = null;
      sync();
      if (!st.playing || askHere()) return;
      if (st.step >= view.count() - 1) {
        stop();
        return;
      }
      to(st.step + 1);
      schedule();
    }
    function stop() {
      clock.clear(tick);
      tick = null;
      if (!st.playing) return;
      st.playing = false;
      publish();
    }
    const api = {
      state: () => ({ step: st.step, playing: st.playing, speed: st.speed }),
      go(i) {
        sync();
        return to(i);
      },
      move(by) {
        sync();
        return to(st.step + by);
      },
      last() {
        sync();
        return to(view.count() - 1);
      },
      // place shows step i as the address asked (no motion, no address write).
      place(i) {
        st.step = Math.max(0, Math.min(view.count() - 1, i));
        publish();
      },
      // toggle starts or stops playback: at the last step it starts from
      // the first; at a question where playback stopped it plays on past
      // it (the learner chose not to answer); at another it stops at once.
      toggle() {
        sync();
        const n = view.count();
        if (!n) return;
        if (st.playing) {
          stop();
          return;
        }
        st.playing = true;
        st.passAt = st.step === st.stoppedAt ? st.step : -1;
        if (st.step >= n - 1) {
          st.passAt = -1;
          if (!to(0)) publish();
        } else publish();
        schedule();
      },
      stop,
      speed(s) {
        st.speed = String(s);
      },
      key(k) {
        switch (k) {
          case "prev": return api.move(-1);
          case "next": return api.move(1);
          case "first": return api.go(0);
          case "last": return api.last();
          case "play": return api.toggle();
          default: return false;
        }
      },
      // drawn: the page has drawn a step; playback stops at a question.
      drawn() {
        sync();
        askHere();
      },
      // attach: another view draws from now on (the app took the page
      // over): it is given the state, or, when it has drawn more lately
      // than this player asked (it placed the step the address names),
      // takes its step.
      attach() {
        sync();
        publish();
      },
    };
    return api;
  };

  return { keyAction, delayOf, createStepper, motionGap, urlSettle, baseDelay };
})();

if (typeof module === "object" && module.exports) module.exports = inferlabStepping;

if (typeof document === "object") (() => {
  const root = document.documentElement;
  const THEME_KEY = "inferlab-theme";
  // This script's own address: the worker and sim.wasm sit beside it in web/
  // (under the site's sub-path on a static host).
  const base = (document.currentScript && document.currentScript.src) || location.href;
  const query = new URLSearchParams(location.search);
  // ?theme=light|dark pins the theme (embeds choose it in their src).
  const pinned = ["light", "dark"].includes(query.get("theme")) ? query.get("theme") : "";

  const stored = () => {
    try {
      const t = localStorage.getItem(THEME_KEY);
      return t === "light" || t === "dark" ? t : "";
    } catch (e) {
      return ""; // storage blocked (sandboxed frame without same-origin)
    }
  };
  // Dark by default, the articles' palette (docs/ARCHITECTURE.md#browser-experience);
  // light only by choice.
  const resolve = () => pinned || stored() || "dark";
  const apply = () => {
    const t = resolve();
    if (root.dataset.theme !== t) {
      root.dataset.theme = t;
      window.dispatchEvent(new CustomEvent("inferlab:theme", { detail: t }));
    }
  };
  apply();

  const status = (id, text) => {
    const el = id && document.getElementById(id);
    if (el) el.textContent = text;
  };

  // saveURL downloads href under name through a temporary link (go-app leaves
  // links with a download attribute alone).
  const saveURL = (name, href) => {
    const a = document.createElement("a");
    a.href = href;
    a.download = name;
    a.hidden = true;
    document.body.appendChild(a);
    a.click();
    a.remove();
  };


  // inferlab.sim runs lesson simulations in a Web Worker (web/sim-worker.js
  // with web/sim.wasm), so the page's thread never waits for one
  // (app/player_sim.go). Only the latest request matters: a newer one, or
  // cancel(), answers the older one "superseded" and, when a worker is busy
  // with it, terminates that worker and carries on with a spare one. Every
  // request is answered exactly once, through cb(bytes, error):
  //   bytes   Uint8Array of package sim's wire format, or null;
  //   error   "" | "superseded" | "unavailable: why" (not even the page
  //           could start sim.wasm) | why the simulation stopped.
  // Page-thread mode: where no worker runs (no Worker in this browser, the
  // worker or sim.wasm failed to load, or broken set by hand: api.broken
  // is true), the first request loads sim.wasm into the page itself (Go's
  // wasm_exec.js is already there for the app) and each request is then
  // simulated synchronously on the page's thread, blocking it as long as
  // the simulation runs. It starts one frame after the request, so the
  // figure marked stale is painted first; a run under way cannot be
  // interrupted, so a newer request is simply the next one run (older ones
  // waiting are answered "superseded"). A Go instance that stops (exit,
  // panic, a trap) is dropped and the next request loads a fresh one.
  // Nothing is loaded on the page while workers work.
  const sim = (() => {
    // The server may name versioned (immutable) addresses of both files in
    // <meta name="inferlab:sim-worker|inferlab:sim-wasm" content="URL">;
    // otherwise they sit beside this script.
    const addr = (name, file) => {
      const m = document.querySelector('meta[name="inferlab:' + name + '"]');
      return new URL((m && m.content) || file, base).href;
    };
    let workerURL = "";
    let wasmURL = "";
    // startMs: the last worker's start (fetch, compile, Go's start) in ms;
    // lastMs: the last simulation's time (in the worker, or on the page);
    // pageRuns: the simulations run on the page's thread; pageStarts: the
    // Go instances of sim.wasm started on the page; pageStartMs: the last
    // one's start (fetch unless compiled before, compile, Go's start).
    const stats = { workers: 0, terminated: 0, replies: 0, lastMs: 0, startMs: 0, pageRuns: 0, pageStarts: 0, pageStartMs: 0 };
    let active = null; // the worker requests go to: {worker, ready, busy, dead}
    let spare = null; // a started worker that takes over when active is terminated
    let job = null; // the latest request not answered yet: {id, body, cb, sent, here (the page runs it)}
    let seq = 0;
    // pre is the simulation of the state the page's address asks for,
    // started before the app loads (prefetch): {slot, body (undefined until
    // the worker says), bytes, done}. The app's first request takes its
    // answer when the bodies match.
    let pre = null;
    const api = { broken: false, stats };

    const later = (f) => setTimeout(f, 0); // never call back into Go from inside its call
    const answer = (j, bytes, err) => later(() => j.cb(bytes, err));

    // The first worker fetches and compiles sim.wasm itself (off the page's
    // thread, which is busy starting the app), and hands the compiled module
    // back; later workers (after a cancellation) start from it.
    let module = null;
    const message = (e) => String(e && e.message ? e.message : e);
    // fail: no worker can run; the pending request goes to the page.
    const fail = (why) => {
      api.broken = true;
      console.warn("inferlab: the simulation worker is unavailable (" + why + "): simulating on the page's thread");
      if (job) {
        job.here = true;
        pump();
      }
    };

    // here is sim.wasm running on the page: {ready (a promise), dead}.
    let here = null;
    const loadHere = () => {
      if (here && !here.dead) return here.ready;
      const h = { dead: false };
      h.ready = (async () => {
        if (typeof Go !== "function") throw new Error("Go's wasm_exec.js is not loaded");
        if (typeof WebAssembly !== "object") throw new Error("no WebAssembly");
        if (!wasmURL) wasmURL = addr("sim-wasm", "sim.wasm");
        const t0 = performance.now();
        if (!module) {
          const viaBytes = () => fetch(wasmURL).then((r) => {
            if (!r.ok) throw new Error(wasmURL + ": HTTP " + r.status);
            return r.arrayBuffer();
          }).then((b) => WebAssembly.compile(b));
          // Streaming needs application/wasm; another type gets the bytes
          // compiled instead (as in sim-worker.js).
          module = await (WebAssembly.compileStreaming ? WebAssembly.compileStreaming(fetch(wasmURL)).catch(viaBytes) : viaBytes());
        }
        const go = new Go();
        const inst = await WebAssembly.instantiate(module, go.importObject);
        // A stopped instance leaves its functions behind: this one must
        // publish its own.
        delete globalThis.inferlabSimulate;
        // run executes main() until it waits for calls; its promise settles
        // when the program stops.
        go.run(inst).then(() => { h.dead = true; }, () => { h.dead = true; });
        if (typeof globalThis.inferlabSimulate !== "function") throw new Error("sim.wasm did not start");
        stats.pageStarts++;
        stats.pageStartMs = performance.now() - t0;
      })();
      h.ready.catch(() => { h.dead = true; }); // the next request tries again
      here = h;
      return h.ready;
    };

    // runHere simulates the pending page-thread request, if any.
    const runHere = () => {
      if (!job || !job.here) return;
      const j = job;
      job = null;
      const t0 = performance.now();
      let bytes = null;
      let err = "";
      try {
        const out = globalThis.inferlabSimulate(j.body);
        // A Go program that stops during the call returns nothing.
        if (!(out instanceof Uint8Array)) throw new Error("sim.wasm stopped");
        bytes = out;
      } catch (e) {
        err = message(e);
        if (here) here.dead = true;
      }
      stats.lastMs = performance.now() - t0;
      stats.pageRuns++;
      stats.replies++;
      answer(j, bytes, err);
    };

    // pump runs the latest page-thread request: after the next frame (the
    // page paints the figure marked stale before it blocks), once sim.wasm
    // is loaded. One pump at a time; it runs again for a request that came
    // meanwhile.
    let pumping = false;
    const pump = () => {
      if (pumping) return;
      pumping = true;
      const step = () => loadHere().then(runHere, (e) => {
        if (!job || !job.here) return;
        const j = job;
        job = null;
        answer(j, null, "unavailable: " + message(e));
      }).finally(() => {
        pumping = false;
        if (job && job.here) pump();
      });
      if (document.hidden) later(step);
      else requestAnimationFrame(() => later(step));
    };

    const spawn = () => {
      if (!workerURL) {
        workerURL = addr("sim-worker", "sim-worker.js");
        wasmURL = addr("sim-wasm", "sim.wasm");
      }
      const slot = { worker: null, busy: false, dead: false };
      slot.ready = new Promise((resolve, reject) => {
        let w;
        try {
          w = new Worker(workerURL);
        } catch (e) {
          reject(e);
          return;
        }
        stats.workers++;
        slot.worker = w;
        w.onmessage = (e) => {
          const m = e.data;
          if (m.type === "module") module = m.module;
          else if (m.type === "prefetch-body") prefetchBody(slot, m.body);
          else if (m.type === "ready") {
            stats.startMs = performance.now() - t0;
            resolve();
          }
          else if (m.type === "failed") reject(new Error(m.message));
          else if (m.type === "reply") reply(slot, m);
        };
        w.onerror = (e) => {
          e.preventDefault();
          reject(new Error(e.message || "the worker failed to start"));
          if (slot.busy) reply(slot, { id: slot.id, error: e.message || "the worker failed", dead: true });
        };
        const t0 = performance.now();
        w.postMessage(module ? { type: "init", module } : { type: "init", url: wasmURL });
      });
      slot.ready.catch((e) => {
        slot.dead = true;
        if (slot === active) fail(message(e));
      });
      return slot;
    };

    const drop = (slot) => {
      slot.dead = true;
      if (slot.worker) slot.worker.terminate();
      stats.terminated++;
    };

    const next = () => {
      if (!active || active.dead) {
        active = spare && !spare.dead ? spare : spawn();
        spare = null;
      }
      return active;
    };

    // fromPrefetch answers the job from the prefetch when it is the same
    // request, or drops a prefetch of another state; it reports whether the
    // job must wait (the prefetch's request or answer is not known yet).
    const fromPrefetch = () => {
      if (!pre || !job || job.sent) return false;
      if (pre.body === undefined) return true;
      if (pre.body === job.body) {
        if (!pre.done) return true;
        const bytes = pre.bytes;
        pre = null;
        if (bytes) {
          const j = job;
          job = null;
          stats.replies++;
          stats.prefetched = true;
          answer(j, bytes, "");
          return true;
        }
        return false; // it failed: run the job
      }
      if (!pre.done) {
        drop(pre.slot); // another state is wanted now
        if (active === pre.slot) active = null;
      }
      pre = null;
      return false;
    };

    function prefetchBody(slot, body) {
      if (!pre || pre.slot !== slot) return;
      if (body === null) {
        pre = null;
        slot.busy = false;
      } else pre.body = body;
      if (job && !job.sent) send();
    }

    const send = () => {
      if (!job || job.here) return; // the page runs it
      if (fromPrefetch()) return;
      const slot = next();
      slot.ready.then(() => {
        if (!job || job.sent || slot !== active || slot.busy) return;
        job.sent = true;
        slot.busy = true;
        slot.id = job.id;
        slot.worker.postMessage({ type: "run", id: job.id, body: job.body });
      }, () => {});
    };

    function reply(slot, m) {
      slot.busy = false;
      if (m.dead) drop(slot);
      if (m.id === 0) {
        if (pre && pre.slot === slot) {
          pre.done = true;
          pre.bytes = m.bytes || null;
          stats.lastMs = m.ms || 0;
        }
        if (job && !job.sent) send();
        return;
      }
      if (job && m.id === job.id) {
        const j = job;
        job = null;
        stats.replies++;
        stats.lastMs = m.ms || 0;
        answer(j, m.bytes || null, m.error || (m.bytes ? "" : "no reply"));
      }
      if (job) send(); // a newer request waited for this worker
      else if (!spare && !slot.dead) spare = spawn(); // idle now: ready the next cancel
    }

    // supersede answers the pending request "superseded" and stops the
    // worker running it.
    const supersede = () => {
      if (!job) return;
      const j = job;
      job = null;
      if (j.sent && active && active.busy && active.id === j.id) {
        drop(active);
        active = null;
      }
      answer(j, null, "superseded");
    };

    api.run = (body, cb) => {
      supersede();
      // broken may be set from outside at any time (a test measuring this
      // path): it sends requests to the page's thread from then on.
      job = { id: ++seq, body, cb, sent: false, here: api.broken };
      if (job.here) pump();
      else send();
    };
    api.cancel = supersede;
    // warm starts a worker before the first request (lesson pages call it).
    api.warm = () => {
      if (!api.broken && !active && typeof Worker === "function") next();
    };
    // prefetch starts the simulation of the state the page's address asks
    // for (path, query without "?"), before the app loads.
    api.prefetch = (path, search) => {
      if (api.broken || pre || job || typeof Worker !== "function") return;
      const slot = next();
      pre = { slot, body: undefined, bytes: null, done: false };
      slot.ready.then(() => {
        if (!pre || pre.slot !== slot || slot.busy || slot.dead) return;
        slot.busy = true;
        slot.id = 0;
        slot.worker.postMessage({ type: "prefetch", path, search });
      }, () => {
        if (pre && pre.slot === slot) pre = null;
      });
    };
    if (typeof Worker !== "function" || typeof WebAssembly !== "object") api.broken = true;
    return api;
  })();

  window.inferlab = {
    sim,

    // start loads the app (its WebAssembly and the service worker) now;
    // started says why it was (see start below), "" before.
    start: (why) => start(why || "asked"),
    started: "",

    // patchGrid updates block-grid cells. data holds one line per changed
    // cell: index, class, owner, label, title, separated by tabs.
    patchGrid(box, data) {
      const cells = box.children;
      const lines = data.split("\n");
      for (let i = 0; i < lines.length; i++) {
        const f = lines[i].split("\t");
        const el = cells[+f[0]];
        if (f.length < 5 || !el) continue;
        el.className = f[1];
        el.setAttribute("data-owner", f[2]);
        el.textContent = f[3];
        el.title = f[4];
      }
    },

    // cursor places a chart's step marker (an element over the chart) at data
    // x, spanning the plot area; x null hides it.
    cursor(chart, marker, x) {
      try {
        if (x === null || x === undefined || !chart || chart.isDisposed()) {
          marker.hidden = true;
          return;
        }
        const px = chart.convertToPixel({ xAxisIndex: 0 }, x);
        const rect = chart.getModel().getComponent("grid").coordinateSystem.getRect();
        if (!isFinite(px) || px < rect.x - 1 || px > rect.x + rect.width + 1) {
          marker.hidden = true;
          return;
        }
        marker.style.left = px + "px";
        marker.style.top = rect.y + "px";
        marker.style.height = rect.height + "px";
        marker.hidden = false;
      } catch (e) {
        marker.hidden = true;
      }
    },

    // syncRanges moves each range input under the selector's element to
    // its data-pos (app/params_form.go rangeAt: go-app may set the value
    // before max, which clamps it), unless the learner is dragging it.
    syncRanges(sel) {
      const root = document.querySelector(sel);
      if (!root) return;
      for (const el of root.querySelectorAll('input[type="range"][data-pos]')) {
        if (el.value !== el.dataset.pos && !el.matches(":active")) el.value = el.dataset.pos;
      }
    },

    // theme is the colour theme shown: "dark" or "light".
    theme() {
      return root.dataset.theme === "light" ? "light" : "dark";
    },

    // setTheme applies and remembers a theme ("" forgets the choice).
    setTheme(t) {
      try {
        if (t === "light" || t === "dark") localStorage.setItem(THEME_KEY, t);
        else localStorage.removeItem(THEME_KEY);
      } catch (e) {
        // not remembered, still applied below
      }
      if (!pinned && (t === "light" || t === "dark") && stored() !== t) {
        root.dataset.theme = t;
        window.dispatchEvent(new CustomEvent("inferlab:theme", { detail: t }));
        return;
      }
      apply();
    },

    status,

    // copy puts text on the clipboard and reports into the status element.
    copy(text, statusId, done) {
      const fail = "Copy failed: select the text and copy it with Ctrl+C.";
      const fallback = () => {
        const back = document.activeElement;
        const ta = document.createElement("textarea");
        ta.value = text;
        ta.setAttribute("readonly", "");
        ta.style.position = "fixed";
        ta.style.top = "0";
        ta.style.opacity = "0";
        document.body.appendChild(ta);
        ta.select();
        let ok;
        try {
          ok = document.execCommand("copy");
        } catch (e) {
          ok = false;
        }
        ta.remove();
        if (back && back.focus) back.focus();
        status(statusId, ok ? done : fail);
      };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(() => status(statusId, done), fallback);
      } else {
        fallback();
      }
    },

    // download saves text as a file.
    download(name, type, text, statusId, done) {
      const url = URL.createObjectURL(new Blob([text], { type }));
      saveURL(name, url);
      setTimeout(() => URL.revokeObjectURL(url), 60000);
      status(statusId, done);
    },

    // savePNG downloads an ECharts chart as a PNG drawn on the page's
    // background colour.
    savePNG(chart, id) {
      if (!chart || chart.isDisposed()) return;
      const lab = document.getElementById("lab");
      const slug = (lab && lab.dataset.lesson) || "chart";
      const step = (lab && lab.dataset.step) || "";
      const bg = getComputedStyle(root).getPropertyValue("--surface-2").trim() || "#0f172a";
      saveURL(`inferlab-${slug}-${id}${step ? "-step" + step : ""}.png`,
        chart.getDataURL({ type: "png", pixelRatio: 2, backgroundColor: bg }));
    },

    // focusSoon focuses, after the pending render (the next animation
    // frame), the element of the first selector that matches one.
    focusSoon(...sels) {
      requestAnimationFrame(() => {
        for (const s of sels) {
          const el = document.querySelector(s);
          if (el) {
            el.focus();
            return;
          }
        }
      });
    },

    // keys opens (true) or closes (false) the keyboard shortcuts dialog.
    keys(open) {
      const d = document.getElementById("keys-dialog");
      if (!d || !d.showModal) return;
      if (open && !d.open) d.showModal();
      if (!open && d.open) d.close();
    },

    // loadCharts adds ECharts to the page, once: the address is in
    // <meta name="inferlab:echarts"> (with its content hash). The app asks
    // when a chart mounts and when the page goes live; a chart waits for
    // window.echarts (app/chart.go). A failed load is tried again, at
    // most every 5 s.
    loadCharts() {
      if (window.echarts || document.getElementById("echarts-script") || Date.now() - chartsFailedAt < 5000) return;
      const meta = document.querySelector('meta[name="inferlab:echarts"]');
      if (!meta) return;
      const s = document.createElement("script");
      s.id = "echarts-script";
      s.src = new URL(meta.content, location.href).href;
      s.async = true;
      s.onerror = () => {
        chartsFailedAt = Date.now();
        s.remove();
      };
      document.head.appendChild(s);
    },

    // annotate gives every element a mention of the step names the
    // mention's phrase as its tooltip (after the player drew the step), and
    // takes back what it gave the elements of the step before. In the next
    // frame it measures where the stage starts (--stage-top: a notice above
    // it may have come or gone) and scrolls sideways pictures to the marks.
    annotate() {
      mentions.annotate();
      geometrySoon();
    },

    // steps is a promise of the page's steps (#steps-data, docs/DOM.md),
    // or of null once the app shows its own (web/present.js).
    steps: () => (pre.active() ? pre.ready() : Promise.resolve(null)),
  };

  let chartsFailedAt = -Infinity; // when loading ECharts last failed

  // geometrySoon measures the stage and reveals the marks in the next
  // frame, not now: reading a box right after the app changed the DOM
  // forces a layout in the middle of its work (a CPU profile of a cold
  // garage load put 150–290 ms there, before the page went live); in the
  // frame the layout is the one the browser does anyway.
  // declutter hides what a prerendered chart (app/chart_static.go) cannot
  // fit at this width, as ECharts' label layout does: x ticks that would
  // touch (every other one is kept, or every third…), then a guide's label
  // (unless marked) and a point's label that would cover a callout or a
  // label kept before it. Laid out in percent of the
  // plot, they all fit a laptop; a phone keeps every other tick.
  const declutter = () => {
    const overlaps = (a, b) => a.left < b.right + 4 && b.left < a.right + 4 && a.top < b.bottom && b.top < a.bottom;
    for (const c of document.querySelectorAll(".chart-static")) {
      // Ticks: every one, else every second, third… so that the kept ones
      // stay evenly spaced.
      const ticks = [...c.querySelectorAll(".cs-xticks span")];
      const boxes = ticks.map((el) => el.getBoundingClientRect());
      let every = 1;
      const clash = (k) => boxes.some((b, i) => i % k === 0 && i >= k && overlaps(boxes[i - k], b));
      while (every < ticks.length && clash(every)) every++;
      ticks.forEach((el, i) => { el.style.visibility = i % every === 0 ? "" : "hidden"; });
      for (const group of [[".cs-callout, .cs-now-label", ".cs-glabel", ".cs-plabel"]]) {
        const kept = [];
        for (const sel of group) {
          for (const el of c.querySelectorAll(sel)) {
            el.style.visibility = "";
            const r = el.getBoundingClientRect();
            if (el.matches(".cs-plabel, .cs-glabel:not(.cs-marked)") && kept.some((k) => overlaps(k, r))) el.style.visibility = "hidden";
            else kept.push(r);
          }
        }
      }
    }
  };
  window.addEventListener("resize", () => requestAnimationFrame(declutter));

  let geometryPending = false;
  const geometrySoon = () => {
    if (geometryPending) return;
    geometryPending = true;
    requestAnimationFrame(() => {
      geometryPending = false;
      declutter();
      measureStage();
      revealMarks();
      stepShown();
    });
  };

  // stepShown runs in the frame after a step is drawn (by the app or by
  // this script before it runs). When the step changed it (1) cross-fades
  // each figure whose drawing changed but started no movement of its own,
  // so every step change shows motion (none under reduced motion, or while
  // steps come faster than the motion: #lab[data-motion=jump]); (2) on a
  // narrow screen, brings the main figure and the narration's first line
  // into view together, so Next never leaves the reader looking at
  // nothing.
  let lastStep = ""; // the lesson and step last seen drawn
  const drawn = new Map(); // scene id -> the figure's markup last shown
  let shown = new Set(); // the scene ids the step last drawn showed
  const seenMotion = new WeakSet(); // animations running when a step was last drawn
  const stepKey = (lab) => (lab.dataset.lesson || "") + "#" + lab.dataset.step;
  // The markup of a figure without the tooltips annotate gave and without
  // a chart ECharts draws (it animates its own changes); a prerendered
  // chart (app/chart_static.go) is markup like any figure.
  const markup = (f) => [...f.children].filter((c) => !c.classList.contains("chart-wrap") || c.querySelector(".chart-static")).map((c) => c.outerHTML).join("")
    .replace(/ title="[^"]*"|<title class="mention-tip">.*?<\/title>/g, "");
  const stepShown = () => {
    const lab = document.querySelector("#lab");
    if (!lab || !lab.dataset.step) return;
    syncSheet(); // the app may have redrawn the buttons (it mounts)
    syncMore();
    const key = stepKey(lab);
    player.drawn(); // playback stops at a question
    // web/present.js follows every drawing (the app's redraws included).
    window.dispatchEvent(new CustomEvent("inferlab:step", { detail: key !== lastStep }));
    if (key === lastStep) return;
    const first = lastStep === ""; // the page's first drawing: not a change
    lastStep = key;
    const figs = [...lab.querySelectorAll(".scenes > figure.scene")];
    const shownBefore = shown;
    shown = new Set(figs.map((f) => f.dataset.sceneId || ""));
    // (inferlab-capturing: web/present.js is drawing each step into a
    // handout or an image; a fade would be caught half way)
    const still = lab.dataset.motion === "jump" || root.classList.contains("reduced-motion") || root.classList.contains("inferlab-capturing") || matchMedia("(prefers-reduced-motion: reduce)").matches;
    for (const f of figs) {
      const id = f.dataset.sceneId || "";
      const html = markup(f);
      const before = shownBefore.has(id) ? drawn.get(id) : undefined;
      drawn.set(id, html);
      if (first || still || before === html || !f.animate) continue;
      // A figure the previous step did not show (another id in its place)
      // fades in whole, a chart's canvas included: it replaced what was
      // there, the largest change a step makes. A figure that started a
      // movement of its own for this step (one not running before it)
      // needs no fade; one still finishing the last step's does.
      const own = f.getAnimations({ subtree: true }).some((a) => !seenMotion.has(a));
      if (before !== undefined && own) continue;
      f.animate([{ opacity: before === undefined ? 0.2 : 0.45 }, { opacity: 1 }], { duration: 320, easing: "ease-out" });
    }
    for (const a of document.getAnimations()) seenMotion.add(a);
    const panel = document.getElementById("narration-panel");
    if (panel) panel.scrollTop = 0;
    sizeSheet(key, first ? figs[0] : null);
    if (first || !figs[0]) return;
    keepInView(lab, figs[0]);
    // Pictures move their elements to the step's places (transitions of
    // 200–600 ms): where the marks end is known once they stop, and the
    // page follows them then if it must.
    const moving = figs[0].getAnimations({ subtree: true });
    if (!moving.length) return;
    Promise.race([Promise.all(moving.map((a) => a.finished.catch(() => {}))), new Promise((r) => setTimeout(r, 1500))]).then(() => {
      if (lab.isConnected && stepKey(lab) === key && figs[0].isConnected) {
        revealMarks();
        keepInView(lab, figs[0]);
      }
    });
  };
  // The phone's narration sheet (lab.css): as tall as its text, or folded
  // to its title line (html.narration-folded) when the text would take
  // more than sheetShare of the screen, so the figure keeps the rest and
  // nothing is read by scrolling inside the sheet. #btn-sheet, or a tap on
  // the folded sheet, opens it to read (for this step; Next folds a long
  // one again); #btn-sheet on an open sheet folds it, and every step's
  // after it, until the reader opens one again. Works before and after the
  // app runs (by delegation).
  const sheetShare = 0.42;
  let sheetFolded = false; // the reader folded the sheet
  let sheetOpenAt = ""; // the step whose long narration the reader opened
  const sheetPanel = () => {
    const p = document.getElementById("narration-panel");
    return p && !p.hidden && p.getClientRects().length && getComputedStyle(p).position === "fixed" ? p : null;
  };
  const syncSheet = () => {
    const b = document.getElementById("btn-sheet");
    const open = String(!root.classList.contains("narration-folded"));
    if (b && b.getAttribute("aria-expanded") !== open) b.setAttribute("aria-expanded", open);
  };
  // sizeSheet folds or opens the sheet for the step drawn (key) and
  // records its height (--sheet-h: the page leaves that much room under
  // its last figure). On the page's first screen (opened: the main
  // figure, under the lesson's title) the sheet leaves the figure's top
  // in view, or folds.
  const sizeSheet = (key, opened) => {
    const panel = sheetPanel();
    if (!panel) {
      root.classList.remove("narration-folded");
      syncSheet();
      return;
    }
    let fold = sheetFolded;
    if (!fold && sheetOpenAt !== key) {
      root.classList.remove("narration-folded");
      let room = sheetShare * window.innerHeight;
      if (opened) room = Math.min(room, panel.getBoundingClientRect().bottom - opened.getBoundingClientRect().top - 48);
      fold = panel.scrollHeight > room;
    }
    root.classList.toggle("narration-folded", fold);
    root.style.setProperty("--sheet-h", Math.round(panel.getBoundingClientRect().height) + "px");
    syncSheet();
  };
  const toggleSheet = (open) => {
    const lab = document.querySelector("#lab");
    const key = lab ? stepKey(lab) : "";
    sheetFolded = !open;
    sheetOpenAt = open ? key : "";
    sizeSheet(key);
    measureStage();
  };
  // openSheet shows the narration (a question was reached: it must be read
  // and answered).
  const openSheet = () => {
    if (root.classList.contains("narration-folded")) toggleSheet(true);
  };
  // #btn-knobs shows the knobs beside the stage (html.knobs-open; lab.css).
  document.addEventListener("click", (e) => {
    const b = e.target instanceof Element && e.target.closest("#btn-knobs");
    if (!b) return;
    const open = root.classList.toggle("knobs-open");
    b.setAttribute("aria-expanded", String(open));
    measureStage();
  });
  // #btn-more-figures unfolds an embed's other figures (html.figures-unfolded).
  // The app redraws the button as it mounts: syncMore (each step drawn)
  // gives it back the state the reader chose.
  const syncMore = () => {
    const b = document.getElementById("btn-more-figures");
    if (!b) return;
    const open = root.classList.contains("figures-unfolded");
    if (b.getAttribute("aria-expanded") !== String(open)) b.setAttribute("aria-expanded", String(open));
    const text = open ? "Fold this step's other figures" : "Show this step's other figures";
    if (b.textContent !== text) b.textContent = text;
  };
  document.addEventListener("click", (e) => {
    const b = e.target instanceof Element && e.target.closest("#btn-more-figures");
    if (!b) return;
    root.classList.toggle("figures-unfolded");
    syncMore();
  });
  document.addEventListener("click", (e) => {
    if (!(e.target instanceof Element)) return;
    if (e.target.closest("#btn-sheet")) toggleSheet(root.classList.contains("narration-folded"));
    else if (root.classList.contains("narration-folded") && e.target.closest("#narration-panel") && sheetPanel()) toggleSheet(true);
  });
  // The step the page opened at, once it is parsed.
  const noteOpened = () => { if (!lastStep) stepShown(); };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", noteOpened);
  else noteOpened();

  // keepInView: on a screen up to 900 px wide (lab.css: the narration
  // under the main figure, or, on a phone, in a sheet over the controls),
  // scrolls the page so that what the step marks in the main figure is in
  // the visible area (under a sticky toolbar, above a fixed toolbar and the
  // sheet), with the narration's first line when it flows under the figure.
  // The marks go narrowest first (the most specific: a chosen worker
  // rather than the router across the top, a chart's named point rather
  // than the chart), as many as fit together; the figure's top comes with
  // them when it fits too.
  const keepInView = (lab, main) => {
    if (window.innerWidth > 900 || !main) return;
    const text = document.querySelector("#narration");
    const controls = document.querySelector("#controls");
    const fixed = (e) => e && !e.hidden && e.getClientRects().length && getComputedStyle(e).position === "fixed";
    const cb = controls && !controls.hidden && controls.getClientRects().length ? controls.getBoundingClientRect() : null;
    const top = cb && !fixed(controls) && getComputedStyle(controls).position === "sticky" ? cb.bottom : 0;
    let bottom = fixed(controls) ? cb.top : window.innerHeight;
    const sheet = sheetPanel();
    if (sheet) bottom = Math.min(bottom, sheet.getBoundingClientRect().top);
    const room = bottom - top - 12;
    const fb = main.getBoundingClientRect();
    const want = markedBox(main, room) || { top: fb.top, bottom: Math.min(fb.bottom, fb.top + room) };
    if (text && !sheet && !lab.classList.contains("no-narration")) {
      const tb = text.getBoundingClientRect();
      const lineBottom = tb.top + (parseFloat(getComputedStyle(text).lineHeight) || 24);
      if (Math.max(want.bottom, lineBottom) - Math.min(want.top, tb.top) <= room) {
        want.top = Math.min(want.top, tb.top);
        want.bottom = Math.max(want.bottom, lineBottom);
      }
    }
    const withTop = want.bottom - fb.top <= room;
    const inView = want.top >= top && want.bottom <= bottom;
    // Under the phone's sheet the figure has the space above it only: a
    // figure that starts lower than it must (the lesson's title above it)
    // comes up to the top when what must show then fits.
    // A figure that fits with them whole is shown whole.
    const low = sheet && withTop && fb.top - top > 24;
    const cut = withTop && fb.top < top - 1;
    if (inView && !low && !cut) return;
    // The figure's top at the top when what must show fits under it; else
    // what must show in the middle of the visible area, but no page past
    // the figure's end while the figure can fill the view.
    let dy = fb.top - top - 6;
    if (!withTop) {
      dy = want.top - top - Math.max(6, (bottom - top - (want.bottom - want.top)) / 2);
      dy = Math.max(Math.min(dy, fb.bottom - bottom + 6), want.bottom - bottom + 6);
    }
    if (Math.abs(dy) < 2) return;
    window.scrollBy({ top: dy, behavior: matchMedia("(prefers-reduced-motion: reduce)").matches ? "auto" : "smooth" });
  };

  // markedBox is the span ({top, bottom}, in the viewport) of what the
  // main figure marks (markedSpan); a chart's marks are named in a list
  // under it and drawn in its plot, so the plot counts as one.
  const markedBox = (main, room) => {
    const els = [...main.querySelectorAll(".marked, .sys-mark")];
    const plot = main.querySelector(".chart-wrap");
    if (plot && els.some((el) => el.closest(".chart-marks"))) els.push(plot);
    return markedSpan(els, room);
  };

  // markedSpan is the vertical span ({top, bottom}, in the viewport) of
  // the marked elements els, narrowest first (the most specific: a chosen
  // worker rather than the router across the top), as many as fit in room
  // px together; null when none is drawn.
  const markedSpan = (els, room) => {
    const rects = els.map((el) => el.getBoundingClientRect()).filter((r) => r.width > 0 && r.height > 0).sort((a, b) => a.width - b.width);
    let box = null;
    for (const r of rects) {
      if (!box) box = { top: r.top, bottom: r.bottom };
      else if (Math.max(box.bottom, r.bottom) - Math.min(box.top, r.top) <= room) box = { top: Math.min(box.top, r.top), bottom: Math.max(box.bottom, r.bottom) };
    }
    return box;
  };

  // revealMarks scrolls each picture that scrolls sideways (a phone) so
  // that an element the step marks is in view; the page itself does not
  // move.
  const revealMarks = () => {
    // An embed's main figure taller than its stage, and a narration longer
    // than its panel (a phone's sheet), scroll (lab.css): each is then
    // focusable, so a keyboard scrolls it too.
    for (const box of document.querySelectorAll("#lab.embed .scenes > figure.scene:first-child, #lab #narration-panel")) {
      // (a narration holding a mention or a question is reached by Tab
      // already: no extra stop)
      const reachable = box.tagName !== "FIGURE" && box.querySelector("[tabindex='0'], a[href], button, input, select, textarea, summary");
      const over = box.scrollHeight > box.clientHeight + 1 && !reachable;
      if (over && !box.hasAttribute("tabindex")) {
        box.setAttribute("tabindex", "0");
        box.dataset.scrollFocus = "";
      } else if (!over && "scrollFocus" in box.dataset) {
        box.removeAttribute("tabindex");
        delete box.dataset.scrollFocus;
      }
      if (over && box.tagName === "FIGURE") revealDown(box);
    }
    for (const box of document.querySelectorAll("#lab .sys-scroll, #lab .block-tables.tm, #lab .scenes > figure:first-child > .table-wrap")) {
      revealDown(box);
      if (box.scrollWidth <= box.clientWidth + 1) continue;
      // The marks narrowest first (the most specific: a chosen worker
      // rather than the router across the top), as many as fit the box
      // side by side; a span wider than the box is shown from its start,
      // where its label is.
      const rects = [...box.querySelectorAll(".sys-mark, .marked")].map((el) => el.getBoundingClientRect()).filter((r) => r.width > 0).sort((a, c) => a.width - c.width);
      if (!rects.length) continue;
      const b = box.getBoundingClientRect();
      let u = null;
      for (const r of rects) {
        if (!u) u = { left: r.left, right: r.right };
        else if (Math.max(u.right, r.right) - Math.min(u.left, r.left) <= b.width - 16) u = { left: Math.min(u.left, r.left), right: Math.max(u.right, r.right) };
      }
      if (u.left >= b.left && u.right <= b.right) continue;
      const w = u.right - u.left;
      const start = box.scrollLeft + u.left - b.left; // the span's left in the picture
      let left = start + w / 2 - b.width / 2;
      if (start + w <= b.width - 8 || (w >= b.width - 16 && start < b.width * 0.75)) left = 0; // the picture's start shows it
      else if (w >= b.width - 16) left = start - 8;
      box.scrollTo({ left: Math.max(0, left), behavior: matchMedia("(prefers-reduced-motion: reduce)").matches ? "auto" : "smooth" });
    }
  };

  // revealDown: in a frame that scrolls down (an embed's fixed stage,
  // lab.css), what it marks is brought into its view, a third of the way
  // down: narrowest mark first, as many as fit (markedSpan).
  const revealDown = (box) => {
    if (box.scrollHeight <= box.clientHeight + 1) return;
    const b = box.getBoundingClientRect();
    const r = markedSpan([...box.querySelectorAll(".sys-mark, .marked")], b.height - 16);
    if (!r || (r.top >= b.top && r.bottom <= b.bottom)) return;
    const top = box.scrollTop + r.top - b.top - Math.max(8, (b.height - (r.bottom - r.top)) / 3);
    box.scrollTo({ top: Math.max(0, top), behavior: matchMedia("(prefers-reduced-motion: reduce)").matches ? "auto" : "smooth" });
  };

  // Mentions (app/player_mentions.go): button.mention[data-scene][data-target]
  // in #narration names the element [data-ref=TARGET] of the figure
  // figure.scene[data-scene-id=SCENE]. Hovering or focusing either side
  // lights both up (attribute data-lit; the figure gets data-mention-on,
  // which dims the rest of it), and a phrase's element is scrolled into
  // view when it is not. Attributes, not classes: go-app owns the classes.
  // Handled by delegation: the player renders no handlers for it.
  const mentions = (() => {
    const given = []; // [element, what was added] of the last annotate
    const figureOf = (id) => document.querySelector('#lab figure.scene[data-scene-id="' + CSS.escape(id) + '"]');
    const targets = (m) => {
      const fig = figureOf(m.dataset.scene || "");
      return fig ? [...fig.querySelectorAll('[data-ref="' + CSS.escape(m.dataset.target || "") + '"]')] : [];
    };
    const svg = (el) => el instanceof SVGElement;
    const annotate = () => {
      for (const [el, what] of given.splice(0)) {
        if (what.node) what.node.remove();
        else if (el.getAttribute("title") === what.set) {
          // Still ours (a render since may have set its own title).
          if (what.old === null) el.removeAttribute("title");
          else el.setAttribute("title", what.old);
        }
      }
      for (const m of document.querySelectorAll("#narration .mention")) {
        const phrase = m.textContent.trim();
        for (const el of targets(m)) {
          if (svg(el)) {
            // SVG shows the first <title> child; the renderer's own, if
            // any, follows it and is left alone.
            const own = el.querySelector(":scope > title");
            const node = document.createElementNS("http://www.w3.org/2000/svg", "title");
            node.setAttribute("class", "mention-tip");
            node.textContent = own && own.textContent ? phrase + " — " + own.textContent : phrase;
            el.insertBefore(node, el.firstChild);
            given.push([el, { node }]);
          } else {
            const old = el.getAttribute("title");
            const set = old ? phrase + " — " + old : phrase;
            el.setAttribute("title", set);
            given.push([el, { old, set }]);
          }
        }
      }
    };

    let lit = []; // elements lit now
    const clear = () => {
      for (const el of lit) {
        el.removeAttribute("data-lit");
        const fig = el.closest("figure.scene");
        if (fig) fig.removeAttribute("data-mention-on");
      }
      lit = [];
    };
    const light = (els) => {
      clear();
      for (const el of els) {
        el.setAttribute("data-lit", "");
        const fig = el.closest("figure.scene");
        if (fig && el.closest("#narration") === null) fig.setAttribute("data-mention-on", "");
      }
      lit = els;
    };
    // inView: the element is wholly visible below the sticky toolbar (or
    // above the phone's toolbar at the bottom).
    const inView = (el) => {
      const r = el.getBoundingClientRect();
      const bar = document.getElementById("controls");
      const b = bar ? bar.getBoundingClientRect() : null;
      let top = 0;
      let bottom = window.innerHeight;
      if (b && b.height > 0 && getComputedStyle(bar).position !== "static") {
        if (b.top < window.innerHeight / 2) top = b.bottom;
        else bottom = b.top;
      }
      // Sideways too: a picture that scrolls inside its figure (a phone).
      return r.top >= top && r.bottom <= bottom && r.left >= 0 && r.right <= window.innerWidth;
    };
    const reduced = () => matchMedia("(prefers-reduced-motion: reduce)").matches;
    const fromMention = (m, scroll) => {
      const els = targets(m);
      light([m, ...els]);
      if (scroll && els.length && !els.some(inView)) {
        els[0].scrollIntoView({ block: "center", inline: "nearest", behavior: reduced() ? "auto" : "smooth" });
      }
    };
    const fromFigure = (el) => {
      const ref = el.closest("[data-ref]");
      const fig = ref && ref.closest("figure.scene");
      if (!ref || !fig) return false;
      const sel = '#narration .mention[data-scene="' + CSS.escape(fig.dataset.sceneId || "") +
        '"][data-target="' + CSS.escape(ref.dataset.ref) + '"]';
      const ms = [...document.querySelectorAll(sel)];
      if (!ms.length) return false;
      light([...ms, ...targets(ms[0])]);
      return true;
    };
    const over = (e) => {
      const t = e.target;
      if (!(t instanceof Element)) return;
      const m = t.closest("#narration .mention");
      if (m) fromMention(m, e.type === "focusin");
      else if (!t.closest("#lab .scenes") || !fromFigure(t)) {
        if (lit.length && !(document.activeElement && document.activeElement.matches("#narration .mention"))) clear();
      }
    };
    const out = (e) => {
      const t = e.target;
      if (!(t instanceof Element) || !lit.length) return;
      const to = e.relatedTarget;
      if (to instanceof Element && (to.closest("#narration .mention") || to.closest("#lab .scenes [data-ref]"))) return;
      const a = document.activeElement;
      if (e.type !== "focusout" && a && a.matches("#narration .mention")) {
        fromMention(a, false); // the pointer left; the focused phrase stays lit
        return;
      }
      clear();
    };
    document.addEventListener("pointerover", over);
    document.addEventListener("focusin", over);
    document.addEventListener("pointerout", out);
    document.addEventListener("focusout", out);
    // A mention clicked (or tapped on a phone), or Enter or space on a
    // focused one: show its element.
    document.addEventListener("click", (e) => {
      const m = e.target instanceof Element && e.target.closest("#narration .mention");
      if (m) fromMention(m, true);
    });
    document.addEventListener("keydown", (e) => {
      const m = e.target instanceof Element && e.target.closest("#narration .mention");
      if (m && (e.key === "Enter" || e.key === " ") && !e.altKey && !e.ctrlKey && !e.metaKey) {
        e.preventDefault();
        fromMention(m, true);
      }
    });
    return { annotate, clear };
  })();

  // --stage-top: where the stage starts in the page (px), for the layout
  // that fits the narration and the main figure into one screen (lab.css).
  const measureStage = () => {
    const stage = document.querySelector("#lab .stage");
    if (!stage) return;
    const top = Math.round(stage.getBoundingClientRect().top + window.scrollY);
    if (root.style.getPropertyValue("--stage-top") !== top + "px") root.style.setProperty("--stage-top", top + "px");
    // --bar-h: the height of the step controls when fixed at the bottom
    // (a phone), where the narration sheet sits.
    const bar = document.querySelector("#controls");
    if (bar && !bar.hidden && getComputedStyle(bar).position === "fixed") {
      const h = Math.round(bar.getBoundingClientRect().height) + "px";
      if (root.style.getPropertyValue("--bar-h") !== h) root.style.setProperty("--bar-h", h);
    }
  };
  window.addEventListener("resize", measureStage);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", measureStage);
  else measureStage();
  // The step the page was served with is drawn by no one: its marks are
  // brought into view once it is laid out (an embed's figure taller than
  // its stage left a chart's marked point below it at step 1).
  if (document.readyState === "complete") geometrySoon();
  else window.addEventListener("load", () => geometrySoon(), { once: true });

  // ---- Light until it is used -------------------------------------------
  // A lesson page and an embed are prerendered at the lesson's defaults and
  // carry every step (#steps-data, app/player_steps.go). Until the reader
  // uses something only the app does, this script steps them and the
  // page's WebAssembly, the simulation worker and the service worker do not
  // load (docs/ARCHITECTURE.md, "Light until it is used"). start(why) loads
  // them: go-app's app.js is patched to wait for window.goappStart
  // (server/loader.go). The triggers:
  //   - a knob, the trace upload or anything else under the stage touched
  //     (pointer, focus or key), a quiz answered, the search box used;
  //   - an address that asks for more than a step of the defaults (knobs,
  //     find=, an unknown or bad key): the prerendered figure is not it;
  //   - "Keep for offline use" (#btn-offline), or inferlab.start() called.
  // The hand-off is the address: the step shown is written into it, so the
  // app opens where the reader is; a field touched before the app ran gets
  // its value, its focus and (for a button) its click again once the app
  // has drawn its own page.
  let started = "";
  // dataURL is the address of one of a lesson's data documents, served
  // apart from its page (server/pagedata.go): "script" (its default script)
  // or "steps" (every step's markup). They sit at the site's root (under
  // its sub-path on a static host), one level above web/.
  const dataURL = (kind) => {
    const m = /\/(?:lesson|embed)\/([a-z0-9-]+)/.exec(location.pathname);
    return m ? new URL("../data/" + m[1] + (kind === "script" ? ".script.txt" : ".steps.json"), base).href : "";
  };
  const start = (why) => {
    if (started) return;
    started = why || "asked";
    window.inferlab.started = started;
    root.classList.add("inferlab-starting");
    if (/^(knob|address|trace)/.test(started)) sim.warm();
    // The wasm downloads while the default script is fetched; the app
    // starts once the script is in the page (script#script-data, where it
    // looks for it as it starts), or without it if it cannot be had.
    const wasm = document.querySelector('meta[name="inferlab:app-wasm"]');
    if (wasm && goappCanStart()) {
      const l = document.createElement("link");
      l.rel = "preload";
      l.as = "fetch";
      l.crossOrigin = "anonymous";
      l.href = new URL(wasm.content, location.href).href;
      document.head.appendChild(l);
    }
    const go = () => {
      if (typeof window.goappStart === "function") window.goappStart();
    };
    const url = dataURL("script");
    if (!url || document.getElementById("script-data") || !document.getElementById("lab")) return go();
    fetch(url).then((r) => (r.ok ? r.text() : "")).catch(() => "").then((text) => {
      if (text && !document.getElementById("script-data")) {
        const el = document.createElement("script");
        el.type = "application/json";
        el.id = "script-data";
        el.textContent = text;
        document.body.appendChild(el);
      }
      go();
    });
  };
  // As go-app's app.js decides (a crawler or ?wasm=false gets no wasm).
  const goappCanStart = () => !/bot|googlebot|crawler|spider|robot|crawling/i.test(navigator.userAgent) && query.get("wasm") !== "false";

  const pre = (() => {
    let lab = null; // the prerendered #lab (the app replaces it)
    let data; // #steps-data, parsed on first use (undefined: not read yet)
    const hide = new Set((query.get("hide") || "").split(",").filter(Boolean));
    let page = null; // the prerendered root (#lab, #index or #not-found)
    const active = () => !!(page && page.isConnected && page.dataset.live !== "true");
    // The steps come apart from the page (server/pagedata.go): fetched
    // when the page is idle after its load, or at the first step change;
    // parsed when first needed.
    let text = null; // a promise of the steps' JSON text
    const fetchSteps = () => {
      if (!text) {
        const url = dataURL("steps");
        text = url ? fetch(url).then((r) => (r.ok ? r.text() : "")).catch(() => "") : Promise.resolve("");
      }
      return text;
    };
    const ready = () => fetchSteps().then((t) => {
      if (data === undefined) {
        try {
          data = t ? JSON.parse(t) : null;
        } catch (e) {
          data = null;
        }
      }
      return data;
    });
    const read = () => (data === undefined ? null : data);

    // The toolbar follows the step in place (a scrubber being dragged is
    // never replaced).
    const controls = (step, n, playing) => {
      const label = n ? "Step " + (step + 1) + " of " + n : "No steps";
      const set = (id, off) => {
        const b = document.getElementById(id);
        if (b) b.disabled = off;
      };
      set("btn-first", step === 0);
      set("btn-prev", step === 0);
      set("btn-next", step >= n - 1);
      set("btn-last", step >= n - 1);
      const s = document.getElementById("scrubber");
      if (s) {
        s.value = String(step + 1);
        s.setAttribute("aria-valuetext", label);
      }
      const l = document.getElementById("step-label");
      if (l) l.textContent = label;
      const p = document.getElementById("btn-play");
      if (p) {
        p.setAttribute("aria-pressed", playing ? "true" : "false");
        const icon = p.querySelector(".btn-icon");
        const word = p.querySelector(".btn-word");
        if (icon) icon.textContent = playing ? "⏸" : "▶";
        if (word) word.textContent = playing ? " Pause" : " Play";
      }
    };

    // quizzes are asked only with the player and the narration shown.
    const quizzes = () => !hide.has("controls") && !hide.has("narration");
    const applyHide = () => {
      const c = document.getElementById("controls");
      if (c && hide.has("controls")) c.hidden = true;
      const n = document.getElementById("narration-panel");
      if (n && hide.has("narration")) n.hidden = true;
      if (lab && hide.has("narration")) lab.classList.add("no-narration");
      if (hide.has("params")) {
        for (const el of document.querySelectorAll("#embed-params, .params-wrap")) el.hidden = true;
      }
      if (!quizzes()) for (const el of document.querySelectorAll("#quiz, #quiz-review")) el.remove();
      if (lab) lab.dataset.hide = [...hide].join(",");
    };

    // url writes the canonical address of step i: every knob and the step
    // (as the app writes it), then what else the address kept.
    const url = (i) => {
      const d = read();
      if (!active() || !d || !d.steps[i]) return;
      const canon = new URLSearchParams(d.steps[i].query);
      for (const [k, v] of new URLSearchParams(location.search)) if (!canon.has(k)) canon.append(k, v);
      const q = canon.toString();
      if (q !== location.search.slice(1)) history.replaceState(history.state, "", location.pathname + "?" + q + location.hash);
    };

    // show draws step i (0-based) from the page's steps, once they are
    // here, and the toolbar as the player's state says (the player's view
    // of the prerendered page).
    const show = (i, state, seq) => {
      if (data === undefined) {
        ready().then(() => show(i, state, seq));
        return;
      }
      const d = read();
      const n = d && d.steps ? d.steps.length : 0;
      if (!n || !lab || !active()) return;
      i = Math.max(0, Math.min(n - 1, i));
      lab.dataset.seq = String(seq);
      controls(i, n, state.playing);
      if (String(i + 1) === lab.dataset.step) return;
      const item = d.steps[i];
      mentions.clear();
      d.parts.forEach((id, k) => {
        const el = document.getElementById(id);
        if (el) el.outerHTML = item.html[k];
      });
      lab.dataset.step = String(i + 1);
      lab.dataset.query = item.query;
      const full = lab.querySelector("a.open-full");
      if (full) full.href = full.href.split("?")[0] + "?" + item.query;
      const fin = lab.querySelector(".metrics-wrap");
      if (fin) fin.hidden = !!item.hideFinal;
      const cl = lab.querySelector(".claims-wrap");
      if (cl) cl.hidden = !!item.hideClaims;
      applyHide();
      mentions.annotate();
      geometrySoon();
    };
    const delayMs = () => (read() && read().delayMs) || 0;

    // The first use of something only the app does (see start).
    const wakeIn = "#below, #params, #embed-params, #trace-panel, #checkpoint, #search-box, #btn-reload, #notice";
    const reasonOf = (el) => {
      if (el.closest("#params, #embed-params, #trace-panel")) return el.closest("#trace-panel") ? "trace" : "knob";
      if (el.closest("#checkpoint")) return "quiz";
      if (el.closest("#search-box")) return "search";
      return "control";
    };
    const wake = (e) => {
      const t = e.target;
      if (!(t instanceof Element) || !active()) return;
      if (!t.closest(wakeIn)) return;
      if (t.closest("a[href]") && e.type !== "focusin") return; // a link navigates, as it is
      start(reasonOf(t));
    };

    // The app has drawn its own page (the prerendered #lab is gone): what
    // the reader did before it runs is given to its fields (early, below).
    // The player draws with the app from now on (inferlab.attach).
    const watchMount = () => {
      const mo = new MutationObserver(() => {
        if (page && !page.isConnected) {
          mo.disconnect();
          early.mounted();
        }
      });
      mo.observe(document.body, { childList: true, subtree: true });
    };

    const init = () => {
      page = document.querySelector("#lab, #index, #not-found");
      if (!page || page.dataset.live === "true") return;
      watchMount();
      for (const type of ["pointerdown", "focusin", "keydown"]) document.addEventListener(type, wake, true);
      early.listen(wakeIn, active);
      lab = page.id === "lab" ? page : null;
      // The not-found page names the address it was asked for: its
      // prerender, made once for every unknown address, cannot.
      if (page.id === "not-found") start("address");
      // A reload from the update banner: the app was running before it.
      try {
        if (sessionStorage.getItem("inferlab-restart")) {
          sessionStorage.removeItem("inferlab-restart");
          start("reload");
        }
      } catch (e) { /* storage refused: wait for a first touch */ }
      if (!lab) return;
      requestAnimationFrame(declutter);
      applyHide();
      // A step of the defaults in the address: shown from the page's steps.
      const s = query.get("step");
      if (s !== null && !root.classList.contains("inferlab-pending")) {
        ready().then((d) => {
          const n = parseInt(s, 10);
          if (String(n) === s && n >= 1 && d && n <= d.steps.length) player.place(n - 1);
          else start("address");
          root.classList.remove("inferlab-step-pending");
        });
      } else {
        root.classList.remove("inferlab-step-pending");
        // The steps, once the page has loaded and rests.
        const idle = window.requestIdleCallback || ((f) => setTimeout(f, 200));
        const later = () => idle(() => fetchSteps(), { timeout: 3000 });
        if (document.readyState === "complete") later();
        else window.addEventListener("load", later, { once: true });
      }
      // The app's header and dialog have handlers of their own.
      document.addEventListener("click", (e) => {
        if (!active()) return;
        const b = e.target instanceof Element && e.target.closest("button");
        if (!b) return;
        switch (b.id) {
          case "btn-keys": window.inferlab.keys(true); break;
          case "keys-close": window.inferlab.keys(false); break;
          case "btn-theme": {
            const to = window.inferlab.theme() === "light" ? "dark" : "light";
            window.inferlab.setTheme(to);
            const next = to === "light" ? "dark" : "light";
            b.dataset.theme = to;
            b.setAttribute("aria-label", "Switch to the " + next + " theme");
            b.title = "Switch to the " + next + " theme";
            const w = b.querySelector(".wide-only");
            if (w) w.textContent = next === "light" ? "Light theme" : "Dark theme";
            break;
          }
        }
      });
    };
    return { init, active, ready, show, url, delayMs, lab: () => lab };
  })();

  // ---- The player ----------------------------------------------------------
  // One stepper (inferlabStepping) for the prerendered page and for the
  // app: its keys, buttons, scrubber and speed, playback, motion and the
  // address are handled here, by delegation, whoever draws the page. Before
  // the app runs, the page's steps are swapped in (pre.show); once it runs,
  // the app registers how it shows a step (inferlab.attach, app/
  // player.go) and renders it. Either way the page reports what it drew in
  // #lab[data-step], [data-seq] (the last show it drew) and the toolbar.
  const player = (() => {
    let appShow = null; // the app's: (step, playing, speed, seq)
    const labEl = () => document.getElementById("lab");
    const reducedMotion = () => root.classList.contains("reduced-motion") || matchMedia("(prefers-reduced-motion: reduce)").matches;
    const view = {
      count: () => {
        const l = labEl();
        return l ? parseInt(l.dataset.steps, 10) || 0 : 0;
      },
      drawn: () => {
        const l = labEl();
        if (!l || !l.dataset.step) return null;
        const seq = l.dataset.seq === undefined || l.dataset.seq === "" ? -1 : parseInt(l.dataset.seq, 10);
        const play = document.getElementById("btn-play");
        return { step: (parseInt(l.dataset.step, 10) || 1) - 1, seq, playing: !!play && play.getAttribute("aria-pressed") === "true" };
      },
      show: (i, state, seq) => {
        if (appShow && !pre.active()) appShow(i, state.playing, state.speed, seq);
        else pre.show(i, state, seq);
      },
      motion: (jump) => {
        const l = labEl();
        if (l) l.dataset.motion = jump || reducedMotion() ? "jump" : "animate";
      },
      url: (i) => {
        if (pre.active()) {
          pre.url(i);
          return;
        }
        // The app's address: the step changes, every other part stays.
        if (!/\/(lesson|embed)\//.test(location.pathname)) return;
        const q = new URLSearchParams(location.search);
        if (q.get("step") === String(i + 1)) return;
        q.set("step", String(i + 1));
        history.replaceState(history.state, "", location.pathname + "?" + q.toString() + location.hash);
      },
      urlPending: (on) => {
        const l = labEl();
        if (l) l.toggleAttribute("data-url-pending", on);
      },
      asks: () => !!document.getElementById("quiz"),
      ask: () => {
        openSheet();
        window.inferlab.focusSoon("#quiz input:checked", "#quiz input", "#quiz button");
      },
      delayMs: () => pre.delayMs(),
    };
    const stepper = inferlabStepping.createStepper(view, {
      now: () => performance.now(),
      set: (f, ms) => setTimeout(f, ms),
      clear: (id) => clearTimeout(id),
    });
    const hidden = () => {
      const l = labEl();
      return !l || (l.dataset.hide || "").split(",").includes("controls");
    };
    document.addEventListener("click", (e) => {
      const b = e.target instanceof Element && e.target.closest("#lab #controls button");
      if (!b || b.disabled) return;
      switch (b.id) {
        case "btn-first": stepper.go(0); break;
        case "btn-prev": stepper.move(-1); break;
        case "btn-next": stepper.move(1); break;
        case "btn-last": stepper.last(); break;
        case "btn-play": stepper.toggle(); break;
        default: break;
      }
    });
    document.addEventListener("input", (e) => {
      if (e.target instanceof Element && e.target.id === "scrubber" && e.target.closest("#lab")) stepper.go((parseInt(e.target.value, 10) || 1) - 1);
    });
    document.addEventListener("change", (e) => {
      if (e.target instanceof Element && e.target.id === "speed" && e.target.closest("#lab")) {
        stepper.speed(e.target.value);
        if (stepper.state().playing) stepper.attach();
      }
    });
    window.addEventListener("keydown", (e) => {
      if (e.altKey || e.ctrlKey || e.metaKey || e.defaultPrevented || hidden()) return;
      const a = document.activeElement;
      if (a && (a.isContentEditable || (a.closest && a.closest(".blocks-svg")))) return; // a grid's own arrows
      let tag = a ? a.tagName : "";
      if (a && a.getAttribute && a.getAttribute("role") === "button") tag = "BUTTON";
      const act = inferlabStepping.keyAction(e.key, tag);
      if (!act) return;
      e.preventDefault();
      stepper.key(act);
    });
    return {
      place: (i) => stepper.place(i),
      drawn: () => stepper.drawn(),
      stop: () => stepper.stop(),
      // attach: the app shows steps from now on, with show(step, playing,
      // speed, seq); it is given the player's state at once.
      attach(show) {
        appShow = show;
        setTimeout(() => { if (appShow === show) stepper.attach(); }, 0); // never call back into Go from inside its call
      },
      detach(show) {
        if (appShow === show) appShow = null;
        stepper.stop();
      },
    };
  })();
  window.inferlab.attach = player.attach;
  window.inferlab.detach = player.detach;

  // ---- First edits kept ---------------------------------------------------
  // What the reader does to a control before the app's own copy of it runs
  // (the prerendered page, then the copy of its panels the app shows until
  // it builds its own: #below .below-pre, app/player_view.go renderBelow):
  // each field's value, a box checked, a <details> opened, a form
  // submitted (Enter or its button), a button pressed, and the field being
  // typed in. Nothing of it is lost as the page changes hands: once the app
  // has mounted, the copy gets the values and the focus back (the reader
  // types on); once its panels are its own (#lab[data-ready]), its fields
  // get them with the events the reader's own input sent — text as it came
  // (an InputEvent of the same inputType: a typed number is checked when it
  // is entered, not at each key; a paste applies at once), a choice as
  // changed — and the submits and presses, in the order made.
  const early = (() => {
    let inside = ""; // the selector of what the app's start takes over (wakeIn)
    let before = () => false; // the prerendered page is still up
    // What the reader did, in order: {set: id, value | checked | open,
    // changed} (a field's latest state, kept at its first place), {submit:
    // id}, {click: id}. A submit is handed over with the fields as they
    // were when it was made; what was typed after it comes after it.
    const log = [];
    let focus = null; // {id, start, end}
    let taken = false; // handed over already
    const kept = (t) => !taken && t instanceof Element && t.id && t.closest(inside) && (before() || t.closest(".below-pre"));
    const set = (id) => {
      const last = log[log.length - 1];
      if (last && last.set === id) return last;
      const e = { set: id };
      log.push(e);
      return e;
    };
    const note = (e) => {
      const t = e.type === "click" && e.target instanceof Element ? e.target.closest("button, input[type=button]") : e.target;
      if (!kept(t)) return;
      if (e.type === "toggle") {
        if (t.tagName === "DETAILS") set(t.id).open = t.open;
        return;
      }
      if (e.type === "submit") {
        e.preventDefault(); // a prerendered form goes nowhere; the app's gets it
        const last = log[log.length - 1];
        if (!last || last.submit !== t.id) log.push({ submit: t.id });
        return;
      }
      if (e.type === "click") {
        if (t.type === "button") {
          e.preventDefault();
          log.push({ click: t.id });
        }
        return;
      }
      if (!("value" in t) || t.type === "file") return;
      const f = set(t.id);
      if (t.type === "checkbox" || t.type === "radio") f.checked = t.checked;
      else f.value = t.value;
      if (e.type === "input") f.inputType = e.inputType || ""; // typed, pasted, or stepped (arrows)
      // A change is the reader leaving the field, unless the field is
      // leaving the page (the app drew its own: the browser reports the
      // focused field's new value then).
      if (e.type === "change") queueMicrotask(() => { if (t.isConnected) f.changed = true; });
      if (document.activeElement === t) keepFocus(t);
    };
    const keepFocus = (t) => {
      focus = { id: t.id, start: null, end: null };
      try {
        focus.start = t.selectionStart;
        focus.end = t.selectionEnd;
      } catch (e) { /* a number field has no selection */ }
    };
    // put gives one recorded state to the element now in the page; live:
    // it is the app's own (send the events), else the copy.
    const put = (f, live) => {
      const el = document.getElementById(f.set);
      if (!el) return;
      if (f.open !== undefined && el.tagName === "DETAILS" && el.open !== f.open) el.open = f.open;
      if (f.checked !== undefined && el.checked !== f.checked) {
        el.checked = f.checked;
        if (live) {
          el.dispatchEvent(new Event("input", { bubbles: true }));
          el.dispatchEvent(new Event("change", { bubbles: true }));
        }
      } else if (f.value !== undefined && el.value !== f.value) {
        el.value = f.value;
        if (!live) return;
        if (el.tagName === "SELECT") el.dispatchEvent(new Event("change", { bubbles: true }));
        else {
          // as the reader's last input came: typed text is checked when
          // entered, a paste applies, a stepper's arrow applies live
          el.dispatchEvent(new InputEvent("input", { bubbles: true, inputType: f.inputType === undefined ? "insertText" : f.inputType }));
          if (f.changed || el.type === "range") el.dispatchEvent(new Event("change", { bubbles: true }));
        }
      }
    };
    const refocus = () => {
      const el = focus && document.getElementById(focus.id);
      const a = document.activeElement;
      if (!el || a === el || (a && a !== document.body)) return;
      el.focus({ preventScroll: true });
      try {
        if (focus.start !== null) el.setSelectionRange(focus.start, focus.end);
      } catch (e) { /* no selection to restore */ }
    };
    // copy shows the reader's edits in the app's copy of the panels.
    const copy = () => {
      for (const f of log) if (f.set) put(f, false);
      refocus();
    };
    const handOver = () => {
      taken = true;
      for (const a of log.splice(0)) {
        const el = document.getElementById(a.set || a.submit || a.click);
        if (!el) continue;
        if (a.set) put(a, true);
        else if (a.submit) submitForm(el);
        else el.click();
      }
      refocus();
      focus = null;
    };
    return {
      listen(sel, isBefore) {
        inside = sel;
        before = isBefore;
        for (const type of ["input", "change", "click", "submit", "toggle"]) document.addEventListener(type, note, true);
        document.addEventListener("focusin", (e) => { if (kept(e.target) && "value" in e.target) keepFocus(e.target); }, true);
      },
      // mounted: the app has drawn its page; its panels come a moment later.
      mounted() {
        const t0 = performance.now();
        const wait = () => {
          const l = document.getElementById("lab");
          if (!l || l.dataset.ready === "true" || performance.now() - t0 > 20000) handOver();
          else {
            copy();
            requestAnimationFrame(() => setTimeout(wait, 0));
          }
        };
        requestAnimationFrame(() => setTimeout(wait, 0));
      },
    };
  })();

  // submitForm sends form's submit event to its handlers (the app's), as
  // Enter or its button would, without the browser submitting it.
  const submitForm = (form) => {
    if (form && form.tagName === "FORM") form.dispatchEvent(new Event("submit", { bubbles: true, cancelable: true }));
  };
  // In a frame (an embed), Enter in a field and a submit button do that
  // instead of submitting: the lab's forms are handled by script, and the
  // embed snippet sandboxes the frame without 'allow-forms', where the
  // browser refuses a submission (and logs it) before any handler runs.
  if (window.parent !== window) {
    const implicit = /^(text|number|search|email|url|tel|password|radio|checkbox|range|date|time)$/;
    document.addEventListener("keydown", (e) => {
      const t = e.target;
      if (e.key !== "Enter" || e.defaultPrevented || e.isComposing || !(t instanceof HTMLInputElement) || !t.form || !implicit.test(t.type)) return;
      e.preventDefault();
      submitForm(t.form);
    });
    document.addEventListener("click", (e) => {
      const b = e.target instanceof Element && e.target.closest("button[type=submit], button:not([type]), input[type=submit]");
      if (!b || !b.form || e.defaultPrevented) return;
      e.preventDefault();
      submitForm(b.form);
    });
  }

  // Compact block grids (app/grid_svg.go): one SVG, no element per block.
  // The block under the pointer, or under the keyboard cursor (arrow keys
  // while the grid has focus), is named in the grid's readout line.
  (() => {
    const info = (svg) => {
      if (svg.__info && svg.__info.owners === svg.dataset.owners) return svg.__info;
      const labels = {};
      for (const pair of (svg.dataset.labels || "").split(";")) {
        const k = pair.indexOf(":");
        if (k > 0) labels[pair.slice(0, k)] = pair.slice(k + 1);
      }
      svg.__info = {
        owners: svg.dataset.owners,
        owner: (svg.dataset.owners || "").split(","),
        used: (svg.dataset.used || "").split(","),
        labels,
        cols: parseInt(svg.dataset.cols, 10) || 1,
        bs: svg.dataset.blockSize || "",
      };
      return svg.__info;
    };
    const text = (svg, i) => {
      const g = info(svg);
      const o = g.owner[i];
      if (o === undefined) return "";
      const n = g.owner.length.toLocaleString("en-US");
      if (o === "-1") return "block " + i + " of " + n + ": free";
      return "block " + i + " of " + n + ": " + (g.labels[o] || o) + ", " + g.used[i] + "/" + g.bs + " tokens";
    };
    const readout = (svg) => svg.closest(".grid-wrap") && svg.closest(".grid-wrap").querySelector(".grid-readout");
    const show = (svg, i) => {
      const g = info(svg);
      const out = readout(svg);
      if (!out) return;
      if (i < 0 || i >= g.owner.length) {
        out.textContent = "";
        return;
      }
      out.textContent = text(svg, i);
      const rows = Math.ceil(g.owner.length / g.cols);
      const wrap = svg.closest(".grid-wrap").getBoundingClientRect();
      const box = svg.getBoundingClientRect();
      out.style.left = (box.left - wrap.left + ((i % g.cols) + 0.5) * box.width / g.cols) + "px";
      out.style.top = (box.top - wrap.top + Math.floor(i / g.cols) * box.height / rows) + "px";
    };
    const at = (svg, e) => {
      const g = info(svg);
      const box = svg.getBoundingClientRect();
      const rows = Math.ceil(g.owner.length / g.cols);
      const c = Math.floor((e.clientX - box.left) / box.width * g.cols);
      const r = Math.floor((e.clientY - box.top) / box.height * rows);
      return c < 0 || c >= g.cols || r < 0 ? -1 : r * g.cols + c;
    };
    const cursor = (svg, i) => {
      const g = info(svg);
      let c = svg.querySelector(":scope > .cursor");
      if (!c) {
        c = document.createElementNS("http://www.w3.org/2000/svg", "rect");
        c.setAttribute("class", "cursor");
        c.setAttribute("width", "8");
        c.setAttribute("height", "8");
        svg.appendChild(c);
      }
      c.setAttribute("x", String((i % g.cols) * 9));
      c.setAttribute("y", String(Math.floor(i / g.cols) * 9));
      svg.dataset.cursor = String(i);
      show(svg, i);
    };
    document.addEventListener("pointermove", (e) => {
      const svg = e.target instanceof Element && e.target.closest(".blocks-svg");
      if (svg) show(svg, at(svg, e));
    });
    document.addEventListener("pointerout", (e) => {
      const svg = e.target instanceof Element && e.target.closest(".blocks-svg");
      if (svg && !(e.relatedTarget instanceof Element && svg.contains(e.relatedTarget))) {
        if (document.activeElement === svg && svg.dataset.cursor) show(svg, +svg.dataset.cursor);
        else show(svg, -1);
      }
    });
    document.addEventListener("keydown", (e) => {
      const svg = e.target instanceof Element && e.target.closest(".blocks-svg");
      if (!svg || e.altKey || e.ctrlKey || e.metaKey) return;
      const g = info(svg);
      const n = g.owner.length;
      let i = svg.dataset.cursor === undefined ? -1 : +svg.dataset.cursor;
      const moves = { ArrowRight: 1, ArrowLeft: -1, ArrowDown: g.cols, ArrowUp: -g.cols };
      if (e.key in moves) i = i < 0 ? 0 : Math.max(0, Math.min(n - 1, i + moves[e.key]));
      else if (e.key === "Home") i = 0;
      else if (e.key === "End") i = n - 1;
      else return;
      e.preventDefault();
      e.stopPropagation();
      cursor(svg, i);
    }, true);
    document.addEventListener("focusout", (e) => {
      const svg = e.target instanceof Element && e.target.closest(".blocks-svg");
      if (svg) show(svg, -1);
    });
  })();

  // A lesson page's prerendered figure is the lesson at its defaults (the
  // server renders each lesson once), so an address asking for other knobs
  // must not show it as if it were that state. Until the app is live,
  // html.inferlab-pending marks the figure (lab.css): set now, before the
  // first paint, whenever the address carries more than hide=, theme= and
  // step=, and lifted once the markup shows it renders exactly what is
  // asked (#lab[data-query], the shown state's canonical query; a step of
  // that state is shown from the page's steps). Such an address starts the
  // app and its simulation at once (start, below). Once the app runs, it
  // marks a stale figure itself (#lab[data-stale]). A step alone hides the
  // stage until the page's steps show it (html.inferlab-step-pending).
  const lessonPage = /\/(lesson|embed)\/[^/]+/.test(location.pathname);
  const asked = [...query.keys()].filter((k) => k !== "hide" && k !== "theme");
  const knobsAsked = asked.filter((k) => k !== "step");
  const hideOK = (query.get("hide") || "").split(",").every((f) => f === "" || f === "controls" || f === "params" || f === "narration");
  if (lessonPage && (knobsAsked.length || !hideOK)) root.classList.add("inferlab-pending");
  else if (lessonPage && query.has("step")) root.classList.add("inferlab-step-pending");
  const onLoaded = () => {
    const lab = document.getElementById("lab");
    if (lab && lab.dataset.live !== "true" && root.classList.contains("inferlab-pending")) {
      const shown = new URLSearchParams(lab.dataset.query || "");
      if (hideOK && knobsAsked.every((k) => shown.has(k) && shown.get(k) === query.get(k))) root.classList.remove("inferlab-pending");
    }
    pre.init();
    if (!lessonPage || !lab) return;
    // A page booted from another cached page (offline, the service worker
    // answers an address it does not hold with a lesson page): the app
    // routes by the address.
    const m = /\/(lesson|embed)\/([^/]+)/.exec(location.pathname);
    if (m && (lab.dataset.lesson !== m[2].replace(/\.html$/, "") || lab.classList.contains("embed") !== (m[1] === "embed"))) {
      start("address");
      return;
    }
    if (root.classList.contains("inferlab-pending")) {
      prefetch();
      start("address");
    }
  };
  // An address with knobs other than the prerendered ones starts its
  // simulation and the app once the page is parsed (the prerendered state
  // is known then: #lab[data-query]).
  const prefetch = () => sim.prefetch(location.pathname, location.search.slice(1));
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", onLoaded);
  else onLoaded();

  // "Keep for offline use" (#btn-offline in the footer): the service worker
  // comes with the app; #offline-status says when the lab is kept.
  document.addEventListener("click", (e) => {
    const b = e.target instanceof Element && e.target.closest("#btn-offline");
    if (!b) return;
    start("offline");
    status("offline-status", "Saving the lab for offline use…");
    if (navigator.serviceWorker) {
      navigator.serviceWorker.ready.then(() => status("offline-status", "Saved: the lab works offline on this device."));
    }
  });

  // Presenting, the handout and image export (#btn-present, #btn-notes,
  // #btn-export, the P key) live in web/present.js, loaded at their first
  // use: nothing of them is fetched or parsed before (its address, with its
  // content hash, is in <meta name="inferlab:present">). They need no app:
  // before it runs they step the prerendered page, after it the app's.
  let presentMod = null; // a promise of window.inferlabPresent
  const present = () => {
    if (window.inferlabPresent) return Promise.resolve(window.inferlabPresent);
    if (!presentMod) {
      presentMod = new Promise((resolve, reject) => {
        const m = document.querySelector('meta[name="inferlab:present"]');
        const s = document.createElement("script");
        s.src = new URL((m && m.content) || "present.js", m ? location.href : base).href;
        s.onload = () => (window.inferlabPresent ? resolve(window.inferlabPresent) : reject(new Error("present.js did not start")));
        s.onerror = () => {
          presentMod = null; // tried again at the next use
          reject(new Error("present.js did not load"));
        };
        document.head.appendChild(s);
      });
    }
    return presentMod;
  };
  const presentDo = (what, el) => {
    // Loaded already: at once, within the click (full screen and a second
    // window need the reader's gesture).
    if (window.inferlabPresent) return window.inferlabPresent.act(what, el);
    present().then((p) => p.act(what, el), (e) => console.warn("inferlab: " + e.message));
  };
  window.inferlab.present = present;
  document.addEventListener("click", (e) => {
    const b = e.target instanceof Element && e.target.closest("#btn-present, #btn-notes, #btn-export");
    if (b) presentDo(b.id.slice(4), b);
  });
  window.addEventListener("keydown", (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey || e.defaultPrevented || (e.key !== "p" && e.key !== "P")) return;
    const a = document.activeElement;
    if (a && (a.isContentEditable || /^(INPUT|SELECT|TEXTAREA)$/.test(a.tagName))) return;
    if (!document.getElementById("btn-present") || document.querySelector("dialog[open]")) return;
    e.preventDefault();
    presentDo("present", null);
  });

  // ? opens the shortcuts, / focuses the search box (not while typing).
  window.addEventListener("keydown", (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey || e.defaultPrevented) return;
    const a = document.activeElement;
    if (a && (a.isContentEditable || /^(INPUT|SELECT|TEXTAREA)$/.test(a.tagName))) return;
    if (e.key === "?") {
      e.preventDefault();
      window.inferlab.keys(true);
    } else if (e.key === "/") {
      const s = document.getElementById("search");
      if (s) {
        e.preventDefault();
        s.focus();
      }
    }
  });

  // Embeds: report the content height to the parent page on load and on
  // every size change: postMessage({type: "inferlab:height", height, slug}).
  // The frame listens to no messages. The target origin is "*" because the
  // frame cannot know its host's origin; the message carries only a height.
  const reportHeight = () => {
    // By address, not by the page's markup: offline, an embed address may
    // boot from a cached lesson page until the app renders the embed.
    if (window.parent === window || !/\/embed\/[^/]+/.test(location.pathname)) return;
    let last = -1;
    const send = () => {
      const h = Math.ceil(document.documentElement.getBoundingClientRect().height);
      if (h === last || h <= 0) return;
      last = h;
      const lab = document.getElementById("lab");
      const slug = (lab && lab.dataset.lesson) || "";
      window.parent.postMessage({ type: "inferlab:height", height: h, slug }, "*");
    };
    send();
    if (window.ResizeObserver) new ResizeObserver(send).observe(document.body);
    else window.addEventListener("resize", send);
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", reportHeight);
  else reportHeight();
})();
