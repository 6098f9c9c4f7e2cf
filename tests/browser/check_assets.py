#!/usr/bin/env python3
"""The report page's script and style sheet (src/output/report/): the script
parses (`node --check`), and a page the binary writes carries both files byte
for byte, its CSP naming the script's SHA-256 as hashlib computes it (the
build computed it with openssl: cmake/embed_report_assets.cmake); and the
script measures block labels with the advances src/output/picture/block_label.cc
uses, so the page and the pictures label by one rule.

    python3 tests/browser/check_assets.py --binary build/pp-timeline
"""
import base64
import hashlib
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "e2e"))
import ppt_test  # noqa: E402

ROOT = ppt_test.ROOT
JS = os.path.join(ROOT, "src", "output", "report", "report.js")
CSS = os.path.join(ROOT, "src", "output", "report", "report.css")
LABELS = os.path.join(ROOT, "src", "output", "picture", "block_label.cc")


def advances_of_cc(text):
    """{char: advance} of block_label.cc's table ('0' for the digits, '' for the default)."""
    table = {c: int(v) for c, v in re.findall(r"case '(.)': return (\d+)\.0 / 2048;", text)}
    digit = re.search(r"c >= '0' && c <= '9'\) return (\d+)\.0 / 2048;", text)
    default = re.search(r"default: return (\d+)\.0 / 2048;", text)
    table["0"] = int(digit.group(1)) if digit else None
    table[""] = int(default.group(1)) if default else None
    return table


def advances_of_js(text):
    m = re.search(r"var ADVANCE = \{([^}]*)\};", text)
    table = {c: int(v) for c, v in re.findall(r"(\w): (\d+)", m.group(1))} if m else {}
    digit = re.search(r"var DIGIT = (\d+), WIDEST = (\d+)", text)
    table["0"] = int(digit.group(1)) if digit else None
    table[""] = int(digit.group(2)) if digit else None
    return table


def main():
    ap = ppt_test.arg_parser(__doc__)
    ap.add_argument("--node", default=shutil.which("node"))
    args = ap.parse_args()
    problems = []
    if args.node:
        p = subprocess.run([args.node, "--check", JS], capture_output=True, text=True)
        if p.returncode != 0:
            problems.append("node --check report.js: " + p.stderr.strip())
    else:
        print("check_assets: no node: report.js not parsed", file=sys.stderr)
    with open(JS, "rb") as f:
        script = f.read()
    with open(CSS, "rb") as f:
        style = f.read()
    with open(LABELS, encoding="utf-8") as f:
        cc = advances_of_cc(f.read())
    js = advances_of_js(script.decode("utf-8"))
    if len(cc) < 5 or cc != js:
        problems.append("report.js measures labels with %r, block_label.cc with %r" % (js, cc))
    with ppt_test.temp_dir() as work:
        logs = os.path.join(work, "logs")
        ppt_test.gen_logs(logs, ["--stages", "2", "--micro-batches", "2", "--steps", "2"])
        page_path = os.path.join(work, "r.html")
        p = ppt_test.run(args.binary, ["report", "--log_dir", logs, "-o", page_path])
        if p.returncode != 0:
            problems.append("report failed: " + p.stderr)
        else:
            with open(page_path, "rb") as f:
                page = f.read()
            m = re.search(rb"<script>(.*?)</script>", page, re.S)
            if not m or m.group(1) != script:
                problems.append("the page's script is not report.js byte for byte")
            if b"<style>" + style + b"</style>" not in page:
                problems.append("the page's style sheet is not report.css byte for byte")
            want = b"script-src 'sha256-" + base64.b64encode(hashlib.sha256(script).digest()) + b"'"
            if want not in page:
                problems.append("the CSP does not name report.js's SHA-256 (%s)" % want.decode())
    for p in problems:
        print("FAIL:", p)
    if not problems:
        print("ok: report.js parses; the page carries both files and the script's hash")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
