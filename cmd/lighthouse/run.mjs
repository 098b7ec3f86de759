// Lighthouse audits of the lab's pages (make lighthouse): every lesson page,
// every embed and the index, each with Lighthouse's mobile preset (simulated
// throttling, its default) and its desktop preset, RUNS times each (default
// 3), a fresh Chromium profile per run; prints the medians of performance,
// accessibility, best practices, total blocking time and largest
// contentful paint, one row per page and preset.
//
//   node run.mjs --base http://127.0.0.1:8090 [--pages /,/lesson/garage] [--runs 3] [--json out.json]
//
// Chromium comes from CHROME_PATH (Debian's /usr/bin/chromium) with the
// flags the project's browser tests use.
import fs from "node:fs";
import lighthouse from "lighthouse";
import desktopConfig from "lighthouse/core/config/desktop-config.js";
import * as chromeLauncher from "chrome-launcher";

const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => {
  if (a.startsWith("--")) acc.push([a.slice(2), all[i + 1] && !all[i + 1].startsWith("--") ? all[i + 1] : "true"]);
  return acc;
}, []));
const base = (args.base || "http://127.0.0.1:8090").replace(/\/$/, "");
const runs = parseInt(args.runs || "3", 10);
let pages = (args.pages || "").split(",").map((p) => p.trim()).filter(Boolean);
if (!pages.length) {
  // Every page the lab prerenders: the index, each lesson and its embed
  // (the sitemap's lesson list is read from the index's links).
  const html = await (await fetch(base + "/")).text();
  const slugs = [...new Set([...html.matchAll(/href="[^"]*\/lesson\/([a-z0-9-]+)/g)].map((m) => m[1]))];
  pages = ["/", ...slugs.flatMap((s) => ["/lesson/" + s, "/embed/" + s])];
}
const flags = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"];

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const audit = async (url, preset) => {
  const chrome = await chromeLauncher.launch({ chromePath: process.env.CHROME_PATH || "/usr/bin/chromium", chromeFlags: flags });
  try {
    const opts = { port: chrome.port, output: "json", logLevel: "error", onlyCategories: ["performance", "accessibility", "best-practices"] };
    const res = await lighthouse(url, opts, preset === "desktop" ? desktopConfig : undefined);
    const lhr = res.lhr;
    if (lhr.runtimeError) throw new Error(lhr.runtimeError.message);
    const score = (c) => Math.round((lhr.categories[c].score ?? 0) * 100);
    return {
      perf: score("performance"), a11y: score("accessibility"), bp: score("best-practices"),
      tbt: lhr.audits["total-blocking-time"].numericValue, lcp: lhr.audits["largest-contentful-paint"].numericValue,
      bytes: lhr.audits["total-byte-weight"].numericValue,
    };
  } finally {
    await chrome.kill();
  }
};

const rows = [];
const pad = (s, n) => String(s).padEnd(n);
const lpad = (s, n) => String(s).padStart(n);
console.log(pad("page", 34) + pad("preset", 9) + lpad("perf", 5) + lpad("a11y", 6) + lpad("bp", 5) + lpad("TBT ms", 8) + lpad("LCP ms", 8) + lpad("KB", 7) + "  (median of " + runs + ")");
for (const p of pages) {
  for (const preset of ["mobile", "desktop"]) {
    const rs = [];
    for (let i = 0; i < runs; i++) {
      try {
        rs.push(await audit(base + p, preset));
      } catch (e) {
        console.error(p, preset, "run", i + 1, "failed:", e.message);
      }
    }
    if (!rs.length) continue;
    const m = {};
    for (const k of ["perf", "a11y", "bp", "tbt", "lcp", "bytes"]) m[k] = median(rs.map((r) => r[k]));
    rows.push({ page: p, preset, ...m, runs: rs });
    console.log(pad(p, 34) + pad(preset, 9) + lpad(m.perf, 5) + lpad(m.a11y, 6) + lpad(m.bp, 5) + lpad(Math.round(m.tbt), 8) + lpad(Math.round(m.lcp), 8) + lpad(Math.round(m.bytes / 1024), 7));
  }
}
if (args.json) fs.writeFileSync(args.json, JSON.stringify(rows, null, 2));
