// Inference Lab: small DOM helpers the Go app calls (a step change costs one
// WebAssembly→JS call instead of one per grid cell), the colour theme, the
// ? and / shortcuts, clipboard and downloads, and the embed's height report.
// A plain file loaded in <head> before the page body (no inline script), so
// the Content-Security-Policy stays script-src 'self', and the theme is set
// before the first paint.
"use strict";
(() => {
  const root = document.documentElement;
  const THEME_KEY = "inferlab-theme";
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
  // Dark by default, the articles' palette (DESIGN.md); light only by choice.
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

  window.inferlab = {
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
        let ok = false;
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
  };

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
