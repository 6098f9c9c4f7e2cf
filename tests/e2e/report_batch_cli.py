#!/usr/bin/env python3
"""`report`, `batch` and `.svg`/`.html` outputs through the binary (no browser
needed): exit statuses, messages, what is written.

  - batch: exit 0 when every artifact converts, 1 when one fails (the others
    still written, the failure in index.json and summary.md), 2 for usage;
    one progress line per run when stderr is not a terminal;
  - report: the page written, usage errors for a missing -o or bad --steps;
  - convert -o x.svg / x.html, --steps, and the note when a picture is capped.
"""
import json
import os
import sys
import tarfile

import ppt_test
from ppt_test import JOB_LINE, Failure, arg_parser, check, ms, temp_dir

EPOCH_NS = 1697793307000000000


def write_run(folder, ranks=2, steps=3):
    os.makedirs(folder)
    for r in range(ranks):
        with open(os.path.join(folder, "workerlog.%d" % r), "w") as f:
            for s in range(steps):
                t = s * 2000 + r * 40
                for (typ, mb, a, b) in [("forward", 0, 0, 200), ("backward", 0, 300, 700), ("optimizer", 0, 800, 850)]:
                    f.write(JOB_LINE % (mb, typ, mb, ms(EPOCH_NS + (t + a) * 1000), ms(EPOCH_NS + (t + b) * 1000)))
    return ranks * steps * 3


def run(binary, *args):
    return ppt_test.run(binary, args)


def check_all(b):
    with temp_dir("ppt-report-batch-") as w:
        write_run(os.path.join(w, "good"))
        write_run(os.path.join(w, "src", "logs"))
        with tarfile.open(os.path.join(w, "ci-7.tar.gz"), "w:gz") as t:
            t.add(os.path.join(w, "src", "logs"), arcname="logs")
        with open(os.path.join(w, "bad.tar.gz"), "wb") as f:
            f.write(b"\x1f\x8b\x08\x00 not gzip")

        # batch: all good -> 0
        p = run(b, "batch", os.path.join(w, "good"), os.path.join(w, "ci-7.tar.gz"), "--out", os.path.join(w, "o1"))
        check(p.returncode == 0, "batch of good artifacts: exit %d: %s" % (p.returncode, p.stderr))
        lines = [l for l in p.stderr.splitlines() if l.startswith("pp-timeline batch: [")]
        check(len(lines) == 2, "one progress line per run when not a terminal: %r" % p.stderr)
        check("\r" not in p.stderr, "a progress bar was drawn on a pipe")
        check(p.stderr.rstrip().endswith("2 runs: 2 ok, 0 failed -> %s/index.html" % os.path.join(w, "o1")),
              "last line: %r" % p.stderr)
        index = json.load(open(os.path.join(w, "o1", "index.json")))
        check([r["status"] for r in index["runs"]] == ["ok", "ok"], "statuses %r" % index["runs"])
        check([r["name"] for r in index["runs"]] == ["good", "ci-7_logs"], "names %r" % index["runs"])
        for r in index["runs"]:
            for rel in r["outputs"].values():
                check(os.path.getsize(os.path.join(w, "o1", rel)) > 0, "missing output " + rel)

        # batch: one bad among good -> 1, the others still written
        p = run(b, "batch", os.path.join(w, "good"), os.path.join(w, "bad.tar.gz"), os.path.join(w, "nope"),
                "--out", os.path.join(w, "o2"), "-q")
        check(p.returncode == 1, "batch with bad artifacts: exit %d" % p.returncode)
        check("bad_artifact" in p.stderr and "nope: no such file or directory" in p.stderr,
              "failures not listed under -q: %r" % p.stderr)
        index = json.load(open(os.path.join(w, "o2", "index.json")))
        check([r["status"] for r in index["runs"]] == ["ok", "bad_artifact", "bad_artifact"], "statuses %r" %
              [r["status"] for r in index["runs"]])
        check(index["runs"][1]["error"].startswith(os.path.join(w, "bad.tar.gz") + ": "), "error %r" %
              index["runs"][1]["error"])
        check(os.path.getsize(os.path.join(w, "o2", "good", "report.html")) > 0, "the good run was not written")
        md = open(os.path.join(w, "o2", "summary.md")).read()
        check("1 ok, 2 failed" in md, "summary.md: %r" % md[:200])

        # batch usage errors -> 2
        p = run(b, "batch", os.path.join(w, "good"))
        check(p.returncode == 2 and "--out" in p.stderr, "batch without --out: exit %d %r" % (p.returncode, p.stderr))
        p = run(b, "batch", os.path.join(w, "good"), "--out", os.path.join(w, "o3"), "--steps", "5:3")
        check(p.returncode == 2 and "the first step is after the last" in p.stderr, "bad --steps: %r" % p.stderr)

        # report
        page = os.path.join(w, "r.html")
        p = run(b, "report", "--log_dir", os.path.join(w, "good"), "-o", page, "--steps", "1:2")
        check(p.returncode == 0, "report: exit %d: %s" % (p.returncode, p.stderr))
        html = open(page).read()
        check(html.count('<rect class="job"') == 2 * 2 * 3, "report --steps 1:2 drew %d jobs" %
              html.count('<rect class="job"'))
        check('id="stats"' in html, "no stats section in the report")
        p = run(b, "report", "--log_dir", os.path.join(w, "good"))
        check(p.returncode == 2 and "-o" in p.stderr, "report without -o: %r" % p.stderr)
        p = run(b, "report", "--log_dir", os.path.join(w, "missing"), "-o", page)
        check(p.returncode == 2, "report of a missing directory: exit %d" % p.returncode)
        p = run(b, "report", "--log_dir", os.path.join(w, "good"), "-o", page, "--max-jobs", "4")
        check(p.returncode == 0 and "showing steps 0-0 (6 of 18 jobs)" in p.stderr, "cap note: %r" % p.stderr)

        # convert -o .svg / .html
        svg, rep = os.path.join(w, "t.svg"), os.path.join(w, "t.html")
        p = run(b, "--log_dir", os.path.join(w, "good"), "-o", svg, "-o", rep, "--steps", "2")
        check(p.returncode == 0, "convert -o .svg -o .html: %s" % p.stderr)
        check(open(svg).read().count('<rect class="job"') == 6, "convert --steps 2 .svg")
        check(open(rep).read().startswith("<!DOCTYPE html>"), "convert .html is not the page")
        p = run(b, "--log_dir", os.path.join(w, "good"), "-o", svg, "--steps", "x")
        check(p.returncode == 2 and "--steps" in p.stderr, "convert bad --steps: %r" % p.stderr)
        p = run(b, "--log_dir", os.path.join(w, "good"), "-o", svg, "--steps", "40:50")
        check(p.returncode == 2 and "--steps 40:50: no step is left; the run has steps 0-2" in p.stderr,
              "steps out of range: %r" % p.stderr)


def main():
    b = arg_parser(__doc__).parse_args().binary
    try:
        check_all(b)
    except Failure as e:
        print("FAIL: %s" % e)
        return 1
    print("ok: report, batch and .svg/.html outputs through the binary")
    return 0


if __name__ == "__main__":
    sys.exit(main())
