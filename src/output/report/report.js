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

  // Block labels, by the rule of src/output/block_label.h: the longest form
  // of a block's label ("F12", "12"; "B0c1", "0c1") whose width, from
  // DejaVu Sans's advances (2048 units per em) at LABEL_PX, plus LABEL_PAD on
  // each side, fits the block's width on screen.
  var ADVANCE = { F: 1178, B: 1405, W: 2025, c: 1126, o: 1253, p: 1300, t: 803, l: 569, r: 842 };
  var DIGIT = 1303, WIDEST = 2025, LABEL_PX = 10, LABEL_PAD = 2;
  function textWidth(s) {
    var units = 0;
    for (var i = 0; i < s.length; ++i) {
      var c = s.charAt(i);
      units += c >= '0' && c <= '9' ? DIGIT : (ADVANCE[c] || WIDEST);
    }
    return units / 2048 * LABEL_PX;
  }
  function labelForms(full) {
    var m = /^[FBW](\d+)(c\d+)?$/.exec(full);
    if (!m) return [full];
    return m[2] ? [full, m[1] + m[2]] : [full, m[1]];
  }
  function fittingLabel(forms, px) {
    for (var i = 0; i < forms.length; ++i) {
      if (textWidth(forms[i]) + 2 * LABEL_PAD <= px) return forms[i];
    }
    return '';
  }
  // Dark text on light fills, white on dark (palette.h label_color).
  function labelColor(fill) {
    var m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(fill || '');
    if (!m) return '#1a1a1a';
    var y = 0.2126 * parseInt(m[1], 16) + 0.7152 * parseInt(m[2], 16) + 0.0722 * parseInt(m[3], 16);
    return y > 140 ? '#1a1a1a' : '#ffffff';
  }
  // The labelled blocks of a run, each with its own label layer per row; the
  // labels the picture was written with (at its own width) are replaced.
  function labelledBlocks(g) {
    var blocks = [];
    g.querySelectorAll('g.rank g.zoom').forEach(function (zoom) {
      var old = zoom.querySelector('g.job-labels');
      if (old) old.parentNode.removeChild(old);
      var layer = el('g', { 'class': 'job-labels', 'font-size': LABEL_PX, 'text-anchor': 'middle', 'pointer-events': 'none' });
      zoom.appendChild(layer);
      zoom.querySelectorAll('rect.job[data-label]').forEach(function (r) {
        blocks.push({ layer: layer, x: num(r.getAttribute('x')), w: num(r.getAttribute('width')),
                      y: num(r.getAttribute('y')) + num(r.getAttribute('height')) / 2 + 3.5,
                      forms: labelForms(r.getAttribute('data-label')), fill: labelColor(r.getAttribute('fill')),
                      t: null, text: '' });
      });
    });
    return blocks;
  }
  // Relabels every block for the view [a, b] at k pixels per picture unit:
  // a label is centred on the block's visible part and sized for it, and its
  // glyphs are kept upright against the zoom's horizontal scale.
  function relabel(v, k) {
    v.blocks.forEach(function (bl) {
      var from = Math.max(bl.x, v.a), to = Math.min(bl.x + bl.w, v.b);
      var text = to > from ? fittingLabel(bl.forms, (to - from) * k) : '';
      if (!text && !bl.t) return;
      if (!bl.t) {
        bl.t = el('text', { y: bl.y, fill: bl.fill });
        bl.layer.appendChild(bl.t);
      }
      if (text !== bl.text) {
        bl.t.textContent = text;
        bl.t.setAttribute('visibility', text ? 'visible' : 'hidden');
        bl.text = text;
      }
      if (!text) return;
      var x = (from + to) / 2;
      bl.t.setAttribute('x', x);
      bl.t.setAttribute('transform', 'translate(' + x + ',0) scale(' + (1 / k) + ',1) translate(' + (-x) + ',0)');
    });
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
      blocks: labelledBlocks(g), bands: g.querySelectorAll('rect.group-band'),
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
    relabel(v, k);
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
      // The replica headings span the label column and the plot, as wide as the rows.
      v.bands.forEach(function (b) { b.setAttribute('width', v.x0 + v.w); });
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

  // #ppt-view=FROM,TO in the address (milliseconds on the time axis) opens
  // the pictures zoomed to that range: a link to a part of a run.
  var viewAt0 = /^#ppt-view=(-?[0-9.]+),(-?[0-9.]+)$/.exec(location.hash);
  if (viewAt0 && views.length) {
    var seenView = {};
    views.forEach(function (v) {
      if (seenView[v.group] || !(v.span > 0)) return;
      seenView[v.group] = true;
      var u = function (msText) { return (num(msText) * 1000 - v.t0) / v.span * v.w0; };
      setView(v, u(viewAt0[1]), u(viewAt0[2]));
    });
  }

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
    // Block labels: how many show; `missing`, the blocks on screen at least
    // as wide as their shortest label that carry none; `overflow`, labels
    // wider on screen than their block; and the widest one's screen width
    // against its own (unscaled) text width, before and after zooming in.
    var labelState = function () {
      var shown = 0, visible = 0, ratio = 0, missing = 0, overflow = 0, texts = {};
      var k = v.w / (v.b - v.a);
      v.blocks.forEach(function (bl) {
        var from = Math.max(bl.x, v.a), to = Math.min(bl.x + bl.w, v.b);
        var px = (to - from) * k;
        var shortest = bl.forms[bl.forms.length - 1];
        if (to > from) ++visible;
        if (!bl.text) {
          if (to > from && textWidth(shortest) + 2 * LABEL_PAD <= px) ++missing;
          return;
        }
        ++shown;
        texts[bl.text] = true;
        var own = bl.t.getComputedTextLength();
        if (own > 0) ratio = Math.max(ratio, bl.t.getBoundingClientRect().width / own);
        if (bl.t.getBoundingClientRect().width > px + 0.5) ++overflow;
      });
      return { total: v.blocks.length, visible: visible, shown: shown, missing: missing, overflow: overflow, ratio: ratio,
               texts: Object.keys(texts).sort() };
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
    // The replica heading bands end where the rows do, at any window width.
    var rowRight = bg.getBoundingClientRect().right, gap = 0;
    v.bands.forEach(function (b) { gap = Math.max(gap, Math.abs(b.getBoundingClientRect().right - rowRight)); });
    out.bands = { count: v.bands.length, gap: gap };
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
