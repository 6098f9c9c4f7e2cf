#!/usr/bin/env python3
"""Every picture of one run shows the same steps: a run too dense to read
(--stages 4 --micro-batches 16, three steps) is drawn as its slowest step in
the .svg, the .png's picture and the .html report alike, and each says so;
and a zero-bubble run's backward and backward_b blocks differ in colour.

    python3 tests/browser/check_pictures.py --binary build/pp-timeline
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "e2e"))
import ppt_test  # noqa: E402


def runs_drawn(text):
    """(run, first step, last step) of each g.run of a picture or page."""
    return re.findall(r'<g class="run" data-run="(\d+)" data-first-step="(-?\d+)" data-last-step="(-?\d+)"', text)


def legend_fills(svg):
    return dict(re.findall(r'<g class="legend-item" data-legend-type="([^"]+)"><rect [^>]*fill="(#[0-9a-f]{6})"', svg))


def main():
    ap = ppt_test.arg_parser(__doc__)
    args = ap.parse_args()
    problems = []
    with ppt_test.temp_dir() as work:
        logs = os.path.join(work, "dense")
        ppt_test.gen_logs(logs, ["--stages", "4", "--micro-batches", "16", "--steps", "3"])
        svg, html = os.path.join(work, "t.svg"), os.path.join(work, "t.html")
        p = ppt_test.run(args.binary, ["--log_dir", logs, "-o", svg, "-o", html])
        if p.returncode != 0:
            problems.append("convert failed: " + p.stderr)
        else:
            with open(svg, encoding="utf-8") as f:
                svg_text = f.read()
            with open(html, encoding="utf-8") as f:
                html_text = f.read()
            a, b = runs_drawn(svg_text), runs_drawn(html_text)
            if not a or a != b:
                problems.append("the .svg draws %r, the .html %r" % (a, b))
            elif a[0][1] != a[0][2]:
                problems.append("a dense run is drawn as one step, not %r" % (a,))
            if p.stderr.count("the slowest of 3 steps") != 1:
                problems.append("the command should say once which step is drawn: %r" % p.stderr)
            for name, text in (("svg", svg_text), ("html", html_text)):
                if "the slowest of 3 steps" not in text:
                    problems.append("the %s does not say that it shows the slowest step" % name)
        zb = os.path.join(work, "zb")
        ppt_test.gen_logs(zb, ["--stages", "2", "--micro-batches", "4", "--steps", "1", "--schedule", "zbh1"])
        zsvg = os.path.join(work, "zb.svg")
        p = ppt_test.run(args.binary, ["--log_dir", zb, "-o", zsvg])
        if p.returncode != 0:
            problems.append("convert (zbh1) failed: " + p.stderr)
        else:
            with open(zsvg, encoding="utf-8") as f:
                fills = legend_fills(f.read())
            got = [fills.get(t) for t in ("backward", "backward_b", "backward_w")]
            if None in got or len(set(got)) != 3:
                problems.append("backward, backward_b and backward_w should have three colours: %r" % fills)
    for p in problems:
        print("FAIL:", p)
    if not problems:
        print("ok: every picture of the run draws the same steps; the three backward kinds have three colours")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
