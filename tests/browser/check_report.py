#!/usr/bin/env python3
"""The HTML report in a real browser (headless Chromium).

Writes a small run whose logs carry hostile job types, renders
`pp-timeline report` and `pp-timeline diff -o` pages, and checks from the DOM
Chromium ends up with (after the page's script ran) and from a screenshot:
  - one row per rank and one rectangle per job, and the page script ran (its
    CSP hash is right) and counted them;
  - zoom, pan and the hover card work (driven by the page's #ppt-selftest);
  - at 800 px the summary card is above the fold and nothing scrolls
    sideways; at 1920 px the picture fills the window;
  - with 64 ranks the time axis stays in view when the rows scroll;
  - block labels: at the page's width and zoomed in, every block on screen
    wide enough for its shortest label carries one, none wider than its
    block (the page relabels on zoom); replica bands end with the rows;
  - a click pins a job's card and marks its micro-batch on the other ranks;
  - the critical path toggle hides and shows a `.critical-path` overlay
    (one put into the picture here: the page must work once pictures have one);
  - the browser logs nothing to its console (no CSP violation, no error);
  - the hostile types are shown as text: no element they describe exists, the
    page title is untouched, the hover card shows the type as text;
  - the screenshot is not blank and shows the job colours.
Exit 77 (skipped) when no Chromium is installed:
PPT_WITH_BROWSER=1 scripts/setup.sh installs Debian's `chromium`.
"""
import html.parser
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "e2e"))
import ppt_test  # noqa: E402
from ppt_test import JOB_LINE, arg_parser, ms, temp_dir  # noqa: E402

SKIP = 77
EPOCH_NS = 1697793307000000000
HOSTILE_TITLE = "<img src=x onerror=document.title='PWNED'>"
HOSTILE_NODE = "<img src=y onerror=document.body.appendChild(document.createElement('pwned'))>"
HOSTILE_SCRIPT = "<script>document.title='PWNED2'</script>"


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def job_line(job_id, typ, mb, start_us, end_us):
    s, e = EPOCH_NS + start_us * 1000, EPOCH_NS + end_us * 1000
    return JOB_LINE % (job_id, typ, mb, ms(s), ms(e))


def write_run(folder, ranks, steps, hostile, slow_us=0):
    """ranks x steps of F0 F1 B0 B1 optimizer; returns the number of jobs."""
    os.makedirs(folder)
    jobs = 0
    for r in range(ranks):
        lines = []
        for s in range(steps):
            t = s * (2000 + slow_us) + r * 40  # a slower run has a longer step period too
            plan = [("forward", 0, 0, 200 + slow_us), ("forward", 1, 250 + slow_us, 450 + slow_us),
                    ("backward", 0, 600 + slow_us, 1000 + slow_us), ("backward", 1, 1000 + slow_us, 1400 + slow_us),
                    ("optimizer", 0, 1500 + slow_us, 1550 + slow_us)]
            for (typ, mb, a, b) in plan:
                if hostile and s == 1 and typ == "forward" and mb == 0:
                    typ = {0: HOSTILE_TITLE, 1: HOSTILE_NODE, 2: HOSTILE_SCRIPT}.get(r, typ)
                lines.append(job_line(mb, typ, mb, t + a, t + b))
                jobs += 1
        with open(os.path.join(folder, "workerlog.%d" % r), "w") as f:
            f.writelines(lines)
    return jobs


class Dom(html.parser.HTMLParser):
    """Elements (tag, attrs), the text of each element, the <title> text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.elements = []
        self.stack = []
        self.texts = []
        self.title = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.elements.append((tag, a))
        if tag not in ("meta", "br", "link", "img", "input", "hr", "line", "rect", "path"):
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        while self.stack:
            if self.stack.pop() == tag:
                break

    def handle_data(self, data):
        self.texts.append(data)
        if self.stack and self.stack[-1] == "title" and self.title is None:
            self.title = data

    def count(self, tag, cls=None):
        return sum(1 for (t, a) in self.elements if t == tag and (cls is None or cls in a.get("class", "").split()))

    def find(self, tag, cls=None):
        return [a for (t, a) in self.elements if t == tag and (cls is None or cls in a.get("class", "").split())]


def transform(text):
    """(tx, sx) of 'translate(tx,0) scale(sx,1)', or None."""
    m = re.fullmatch(r"translate\(([-0-9.e]+),0\) scale\(([-0-9.e]+),1\)", text or "")
    return (float(m.group(1)), float(m.group(2))) if m else None


def chromium_args(chromium, profile):
    return [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--hide-scrollbars", "--user-data-dir=" + profile]


def dump_dom(chromium, url, size="1400,900"):
    with tempfile.TemporaryDirectory() as profile:
        p = subprocess.run(chromium_args(chromium, profile) +
                           ["--window-size=" + size, "--enable-logging=stderr", "--v=0",
                            "--virtual-time-budget=2000", "--dump-dom", url],
                           capture_output=True, text=True, timeout=120)
    check(p.returncode == 0 and p.stdout.strip(), "chromium --dump-dom failed: %s" % p.stderr[-2000:])
    console = [line for line in p.stderr.splitlines() if ":CONSOLE" in line]
    check(not console, "the page logged to the console:\n" + "\n".join(console[:10]))
    d = Dom()
    d.feed(p.stdout)
    return d, p.stdout


def screenshot(chromium, url, png, size="1400,900"):
    with tempfile.TemporaryDirectory() as profile:
        p = subprocess.run(chromium_args(chromium, profile) + ["--window-size=" + size, "--screenshot=" + png, url],
                           capture_output=True, text=True, timeout=120)
    check(p.returncode == 0 and os.path.exists(png), "chromium --screenshot failed: %s" % p.stderr[-2000:])


def decode_png(path):
    """(width, height, rows of (r, g, b) tuples) for 8-bit RGB or RGBA PNGs."""
    data = open(path, "rb").read()
    check(data[:8] == b"\x89PNG\r\n\x1a\n", "screenshot is not a PNG")
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            check(depth == 8 and color in (2, 6), "unexpected PNG format %d/%d" % (depth, color))
            bpp = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(width)])
        prev = line
    return width, height, rows


def check_report(binary, chromium, work):
    logs = os.path.join(work, "logs")
    ranks, steps = 4, 3
    jobs = write_run(logs, ranks, steps, hostile=True)
    page = os.path.join(work, "report.html")
    p = ppt_test.run(binary, ["report", "--log_dir", logs, "-o", page])
    check(p.returncode == 0, "pp-timeline report failed: " + p.stderr)
    url = "file://" + page

    dom, text = dump_dom(chromium, url)
    body = dom.find("body")[0]
    check(body.get("data-ready") == "1", "the page script did not run (wrong CSP hash?)")
    check(body.get("data-job-rects") == str(jobs), "script counted %s job rectangles, want %d" %
          (body.get("data-job-rects"), jobs))
    rows = dom.find("g", "rank")
    check(len(rows) == ranks, "%d rank rows, want %d" % (len(rows), ranks))
    check(sorted(int(r["data-rank"]) for r in rows) == list(range(ranks)), "data-rank values")
    rects = dom.find("rect", "job")
    check(len(rects) == jobs, "%d job rectangles, want %d" % (len(rects), jobs))
    for r in rects:
        for key in ("data-type", "data-mb", "data-step"):
            check(key in r, "a job rectangle lacks " + key)
    check(sorted({r["data-step"] for r in rects}) == ["0", "1", "2"], "steps of the rectangles")
    # The hostile types: text, never elements; nothing they wanted happened.
    check(dom.title == "pp-timeline report", "title changed to %r" % dom.title)
    check(dom.count("img") == 0, "an <img> element exists")
    check(dom.count("pwned") == 0, "an injected element was added")
    check(dom.count("script") == 1, "%d script elements" % dom.count("script"))
    types = {r["data-type"] for r in rects}
    for h in (HOSTILE_TITLE, HOSTILE_NODE, HOSTILE_SCRIPT):
        check(h in types, "hostile type %r not kept as a data attribute" % h)
        check(h in dom.texts, "hostile type %r not shown as text in the legend" % h)
    check(len(dom.find("g", "tick")) >= 3, "the axis has no ticks")

    # Zoom, pan and the hover card, over the first hostile rectangle.
    target = next(i for i, r in enumerate(rects) if r["data-type"] == HOSTILE_TITLE)
    dom2, _ = dump_dom(chromium, url + "#ppt-selftest=%d" % target)
    st = json.loads(dom2.find("body")[0].get("data-selftest", "{}"))
    zoomed, panned, reset = (transform(st.get(k)) for k in ("zoomed", "panned", "reset"))
    # The picture is laid out at the window's width: scale `fit` shows it all.
    fit = st.get("fit", 0)
    check(fit > 0, "no plot width fit: %r" % st.get("fit"))
    # Block labels keep their size whatever the zoom (not stretched with the
    # time axis). At every zoom every block on screen that can hold its
    # shortest label carries one (block_label.h's rule, in report.js), none
    # wider than its block; zooming in relabels: more blocks, longer forms.
    lf, lz = st.get("labelsFit", {}), st.get("labelsZoomed", {})
    check(lz.get("total", 0) > 0, "no labelled block: %r" % lz)
    for name, state in (("fit", lf), ("zoomed in", lz)):
        check(state.get("missing") == 0, "%s, blocks wide enough for a label carry none: %r" % (name, state))
        check(state.get("overflow") == 0, "%s, labels wider than their block: %r" % (name, state))
    # At the page's width the 50 us optimizers are too narrow for "opt";
    # zoomed in 4x they are labelled, and more of the blocks in view are.
    check(0 < lf.get("shown", 0) < lf.get("visible", 0) and "opt" not in lf.get("texts", []),
          "at the page's width: %r" % lf)
    check("opt" in lz.get("texts", []) and
          lz.get("shown", 0) * lf.get("visible", 1) > lf.get("shown", 0) * lz.get("visible", 1),
          "zooming in did not relabel: %r then %r" % (lf, lz))
    for state in (lf, lz):
        check(state.get("shown", 0) == 0 or 0.8 < state.get("ratio", 0) < 1.25,
              "block labels are stretched with the time axis: %r" % state)
    check(zoomed and abs(zoomed[1] - 4 * fit) < 1e-6, "zoom: %r (fit %r)" % (st.get("zoomed"), fit))
    check(st.get("ticks", 0) >= 3, "the axis was not redrawn after zooming")
    # Dragging 100 screen pixels to the left moves the view right, at the same zoom.
    check(panned and abs(panned[1] - 4 * fit) < 1e-6 and panned[0] < zoomed[0] - 1,
          "pan: %r after %r" % (st.get("panned"), st.get("zoomed")))
    check(reset and abs(reset[0]) < 1e-9 and abs(reset[1] - fit) < 1e-9, "reset: %r" % st.get("reset"))
    card = st.get("card", {})
    check(card.get("hidden") is False, "the hover card did not show")
    check(card.get("type") == HOSTILE_TITLE, "card type %r" % card.get("type"))
    check(card.get("mb") == "0" and card.get("step") == "1", "card mb/step %r/%r" % (card.get("mb"), card.get("step")))
    check(card.get("src", "").endswith("workerlog.0:6"), "card source %r" % card.get("src"))
    check(card.get("rank") == "GPU:0", "card rank %r" % card.get("rank"))
    check(card.get("dur") == "0.200 ms", "card duration %r" % card.get("dur"))
    check(dom2.title == "pp-timeline report" and dom2.count("img") == 0 and dom2.count("pwned") == 0,
          "the hover card ran the hostile type")

    # The click: the pinned card shows the job, its micro-batch is marked on
    # every rank (same step and micro-batch), the rest is dimmed.
    pin = st.get("pin", {})
    check(pin.get("hidden") is False, "the pinned card did not show: %r" % pin)
    check(pin.get("type") == HOSTILE_TITLE and pin.get("step") == "1", "pinned card %r" % pin)
    marked = pin.get("marked", [])
    check(all(m["mb"] == "0" and m["step"] == "1" for m in marked), "marked jobs of another micro-batch: %r" % marked)
    check(sorted({m["rank"] for m in marked}) == [str(r) for r in range(ranks)],
          "micro-batch 0 of step 1 not marked on every rank: %r" % marked)
    check(pin.get("peers", "").startswith("%d jobs on %d ranks" % (len(marked), ranks)), "pinned count %r" % pin.get("peers"))
    check(all(float(m["opacity"]) == 1 for m in marked) and float(pin.get("otherOpacity", 1)) < 0.5,
          "the marked jobs do not stand out: %r, others %r" % ([m["opacity"] for m in marked], pin.get("otherOpacity")))
    check(st.get("unpinned") is True, "Esc/unpin left marks behind")
    # The picture draws each step's critical path (svg_writer.h), so the page
    # offers its toggle.
    check(any("critical-path" in g.get("class", "").split() for g in dom.find("g")),
          "the report's picture draws no critical path")
    check(any(b.get("data-toggle") == "critical-path" and "hidden" not in b for b in dom.find("button")),
          "the critical path button is hidden on a page with a critical path")

    # Layout: the summary card above the fold at 800 px, no sideways scroll;
    # the picture fills a 1920 px window.
    for size in ("800,600", "1920,1080"):
        d, _ = dump_dom(chromium, url + "#ppt-selftest=%d" % target, size)
        lt = json.loads(d.find("body")[0].get("data-selftest", "{}"))
        win, svg, ov = lt.get("window", {}), lt.get("svg", {}), lt.get("overview") or {}
        check(ov and ov.get("bottom", 1e9) <= win.get("height", 0), "%s: summary card at %r, window %r" % (size, ov, win))
        check(win.get("scrollWidth", 1e9) <= win.get("width", 0),
              "%s: the page scrolls sideways: %r, wider: %r" % (size, win, lt.get("wide")))
        check(svg.get("width", 0) > 0.9 * win.get("width", 0), "%s: picture %r wide in a %r window" % (size, svg, win))

    # The screenshots, narrow to wide: not blank, and the job colours are on them.
    for size in ("800,600", "1400,900", "1920,1080"):
        png = os.path.join(work, "report-%s.png" % size.replace(",", "x"))
        screenshot(chromium, url, png, size)
        w, h, px = decode_png(png)
        colors = {}
        for row in px:
            for c in row:
                colors[c] = colors.get(c, 0) + 1
        background = max(colors.values())
        check(len(colors) > 20, "%s: screenshot has only %d colours" % (size, len(colors)))
        check(background < 0.97 * w * h, "%s: screenshot is nearly blank" % size)
        for typ in ("forward", "backward", "optimizer"):
            fill = next(r["fill"] for r in rects if r["data-type"] == typ).lstrip("#")
            rgb = tuple(int(fill[i:i + 2], 16) for i in (0, 2, 4))
            check(colors.get(rgb, 0) >= 40,
                  "%s: %s colour #%s: %d pixels on the screenshot" % (size, typ, fill, colors.get(rgb, 0)))
    return jobs


def check_tall(binary, chromium, work):
    """64 ranks: the axis stays at the top while the rows scroll under it;
    the critical path toggle hides the picture's critical path and shows it again."""
    logs = os.path.join(work, "tall")
    write_run(logs, 64, 2, hostile=False)
    page = os.path.join(work, "tall.html")
    p = ppt_test.run(binary, ["report", "--log_dir", logs, "-o", page])
    check(p.returncode == 0, "pp-timeline report failed: " + p.stderr)
    check('class="critical-path"' in open(page, encoding="utf-8").read(), "no critical path drawn on 64 ranks")
    d, _ = dump_dom(chromium, "file://" + page + "#ppt-selftest=0", "1280,800")
    st = json.loads(d.find("body")[0].get("data-selftest", "{}"))
    sc = st.get("scroll", {})
    axis, first, last = sc.get("axis") or {}, sc.get("firstRow") or {}, sc.get("lastRow") or {}
    check(sc.get("y", 0) > 0 and first.get("top", 0) < 0, "the page did not scroll the rows away: %r" % sc)
    check(sc.get("stuck") is True and 0 <= axis.get("top", -1) and axis.get("bottom", 1e9) <= last.get("top", 0),
          "the axis did not stay in view: %r" % sc)
    cp = st.get("critical", {})
    check(cp.get("button") is True, "no critical path button with an overlay: %r" % cp)
    check(cp.get("before") != "none" and cp.get("after") == "none" and cp.get("again") == cp.get("before"),
          "the critical path toggle: %r" % cp)


def check_bands(binary, chromium, work):
    """Replicas: each replica's heading band ends where the rows end, in a
    narrow window and in a wide one (the page lays the plot out at the
    window's width)."""
    logs = os.path.join(work, "replicas")
    ppt_test.gen_logs(logs, ["--stages", "2", "--dp", "2", "--micro-batches", "4", "--steps", "2"])
    page = os.path.join(work, "replicas.html")
    p = ppt_test.run(binary, ["report", "--log_dir", logs, "-o", page])
    check(p.returncode == 0, "pp-timeline report failed: " + p.stderr)
    for size in ("1000,800", "1920,1080"):
        d, _ = dump_dom(chromium, "file://" + page + "#ppt-selftest=0", size)
        st = json.loads(d.find("body")[0].get("data-selftest", "{}"))
        bands = st.get("bands", {})
        check(bands.get("count", 0) == 2 and bands.get("gap", 1e9) < 1,
              "%s: the replica bands do not end with the rows: %r" % (size, bands))


def check_diff(binary, chromium, work):
    a, b = os.path.join(work, "a"), os.path.join(work, "b")
    ja = write_run(a, 2, 2, hostile=False)
    jb = write_run(b, 2, 2, hostile=False, slow_us=300)
    page = os.path.join(work, "diff.html")
    p = ppt_test.run(binary, ["diff", a, b, "-o", page])
    check(p.returncode == 0, "pp-timeline diff -o failed: " + p.stderr)
    dom, _ = dump_dom(chromium, "file://" + page)
    body = dom.find("body")[0]
    check(body.get("data-ready") == "1", "the diff page script did not run")
    svgs = dom.find("svg", "ppt-timeline")
    check(len(svgs) == 2, "%d pictures on the diff page" % len(svgs))
    check(all(s.get("data-sync") == "diff" for s in svgs), "pictures not zoomed together")
    check(len(dom.find("g", "rank")) == 4, "rank rows on the diff page")
    check(len(dom.find("rect", "job")) == ja + jb, "job rectangles on the diff page")
    runs = dom.find("g", "run")
    check(len({r["data-span-us"] for r in runs}) == 1, "the two pictures do not share a time scale")
    check([h.get("data-side") for h in dom.find("h3", "side")] == ["a", "b"], "base and new headings")
    check(any(t.startswith("A (base): ") for t in dom.texts) and any(t.startswith("B (new): ") for t in dom.texts),
          "the pictures are not named base and new")
    d, _ = dump_dom(chromium, "file://" + page + "#ppt-selftest=0", "1920,1080")
    st = json.loads(d.find("body")[0].get("data-selftest", "{}"))
    check(st.get("svg", {}).get("width", 0) > 0.9 * 1920, "diff picture not filling the window: %r" % st.get("svg"))
    widths = {s.get("width") for s in d.find("svg", "ppt-timeline")}
    check(len(widths) == 1, "the base and new pictures differ in width: %r" % widths)
    check(any(t.startswith("slower") for t in dom.texts), "no 'slower' verdict on the diff page")


def main():
    ap = arg_parser(__doc__)
    ap.add_argument("--chromium", default=os.environ.get("PPT_CHROMIUM", ""))
    args = ap.parse_args()
    chromium = args.chromium or next(
        (c for c in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable") if shutil.which(c)), None)
    if not chromium:
        print("SKIP: no Chromium found; PPT_WITH_BROWSER=1 scripts/setup.sh installs Debian's chromium")
        return SKIP
    with temp_dir("ppt-browser-") as work:
        jobs = check_report(args.binary, chromium, work)
        check_tall(args.binary, chromium, work)
        check_bands(args.binary, chromium, work)
        check_diff(args.binary, chromium, work)
    print("ok: report with %d jobs and a diff page checked in %s" % (jobs, chromium))
    return 0


if __name__ == "__main__":
    sys.exit(main())
