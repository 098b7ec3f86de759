// Inference Lab: two small DOM helpers the Go app calls once per step, so a
// step change costs one WebAssembly→JS call instead of one per grid cell.
// A plain file (no inline script), so the Content-Security-Policy stays
// script-src 'self'.
"use strict";
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
};
