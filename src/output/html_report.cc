#include "output/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "output/stats_writers.h"
#include "output/summary.h"

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
  var card = document.getElementById('ppt-card');
  var field = {};
  if (card) {
    card.querySelectorAll('[data-field]').forEach(function (el) { field[el.getAttribute('data-field')] = el; });
  }
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

  var views = [];
  document.querySelectorAll('svg.ppt-timeline g.run').forEach(function (g, i) {
    var svg = g.ownerSVGElement;
    var w = num(g.getAttribute('data-plot-w'));
    views.push({
      g: g, svg: svg, w: w, x0: num(g.getAttribute('data-plot-x')),
      t0: num(g.getAttribute('data-t0-us')), span: num(g.getAttribute('data-span-us')),
      a: 0, b: w, group: svg.getAttribute('data-sync') || ('v' + i),
      zooms: g.querySelectorAll('g.zoom'), labels: g.querySelectorAll('text.step-label'),
      axis: g.querySelector('g.axis')
    });
  });

  function drawAxis(v) {
    var ax = v.axis;
    if (!ax) return;
    while (ax.firstChild) ax.removeChild(ax.firstChild);
    var line = document.createElementNS(NS, 'line');
    line.setAttribute('class', 'axis-line');
    line.setAttribute('x1', 0); line.setAttribute('x2', v.w);
    line.setAttribute('y1', 20); line.setAttribute('y2', 20);
    line.setAttribute('stroke', '#888');
    ax.appendChild(line);
    var from = v.t0 + v.a / v.w * v.span, to = v.t0 + v.b / v.w * v.span;
    var step = niceStep((to - from) / Math.max(2, v.w / 110));
    for (var t = Math.ceil(from / step) * step; t <= to + step * 1e-9; t += step) {
      var x = (t - from) / (to - from) * v.w;
      var g = document.createElementNS(NS, 'g');
      g.setAttribute('class', 'tick');
      var l = document.createElementNS(NS, 'line');
      l.setAttribute('x1', x); l.setAttribute('x2', x); l.setAttribute('y1', 15); l.setAttribute('y2', 20);
      l.setAttribute('stroke', '#888');
      var tx = document.createElementNS(NS, 'text');
      tx.setAttribute('x', x); tx.setAttribute('y', 12);
      tx.setAttribute('text-anchor', 'middle'); tx.setAttribute('font-size', '10'); tx.setAttribute('fill', '#555');
      tx.textContent = tickLabel(t, step);
      g.appendChild(l); g.appendChild(tx); ax.appendChild(g);
    }
  }

  function apply(v) {
    var k = v.w / (v.b - v.a), tx = -v.a * k;
    var tr = 'translate(' + tx + ',0) scale(' + k + ',1)';
    v.zooms.forEach(function (z) { z.setAttribute('transform', tr); });
    var lastEnd = -1e9;
    v.labels.forEach(function (el) {
      var x = num(el.getAttribute('data-x')) * k + tx;
      var w = el.textContent.length * 6.6 + 6;
      var show = x >= lastEnd && x >= -2 && x + w <= v.w + 4;
      el.setAttribute('x', x);
      el.setAttribute('visibility', show ? 'visible' : 'hidden');
      if (show) lastEnd = x + w;
    });
    drawAxis(v);
  }

  function setView(src, a, b) {
    var minW = src.w / 100000;
    if (b - a < minW) { var c = (a + b) / 2; a = c - minW / 2; b = c + minW / 2; }
    if (b - a >= src.w) { a = 0; b = src.w; }
    if (a < 0) { b -= a; a = 0; }
    if (b > src.w) { a -= b - src.w; b = src.w; }
    views.forEach(function (v) {
      if (v.group !== src.group) return;
      v.a = a * v.w / src.w; v.b = b * v.w / src.w;
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

  var drag = null;
  document.addEventListener('mousedown', function (e) {
    if (e.button !== 0) return;
    var h = viewAt(e);
    if (!h) return;
    drag = { v: h.v, x: e.clientX, a: h.v.a, b: h.v.b, scale: h.scale };
    e.preventDefault();
  });
  document.addEventListener('mousemove', function (e) {
    if (!drag) return;
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
      if (f === 0) setView(v, 0, v.w); else zoomAt(v, (v.a + v.b) / 2, f);
    });
  }
  document.querySelectorAll('button[data-zoom]').forEach(function (b) {
    b.addEventListener('click', function () {
      var z = b.getAttribute('data-zoom');
      zoomAll(z === 'in' ? 2 : z === 'out' ? 0.5 : 0);
    });
  });
  document.addEventListener('keydown', function (e) {
    var t = e.target && e.target.tagName;
    if (t === 'INPUT' || t === 'TEXTAREA') return;
    if (e.key === '+' || e.key === '=') zoomAll(2);
    else if (e.key === '-') zoomAll(0.5);
    else if (e.key === '0') zoomAll(0);
  });

  function place(e) {
    var x = e.clientX + 14, y = e.clientY + 14;
    var r = card.getBoundingClientRect();
    if (x + r.width > window.innerWidth - 4) x = Math.max(4, e.clientX - r.width - 14);
    if (y + r.height > window.innerHeight - 4) y = Math.max(4, e.clientY - r.height - 14);
    card.style.left = x + 'px';
    card.style.top = y + 'px';
  }
  function set(name, text) { if (field[name]) field[name].textContent = text; }
  document.addEventListener('mouseover', function (e) {
    var r = e.target;
    if (!card || drag || !r.classList || !r.classList.contains('job')) return;
    var row = r.closest('g.rank');
    var mb = r.getAttribute('data-mb');
    set('job', r.getAttribute('data-name'));
    set('id', r.getAttribute('data-job'));
    set('rank', row ? row.getAttribute('data-label') : '');
    set('type', r.getAttribute('data-type'));
    set('mb', mb === '-1' ? '(none)' : mb);
    set('step', r.getAttribute('data-step'));
    set('start', ms(r.getAttribute('data-start-us')));
    set('dur', ms(r.getAttribute('data-dur-us')));
    set('src', (row ? row.getAttribute('data-src') : '') + ':' + r.getAttribute('data-line'));
    card.hidden = false;
    place(e);
  });
  document.addEventListener('mousemove', function (e) { if (card && !card.hidden) place(e); });
  document.addEventListener('mouseout', function (e) {
    if (card && e.target.classList && e.target.classList.contains('job')) card.hidden = true;
  });

  views.forEach(apply);

  // With #ppt-selftest=N in the address, drive zoom, pan and the hover card
  // (over the N-th job rectangle) through the handlers above and record what
  // they did in body[data-selftest]: the browser tests read it back, as
  // events cannot be sent to a headless --dump-dom page.
  var self = /^#ppt-selftest=(\d+)$/.exec(location.hash);
  if (self && views.length) {
    var v = views[0], out = {};
    var jobs = document.querySelectorAll('rect.job');
    var job = jobs[Math.min(parseInt(self[1], 10), jobs.length - 1)];
    var z = function () { return v.zooms[0] ? v.zooms[0].getAttribute('transform') : ''; };
    zoomAll(4);
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
    out.panned = z();
    zoomAll(0);
    out.reset = z();
    var box = job.getBoundingClientRect();
    job.dispatchEvent(new MouseEvent('mouseover', { bubbles: true, clientX: box.left + 1, clientY: box.top + 1 }));
    out.card = { hidden: card.hidden };
    Object.keys(field).forEach(function (k) { out.card[k] = field[k].textContent; });
    document.body.setAttribute('data-selftest', JSON.stringify(out));
  }
  document.body.setAttribute('data-job-rects', String(document.querySelectorAll('rect.job').length));
  document.body.setAttribute('data-ready', '1');
})();
)JS";

constexpr const char* kStyle = R"CSS(
:root { color-scheme: light; }
body { font: 14px/1.4 "DejaVu Sans", Arial, Helvetica, sans-serif; margin: 16px 24px; color: #222; background: #fff; }
h1 { font-size: 20px; margin: 0 0 4px; }
h2 { font-size: 16px; margin: 24px 0 8px; }
.meta { color: #555; margin: 0 0 4px; word-break: break-all; }
.notes { color: #a04000; }
.toolbar { margin: 8px 0; display: flex; gap: 6px; align-items: center; flex-wrap: wrap; }
.toolbar button { font: inherit; padding: 1px 10px; }
.hint { color: #666; font-size: 12px; }
.svg-wrap { overflow-x: auto; border: 1px solid #ddd; }
.svg-wrap svg { display: block; user-select: none; max-width: 100%; height: auto; }
svg .job:hover { stroke: #000; stroke-width: 1px; vector-effect: non-scaling-stroke; }
table { border-collapse: collapse; margin: 4px 0 12px; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: right; }
th { background: #f4f4f4; }
td.text, th.text { text-align: left; }
tr.bad td { color: #a00000; }
pre { background: #f7f7f7; padding: 8px; overflow-x: auto; font-size: 12px; }
.card { position: fixed; z-index: 10; background: #fff; border: 1px solid #888; border-radius: 4px;
        padding: 6px 10px; box-shadow: 0 2px 8px rgba(0,0,0,.2); font-size: 12px; pointer-events: none; max-width: 480px; }
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
  std::string out;
  out += "<div id=\"ppt-card\" class=\"card\" hidden><dl>";
  for (auto [name, label] : {std::pair{"job", "job"}, {"rank", "rank"}, {"id", "job id"}, {"type", "type"}, {"mb", "micro-batch"}, {"step", "step"},
                             {"start", "start"}, {"dur", "duration"}, {"src", "source"}}) {
    out += fmt::format("<dt>{}</dt><dd data-field=\"{}\"></dd>", label, name);
  }
  out += "</dl></div>\n<script>";
  out += report_script();
  out += "</script>\n</body>\n</html>\n";
  return out;
}

namespace {

std::string toolbar() {
  return "<div class=\"toolbar\"><button type=\"button\" data-zoom=\"in\" title=\"zoom in (+)\">+</button>"
         "<button type=\"button\" data-zoom=\"out\" title=\"zoom out (-)\">&#8722;</button>"
         "<button type=\"button\" data-zoom=\"reset\" title=\"show all (0)\">reset</button>"
         "<span class=\"hint\">Ctrl+wheel or double-click: zoom &#183; drag: pan &#183; hover a job for "
         "details</span></div>\n";
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

}  // namespace

SvgSelection write_html_report(const Timeline& tl, const ReportOptions& opt, ByteSink& out) {
  std::string title = opt.title.empty() ? std::string("pp-timeline report") : opt.title;
  std::string page = html_page_head(title);
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
  page += "</header>\n<section id=\"timeline\"><h2>Timeline</h2>\n";
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
  page += "</h1>\n<p class=\"meta source\">A: ";
  append_xml_escaped(page, in.a_source);
  page += "<br>B: ";
  append_xml_escaped(page, in.b_source);
  page += "</p>\n";
  for (const std::string& n : opt.notes) {
    page += "<p class=\"meta notes\">";
    append_xml_escaped(page, n);
    page += "</p>\n";
  }
  page += "</header>\n";
  if (in.diff) page += format_diff_html(*in.diff);

  // One time scale for both pictures: the longer of the two drawn ranges.
  SvgOptions svg = opt.svg;
  svg.embedded = true;
  int64_t span = 0;
  for (const Timeline* tl : {in.a, in.b}) {
    if (!tl) continue;
    for (const SvgRunSelection& r : select_for_svg(*tl, svg).runs) span = std::max(span, r.end_ns - r.start_ns);
  }
  svg.span_ns = std::max<int64_t>(span, 1000);
  page += "<section id=\"timeline\"><h2>Timelines, one time scale</h2>\n";
  page += toolbar();
  out.write(page);
  page.clear();
  int side = 0;
  for (const Timeline* tl : {in.a, in.b}) {
    const std::string& src = side == 0 ? in.a_source : in.b_source;
    page += fmt::format("<h3 class=\"side\" data-side=\"{}\">{}: ", side == 0 ? "a" : "b", side == 0 ? "A" : "B");
    append_xml_escaped(page, src);
    page += "</h3>\n<div class=\"svg-wrap\" data-side=\"";
    page += side == 0 ? "a" : "b";
    page += "\">\n";
    out.write(page);
    page.clear();
    if (tl) {
      svg.id_prefix = side == 0 ? "ppt-a" : "ppt-b";
      svg.title = fmt::format("{}: {}", side == 0 ? "A" : "B", src);
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
