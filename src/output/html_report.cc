#include "output/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "output/stats_writers.h"
#include "output/summary.h"
#include "util/text.h"

namespace ppt {

// ---------------------------------------------------------------------------
// SHA-256 (FIPS 180-4). Hand-written because no library in our dependency
// list offers it and the page's CSP needs the hash of its own script; it runs
// once per process on a few kilobytes, so clarity over speed.

std::string sha256(std::string_view data) {
  static constexpr uint32_t k[64] = {
      0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
      0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
      0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
      0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
      0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
      0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
      0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
      0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
  uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  auto rotr = [](uint32_t x, int n) { return (x >> n) | (x << (32 - n)); };
  std::string msg(data);
  uint64_t bits = static_cast<uint64_t>(data.size()) * 8;
  msg.push_back(static_cast<char>(0x80));
  while (msg.size() % 64 != 56) msg.push_back(0);
  for (int i = 7; i >= 0; --i) msg.push_back(static_cast<char>((bits >> (i * 8)) & 0xff));
  for (size_t off = 0; off < msg.size(); off += 64) {
    uint32_t w[64];
    for (int i = 0; i < 16; ++i) {
      const auto* p = reinterpret_cast<const unsigned char*>(msg.data() + off + i * 4);
      w[i] = (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
    }
    for (int i = 16; i < 64; ++i) {
      uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int i = 0; i < 64; ++i) {
      uint32_t S1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
      uint32_t ch = (e & f) ^ (~e & g);
      uint32_t t1 = hh + S1 + ch + k[i] + w[i];
      uint32_t S0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
      uint32_t mj = (a & b) ^ (a & c) ^ (b & c);
      uint32_t t2 = S0 + mj;
      hh = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
  }
  std::string out(32, '\0');
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 4; ++j) out[i * 4 + j] = static_cast<char>((h[i] >> (24 - j * 8)) & 0xff);
  }
  return out;
}

std::string base64(std::string_view data) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < data.size(); i += 3) {
    uint32_t v = (uint32_t{static_cast<unsigned char>(data[i])} << 16) |
                 (uint32_t{static_cast<unsigned char>(data[i + 1])} << 8) | static_cast<unsigned char>(data[i + 2]);
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (i + 1 == data.size()) {
    uint32_t v = uint32_t{static_cast<unsigned char>(data[i])} << 16;
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == data.size()) {
    uint32_t v = (uint32_t{static_cast<unsigned char>(data[i])} << 16) |
                 (uint32_t{static_cast<unsigned char>(data[i + 1])} << 8);
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

// ---------------------------------------------------------------------------
// The page script. It reads only data attributes and writes only attributes
// and textContent.

namespace {

constexpr const char* kScript = R"JS(
(function () {
  'use strict';
  var NS = 'http://www.w3.org/2000/svg';
  var root = document.documentElement;
  function fields(el) {
    var f = {};
    if (el) el.querySelectorAll('[data-field]').forEach(function (x) { f[x.getAttribute('data-field')] = x; });
    return f;
  }
  var card = document.getElementById('ppt-card'), field = fields(card);
  var pin = document.getElementById('ppt-pin'), pinField = fields(pin);
  var toolbars = document.querySelectorAll('.toolbar');
  function num(s) { var v = parseFloat(s); return isFinite(v) ? v : 0; }
  function ms(us) {
    var v = num(us) / 1000;
    return (Math.abs(v) >= 1000 ? v.toFixed(1) : v.toFixed(3)) + ' ms';
  }
  function niceStep(x) {
    if (!(x > 0)) return 1;
    var m = Math.pow(10, Math.floor(Math.log10(x))), f = x / m;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * m;
  }
  function tickLabel(tUs, stepUs) {
    var unit = 'µs', div = 1;
    if (stepUs >= 100000) { unit = 's'; div = 1e6; } else if (stepUs >= 100) { unit = 'ms'; div = 1e3; }
    var d = Math.max(0, Math.ceil(-Math.log10(stepUs / div) - 1e-9));
    return (tUs / div).toFixed(Math.min(d, 9)) + ' ' + unit;
  }
  function el(name, attrs) {
    var e = document.createElementNS(NS, name);
    Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    return e;
  }

  // A view: one run of one picture. a and b (the visible range) are in the
  // picture's own plot units, 0 to w0 (its width as written); w is the plot
  // width on the page now, set by relayout() from the window's width.
  var views = [];
  document.querySelectorAll('svg.ppt-timeline g.run').forEach(function (g, i) {
    var svg = g.ownerSVGElement;
    var w0 = num(g.getAttribute('data-plot-w'));
    var v = {
      g: g, svg: svg, w0: w0, w: w0, x0: num(g.getAttribute('data-plot-x')),
      t0: num(g.getAttribute('data-t0-us')), span: num(g.getAttribute('data-span-us')),
      a: 0, b: w0, group: svg.getAttribute('data-sync') || ('v' + i),
      zooms: g.querySelectorAll('g.zoom'), labels: g.querySelectorAll('text.step-label'),
      jobLabels: g.querySelectorAll('g.job-labels text'),
      axis: g.querySelector('g.axis'), rows: g.querySelector('g.rows'), head: null, headY: 0, headH: 0
    };
    // The axis and the step numbers move into one group drawn last, so that
    // they can stay at the top of the window over the rows (stick()).
    var parts = [v.axis, g.querySelector('g.step-labels'), g.querySelector('text.steps-caption')];
    if (v.axis) {
      var m = /translate\(([-0-9.e]+),([-0-9.e]+)\)/.exec(v.axis.getAttribute('transform') || '');
      v.headY = m ? num(m[2]) : 0;
      var rm = v.rows && /translate\(([-0-9.e]+),([-0-9.e]+)\)/.exec(v.rows.getAttribute('transform') || '');
      v.headH = (rm ? num(rm[2]) : v.headY + 38) - v.headY;
      v.head = el('g', { 'class': 'sticky-head' });
      v.headBg = el('rect', { 'class': 'sticky-bg', x: 0, y: v.headY - 2, height: v.headH - 2, fill: '#fff' });
      v.head.appendChild(v.headBg);
      parts.forEach(function (p) { if (p) v.head.appendChild(p); });
      g.appendChild(v.head);
    }
    views.push(v);
  });

  function drawAxis(v) {
    var ax = v.axis;
    if (!ax) return;
    while (ax.firstChild) ax.removeChild(ax.firstChild);
    ax.appendChild(el('line', { 'class': 'axis-line', x1: 0, x2: v.w, y1: 20, y2: 20, stroke: '#888' }));
    var from = v.t0 + v.a / v.w0 * v.span, to = v.t0 + v.b / v.w0 * v.span;
    var step = niceStep((to - from) / Math.max(2, v.w / 110));
    for (var t = Math.ceil(from / step) * step; t <= to + step * 1e-9; t += step) {
      var x = (t - from) / (to - from) * v.w;
      var g = el('g', { 'class': 'tick' });
      g.appendChild(el('line', { x1: x, x2: x, y1: 15, y2: 20, stroke: '#888' }));
      var tx = el('text', { x: x, y: 12, 'text-anchor': 'middle', 'font-size': '10', fill: '#555' });
      tx.textContent = tickLabel(t, step);
      g.appendChild(tx); ax.appendChild(g);
    }
  }

  function apply(v) {
    var k = v.w / (v.b - v.a), tx = -v.a * k;
    var tr = 'translate(' + tx + ',0) scale(' + k + ',1)';
    v.zooms.forEach(function (z) { z.setAttribute('transform', tr); });
    // Block labels sit inside the zoomed groups: undo the horizontal scale on
    // each so its text keeps its size, and show it only while its block
    // (data-w, in picture units) is wide enough for it.
    v.jobLabels.forEach(function (t) {
      var x = num(t.getAttribute('x'));
      var fits = t.textContent.length * 6.2 + 4 <= num(t.getAttribute('data-w')) * k;
      t.setAttribute('visibility', fits ? 'visible' : 'hidden');
      if (fits) t.setAttribute('transform', 'translate(' + x + ',0) scale(' + (1 / k) + ',1) translate(' + (-x) + ',0)');
    });
    var lastEnd = -1e9;
    v.labels.forEach(function (e) {
      var x = num(e.getAttribute('data-x')) * k + tx;
      var w = e.textContent.length * 6.6 + 6;
      var show = x >= lastEnd && x >= -2 && x + w <= v.w + 4;
      e.setAttribute('x', x);
      e.setAttribute('visibility', show ? 'visible' : 'hidden');
      if (show) lastEnd = x + w;
    });
    drawAxis(v);
  }

  // The picture fills its box at one user unit per pixel, so its text keeps
  // its size at any window width; below a 360 px plot it scrolls sideways.
  // Pictures zoomed together share one plot width (one time scale).
  function relayout() {
    var width = {};
    views.forEach(function (v) {
      var box = v.svg.parentNode;
      var avail = box && box.clientWidth ? box.clientWidth : v.x0 + v.w0 + 16;
      var w = Math.max(360, Math.floor(avail - v.x0 - 16));
      width[v.group] = Math.min(width[v.group] || Infinity, w);
    });
    var done = [];
    views.forEach(function (v) {
      v.w = width[v.group];
      var svg = v.svg;
      if (done.indexOf(svg) < 0) {
        done.push(svg);
        var h = num(svg.getAttribute('height'));
        var total = 0;
        svg.querySelectorAll('g.run').forEach(function (g) {
          total = Math.max(total, num(g.getAttribute('data-plot-x')) + width[v.group] + 16);
        });
        svg.setAttribute('width', total);
        svg.setAttribute('viewBox', '0 0 ' + total + ' ' + h);
        var bg = svg.querySelector('rect.background');
        if (bg) bg.setAttribute('width', total);
        svg.querySelectorAll('clipPath rect').forEach(function (r) { r.setAttribute('width', v.w); });
      }
      if (v.headBg) v.headBg.setAttribute('width', v.x0 + v.w + 16);
      apply(v);
    });
    stick();
  }

  // Keeps each run's axis and step numbers in view while its rows scroll
  // under the window's top edge (below the sticky toolbar).
  function stick() {
    var top = 0;
    toolbars.forEach(function (t) {
      var r = t.getBoundingClientRect();
      if (r.top <= 1 && r.bottom > top) top = r.bottom;
    });
    views.forEach(function (v) {
      if (!v.head) return;
      var ctm = v.g.getScreenCTM();
      if (!ctm) return;
      var natural = ctm.f + v.headY * ctm.d;
      var rowsBox = v.rows ? v.rows.getBoundingClientRect() : null;
      var dy = 0;
      if (natural < top && rowsBox) {
        dy = Math.min((top - natural) / ctm.d, Math.max(0, (rowsBox.bottom - natural) / ctm.d - v.headH - 20));
      }
      v.head.setAttribute('transform', 'translate(0,' + dy + ')');
      v.head.classList.toggle('stuck', dy > 0);
    });
  }
  var frame = 0;
  function later(fn) {
    if (frame) return;
    frame = requestAnimationFrame(function () { frame = 0; fn(); });
  }
  window.addEventListener('scroll', function () { later(stick); }, { passive: true });
  window.addEventListener('resize', function () { later(relayout); });

  function setView(src, a, b) {
    var minW = src.w0 / 100000;
    if (b - a < minW) { var c = (a + b) / 2; a = c - minW / 2; b = c + minW / 2; }
    if (b - a >= src.w0) { a = 0; b = src.w0; }
    if (a < 0) { b -= a; a = 0; }
    if (b > src.w0) { a -= b - src.w0; b = src.w0; }
    views.forEach(function (v) {
      if (v.group !== src.group) return;
      v.a = a * v.w0 / src.w0; v.b = b * v.w0 / src.w0;
      apply(v);
    });
  }
  function zoomAt(v, u, f) { setView(v, u - (u - v.a) / f, u + (v.b - u) / f); }

  function viewAt(e) {
    for (var i = 0; i < views.length; ++i) {
      var v = views[i];
      if (!v.g.contains(e.target)) continue;
      var ctm = v.svg.getScreenCTM();
      if (!ctm) return null;
      var pt = v.svg.createSVGPoint();
      pt.x = e.clientX; pt.y = e.clientY;
      var p = pt.matrixTransform(ctm.inverse());
      var px = p.x - v.x0;
      if (px < 0 || px > v.w) return null;
      return { v: v, u: v.a + px / v.w * (v.b - v.a), scale: ctm.a };
    }
    return null;
  }

  document.addEventListener('wheel', function (e) {
    if (!(e.ctrlKey || e.metaKey || e.shiftKey)) return;
    var h = viewAt(e);
    if (!h) return;
    e.preventDefault();
    if (e.shiftKey && !e.ctrlKey && !e.metaKey) {
      var d = (e.deltaY || e.deltaX) / h.scale * (h.v.b - h.v.a) / h.v.w;
      setView(h.v, h.v.a + d, h.v.b + d);
    } else {
      zoomAt(h.v, h.u, Math.exp(-e.deltaY * 0.002));
    }
  }, { passive: false });

  var drag = null, dragged = false;
  document.addEventListener('mousedown', function (e) {
    if (e.button !== 0) return;
    var h = viewAt(e);
    if (!h) return;
    drag = { v: h.v, x: e.clientX, a: h.v.a, b: h.v.b, scale: h.scale };
    dragged = false;
    e.preventDefault();
  });
  document.addEventListener('mousemove', function (e) {
    if (!drag) return;
    if (Math.abs(e.clientX - drag.x) > 3) dragged = true;
    var d = -(e.clientX - drag.x) / drag.scale * (drag.b - drag.a) / drag.v.w;
    setView(drag.v, drag.a + d, drag.b + d);
  });
  document.addEventListener('mouseup', function () { drag = null; });
  document.addEventListener('dblclick', function (e) {
    var h = viewAt(e);
    if (h) zoomAt(h.v, h.u, e.shiftKey ? 0.5 : 2);
  });
  function zoomAll(f) {
    var seen = {};
    views.forEach(function (v) {
      if (seen[v.group]) return;
      seen[v.group] = true;
      if (f === 0) setView(v, 0, v.w0); else zoomAt(v, (v.a + v.b) / 2, f);
    });
  }
  document.querySelectorAll('button[data-zoom]').forEach(function (b) {
    b.addEventListener('click', function () {
      var z = b.getAttribute('data-zoom');
      zoomAll(z === 'in' ? 2 : z === 'out' ? 0.5 : 0);
    });
  });

  // The critical path overlay (g.critical-path in the pictures): shown until
  // toggled off; the class on the page root hides it (the style sheet).
  var cpButtons = document.querySelectorAll('button[data-toggle="critical-path"]');
  var hasCp = document.querySelector('.critical-path') !== null;
  function toggleCritical() {
    var off = document.documentElement.classList.toggle('ppt-no-critical');
    cpButtons.forEach(function (b) { b.setAttribute('aria-pressed', off ? 'false' : 'true'); });
    return !off;
  }
  cpButtons.forEach(function (b) {
    b.hidden = !hasCp;
    b.addEventListener('click', toggleCritical);
  });

  // The cards. A job's fields, filled from its rectangle as text.
  function fill(f, r) {
    var row = r.closest('g.rank');
    var mb = r.getAttribute('data-mb');
    function set(name, text) { if (f[name]) f[name].textContent = text; }
    set('job', r.getAttribute('data-name'));
    set('id', r.getAttribute('data-job'));
    set('rank', row ? row.getAttribute('data-label') : '');
    set('type', r.getAttribute('data-type'));
    set('mb', mb === '-1' ? '(none)' : mb);
    set('step', r.getAttribute('data-step'));
    set('start', ms(r.getAttribute('data-start-us')));
    set('dur', ms(r.getAttribute('data-dur-us')));
    set('src', (row ? row.getAttribute('data-src') : '') + ':' + r.getAttribute('data-line'));
    return set;
  }
  function place(c, x, y, fixed) {
    var r = c.getBoundingClientRect();
    var vx = fixed ? x : x - window.scrollX, vy = fixed ? y : y - window.scrollY;
    if (vx + 14 + r.width > window.innerWidth - 4) x -= r.width + 28;
    if (vy + 14 + r.height > window.innerHeight - 4) y -= r.height + 28;
    c.style.left = Math.max(fixed ? 4 : window.scrollX + 4, x + 14) + 'px';
    c.style.top = Math.max(fixed ? 4 : window.scrollY + 4, y + 14) + 'px';
  }
  function isJob(t) { return t && t.classList && t.classList.contains('job'); }
  document.addEventListener('mouseover', function (e) {
    if (!card || drag || !isJob(e.target)) return;
    fill(field, e.target);
    card.hidden = false;
    place(card, e.clientX, e.clientY, true);
  });
  document.addEventListener('mousemove', function (e) { if (card && !card.hidden) place(card, e.clientX, e.clientY, true); });
  document.addEventListener('mouseout', function (e) { if (card && isJob(e.target)) card.hidden = true; });

  // Click: pin the job's card and mark its micro-batch on every rank of the
  // run (same step and micro-batch, and chunk when the picture gives one; a
  // job without a micro-batch marks the jobs of its type in the step).
  var pinned = null, marked = [];
  function unpin() {
    marked.forEach(function (r) { r.classList.remove('hl'); r.classList.remove('pinned'); });
    marked = [];
    views.forEach(function (v) { v.svg.classList.remove('ppt-hl-on'); });
    pinned = null;
    if (pin) pin.hidden = true;
  }
  function pinJob(r, x, y) {
    unpin();
    var run = r.closest('g.run');
    if (!run || !pin) return;
    var step = r.getAttribute('data-step'), mb = r.getAttribute('data-mb');
    var type = r.getAttribute('data-type'), chunk = r.getAttribute('data-chunk');
    var ranks = {};
    run.querySelectorAll('rect.job').forEach(function (o) {
      if (o.getAttribute('data-step') !== step || o.getAttribute('data-mb') !== mb) return;
      if (mb === '-1' && o.getAttribute('data-type') !== type) return;
      if (chunk !== null && o.getAttribute('data-chunk') !== chunk) return;
      o.classList.add('hl');
      marked.push(o);
      var row = o.closest('g.rank');
      if (row) ranks[row.getAttribute('data-rank')] = true;
    });
    r.classList.add('pinned');
    r.ownerSVGElement.classList.add('ppt-hl-on');
    pinned = r;
    var n = Object.keys(ranks).length;
    var set = fill(pinField, r);
    set('peers', marked.length + ' job' + (marked.length === 1 ? '' : 's') + ' on ' + n + ' rank' + (n === 1 ? '' : 's') +
        (mb === '-1' ? ' (this type, this step)' : ''));
    pin.hidden = false;
    place(pin, x + window.scrollX, y + window.scrollY, false);
  }
  document.addEventListener('click', function (e) {
    var t = e.target;
    if (pin && pin.contains(t)) {
      if (t.closest('[data-pin-close]')) unpin();
      return;
    }
    if (dragged) { dragged = false; return; }
    if (isJob(t)) { if (card) card.hidden = true; pinJob(t, e.clientX, e.clientY); }
    else if (t.closest && t.closest('svg.ppt-timeline')) unpin();
  });
  document.addEventListener('keydown', function (e) {
    var t = e.target && e.target.tagName;
    if (t === 'INPUT' || t === 'TEXTAREA' || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === '+' || e.key === '=') zoomAll(2);
    else if (e.key === '-') zoomAll(0.5);
    else if (e.key === '0') zoomAll(0);
    else if (e.key === 'Escape') unpin();
    else if ((e.key === 'c' || e.key === 'C') && hasCp) toggleCritical();
  });

  relayout();

  // With #ppt-selftest=N in the address, drive zoom, pan, the hover card and
  // the pinned card (on the N-th job rectangle), the critical path toggle and
  // the sticky axis through the handlers above, and record what they did and
  // the page's layout in body[data-selftest]: the browser tests read it back,
  // as events cannot be sent to a headless --dump-dom page.
  var self = /^#ppt-selftest=(\d+)$/.exec(location.hash);
  if (self && views.length) {
    var v = views[0], out = {};
    var jobs = document.querySelectorAll('rect.job');
    var job = jobs[Math.min(parseInt(self[1], 10), jobs.length - 1)];
    var z = function () { return v.zooms[0] ? v.zooms[0].getAttribute('transform') : ''; };
    var box = function (e) { var r = e.getBoundingClientRect(); return { top: r.top, bottom: r.bottom, left: r.left, width: r.width }; };
    out.window = { width: window.innerWidth, height: window.innerHeight, scrollWidth: document.documentElement.scrollWidth };
    out.wide = [];
    document.querySelectorAll('body *').forEach(function (e) {
      if (out.wide.length < 5 && !(e.ownerSVGElement) && e.getBoundingClientRect().right > window.innerWidth + 0.5) {
        out.wide.push(e.tagName + '.' + e.className);
      }
    });
    out.svg = box(v.svg);
    out.plotW = v.w;
    out.fit = v.w / v.w0;
    var ov = document.getElementById('overview');
    out.overview = ov ? box(ov) : null;
    // Block labels: how many show, and the widest one's screen width against
    // its own (unscaled) text width, before and after zooming in.
    var labelState = function () {
      var shown = 0, ratio = 0;
      v.jobLabels.forEach(function (t) {
        if (t.getAttribute('visibility') === 'hidden') return;
        ++shown;
        var own = t.getComputedTextLength();
        if (own > 0) ratio = Math.max(ratio, t.getBoundingClientRect().width / own);
      });
      return { total: v.jobLabels.length, shown: shown, ratio: ratio };
    };
    out.labelsFit = labelState();
    zoomAll(4);
    out.labelsZoomed = labelState();
    out.zoomed = z();
    out.ticks = v.axis ? v.axis.querySelectorAll('g.tick').length : 0;
    var bg = v.g.querySelector('rect.row-bg');
    var ctm = v.svg.getScreenCTM();
    var bgBox = bg.getBoundingClientRect();
    var at = { bubbles: true, button: 0, clientX: ctm.a * (v.x0 + v.w / 2) + ctm.e,
               clientY: bgBox.top + bgBox.height / 2 };
    bg.dispatchEvent(new MouseEvent('mousedown', at));
    at.clientX -= 100;
    document.dispatchEvent(new MouseEvent('mousemove', at));
    document.dispatchEvent(new MouseEvent('mouseup', at));
    bg.dispatchEvent(new MouseEvent('click', at));
    out.panned = z();
    zoomAll(0);
    out.reset = z();
    var jb = job.getBoundingClientRect();
    job.dispatchEvent(new MouseEvent('mouseover', { bubbles: true, clientX: jb.left + 1, clientY: jb.top + 1 }));
    out.card = { hidden: card.hidden };
    Object.keys(field).forEach(function (k) { out.card[k] = field[k].textContent; });
    job.dispatchEvent(new MouseEvent('click', { bubbles: true, button: 0, clientX: jb.left + 1, clientY: jb.top + 1 }));
    out.pin = { hidden: pin.hidden, marked: [] };
    Object.keys(pinField).forEach(function (k) { out.pin[k] = pinField[k].textContent; });
    marked.forEach(function (r) {
      var row = r.closest('g.rank');
      out.pin.marked.push({ rank: row ? row.getAttribute('data-rank') : '', mb: r.getAttribute('data-mb'),
                            step: r.getAttribute('data-step'), type: r.getAttribute('data-type'),
                            opacity: getComputedStyle(r).opacity });
    });
    var other = Array.prototype.filter.call(jobs, function (r) { return !r.classList.contains('hl'); })[0];
    out.pin.otherOpacity = other ? getComputedStyle(other).opacity : null;
    var cp = document.querySelector('.critical-path');
    if (cp) {
      out.critical = { before: getComputedStyle(cp).display, button: !cpButtons[0].hidden };
      cpButtons[0].click();
      out.critical.after = getComputedStyle(cp).display;
      cpButtons[0].click();
      out.critical.again = getComputedStyle(cp).display;
    }
    // Scroll the last rank's row to the middle of the window: the axis stays
    // at the top, above the rows.
    var rows = v.g.querySelectorAll('g.rank');
    var last = rows[rows.length - 1];
    window.scrollTo(0, window.scrollY + last.getBoundingClientRect().top - window.innerHeight / 2);
    stick();
    out.scroll = { y: window.scrollY, axis: v.axis ? box(v.axis) : null, firstRow: box(rows[0]),
                   lastRow: box(last), stuck: v.head ? v.head.classList.contains('stuck') : false };
    window.scrollTo(0, 0);
    stick();
    unpin();
    out.unpinned = pin.hidden && document.querySelectorAll('rect.job.hl').length === 0;
    document.body.setAttribute('data-selftest', JSON.stringify(out));
  }
  document.body.setAttribute('data-job-rects', String(document.querySelectorAll('rect.job').length));
  document.body.setAttribute('data-ready', '1');
})();
)JS";

constexpr const char* kStyle = R"CSS(
:root { color-scheme: light; }
body { font: 14px/1.4 "DejaVu Sans", Arial, Helvetica, sans-serif; margin: 12px 16px; color: #222; background: #fff; }
h1 { font-size: 20px; margin: 0 0 4px; }
h2 { font-size: 16px; margin: 24px 0 8px; }
.meta { color: #555; margin: 0 0 4px; word-break: break-all; }
.notes { color: #a04000; }
.toolbar { margin: 8px 0 0; padding: 4px 0; display: flex; gap: 6px; align-items: center; flex-wrap: wrap;
           position: sticky; top: 0; z-index: 5; background: #fff; }
.toolbar button[aria-pressed="false"] { opacity: .6; text-decoration: line-through; }
.toolbar button { font: inherit; padding: 1px 10px; }
.hint { color: #666; font-size: 12px; }
.svg-wrap { overflow-x: auto; border: 1px solid #ddd; }
.svg-wrap svg { display: block; user-select: none; }
svg .job { cursor: pointer; }
svg .job:hover { stroke: #000; stroke-width: 1px; vector-effect: non-scaling-stroke; }
svg.ppt-hl-on rect.job { opacity: .3; }
svg.ppt-hl-on rect.job.hl { opacity: 1; stroke: #000; stroke-width: 1px; vector-effect: non-scaling-stroke; }
svg.ppt-hl-on rect.job.pinned { stroke-width: 2.5px; }
.ppt-no-critical .critical-path { display: none; }
.sticky-bg { fill-opacity: 0; }
.sticky-head.stuck .sticky-bg { fill-opacity: .94; filter: drop-shadow(0 1px 1px rgba(0,0,0,.25)); }
.overview { display: grid; grid-template-columns: repeat(auto-fit, minmax(160px, 1fr)); gap: 6px; margin: 10px 0 4px; }
.overview .figure { border: 1px solid #ddd; border-radius: 4px; padding: 4px 8px; background: #fafafa; min-width: 0; }
.overview .name { color: #555; font-size: 12px; }
.overview .value { font-size: 18px; font-weight: bold; overflow-wrap: anywhere; }
.overview .sub { color: #666; font-size: 12px; overflow-wrap: break-word; }
.overview .good .value { color: #1a7f37; }
.overview .warn .value { color: #9a6700; }
.overview .bad .value { color: #b00020; }
.overview a { color: inherit; }
table { border-collapse: collapse; margin: 4px 0 12px; font-size: 13px; display: block; max-width: 100%; overflow-x: auto; }
td { white-space: nowrap; }
td.text { white-space: normal; overflow-wrap: anywhere; }
.nowrap { white-space: nowrap; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: right; }
th { background: #f4f4f4; }
td.text, th.text { text-align: left; }
tr.bad td { color: #a00000; }
pre { background: #f7f7f7; padding: 8px; overflow-x: auto; font-size: 12px; }
.card { position: fixed; z-index: 10; background: #fff; border: 1px solid #888; border-radius: 4px;
        padding: 6px 10px; box-shadow: 0 2px 8px rgba(0,0,0,.2); font-size: 12px; pointer-events: none; max-width: 480px; }
.card.pinned { position: absolute; pointer-events: auto; z-index: 11; border-color: #333; padding-top: 4px; }
.card.pinned button { float: right; font: inherit; border: 0; background: none; cursor: pointer; padding: 0 0 0 8px; }
.card dl { display: grid; grid-template-columns: auto 1fr; gap: 1px 10px; margin: 0; }
.card dt { color: #666; }
.card dd { margin: 0; word-break: break-all; }
td.good, .status-ok { color: #1a7f37; }
td.warn { color: #9a6700; }
td.bad { color: #b00020; }
td.dim { color: #888; }
.legend { color: #555; font-size: 12px; margin: 2px 0 8px; }
.legend span.good { color: #1a7f37; }
.legend span.warn { color: #9a6700; }
.legend span.bad { color: #b00020; }
.note { color: #666; font-weight: normal; font-size: 13px; }
dl.summary { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 4px 0 8px; }
dl.summary dt { color: #555; }
dl.summary dd { margin: 0; }
details > summary h3 { display: inline; }
h3 { font-size: 14px; margin: 14px 0 4px; }
.run-name { font-weight: bold; }
.status-bad { color: #b00020; font-weight: bold; }
)CSS";

}  // namespace

const std::string& report_script() {
  static const std::string script(kScript);
  return script;
}

std::string report_script_csp_source() {
  static const std::string source = "'sha256-" + base64(sha256(report_script())) + "'";
  return source;
}

std::string html_page_head(const std::string& title) {
  std::string out;
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src ";
  out += report_script_csp_source();
  out += "; base-uri 'none'; form-action 'none'\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>";
  append_xml_escaped(out, title);
  out += "</title>\n<style>";
  out += kStyle;
  out += "</style>\n</head>\n<body>\n";
  return out;
}

std::string html_page_tail() {
  static constexpr std::pair<const char*, const char*> kFields[] = {
      {"job", "job"}, {"rank", "rank"}, {"id", "job id"}, {"type", "type"}, {"mb", "micro-batch"},
      {"step", "step"}, {"start", "start"}, {"dur", "duration"}, {"src", "source"}};
  std::string out;
  out += "<div id=\"ppt-card\" class=\"card\" hidden><dl>";
  for (auto [name, label] : kFields) out += fmt::format("<dt>{}</dt><dd data-field=\"{}\"></dd>", label, name);
  out += "</dl></div>\n";
  // The pinned card (a click on a job): the same fields and the count of
  // the jobs of its micro-batch that the picture marks.
  out += "<div id=\"ppt-pin\" class=\"card pinned\" hidden role=\"dialog\" aria-label=\"pinned job\">"
         "<button type=\"button\" data-pin-close title=\"unpin (Esc)\">&#215;</button><dl>";
  for (auto [name, label] : kFields) out += fmt::format("<dt>{}</dt><dd data-field=\"{}\"></dd>", label, name);
  out += "<dt>marked</dt><dd data-field=\"peers\"></dd></dl></div>\n<script>";
  out += report_script();
  out += "</script>\n</body>\n</html>\n";
  return out;
}

namespace {

std::string toolbar() {
  return "<div class=\"toolbar\"><button type=\"button\" data-zoom=\"in\" title=\"zoom in (+)\">+</button>"
         "<button type=\"button\" data-zoom=\"out\" title=\"zoom out (-)\">&#8722;</button>"
         "<button type=\"button\" data-zoom=\"reset\" title=\"show all (0)\">reset</button>"
         "<button type=\"button\" data-toggle=\"critical-path\" aria-pressed=\"true\" "
         "title=\"show or hide the critical path (c)\">critical path</button>"
         "<span class=\"hint\">Ctrl+wheel or double-click: zoom &#183; drag: pan &#183; hover a job for "
         "details, click to pin it and its micro-batch on every rank</span></div>\n";
}

// Warnings and errors found in the input (notes such as zero-time jobs are
// not problems), and everything the problems section lists.
struct ProblemCounts {
  uint64_t problems = 0;
  uint64_t notes = 0;
};
ProblemCounts count_problems(const Timeline& tl) {
  ProblemCounts c;
  for (size_t k = 0; k < kIssueKindCount; ++k) {
    IssueKind kind = static_cast<IssueKind>(k);
    uint64_t n = tl.diagnostics.count_of(kind);
    (issue_info(kind).severity == Severity::kInfo ? c.notes : c.problems) += n;
  }
  return c;
}

void append_problems(std::string& out, const Timeline& tl) {
  std::vector<DiagnosticLine> lines = format_diagnostics(tl);
  if (lines.empty()) return;
  out += fmt::format("<section id=\"problems\"><h2>Input problems</h2><details><summary>{} line{} of "
                     "messages</summary><pre>",
                     lines.size(), lines.size() == 1 ? "" : "s");
  for (const DiagnosticLine& l : lines) {
    append_xml_escaped(out, diagnostic_text(l));
    out += "\n";
  }
  out += "</pre></details></section>\n";
}

std::string ms_text(double ns) { return fmt::format("{:.3f} ms", ns / 1e6); }
std::string percent_text(double ratio) { return fmt::format("{:.1f}%", ratio * 100.0); }

// One figure of the summary card: a name, the value, a line under it. All
// three are markup already escaped by the caller.
void append_figure(std::string& out, const char* id, const char* name, const std::string& value,
                   const std::string& sub, const char* tone = "") {
  out += fmt::format("<div class=\"figure{}{}\" data-figure=\"{}\"><div class=\"name\">{}</div><div class=\"value\">",
                     *tone ? " " : "", tone, id, name);
  out += value;
  out += "</div><div class=\"sub\">";
  out += sub;
  out += "</div></div>";
}

// The summary card: what a reader wants before scrolling (docs/report.md).
void append_overview(std::string& out, const Timeline& tl, const Stats* st) {
  out += "<section id=\"overview\" class=\"overview\" aria-label=\"summary\">";
  if (st) {
    const ScheduleInfo& s = st->schedule;
    std::string variant = s.variant.empty() ? "" : xml_escaped(s.variant);
    append_figure(out, "schedule", "schedule", xml_escaped(schedule_name(s.kind)),
                  variant.empty() ? (s.replicas > 1 ? fmt::format("{} data-parallel replicas", s.replicas) : "&#160;")
                                  : variant);
    bool pipeline = s.kind != ScheduleKind::kNoPipeline;
    append_figure(out, "pp", "P (stages)", pipeline ? std::to_string(s.pp_degree) : "&#8211;",
                  pipeline ? "from " + xml_escaped(s.pp_degree_source) : "no pipeline");
    append_figure(out, "mb", "M (micro-batches)", pipeline ? std::to_string(s.micro_batches) : "&#8211;",
                  s.chunks > 1 ? fmt::format("V = {} chunks", s.chunks) : "per step");
    std::string bubble = percent_text(st->bubble_ratio);
    if (st->resolution_ns > 1) bubble += " &#177; " + percent_text(st->bubble_ratio_error);
    std::string ideal = "no ideal: schedule not recognised";
    const char* tone = "";
    if (s.ideal_bubble_ratio >= 0) {
      double over = st->bubble_ratio - s.ideal_bubble_ratio;
      ideal = fmt::format("ideal {} = <span class=\"nowrap\">{}</span>: {}", percent_text(s.ideal_bubble_ratio),
                          xml_escaped(s.ideal_formula), format_percent(over * 100, PercentSign::kAlways, 1, " points"));
      tone = over > 0.05 ? "bad" : over > 0.01 ? "warn" : "good";
    }
    append_figure(out, "bubble", "bubble, measured", bubble, ideal, tone);
    // The step period as stats measures it (start to the next step's start).
    const StepTimeSummary& p = st->step_period;
    append_figure(out, "period", "step period", p.count > 0 ? ms_text(static_cast<double>(p.median_ns)) : "&#8211;",
                  p.count > 0 ? "median, start to next start" : "needs two steps");
    const StepTimeSummary& t = st->step_time;
    append_figure(out, "step-time", "step time", t.count > 0 ? ms_text(static_cast<double>(t.median_ns)) : "&#8211;",
                  t.count > 0 ? fmt::format("median of {} step{}, max {}", t.count, t.count == 1 ? "" : "s",
                                            ms_text(static_cast<double>(t.max_ns)))
                              : "no step");
    const Straggler* worst = nullptr;
    for (const Straggler& g : st->stragglers) {
      if (!worst || g.margin > worst->margin) worst = &g;
    }
    if (worst) {
      std::string sub = fmt::format("{} {:+.0f}% over the others' median", xml_escaped(worst->type), worst->margin * 100);
      if (st->stragglers.size() > 1) sub += fmt::format(" &#183; {} more", st->stragglers.size() - 1);
      append_figure(out, "straggler", "straggler", fmt::format("<a href=\"#stats\">rank {}</a>", worst->rank), sub,
                    "warn");
    } else {
      append_figure(out, "straggler", "straggler", "none",
                    fmt::format("no rank {:.0f}% slower", st->straggler_margin * 100));
    }
  }
  ProblemCounts pc = count_problems(tl);
  bool listed = !format_diagnostics(tl).empty();
  std::string value = std::to_string(pc.problems);
  if (listed) value = "<a href=\"#problems\">" + value + "</a>";
  append_figure(out, "problems", "input problems", value,
                pc.notes > 0 ? fmt::format("{} note{}", with_commas(pc.notes), pc.notes == 1 ? "" : "s")
                             : (pc.problems > 0 ? "warnings and errors" : "every line read"),
                pc.problems > 0 ? "bad" : "");
  out += "</section>\n";
}

}  // namespace

SvgSelection write_html_report(const Timeline& tl, const ReportOptions& opt, ByteSink& out) {
  std::string title = opt.title.empty() ? std::string("pp-timeline report") : opt.title;
  std::string page = html_page_head(title);
  if (opt.refresh_seconds > 0) {
    page.insert(page.find("<head>\n") + 7, fmt::format("<meta http-equiv=\"refresh\" content=\"{}\">\n", opt.refresh_seconds));
  }
  page += "<header><h1>";
  append_xml_escaped(page, title);
  page += "</h1>\n";
  if (!opt.source.empty()) {
    page += "<p class=\"meta source\">";
    append_xml_escaped(page, opt.source);
    page += "</p>\n";
  }
  page += "<p class=\"meta summary\">";
  append_xml_escaped(page, format_summary(tl));
  page += "</p>\n";
  for (const std::string& n : opt.notes) {
    page += "<p class=\"meta notes\">";
    append_xml_escaped(page, n);
    page += "</p>\n";
  }
  page += "</header>\n";
  append_overview(page, tl, opt.stats);
  page += "<section id=\"timeline\"><h2>Timeline</h2>\n";
  page += toolbar();
  page += "<div class=\"svg-wrap\">\n";
  out.write(page);
  page.clear();

  SvgOptions svg = opt.svg;
  svg.embedded = true;
  SvgSelection sel = write_svg(tl, svg, out);

  page += "</div></section>\n";
  if (opt.stats && opt.stats->source.empty() && !opt.source.empty()) {
    // Stats computed without a name of their own: the page's heading names what was read.
    Stats named = *opt.stats;
    named.source = opt.source;
    page += format_stats_html(named);
  } else if (opt.stats) {
    page += format_stats_html(*opt.stats);
  }
  append_problems(page, tl);
  page += html_page_tail();
  out.write(page);
  return sel;
}

void write_diff_report(const DiffReportInput& in, const ReportOptions& opt, ByteSink& out) {
  std::string title = opt.title.empty() ? std::string("pp-timeline diff report") : opt.title;
  std::string page = html_page_head(title);
  page += "<header><h1>";
  append_xml_escaped(page, title);
  page += "</h1>\n<p class=\"meta source\">A (base): ";
  append_xml_escaped(page, in.a_source);
  page += "<br>B (new): ";
  append_xml_escaped(page, in.b_source);
  page += "</p>\n";
  for (const std::string& n : opt.notes) {
    page += "<p class=\"meta notes\">";
    append_xml_escaped(page, n);
    page += "</p>\n";
  }
  page += "<p class=\"meta\"><a href=\"#timeline\">the two timelines, base above new</a></p>\n</header>\n";
  if (in.diff) page += format_diff_html(*in.diff);
  page += in.steps_html;

  // One time scale for both pictures: the longer of the two drawn ranges.
  SvgOptions svg = opt.svg;
  svg.embedded = true;
  int64_t span = 0;
  for (const Timeline* tl : {in.a, in.b}) {
    if (!tl) continue;
    for (const SvgRunSelection& r : select_for_svg(*tl, svg).runs) span = std::max(span, r.end_ns - r.start_ns);
  }
  svg.span_ns = std::max<int64_t>(span, 1000);
  page += "<section id=\"timeline\"><h2>Timelines, base above new, one time scale</h2>\n";
  page += toolbar();
  out.write(page);
  page.clear();
  int side = 0;
  for (const Timeline* tl : {in.a, in.b}) {
    const std::string& src = side == 0 ? in.a_source : in.b_source;
    page += fmt::format("<h3 class=\"side\" data-side=\"{}\">{}: ", side == 0 ? "a" : "b", side == 0 ? "A (base)" : "B (new)");
    append_xml_escaped(page, src);
    page += "</h3>\n<div class=\"svg-wrap\" data-side=\"";
    page += side == 0 ? "a" : "b";
    page += "\">\n";
    out.write(page);
    page.clear();
    if (tl) {
      svg.id_prefix = side == 0 ? "ppt-a" : "ppt-b";
      svg.title = fmt::format("{}: {}", side == 0 ? "A (base)" : "B (new)", src);
      svg.sync = "diff";
      write_svg(*tl, svg, out);
    }
    page += "</div>\n";
    ++side;
  }
  page += "</section>\n";
  page += html_page_tail();
  out.write(page);
}

}  // namespace ppt
