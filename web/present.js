// Inference Lab for teachers: presenter mode, speaker notes, the printed
// handout and image export (an animated PNG or numbered PNGs of a range of
// steps). Loaded by web/lab.js at the first use of #btn-present, #btn-notes,
// #btn-export or the P key, never before (the first visit stays light).
// It needs no app and no simulation: it drives the player through its own
// controls (the scrubber), so it steps the prerendered page before the app
// runs and the app's page after, and reads each step from the page as drawn.
"use strict";

// inferlabEncode writes the exported files' bytes, with no DOM (tested
// under Node: webtest/present.test.js).
const inferlabEncode = (() => {
  // ---- PNG, APNG and ZIP bytes ------------------------------------------------

  const crcTable = (() => {
    const t = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      t[n] = c >>> 0;
    }
    return t;
  })();
  const crc32 = (parts) => {
    let c = 0xffffffff;
    for (const b of parts) for (let i = 0; i < b.length; i++) c = crcTable[(c ^ b[i]) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const u32 = (...vs) => {
    const b = new Uint8Array(4 * vs.length);
    const dv = new DataView(b.buffer);
    vs.forEach((v, i) => dv.setUint32(4 * i, v));
    return b;
  };
  const ascii = (s) => Uint8Array.from(s, (ch) => ch.charCodeAt(0));
  // A PNG's chunks: [{type, data}], after its 8-byte signature.
  const chunksOf = (png) => {
    const dv = new DataView(png.buffer, png.byteOffset, png.byteLength);
    const out = [];
    for (let at = 8; at + 12 <= png.length;) {
      const len = dv.getUint32(at);
      const type = String.fromCharCode(...png.subarray(at + 4, at + 8));
      out.push({ type, data: png.subarray(at + 8, at + 8 + len) });
      at += 12 + len;
    }
    return out;
  };
  const chunk = (type, data) => {
    const t = ascii(type);
    return [u32(data.length), t, data, u32(crc32([t, data]))];
  };
  const signature = Uint8Array.of(137, 80, 78, 71, 13, 10, 26, 10);

  // apng assembles PNG frames of one size into an animated PNG (APNG,
  // https://wiki.mozilla.org/APNG_Specification): the first frame's IHDR,
  // acTL (frames, loop forever), then per frame an fcTL (its sequence
  // number, size, delay) and its image data — IDAT for the first frame
  // (what a viewer without APNG shows), fdAT (a sequence number + the
  // IDAT's bytes) for the others. Sequence numbers run over fcTL and fdAT.
  const apng = (pngs, delayMs) => {
    const frames = pngs.map(chunksOf);
    const ihdr = frames[0].find((c) => c.type === "IHDR").data;
    const w = new DataView(ihdr.buffer, ihdr.byteOffset).getUint32(0);
    const h = new DataView(ihdr.buffer, ihdr.byteOffset).getUint32(4);
    for (const f of frames) {
      const d = f.find((c) => c.type === "IHDR").data;
      if (d.length !== ihdr.length || d.some((x, i) => x !== ihdr[i])) throw new Error("the frames differ in size or colour type");
    }
    const parts = [signature, ...chunk("IHDR", ihdr), ...chunk("acTL", u32(frames.length, 0))];
    let seq = 0;
    frames.forEach((f, i) => {
      const fc = new Uint8Array(26);
      const dv = new DataView(fc.buffer);
      dv.setUint32(0, seq++);
      dv.setUint32(4, w);
      dv.setUint32(8, h);
      dv.setUint32(12, 0);
      dv.setUint32(16, 0);
      dv.setUint16(20, delayMs); // delay: delayMs / 1000 s
      dv.setUint16(22, 1000);
      fc[24] = 0; // dispose: none
      fc[25] = 0; // blend: source (every frame is opaque and whole)
      parts.push(...chunk("fcTL", fc));
      for (const c of f) {
        if (c.type !== "IDAT") continue;
        if (i === 0) parts.push(...chunk("IDAT", c.data));
        else {
          const d = new Uint8Array(4 + c.data.length);
          d.set(u32(seq++), 0);
          d.set(c.data, 4);
          parts.push(...chunk("fdAT", d));
        }
      }
    });
    parts.push(...chunk("IEND", new Uint8Array(0)));
    return new Blob(parts, { type: "image/png" });
  };

  // zip stores files uncompressed (PNGs are compressed already): local
  // headers, the central directory, its end record. Names in UTF-8, the
  // date fixed (1980-01-01), so the same frames give the same bytes.
  const zip = (files) => {
    const le = (n, v) => {
      const b = new Uint8Array(n);
      const dv = new DataView(b.buffer);
      if (n === 2) dv.setUint16(0, v, true);
      else dv.setUint32(0, v, true);
      return b;
    };
    const enc = new TextEncoder();
    const parts = [];
    const central = [];
    let at = 0;
    for (const f of files) {
      const name = enc.encode(f.name);
      const crc = crc32([f.bytes]);
      const common = [le(2, 20), le(2, 0x0800), le(2, 0), le(2, 0), le(2, 0x21), le(4, crc), le(4, f.bytes.length), le(4, f.bytes.length), le(2, name.length), le(2, 0)];
      const local = [le(4, 0x04034b50), ...common, name];
      central.push(le(4, 0x02014b50), le(2, 20), ...common, le(2, 0), le(2, 0), le(2, 0), le(4, 0), le(4, at), name);
      for (const p of local) at += p.length;
      at += f.bytes.length;
      parts.push(...local, f.bytes);
    }
    const cdSize = central.reduce((s, p) => s + p.length, 0);
    parts.push(...central, le(4, 0x06054b50), le(2, 0), le(2, 0), le(2, files.length), le(2, files.length), le(4, cdSize), le(4, at), le(2, 0));
    return new Blob(parts, { type: "application/zip" });
  };

  return { crc32, chunksOf, apng, zip };
})();

if (typeof module === "object" && module.exports) module.exports = inferlabEncode;

if (typeof window === "object") (() => {
  if (window.inferlabPresent) return;
  const { apng, zip } = inferlabEncode;
  const L = window.inferlab;
  const root = document.documentElement;
  const $ = (s) => document.querySelector(s);
  const lab = () => document.getElementById("lab");
  const live = () => !!lab() && lab().dataset.live === "true";
  const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  const text = (s) => { const e = $(s); return e ? e.textContent.trim().replace(/\s+/g, " ") : ""; };
  const stepNo = () => parseInt((lab() || { dataset: {} }).dataset.step, 10) || 1;
  const stepCount = () => { const s = $("#scrubber"); return s ? parseInt(s.max, 10) || 1 : 1; };
  const slug = () => (lab() && lab().dataset.lesson) || "lesson";
  const pad2 = (n) => String(n).padStart(2, "0");
  const cssVar = (name, dflt) => getComputedStyle(root).getPropertyValue(name).trim() || dflt;
  const mainFigure = () => $("#lab #scenes > figure.scene");

  // until resolves once pred() holds, checking each frame; it rejects
  // after ms (a step the player never reaches: a broken page, not a wait).
  const until = async (pred, ms, what) => {
    const t0 = performance.now();
    while (!pred()) {
      if (performance.now() - t0 > ms) throw new Error("the page did not show " + what);
      await frame();
    }
  };

  // ---- stepping the player -------------------------------------------------

  // goTo shows step n (1-based) with the player's scrubber, as a reader
  // would, and resolves once it is drawn (the app's: its state computed).
  const goTo = async (n) => {
    const s = $("#scrubber");
    if (!s) throw new Error("this page has no player");
    if (stepNo() !== n) {
      s.value = String(n);
      s.dispatchEvent(new Event("input", { bubbles: true }));
    }
    await until(() => { const l = lab(); return l && l.dataset.step === String(n) && l.dataset.stale !== "true"; }, 20000, "step " + n);
    await frame();
    await frame();
    // A copy shows the step as it ends, not a frame of its entrance: every
    // transition and fade still running jumps to its end (a request chip
    // halfway down from the router, callouts half faded, in an exported
    // frame before).
    for (const a of document.getAnimations ? document.getAnimations() : []) {
      try { a.finish(); } catch (e) { /* endless: left running */ }
    }
    await frame();
  };
  // chartsDrawn resolves once every chart of the step is drawn: a
  // prerendered one is markup (app/chart_static.go), the app's are drawn by
  // ECharts a moment after the step (#chart-ID[data-ready]).
  const chartsDrawn = async () => {
    const els = [...document.querySelectorAll("#lab #scenes .chart")];
    try {
      await until(() => els.every((el) => "static" in el.dataset || el.dataset.ready === "true" || !el.isConnected), 15000, "its charts");
    } catch (e) { /* drawn without them: each says so in its place */ }
    await frame();
  };
  const pause = () => {
    const p = $("#btn-play");
    if (p && p.getAttribute("aria-pressed") === "true") p.click();
  };
  // walk shows steps from..to in turn and calls each(n) on each, drawn and
  // still (html.inferlab-capturing: no transitions, no fades), then goes
  // back to the step the reader was at.
  let walking = false;
  const walk = async (from, to, each) => {
    if (walking) throw new Error("an export is already under way");
    walking = true;
    const back = stepNo();
    const y = window.scrollY;
    pause();
    root.classList.add("inferlab-capturing");
    try {
      for (let n = from; n <= to; n++) {
        await goTo(n);
        await chartsDrawn();
        await each(n);
      }
    } finally {
      root.classList.remove("inferlab-capturing");
      if (blank) blank.remove();
      blank = null;
      try { await goTo(back); } catch (e) { /* the reader moved on */ }
      window.scrollTo(0, y);
      walking = false;
    }
  };

  // ---- figures as images ----------------------------------------------------

  // A chart's canvas as a PNG data URL at scale, its step marker (the
  // dashed "now" line, an element over the canvas) drawn in when asked.
  const chartURL = async (el, scale, bg, withCursor) => {
    const inst = window.echarts && window.echarts.getInstanceByDom(el);
    if (!inst) return "";
    let anim;
    try { anim = inst.getOption().animation; } catch (e) { anim = undefined; }
    // The final frame, not one half way through a change.
    inst.setOption({ animation: false });
    const url = inst.getDataURL({ type: "png", pixelRatio: scale, backgroundColor: bg });
    if (anim !== false) inst.setOption({ animation: anim === undefined ? true : anim });
    const marker = withCursor && el.parentElement && el.parentElement.querySelector(".chart-cursor");
    if (!marker || marker.hidden) return url;
    const img = await loadImage(url);
    const c = document.createElement("canvas");
    c.width = img.naturalWidth;
    c.height = img.naturalHeight;
    const g = c.getContext("2d");
    g.drawImage(img, 0, 0);
    const x = (parseFloat(marker.style.left) || 0) * scale;
    g.strokeStyle = getComputedStyle(marker).borderLeftColor || "#0f172a";
    g.lineWidth = 2 * scale;
    g.setLineDash([4 * scale, 3 * scale]);
    g.beginPath();
    g.moveTo(x, (parseFloat(marker.style.top) || 0) * scale);
    g.lineTo(x, ((parseFloat(marker.style.top) || 0) + (parseFloat(marker.style.height) || 0)) * scale);
    g.stroke();
    return c.toDataURL("image/png");
  };

  const loadImage = (src) => new Promise((resolve, reject) => {
    const img = new Image();
    img.onload = () => resolve(img);
    img.onerror = () => reject(new Error("the figure could not be drawn as an image"));
    img.src = src;
  });

  // Properties never copied: custom properties (resolved already), motion,
  // and what only matters to a pointer. SVG shapes keep their geometry
  // attributes (a copied "width: auto" would undo a rect's width).
  const skip = /^(--|transition|animation|cursor|will-change|pointer-events|user-select|-webkit-user|caret|touch-action|scroll|overscroll)/;
  const geometry = new Set(["width", "height", "x", "y", "cx", "cy", "r", "rx", "ry", "d"]);
  // styleOf writes the computed style cs as inline declarations, leaving
  // out each value the copy gets anyway: one equal both to the parent's
  // (an inherited property inherits it) and to the browser's default for
  // the element (a property that is not inherited starts there). That
  // keeps a figure of 600 elements at a few hundred KB instead of MBs.
  const styleOf = (cs, svgShape, parent, dflt) => {
    let t = "";
    for (let i = 0; i < cs.length; i++) {
      const p = cs[i];
      if (skip.test(p) || (svgShape && geometry.has(p))) continue;
      const v = cs.getPropertyValue(p);
      if (dflt && dflt[p] === v && (!parent || parent.getPropertyValue(p) === v)) continue;
      t += p + ":" + v + ";";
    }
    return t;
  };
  // defaults: the browser's own computed style of an element of this
  // namespace and tag, with no style sheet (an empty frame), by property.
  let blank = null;
  const defaultsCache = new Map();
  const defaults = (el) => {
    const svg = el instanceof SVGElement;
    const key = (svg ? "svg:" : "") + el.localName;
    if (defaultsCache.has(key)) return defaultsCache.get(key);
    if (!blank || !blank.isConnected) {
      blank = document.createElement("iframe");
      blank.setAttribute("aria-hidden", "true");
      blank.title = "(empty: the browser's default styles)";
      blank.tabIndex = -1;
      blank.style.cssText = "position:fixed;left:-10px;top:-10px;width:1px;height:1px;border:0;visibility:hidden";
      document.body.appendChild(blank);
    }
    const d = blank.contentDocument;
    let probe;
    if (svg) {
      const host = d.createElementNS("http://www.w3.org/2000/svg", "svg");
      d.body.appendChild(host);
      probe = el.localName === "svg" ? host : host.appendChild(d.createElementNS("http://www.w3.org/2000/svg", el.localName));
    } else probe = d.body.appendChild(d.createElement(el.localName));
    const cs = blank.contentWindow.getComputedStyle(probe);
    const out = {};
    for (let i = 0; i < cs.length; i++) out[cs[i]] = cs.getPropertyValue(cs[i]);
    d.body.textContent = "";
    defaultsCache.set(key, out);
    return out;
  };
  // A ::before or ::after as a span (an image has no stylesheet).
  const pseudo = (live, copy, which) => {
    const ps = getComputedStyle(live, which);
    const c = ps.content;
    if (!c || c === "none" || c === "normal") return;
    const span = document.createElement("span");
    span.setAttribute("style", styleOf(ps, false, null, null));
    try { span.textContent = JSON.parse(c); } catch (e) { span.textContent = ""; }
    if (which === "::before") copy.insertBefore(span, copy.firstChild);
    else copy.appendChild(span);
  };

  // figureSVG turns a figure as drawn into a standalone SVG image (its
  // markup with every computed style inlined, in a foreignObject; each
  // chart's canvas as a PNG), drawn at scale. Resolves to {url, w, h} (CSS
  // px of the figure; the image is w·scale × h·scale). whole: a frame that
  // scrolls down on the page (a long table, a tall picture) is drawn whole,
  // the image taller by what it hid (paper does not scroll); else as its
  // view.
  const figureSVG = async (fig, scale, bg, cursorInCharts, whole) => {
    const w = Math.ceil(fig.getBoundingClientRect().width);
    let h = Math.ceil(fig.getBoundingClientRect().height);
    const copy = fig.cloneNode(true);
    const lives = [fig, ...fig.querySelectorAll("*")];
    const copies = [copy, ...copy.querySelectorAll("*")];
    const styles = new Map();
    for (let i = 0; i < lives.length; i++) {
      const a = lives[i];
      const b = copies[i];
      const svgShape = a instanceof SVGElement && !(a instanceof SVGSVGElement);
      const cs = getComputedStyle(a);
      styles.set(a, cs);
      let st = styleOf(cs, svgShape, i === 0 ? null : styles.get(a.parentElement) || null, defaults(a));
      // A frame that scrolls on the page is drawn as its view, with no
      // scroll bars (or, whole, at its full height).
      if (whole && /auto|scroll/.test(cs.overflowY) && a.scrollHeight > a.clientHeight + 1) {
        h += a.scrollHeight - a.clientHeight;
        st += "overflow:hidden;max-height:none;height:" + (a.scrollHeight + a.offsetHeight - a.clientHeight) + "px;flex:none;";
      } else if (/auto|scroll/.test(cs.overflowX + cs.overflowY)) st += "overflow:hidden;";
      b.setAttribute("style", st);
      if (!(a instanceof SVGElement) && a.tagName !== "CANVAS") {
        pseudo(a, b, "::before");
        pseudo(a, b, "::after");
      }
    }
    copy.style.margin = "0";
    if (whole) {
      copy.style.height = "auto";
      copy.style.maxHeight = "none";
    }
    for (const el of copy.querySelectorAll("script, .save-png, title.mention-tip")) el.remove();
    // An ECharts canvas becomes its image; a prerendered chart is markup,
    // copied like the rest.
    const liveCharts = [...fig.querySelectorAll(".chart")];
    const copyCharts = [...copy.querySelectorAll(".chart")];
    for (let i = 0; i < liveCharts.length; i++) {
      const url = await chartURL(liveCharts[i], scale, bg, cursorInCharts);
      const box = copyCharts[i];
      if (!box || !url) continue;
      box.textContent = "";
      const img = document.createElement("img");
      img.src = url;
      img.alt = "";
      img.setAttribute("style", "display:block;width:" + liveCharts[i].clientWidth + "px;height:" + liveCharts[i].clientHeight + "px");
      box.appendChild(img);
    }
    // The step marker is drawn into the chart's image (cursorInCharts), or
    // stays the element it is on the page, copied with its position.
    if (cursorInCharts) for (const m of copy.querySelectorAll(".chart-cursor")) m.remove();
    const xml = new XMLSerializer().serializeToString(copy);
    const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="' + Math.round(w * scale) + '" height="' + Math.round(h * scale) +
      '" viewBox="0 0 ' + w + " " + h + '"><foreignObject x="0" y="0" width="' + w + '" height="' + h + '">' + xml + "</foreignObject></svg>";
    return { url: "data:image/svg+xml;charset=utf-8," + encodeURIComponent(svg), w, h };
  };

  const save = (name, blob) => {
    const url = URL.createObjectURL(blob);
    const a = document.createElement("a");
    a.href = url;
    a.download = name;
    a.hidden = true;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60000);
  };

  // ---- export: frames of a range of steps ------------------------------------

  // wrap breaks text into lines of at most width px in the context's font.
  const wrap = (g, s, width) => {
    const lines = [];
    let line = "";
    for (const word of s.split(/\s+/)) {
      const t = line ? line + " " + word : word;
      if (line && g.measureText(t).width > width) {
        lines.push(line);
        line = word;
      } else line = t;
    }
    if (line) lines.push(line);
    return lines;
  };

  // frames draws steps from..to as PNGs of one size: the step's number and
  // title above its main figure, optionally its narration below, on the
  // theme's background, width px wide ("screen": the figure's width on
  // screen at the device's pixel ratio). Resolves to [{n, bytes}] and the
  // size.
  const frames = async (o, progress) => {
    const bg = cssVar("--bg", "#0f172a");
    const fg = cssVar("--text", "#e2e8f0");
    const accent = cssVar("--link", "#00e5ff");
    const drawn = [];
    const total = stepCount();
    await walk(o.from, o.to, async (n) => {
      progress("Drawing step " + n + " (" + (n - o.from + 1) + " of " + (o.to - o.from + 1) + ")…");
      const fig = mainFigure();
      if (!fig) throw new Error("step " + n + " has no figure");
      const fw = fig.getBoundingClientRect().width;
      const W = o.width === "screen" ? Math.round(fw * (window.devicePixelRatio || 1)) : o.width;
      const margin = Math.round(W * 0.025);
      const scale = (W - 2 * margin) / fw;
      // (a chart's canvas is transparent on the page: its figure shows through)
      const svg = await figureSVG(fig, scale, "rgba(0,0,0,0)", false);
      drawn.push({ n, W, margin, svg, img: await loadImage(svg.url), title: text("#step-title"), narration: text("#narration") });
    });
    // One size for every frame: the widest width (they are equal) and the
    // tallest height.
    const W = drawn[0].W;
    const g0 = document.createElement("canvas").getContext("2d");
    const fs = Math.max(14, Math.round(W / 48));
    const font = (weight, size) => weight + " " + size + "px system-ui, -apple-system, 'Segoe UI', Roboto, Arial, sans-serif";
    for (const d of drawn) {
      d.figH = Math.round(d.svg.h * (W - 2 * d.margin) / d.svg.w);
      g0.font = font(400, Math.round(fs * 0.8));
      d.lines = o.narration ? wrap(g0, d.narration, W - 2 * d.margin) : [];
      g0.font = font(700, fs);
      d.head = o.caption ? wrap(g0, "Step " + d.n + " of " + total + " · " + d.title, W - 2 * d.margin) : [];
      d.H = d.margin + d.head.length * fs * 1.3 + (d.head.length ? d.margin / 2 : 0) + d.figH +
        (d.lines.length ? d.margin / 2 + d.lines.length * fs * 1.1 : 0) + d.margin;
    }
    const H = Math.ceil(Math.max(...drawn.map((d) => d.H)));
    const out = [];
    for (const d of drawn) {
      const c = document.createElement("canvas");
      c.width = W;
      c.height = H;
      const g = c.getContext("2d");
      g.fillStyle = bg;
      g.fillRect(0, 0, W, H);
      let y = d.margin;
      g.textBaseline = "top";
      g.fillStyle = accent;
      g.font = font(700, fs);
      for (const l of d.head) {
        g.fillText(l, d.margin, y);
        y += fs * 1.3;
      }
      if (d.head.length) y += d.margin / 2;
      g.drawImage(d.img, d.margin, y, W - 2 * d.margin, d.figH);
      y += d.figH + d.margin / 2;
      g.fillStyle = fg;
      g.font = font(400, Math.round(fs * 0.8));
      for (const l of d.lines) {
        g.fillText(l, d.margin, y);
        y += fs * 1.1;
      }
      let blob;
      try {
        // A canvas the browser will not let the page read (tainted by the
        // drawn figure) throws here.
        blob = await new Promise((resolve, reject) => c.toBlob((b) => (b ? resolve(b) : reject(new Error("no PNG"))), "image/png"));
      } catch (e) {
        throw new Error("this browser does not let the page read the drawn figure (" + (e.name || e.message) + "): use a screenshot, or a chart's own PNG button", { cause: e });
      }
      out.push({ n: d.n, bytes: new Uint8Array(await blob.arrayBuffer()) });
    }
    return { frames: out, width: W, height: H };
  };

  // exportImages saves the range as one animated PNG ("apng") or as a zip
  // of numbered PNGs ("zip"). Resolves to the file's name.
  const exportImages = async (o, progress) => {
    const r = await frames(o, progress);
    const range = pad2(o.from) + "-" + pad2(o.to);
    if (o.kind === "apng") {
      const name = slug() + "-steps-" + range + ".png";
      save(name, apng(r.frames.map((f) => f.bytes), o.delayMs || 2000));
      return name;
    }
    const name = slug() + "-steps-" + range + ".zip";
    save(name, zip(r.frames.map((f) => ({ name: slug() + "-step-" + pad2(f.n) + ".png", bytes: f.bytes }))));
    return name;
  };

  // ---- the printed handout ------------------------------------------------------

  // handout lays every step (as the page shows them now: the prerendered
  // steps before the app, the app's after, with the reader's knobs) into
  // #handout, one section per step: its number and title, its figures as
  // images (in the light theme: paper is white), its narration. lab.css
  // prints only #handout then (html.printing-handout), one step per page.
  const handout = async (progress) => {
    const n = stepCount();
    const was = root.dataset.theme;
    const flip = was !== "light";
    const setTheme = (t) => {
      root.dataset.theme = t;
      window.dispatchEvent(new CustomEvent("inferlab:theme", { detail: t }));
    };
    const box = document.createElement("div");
    box.id = "handout";
    box.className = "handout";
    const h1 = document.createElement("h1");
    h1.className = "handout-title";
    h1.textContent = text(".lab-head h1") || document.title;
    box.appendChild(h1);
    if (flip) {
      setTheme("light");
      await frame();
      await frame();
    }
    try {
      await walk(1, n, async (i) => {
        progress("Laying out step " + i + " of " + n + "…");
        const sec = document.createElement("section");
        sec.className = "handout-step";
        const h = document.createElement("h2");
        h.textContent = "Step " + i + " of " + n + " · " + text("#step-title");
        const figs = document.createElement("div");
        figs.className = "handout-figures";
        for (const f of document.querySelectorAll("#lab #scenes > figure.scene")) {
          if (!f.getClientRects().length) continue;
          const s = await figureSVG(f, 2, "rgba(0,0,0,0)", true, true);
          const img = document.createElement("img");
          img.src = s.url;
          img.alt = text("#lab #scenes > figure.scene[data-scene-id='" + CSS.escape(f.dataset.sceneId || "") + "'] figcaption") || "figure";
          img.style.aspectRatio = s.w + " / " + s.h;
          figs.appendChild(img);
        }
        const nar = document.createElement("div");
        nar.className = "handout-narration";
        const src = $("#narration");
        if (src) for (const c of src.childNodes) nar.appendChild(c.cloneNode(true));
        for (const el of nar.querySelectorAll("[id]")) el.removeAttribute("id");
        sec.append(h, figs, nar);
        box.appendChild(sec);
      });
    } finally {
      if (flip) setTheme(was);
    }
    const old = document.getElementById("handout");
    if (old) old.remove();
    document.body.appendChild(box);
    root.classList.add("printing-handout");
    return box;
  };
  const printHandout = async (progress) => {
    await handout(progress);
    const done = () => root.classList.remove("printing-handout");
    window.addEventListener("afterprint", done, { once: true });
    window.print();
  };
  // Stepping again (the reader is back at the page) drops the handout.
  window.addEventListener("inferlab:step", (e) => {
    if (!e.detail || walking) return;
    root.classList.remove("printing-handout");
    const h = document.getElementById("handout");
    if (h) h.remove();
  });

  // ---- the export dialog ------------------------------------------------------------

  let dlg = null;
  const field = (id) => dlg.querySelector("#" + id);
  const dialog = () => {
    if (dlg && dlg.isConnected) return dlg;
    dlg = document.createElement("dialog");
    dlg.id = "export-dialog";
    dlg.className = "keys-dialog export-dialog";
    dlg.setAttribute("aria-labelledby", "export-title");
    dlg.innerHTML = `<h2 id="export-title">Print or export steps</h2>
<section class="export-part" aria-labelledby="export-print-title">
  <h3 id="export-print-title">Handout</h3>
  <p>Every step on a page of its own: its number and title, its figures, its narration.</p>
  <button id="export-print" type="button" class="primary">Print handout…</button>
</section>
<section class="export-part" aria-labelledby="export-images-title">
  <h3 id="export-images-title">Images of the main figure</h3>
  <div class="export-fields">
    <label for="export-from">From step</label><input id="export-from" type="number" inputmode="numeric" min="1" step="1">
    <label for="export-to">to step</label><input id="export-to" type="number" inputmode="numeric" min="1" step="1">
    <label for="export-width">Width</label><select id="export-width">
      <option value="1280">1280 px</option><option value="1920">1920 px</option><option value="screen">as on screen</option>
    </select>
  </div>
  <label class="check"><input type="checkbox" id="export-caption" checked> Step number and title above the figure</label>
  <label class="check"><input type="checkbox" id="export-narration"> The narration under it</label>
  <p class="export-note" id="export-note"></p>
  <div class="export-actions">
    <button id="export-apng" type="button" class="primary">Animated PNG</button>
    <button id="export-pngs" type="button">PNG per step (.zip)</button>
  </div>
</section>
<p id="export-status" class="export-status" role="status" aria-live="polite"></p>
<button id="export-close" type="button">Close</button>`;
    // Keys typed here are the dialog's, not the player's behind it.
    dlg.addEventListener("keydown", (e) => {
      if (e.key !== "Escape" && e.key !== "Tab" && e.key !== "Enter") e.stopPropagation();
    });
    dlg.addEventListener("click", (e) => {
      const b = e.target instanceof Element && e.target.closest("button");
      if (!b) return;
      if (b.id === "export-close") dlg.close();
      else if (b.id === "export-print") run("print");
      else if (b.id === "export-apng") run("apng");
      else if (b.id === "export-pngs") run("zip");
    });
    document.body.appendChild(dlg);
    return dlg;
  };
  const say = (s) => { if (dlg) dlg.querySelector("#export-status").textContent = s; };
  const openExport = () => {
    const d = dialog();
    const n = stepCount();
    const cur = stepNo();
    for (const id of ["export-from", "export-to"]) field(id).max = String(n);
    field("export-from").value = String(cur);
    field("export-to").value = String(Math.min(n, cur + 3));
    const fig = mainFigure();
    const sw = fig ? Math.round(fig.getBoundingClientRect().width * (window.devicePixelRatio || 1)) : 0;
    field("export-width").options[2].textContent = "as on screen" + (sw ? " (" + sw + " px)" : "");
    field("export-note").textContent = "In the " + L.theme() + " theme, as shown; an animated PNG shows each step for 2 s and plays in every current browser.";
    say("");
    if (!d.open) d.showModal();
  };
  // range reads the From and To fields: a clear message for a bad one.
  const range = () => {
    const n = stepCount();
    const read = (id, label) => {
      const v = field(id).value.trim();
      const k = Number(v);
      if (!/^\d+$/.test(v) || k < 1 || k > n) throw new Error(label + " = " + JSON.stringify(v) + " is not allowed: want a step from 1 to " + n);
      return k;
    };
    const from = read("export-from", "From step");
    const to = read("export-to", "To step");
    if (to < from) throw new Error("To step = " + to + " is not allowed with From step = " + from + ": want at least " + from);
    return { from, to };
  };
  let running = false;
  const run = async (what) => {
    if (running) return;
    running = true;
    const buttons = [...dlg.querySelectorAll("#export-print, #export-apng, #export-pngs")];
    for (const b of buttons) b.disabled = true;
    try {
      if (what === "print") {
        dlg.close();
        await printHandout(() => {});
        return;
      }
      const r = range();
      const w = field("export-width").value;
      const name = await exportImages({ from: r.from, to: r.to, width: w === "screen" ? "screen" : parseInt(w, 10), caption: field("export-caption").checked, narration: field("export-narration").checked, kind: what }, say);
      say("Saved " + name + ".");
    } catch (e) {
      if (what === "print" && !dlg.open) dlg.showModal();
      say(e.message || String(e));
    } finally {
      for (const b of buttons) b.disabled = false;
      running = false;
    }
  };

  // ---- presenter mode ---------------------------------------------------------------

  // html.presenting (lab.css): the main figure fills the screen, the
  // narration is its caption in large type, a slim bar of the player's
  // buttons under it; full screen where the browser allows it, the whole
  // window otherwise. The player's keys step it (← → space Home End); Esc
  // (or #btn-present again) leaves.
  let ownFullscreen = false;
  const presenting = () => root.classList.contains("presenting");
  const syncButton = () => {
    const b = $("#btn-present");
    if (!b) return;
    const on = presenting();
    if (b.getAttribute("aria-pressed") !== String(on)) b.setAttribute("aria-pressed", String(on));
    b.title = on ? "Leave presenting (Esc)" : "Present: the figure full screen, the narration as its caption (P)";
  };
  const enter = () => {
    if (presenting() || !lab()) return;
    root.classList.add("presenting");
    const a = document.activeElement;
    if (a && a.blur) a.blur(); // space on a focused button would press it
    if (document.fullscreenEnabled && root.requestFullscreen && !document.fullscreenElement) {
      root.requestFullscreen({ navigationUI: "hide" }).then(() => { ownFullscreen = true; fitSoon(); }, () => {});
    }
    syncButton();
    fitSoon();
  };
  const leave = () => {
    if (!presenting()) return;
    root.classList.remove("presenting");
    unfit();
    if (ownFullscreen && document.fullscreenElement) document.exitFullscreen().catch(() => {});
    ownFullscreen = false;
    syncButton();
    const b = $("#btn-present");
    if (b) b.focus();
    if (L.annotate) L.annotate(); // the stage's geometry changed back
  };
  document.addEventListener("fullscreenchange", () => {
    if (!document.fullscreenElement && ownFullscreen) {
      ownFullscreen = false;
      leave();
    } else fitSoon();
  });
  window.addEventListener("keydown", (e) => {
    if (e.key !== "Escape" || !presenting() || document.querySelector("dialog[open]")) return;
    const a = document.activeElement;
    if (a && a.closest && a.closest("#quiz, #search-box")) return; // theirs
    e.preventDefault();
    leave();
  });

  // fit sizes the main figure to the space above the caption: a chart gets
  // the height (ECharts redraws at its size); anything else is laid out at a
  // design width and zoomed to fill the space (CSS zoom: it lays out again,
  // so SVG and text stay sharp).
  let fitted = null;
  const unfit = () => {
    if (fitted) {
      fitted.style.removeProperty("zoom");
      fitted.style.removeProperty("width");
      fitted = null;
    }
    root.style.removeProperty("--present-chart-h");
  };
  const fit = () => {
    if (!presenting()) return;
    const fig = mainFigure();
    unfit();
    if (!fig) return;
    const main = $("#lab .lab-main");
    const cap = $("#narration-panel");
    const bar = $("#controls");
    const ms = getComputedStyle(main);
    const availW = main.clientWidth - parseFloat(ms.paddingLeft) - parseFloat(ms.paddingRight);
    const gap = parseFloat(ms.rowGap) || 0;
    const availH = window.innerHeight - parseFloat(ms.paddingTop) - parseFloat(ms.paddingBottom) -
      (cap && !cap.hidden ? cap.getBoundingClientRect().height + gap : 0) - (bar && !bar.hidden ? bar.getBoundingClientRect().height + gap : 0);
    fitted = fig;
    const chart = fig.querySelector(".chart");
    if (fig.dataset.kind === "chart" && chart) {
      const other = fig.getBoundingClientRect().height - chart.getBoundingClientRect().height;
      root.style.setProperty("--present-chart-h", Math.max(200, Math.floor(availH - other - 4)) + "px");
      return;
    }
    // Never below the size its labels are drawn for (11 px: ≥ 10 px at
    // 0.92, the lab's floor on a wide screen; none smaller on a phone): a
    // figure too tall even so scrolls in its place.
    const phone = window.innerWidth <= 600;
    const design = phone ? availW : Math.min(availW, 1100);
    fig.style.width = design + "px";
    fig.style.zoom = "1";
    const w = Math.max(design, fig.scrollWidth);
    const h = Math.max(1, fig.scrollHeight);
    const z = Math.max(phone ? 1 : 0.92, Math.min(2.5, availW / w, availH / h));
    fig.style.zoom = String(Math.floor(z * 1000) / 1000);
  };
  let fitPending = false;
  const fitSoon = () => {
    if (fitPending) return;
    fitPending = true;
    requestAnimationFrame(() => {
      fitPending = false;
      fit();
    });
  };
  window.addEventListener("resize", fitSoon);
  window.addEventListener("inferlab:step", () => {
    syncButton();
    if (presenting() && !walking) fitSoon();
    if (!walking) notes.render();
  });

  // ---- speaker notes ------------------------------------------------------------------

  // A second window (about:blank, same origin) that this page writes into:
  // the step's label, title and narration and the next step's title, kept
  // in step at every drawing (inferlab:step). No page of its own and no
  // messages to pass: it is this page's document to write. Its keys step
  // the lesson here (the player's buttons), so the presenter can drive
  // from either window.
  const notes = (() => {
    let win = null;
    const nextTitle = async () => {
      const i = stepNo(); // the next step's 0-based index
      if (live()) {
        const b = $("#btn-notes");
        return b ? b.dataset.next || "" : "";
      }
      const d = await (L.steps ? L.steps() : Promise.resolve(null));
      if (!d || !d.steps || !d.steps[i]) return "";
      const t = document.createElement("template");
      t.innerHTML = d.steps[i].html[d.parts.indexOf("narration-panel")] || "";
      const el = t.content.querySelector("#step-title");
      return el ? el.textContent.trim() : "";
    };
    const click = (id) => { const b = document.getElementById(id); if (b && !b.disabled) b.click(); };
    const onKey = (e) => {
      const act = { ArrowLeft: "btn-prev", ArrowRight: "btn-next", Home: "btn-first", End: "btn-last", " ": "btn-play" }[e.key];
      if (!act || e.altKey || e.ctrlKey || e.metaKey) return;
      e.preventDefault();
      click(act);
    };
    const open = () => {
      if (win && !win.closed) {
        win.focus();
        render();
        return;
      }
      win = window.open("", "inferlab-notes", "popup,width=560,height=720");
      if (!win) {
        L.status("share-status", "The browser blocked the notes window: allow pop-ups for this site.");
        return;
      }
      const d = win.document;
      d.title = "Speaker notes · " + (text(".lab-head h1") || "Inference Lab");
      d.documentElement.lang = "en";
      const style = d.createElement("style");
      d.head.appendChild(style);
      d.body.innerHTML = `<main class="notes">
<p class="n-step" id="n-step"></p>
<h1 id="n-title"></h1>
<div id="n-narration" class="n-narration"></div>
<p class="n-next"><strong>Next:</strong> <span id="n-next"></span></p>
<p class="n-buttons"><button type="button" id="n-prev">← Prev</button> <button type="button" id="n-nextbtn">Next →</button></p>
<p class="n-hint">← → Home End step the lesson in both windows.</p>
</main>`;
      d.getElementById("n-prev").addEventListener("click", () => click("btn-prev"));
      d.getElementById("n-nextbtn").addEventListener("click", () => click("btn-next"));
      win.addEventListener("keydown", onKey);
      render();
    };
    let seq = 0;
    const render = async () => {
      if (!win || win.closed) return;
      const d = win.document;
      const my = ++seq;
      const next = await nextTitle();
      if (my !== seq || win.closed) return;
      const v = (n, f) => cssVar(n, f);
      d.head.querySelector("style").textContent = `html{background:${v("--bg", "#0f172a")};color:${v("--text", "#e2e8f0")};color-scheme:${L.theme()}}
body{margin:0;font:18px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif}
.notes{padding:1rem 1.25rem;max-width:40rem}
.n-step{color:${v("--muted", "#94a3b8")};margin:0;font-weight:600}
h1{color:${v("--link", "#00e5ff")};font-size:1.5rem;margin:.2rem 0 .6rem}
.n-narration{font-size:1.25rem}
.n-next{border-top:1px solid ${v("--border", "#334155")};margin-top:1rem;padding-top:.6rem}
button{font:inherit;min-height:44px;padding:.3rem .9rem;color:inherit;background:${v("--surface", "#1e293b")};border:1px solid ${v("--border-strong", "#475569")};border-radius:6px}
.n-hint{color:${v("--muted", "#94a3b8")};font-size:.9rem}`;
      d.getElementById("n-step").textContent = text("#step-label");
      d.getElementById("n-title").textContent = text("#step-title");
      d.getElementById("n-narration").textContent = text("#narration");
      d.getElementById("n-next").textContent = next || "(this is the last step)";
    };
    window.addEventListener("pagehide", () => { if (win && !win.closed) win.close(); });
    window.addEventListener("inferlab:theme", () => render());
    return { open, render, nextTitle, get win() { return win; } };
  })();

  window.inferlabPresent = {
    // act runs a toolbar control: "present" (toggles), "notes", "export".
    act(what) {
      if (what === "present") return presenting() ? leave() : enter();
      if (what === "notes") return notes.open();
      if (what === "export") return openExport();
    },
    enter,
    leave,
    // For tests and scripts: the same work the dialog does.
    handout,
    exportImages,
    frames,
    notes,
  };
})();
