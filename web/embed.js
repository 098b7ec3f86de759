// Inference Lab embed helper for host pages (optional).
//
//   <iframe src="https://LAB/embed/garage?step=4" data-inferlab ...></iframe>
//   <script src="https://LAB/web/embed.js" defer></script>
//
// Each embedded lesson posts {type: "inferlab:height", height, slug} to its
// parent page when it loads and whenever its content changes size. This
// script sets the height of the <iframe> that sent the message. It accepts a
// message only when it comes from a lab iframe of this page — an
// iframe[data-inferlab], whose window is event.source — and from that
// iframe's own origin (event.origin against the origin of its src), and
// only in that shape; everything else is ignored: another frame of the page,
// even of the page's own origin, cannot resize itself through this script.
// It adds no globals and runs no inline code, so it works under a strict
// Content-Security-Policy.
(function () {
  "use strict";
  var MAX = 20000; // px: a bound, so a broken frame cannot grow the page without end

  function frameOf(source) {
    var frames = document.querySelectorAll("iframe[data-inferlab]");
    for (var i = 0; i < frames.length; i++) {
      if (frames[i].contentWindow === source) return frames[i];
    }
    return null;
  }

  window.addEventListener("message", function (event) {
    var d = event.data;
    if (!d || typeof d !== "object" || d.type !== "inferlab:height") return;
    var h = Number(d.height);
    if (!isFinite(h) || h <= 0) return;
    var frame = frameOf(event.source);
    if (!frame || !frame.src) return;
    var origin;
    try {
      origin = new URL(frame.src, document.baseURI).origin;
    } catch (e) {
      return;
    }
    if (event.origin !== origin) return;
    frame.style.height = Math.min(Math.ceil(h), MAX) + "px";
    frame.setAttribute("data-inferlab-height", String(Math.min(Math.ceil(h), MAX)));
  });
})();
