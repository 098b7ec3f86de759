// Unit tests of the player's stepping (web/lab.js inferlabStepping), the
// one the prerendered page and the app share, with a view that records
// what it is asked to draw and a clock the test moves by hand.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const { keyAction, delayOf, createStepper, motionGap, urlSettle } = require("../web/lab.js");

// clock runs timers when the test moves time on.
const clock = () => {
  let now = 1000;
  let id = 0;
  const timers = new Map();
  return {
    now: () => now,
    set: (f, ms) => {
      timers.set(++id, { at: now + ms, f });
      return id;
    },
    clear: (i) => timers.delete(i),
    // tick moves time on by ms, running each timer due on the way, in order.
    tick(ms) {
      const end = now + ms;
      for (;;) {
        let next = null;
        for (const [i, t] of timers) if (t.at <= end && (!next || t.at < next[1].at)) next = [i, t];
        if (!next) break;
        timers.delete(next[0]);
        now = next[1].at;
        next[1].f();
      }
      now = end;
    },
  };
};

// page is a view of n steps; questions lists the 0-based steps whose
// drawing asks a question. It draws what it is shown at once (the
// prerendered page) unless lazy, when draw() does (the app renders later).
const page = (n, { questions = [], lazy = false } = {}) => {
  const p = {
    n, step: 0, seq: -1, playing: false, shows: [], urls: [], pending: false, motions: [], asked: 0, queued: null,
    count: () => p.n,
    drawn: () => ({ step: p.step, seq: p.seq, playing: p.playing }),
    show(step, state, seq) {
      p.shows.push(step);
      const apply = () => Object.assign(p, { step, seq, playing: state.playing });
      if (lazy) p.queued = apply;
      else apply();
    },
    draw() {
      if (p.queued) p.queued();
      p.queued = null;
    },
    motion: (jump) => p.motions.push(jump),
    url: (step) => p.urls.push(step),
    urlPending: (on) => { p.pending = on; },
    asks: () => questions.includes(p.step),
    ask: () => { p.asked++; },
    delayMs: () => 1600,
  };
  return p;
};

test("keys: arrows, Home and End step; space plays; form fields and focused controls keep theirs", () => {
  const cases = [
    ["ArrowRight", "", "next"], ["ArrowLeft", "BODY", "prev"], ["Home", "", "first"], ["End", "DIV", "last"],
    [" ", "", "play"], ["Spacebar", "SVG", "play"], [" ", "BUTTON", ""], [" ", "A", ""], [" ", "SUMMARY", ""],
    ["ArrowRight", "INPUT", ""], ["Home", "SELECT", ""], ["End", "TEXTAREA", ""], ["ArrowRight", "BUTTON", "next"],
    ["Enter", "", ""], ["p", "", ""],
  ];
  for (const [key, tag, want] of cases) assert.equal(keyAction(key, tag), want, key + " on " + (tag || "nothing"));
});

test("delay per step at a speed; anything but a positive number is 1×", () => {
  const cases = { "": 1600, 1: 1600, 2: 800, "0.5": 3200, 4: 400, x: 1600, "-1": 1600, 0: 1600, Infinity: 1600 };
  for (const [speed, want] of Object.entries(cases)) assert.equal(delayOf(speed, 1600), want, "speed " + speed);
});

test("go clamps to the steps and reports whether the step changed", () => {
  const c = clock();
  const cases = [
    // [n, from, to, want, moved]
    [5, 0, 1, 1, true], [5, 2, 2, 2, false], [5, 3, 9, 4, true], [5, 2, -3, 0, true], [5, 4, 7, 4, false], [0, 0, 3, 0, false],
  ];
  for (const [n, from, to, want, moved] of cases) {
    const p = page(n);
    const s = createStepper(p, c);
    if (from) s.place(from);
    assert.equal(s.go(to), moved, `${n} steps, ${from} → ${to}`);
    assert.equal(p.step, want, `${n} steps, ${from} → ${to}: step drawn`);
  }
});

test("step changes closer than motionGap jump; the first after a pause animates", () => {
  const c = clock();
  const p = page(20);
  const s = createStepper(p, c);
  s.move(1); // the first change animates
  c.tick(40);
  s.move(1); // a held key
  c.tick(40);
  s.move(1);
  assert.deepEqual(p.motions, [false, true, true]);
  c.tick(motionGap - 1);
  assert.deepEqual(p.motions, [false, true, true], "jumping ends only once stepping pauses for motionGap");
  c.tick(1);
  assert.deepEqual(p.motions, [false, true, true, false], "motion back after the pause");
  c.tick(400);
  s.move(1); // playback at 4×: animates
  assert.equal(p.motions.at(-1), false);
});

test("the address is written once stepping pauses, with the latest step", () => {
  const c = clock();
  const p = page(10);
  const s = createStepper(p, c);
  for (let i = 0; i < 6; i++) {
    s.move(1);
    c.tick(100);
  }
  assert.deepEqual(p.urls, [], "no write while the steps come closer than urlSettle");
  assert.equal(p.pending, true);
  c.tick(urlSettle);
  assert.deepEqual(p.urls, [6]);
  assert.equal(p.pending, false);
  s.go(6); // the step shown: nothing to write
  c.tick(urlSettle);
  assert.deepEqual(p.urls, [6]);
});

test("playback advances one step per delay, stops before a question, plays past it when asked, ends at the last step", () => {
  const c = clock();
  const p = page(4, { questions: [1] }); // step 2's drawing asks step 3's question
  const s = createStepper(p, c);
  s.toggle();
  assert.equal(p.playing, true);
  c.tick(1600);
  assert.equal(p.step, 1);
  s.drawn(); // the page drew step 2: it asks
  assert.equal(p.playing, false, "stopped at the question");
  assert.equal(p.asked, 1, "the question was shown and focused");
  c.tick(5000);
  assert.equal(p.step, 1, "no tick after the stop");
  s.toggle(); // play again where it stopped: on past the question
  c.tick(1600);
  assert.equal(p.step, 2);
  s.drawn();
  c.tick(1600);
  assert.equal(p.step, 3);
  s.drawn();
  c.tick(1600);
  assert.equal(p.playing, false, "stopped at the end");
  s.toggle(); // at the end: from the first step
  assert.equal(p.step, 0);
  assert.equal(p.playing, true);
  s.toggle(); // pause
  c.tick(5000);
  assert.equal(p.step, 0, "a paused player does not step");
});

test("play at a question playback did not stop at asks it at once", () => {
  const c = clock();
  const p = page(4, { questions: [1] });
  const s = createStepper(p, c);
  s.go(1); // the learner stepped to it by hand
  s.toggle();
  c.tick(1600);
  assert.equal(p.step, 1, "playback stays at the question");
  assert.equal(p.playing, false);
  assert.equal(p.asked, 1);
});

test("speed sets the delay of the next step", () => {
  const c = clock();
  const p = page(10);
  const s = createStepper(p, c);
  s.speed("4");
  s.toggle();
  c.tick(400);
  assert.equal(p.step, 1);
  c.tick(400);
  assert.equal(p.step, 2);
});

test("a view that draws later: quick presses count from the step asked, not the one drawn; the view's own moves are taken once it has drawn", () => {
  const c = clock();
  const p = page(10, { lazy: true });
  const s = createStepper(p, c);
  s.move(1);
  s.move(1); // before the view drew step 2
  assert.deepEqual(p.shows, [1, 2]);
  p.draw();
  assert.equal(p.step, 2);
  // The view moves by itself (a question answered reveals step 5).
  Object.assign(p, { step: 4 });
  s.move(1);
  assert.equal(p.shows.at(-1), 5, "stepped on from the view's step");
  // A view that stops playback by itself (a new run): the player sees it.
  p.draw();
  s.toggle();
  p.draw();
  assert.equal(p.playing, true);
  p.playing = false;
  c.tick(1600);
  assert.equal(p.shows.at(-1), 5, "no step after the view stopped playback");
});

test("attach hands the state to a new view, unless it drew more lately than the player asked", () => {
  const c = clock();
  const p = page(10);
  const s = createStepper(p, c);
  s.go(3);
  // The app takes over, drawn at the step its address named (seq -1):
  // the player's step wins.
  Object.assign(p, { step: 0, seq: -1 });
  s.attach();
  assert.equal(p.step, 3);
  // Nothing asked before (a page opened with ?step=5 by the app itself).
  const q = page(10);
  const t = createStepper(q, c);
  Object.assign(q, { step: 4, seq: 0 });
  t.attach();
  assert.equal(q.step, 4);
});
