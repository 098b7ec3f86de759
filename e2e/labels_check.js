// The label check's reading of a page (labels_test.go): every text label of
// every figure shown, with its box and the region it may occupy; every
// marked element with the region in which it shows; every chart legend's
// entries with the series drawn. One evaluation per step: it steps (when
// asked), waits until the step is drawn and still, then reads.
//
// Called as (labelsCheck)(options):
//   step      the 1-based step the page must show
//   press     "key": press → first; "click": click #btn-next first; "" none
//   compare   wait for run B's figures too
//   handout   read the handout's figure images instead of the page
//   timeoutMs how long to wait for the step
// It resolves to {error} or {figs: [fig], width}, each fig
//   {id, kind, box, over, labels: [[id, text, l, t, r, b, cl, ct, cr, cb, vl, vt, vr, vb]],
//    marks: [[ref, shown, l, t, r, b, vl, vt, vr, vb, cl, ct, cr, cb]], legends: [{chart, names, drawn, hidden}],
//    hidden: px of content a frame in it scrolls, first: whether it is the main figure}
// where (cl, ct, cr, cb) is the region a label may occupy (its figure, cut
// by every ancestor that clips it; a scrolling frame gives its whole
// scrolled area, which the reader reaches by scrolling) and (vl, vt, vr, vb)
// the region it shows in now (a scrolling frame gives only its view); a
// mark's region is the latter.
(async (o) => {
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  const q = (s) => document.querySelector(s);
  if (o.press === "key") {
    document.activeElement?.blur();
    window.dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowRight", bubbles: true }));
  } else if (o.press === "click") {
    q("#btn-next")?.click();
  }
  const ready = () => {
    // (a page loaded: lab.js brings the served step's marks into view then)
    if (document.readyState !== "complete") return false;
    const lab = q("#lab");
    if (!lab || lab.dataset.step !== String(o.step) || lab.dataset.busy === "true") return false;
    if (o.compare) {
      const b = q("#compare-b");
      if (!b || b.dataset.stale === "true" || !q("#scenes-b figure.scene")) return false;
    }
    return [...document.querySelectorAll("#lab figure.scene .chart")].every((c) => "static" in c.dataset || c.dataset.ready === "true");
  };
  const until = Date.now() + (o.timeoutMs || 15000);
  while (!o.handout && !ready()) {
    if (Date.now() > until) {
      const lab = q("#lab");
      return { error: "step " + o.step + " not drawn: " + JSON.stringify({ step: lab?.dataset.step, busy: lab?.dataset.busy, b: q("#compare-b")?.dataset.stale }) };
    }
    await sleep(20);
  }
  await frame();
  // Still: no transition or animation running (the test asks for reduced
  // motion, so this is at most a cross-fade's last frames).
  for (let i = 0; i < 100 && document.getAnimations().some((a) => a.playState === "running"); i++) await sleep(20);

  const rnd = (v) => Math.round(v * 10) / 10;
  const INF = 1e9;
  const isect = (a, b) => [Math.max(a[0], b[0]), Math.max(a[1], b[1]), Math.min(a[2], b[2]), Math.min(a[3], b[3])];
  const boxOf = (r) => [r.left, r.top, r.right, r.bottom];

  // read measures the figures of one document.
  const read = (doc, figs) => {
    const win = doc.defaultView;
    const out = [];
    for (const fig of figs) {
      if (!fig.getClientRects().length) continue;
      const fb = boxOf(fig.getBoundingClientRect());
      // The region that clips the content of el: its ancestors' clips up
      // to the figure. reach: a scrolling frame gives its scrolled area and
      // ends the walk (it lies in the figure; its content is reached by
      // scrolling), else its view.
      const memo = [new Map(), new Map()];
      const clipOf = (el, reach) => {
        const m = memo[reach ? 1 : 0];
        if (m.has(el)) return m.get(el);
        let reg;
        if (!el || !fig.contains(el)) reg = fb;
        else {
          const cs = win.getComputedStyle(el);
          // Paint containment clips as overflow: hidden does.
          const paint = /paint|strict|content/.test(cs.contain);
          const ox = paint && cs.overflowX === "visible" ? "clip" : cs.overflowX;
          const oy = paint && cs.overflowY === "visible" ? "clip" : cs.overflowY;
          // The figure is the outermost clip (it may scroll itself).
          const up = () => (el === fig ? fb : clipOf(el.parentElement, reach));
          if (ox === "visible" && oy === "visible") reg = el === fig ? fb : up();
          else {
            const r = el.getBoundingClientRect();
            const html = !(el instanceof win.SVGElement);
            // An HTML box clips at its padding box; an SVG viewport at its box.
            const l = r.left + (html ? el.clientLeft : 0), t = r.top + (html ? el.clientTop : 0);
            const w = html ? el.clientWidth : r.width, h = html ? el.clientHeight : r.height;
            const scrollsX = /auto|scroll/.test(ox), scrollsY = /auto|scroll/.test(oy);
            let c = [ox === "visible" ? -INF : l, oy === "visible" ? -INF : t, ox === "visible" ? INF : l + w, oy === "visible" ? INF : t + h];
            if (reach && html && (scrollsX || scrollsY)) {
              if (scrollsX) c = [l - el.scrollLeft, c[1], l - el.scrollLeft + el.scrollWidth, c[3]];
              if (scrollsY) c = [c[0], t - el.scrollTop, c[2], t - el.scrollTop + el.scrollHeight];
              reg = c;
            } else reg = isect(up(), c);
          }
        }
        m.set(el, reg);
        return reg;
      };
      // How far the figure's content runs past a frame that scrolls (the
      // figure, or a frame in it): what the reader must scroll to see.
      let hid = 0;
      for (const e of [fig, ...fig.querySelectorAll("*")]) {
        if (e.scrollHeight <= e.clientHeight + 1 && e.scrollWidth <= e.clientWidth + 1) continue;
        const cs = win.getComputedStyle(e);
        if (/auto|scroll/.test(cs.overflowY)) hid = Math.max(hid, e.scrollHeight - e.clientHeight);
        if (/auto|scroll/.test(cs.overflowX)) hid = Math.max(hid, e.scrollWidth - e.clientWidth);
      }
      const f = { id: fig.dataset.sceneId || "", kind: fig.dataset.kind || "", box: fb.map(rnd), over: Math.max(0, fig.scrollWidth - fig.clientWidth), hidden: hid,
        first: fig === doc.querySelector("#lab .scenes > figure.scene"), labels: [], marks: [], legends: [] };
      const ellMemo = new Map();
      const ellipsisOf = (el) => {
        if (!el || el === fig) return null;
        if (ellMemo.has(el)) return ellMemo.get(el);
        const cs = win.getComputedStyle(el);
        const r = cs.textOverflow === "ellipsis" && cs.overflowX !== "visible" ? el : ellipsisOf(el.parentElement);
        ellMemo.set(el, r);
        return r;
      };
      const ids = new Map();
      const idOf = (el) => {
        if (!ids.has(el)) ids.set(el, ids.size);
        return ids.get(el);
      };
      const out4 = (r) => r.map((v) => (Math.abs(v) >= INF ? v : rnd(v)));
      // A label: its box, the region it may occupy (clip) and the region
      // it shows in now (view: a scrolling frame's part in view). cut
      // bounds the clip (a chart's clip path).
      const push = (el, text, b, clipEl, cut) => {
        if (b[2] - b[0] < 0.5 || b[3] - b[1] < 0.5) return;
        let c = clipOf(clipEl, true), v = clipOf(clipEl, false);
        if (cut) {
          c = isect(c, cut);
          v = isect(v, cut);
        }
        f.labels.push([idOf(el), text.slice(0, 40), ...out4(b), ...out4(c), ...out4(v)]);
      };
      // Text nodes. A callout's text is its chip (the chip covers what is
      // under it); an SVG text is one box per text or tspan element.
      const walker = doc.createTreeWalker(fig, win.NodeFilter.SHOW_TEXT);
      const seenEl = new Set();
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        const text = n.data.trim();
        if (!text) continue;
        const el = n.parentElement;
        if (!el || el.closest("title, script, style, .sr-only, .chart-cursor, .echarts-tooltip")) continue;
        if (!el.checkVisibility({ opacityProperty: true, visibilityProperty: true })) continue;
        const chip = el.closest(".callout, .cs-callout");
        if (chip) {
          if (!seenEl.has(chip)) {
            seenEl.add(chip);
            push(chip, chip.textContent.trim(), boxOf(chip.getBoundingClientRect()), chip.parentElement);
          }
          continue;
        }
        if (el instanceof win.SVGElement) {
          if (seenEl.has(el)) continue;
          seenEl.add(el);
          const tag = el.matches("text.sys-mark-text") ? el.previousElementSibling : null;
          const box = tag && tag.matches("rect.sys-mark-tag") ? tag : el;
          push(el.closest("text") || el, box === el ? el.textContent.trim() : text, boxOf(box.getBoundingClientRect()), el.closest("svg"));
          continue;
        }
        // A text cut with an ellipsis shows only its box's part.
        const ell = ellipsisOf(el);
        const range = doc.createRange();
        range.selectNodeContents(n);
        for (const r of range.getClientRects()) push(n, text, ell ? isect(boxOf(r), boxOf(ell.getBoundingClientRect())) : boxOf(r), el);
      }
      // ECharts: the texts it drew (axis labels and names, legend, point
      // and guide labels), from its display list, in the chart's box.
      for (const c of fig.querySelectorAll(".chart")) {
        const inst = win.echarts && win.echarts.getInstanceByDom(c);
        if (!inst) continue;
        const cb = c.getBoundingClientRect();
        const zrIds = new Map();
        for (const el of inst.getZr().storage.getDisplayList(true)) {
          if (el.type !== "tspan" || el.invisible || !el.style || !String(el.style.text ?? "").trim()) continue;
          if (el.style.opacity === 0) continue;
          const r = el.getBoundingRect().clone();
          // zrender measures a line's height as the width of a CJK glyph,
          // which a browser without CJK fonts draws 0.6 em wide: the
          // glyphs' height is taken from the font's size instead.
          const fs = parseFloat((/(\d+(?:\.\d+)?)px/.exec(el.style.font || "") || [0, 12])[1]);
          r.y += r.height / 2 - 0.575 * fs;
          r.height = 1.15 * fs;
          if (el.transform) r.applyTransform(el.transform);
          // A clip path (a scrolling legend's page, the plot) cuts it: a
          // text it hides entirely is not drawn; one it cuts is cut off.
          let clip = [0, 0, cb.width, cb.height];
          for (const cp of el.__clipPaths || []) {
            const k = cp.getBoundingRect().clone();
            if (cp.transform) k.applyTransform(cp.transform);
            clip = isect(clip, [k.x, k.y, k.x + k.width, k.y + k.height]);
          }
          const b = [r.x, r.y, r.x + r.width, r.y + r.height];
          const vis = isect(b, clip);
          if (vis[2] - vis[0] < 1 || vis[3] - vis[1] < 1) continue;
          const owner = el.parent || el;
          if (!zrIds.has(owner)) zrIds.set(owner, { id: "zr" + zrIds.size });
          const at = (q) => [cb.left + q[0], cb.top + q[1], cb.left + q[2], cb.top + q[3]];
          push(zrIds.get(owner), String(el.style.text), at(b), c, at(clip));
        }
        // The legend's entries and the series each draws: its points in
        // pixels. A series whose every point lies within 2.5 px of a point
        // of a series drawn after it is hidden under that one.
        const opt = inst.getOption();
        const names = [];
        for (const lg of opt.legend || []) {
          if (lg.show === false) continue;
          const data = lg.data && lg.data.length ? lg.data : (opt.series || []).map((s) => s.name);
          for (const d of data) names.push(typeof d === "string" ? d : d.name);
        }
        const pts = (opt.series || []).map((s, i) => {
          const out = [];
          for (const d of s.data || []) {
            const v = d && typeof d === "object" && !Array.isArray(d) ? d.value : d;
            const xy = Array.isArray(v) ? v : [out.length, v];
            if (!xy.every((x) => typeof x === "number" && isFinite(x)) && !(typeof xy[0] === "string" && isFinite(xy[1]))) continue;
            const p = inst.convertToPixel({ seriesIndex: i }, xy);
            if (p && isFinite(p[0]) && isFinite(p[1])) out.push(p);
          }
          return out;
        });
        // Bars of a category stand side by side (unless stacked):
        // convertToPixel gives the category's centre, not the bar's, so a
        // bar neither hides nor is hidden by another series.
        const sideBySide = (s) => s.type === "bar" && !s.stack;
        const drawn = [], hidden = [];
        (opt.series || []).forEach((s, i) => {
          if (!pts[i].length) return;
          drawn.push(s.name);
          if (sideBySide(s)) return;
          const under = pts[i].every(([x, y]) => pts.some((o, j) => j > i && !sideBySide(opt.series[j]) && o.some(([x2, y2]) => Math.abs(x2 - x) < 1 && Math.abs(y2 - y) < 2.5)));
          if (under) hidden.push(s.name);
        });
        f.legends.push({ chart: c.id, names, drawn, hidden });
      }
      // A prerendered chart's legend (app/chart_static.go): each key names
      // series data-series=I, which must draw a line, a bar or a dot.
      for (const st of fig.querySelectorAll(".chart-static")) {
        const names = [], drawn = [];
        for (const k of st.querySelectorAll(".cs-legend .cs-key")) {
          const name = k.textContent.trim();
          names.push(name);
          const i = k.dataset.series;
          const els = [...st.querySelectorAll('.cs-plot [data-series="' + i + '"]')];
          if (els.some((e) => e.getClientRects().length && (e.getBoundingClientRect().width > 0 || e.getBoundingClientRect().height > 0))) drawn.push(name);
        }
        f.legends.push({ chart: st.parentElement?.id || "static", names, drawn, hidden: [] });
      }
      // A ref may be drawn twice (a picture's wide and narrow layouts, one
      // of them not displayed): each drawing is listed with whether it is.
      for (const el of fig.querySelectorAll(".marked[data-ref]")) {
        const b = boxOf(el.getBoundingClientRect());
        const shown = el.getClientRects().length > 0 && el.checkVisibility({ opacityProperty: true, visibilityProperty: true });
        f.marks.push([el.dataset.ref, shown ? 1 : 0, ...out4(b), ...out4(clipOf(el.parentElement, false)), ...out4(clipOf(el.parentElement, true))]);
      }
      out.push(f);
    }
    return out;
  };

  if (!o.handout) {
    return { width: document.documentElement.clientWidth, figs: read(document, document.querySelectorAll("#lab figure.scene")) };
  }
  // The handout: each figure image of step o.step (an SVG holding the
  // figure's markup with its styles inlined) drawn in an empty frame, read
  // there as the image shows it.
  const sec = document.querySelectorAll("#handout .handout-step")[o.step - 1];
  if (!sec) return { error: "no handout page " + o.step };
  const figs = [];
  for (const img of sec.querySelectorAll(".handout-figures img")) {
    const svg = decodeURIComponent(img.src.slice(img.src.indexOf(",") + 1));
    const fr = document.createElement("iframe");
    fr.style.cssText = "position:absolute;left:0;top:0;border:0;visibility:hidden";
    const w = +(svg.match(/viewBox="0 0 (\d+) (\d+)"/) || [0, 800, 600])[1];
    const h = +(svg.match(/viewBox="0 0 (\d+) (\d+)"/) || [0, 800, 600])[2];
    fr.width = String(w);
    fr.height = String(h);
    document.body.appendChild(fr);
    const d = fr.contentDocument;
    d.open();
    // At the figure's own size (the image is drawn at twice it).
    d.write("<!doctype html><html><body style='margin:0'>" + svg.replace(/^<svg ([^>]*?)width="\d+" height="\d+"/, '<svg style="display:block" $1width="' + w + '" height="' + h + '"') + "</body></html>");
    d.close();
    await new Promise((r) => requestAnimationFrame(r));
    // The copy of the figure: its visibility is the frame's (hidden), so
    // read as if shown.
    d.documentElement.style.visibility = "visible";
    figs.push(...read(d, d.querySelectorAll("figure.scene")));
    fr.remove();
  }
  return { width: 0, figs };
})
