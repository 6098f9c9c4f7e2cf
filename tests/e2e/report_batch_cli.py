#!/usr/bin/env python3
"""`report`, `batch` and `.svg`/`.png`/`.html` outputs through the binary (no browser
needed): exit statuses, messages, what is written.

  - batch: exit 0 when every artifact converts, 1 when one fails (the others
    still written, the failure in index.json and summary.md), 2 for usage;
    one progress line per run when stderr is not a terminal;
  - report: the page written, usage errors for a missing -o or bad --steps;
  - convert -o x.svg / x.png / x.html, --steps, --width, --scale, and the note when a
    picture is capped;
  - batch in CI: .zip artifacts, run names from the distinguishing path parts,
    a reused --out (the files it wrote removed, nothing else), links
    in summary.md (--link-base, GitHub Actions), rounded ratios, --outputs,
    --baseline and --fail-if-slower, and every index.json validated against
    docs/schemas/batch-index.v1.json;
  - batch on artifacts it cannot trust: messages name archive:entry, never the
    extraction folder; a user's files in --out (even in a run folder) survive
    later batches; a second batch into a --out another holds is refused; the
    step column is the gate's metric, and a failed gate shows in index.html.
"""
import json
import os
import re
import sys
import tarfile
import zipfile

import jsonschema

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


def run(binary, *args, env=None):
    if env is None:
        return ppt_test.run(binary, args)
    return ppt_test.run(binary, args, env=env)


SCHEMA_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "schemas",
                           "batch-index.v1.json")


def load_index(folder):
    """index.json of a batch, validated against the schema in docs/schemas."""
    with open(os.path.join(folder, "index.json")) as f:
        index = json.load(f)
    with open(SCHEMA_PATH) as f:
        schema = json.load(f)
    try:
        jsonschema.validate(index, schema, format_checker=jsonschema.FormatChecker())
    except jsonschema.ValidationError as e:
        raise Failure("%s/index.json does not match %s: %s at %s" % (
            folder, os.path.basename(SCHEMA_PATH), e.message, "/".join(str(x) for x in e.absolute_path)))
    return index


def write_slow_run(folder, factor, ranks=2, steps=3):
    """write_run with every job and gap `factor` times as long."""
    os.makedirs(folder)
    for r in range(ranks):
        with open(os.path.join(folder, "workerlog.%d" % r), "w") as f:
            for s in range(steps):
                t = int((s * 2000 + r * 40) * factor)
                for (typ, mb, a, b) in [("forward", 0, 0, 200), ("backward", 0, 300, 700), ("optimizer", 0, 800, 850)]:
                    f.write(JOB_LINE % (mb, typ, mb, ms(EPOCH_NS + (t + int(a * factor)) * 1000),
                                        ms(EPOCH_NS + (t + int(b * factor)) * 1000)))


def write_warm_run(folder, ranks=2, steps=4, warmup=3.0):
    """write_run with step 0 (the warm-up) `warmup` times as long as the others."""
    os.makedirs(folder)
    for r in range(ranks):
        with open(os.path.join(folder, "workerlog.%d" % r), "w") as f:
            t0 = 0
            for s in range(steps):
                k = warmup if s == 0 else 1.0
                t = t0 + r * 40
                for (typ, mb, a, b) in [("forward", 0, 0, 200), ("backward", 0, 300, 700), ("optimizer", 0, 800, 850)]:
                    f.write(JOB_LINE % (mb, typ, mb, ms(EPOCH_NS + (t + int(a * k)) * 1000),
                                        ms(EPOCH_NS + (t + int(b * k)) * 1000)))
                t0 += int(2000 * k)


def check_batch_ci(b):
    with temp_dir("ppt-batch-ci-") as w:
        j = lambda *p: os.path.join(w, *p)
        write_run(j("ci1", "logs"))
        write_run(j("ci2", "logs"))
        write_run(j("zsrc", "logs"))

        # A .zip artifact (GitHub Actions' download), made by zipfile as the web UI's are.
        with zipfile.ZipFile(j("artifact.zip"), "w", zipfile.ZIP_DEFLATED) as z:
            for name in sorted(os.listdir(j("zsrc", "logs"))):
                z.write(j("zsrc", "logs", name), "logs/" + name)
        p = run(b, "batch", j("artifact.zip"), "--out", j("oz"), "-q")
        check(p.returncode == 0, "batch of a .zip: exit %d: %s" % (p.returncode, p.stderr))
        index = load_index(j("oz"))
        check([r["status"] for r in index["runs"]] == ["ok"], "zip statuses %r" % index["runs"])
        check(index["runs"][0]["name"] == "artifact-logs", "zip run name %r" % index["runs"][0]["name"])

        # A hostile .zip: zip-slip names and a symbolic link entry are refused, named in the run's warnings,
        # and nothing is written outside; the logs beside them are converted.
        with zipfile.ZipFile(j("hostile.zip"), "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("../evil", "pwned")
            z.writestr("logs/../../evil2", "pwned")
            link = zipfile.ZipInfo("logs/etc")
            link.create_system = 3
            link.external_attr = 0o120777 << 16
            z.writestr(link, "/etc")
            z.writestr("logs/etc/passwd-evil", "pwned")
            for name in sorted(os.listdir(j("zsrc", "logs"))):
                z.write(j("zsrc", "logs", name), "logs/" + name)
        p = run(b, "batch", j("hostile.zip"), "--out", j("oh", "out"), "-q")
        check(p.returncode == 0, "batch of a hostile .zip: exit %d: %s" % (p.returncode, p.stderr))
        check(not os.path.exists(j("oh", "evil")) and not os.path.exists(j("evil2")) and not os.path.exists(j("evil")),
              "a zip-slip entry was written outside")
        index = load_index(j("oh", "out"))
        warnings = "\n".join(index["runs"][0]["warnings"])
        for want in ["hostile.zip:../evil: '..' in the path refused", "hostile.zip:logs/etc: symbolic link not extracted",
                     "hostile.zip:logs/../../evil2: '..' in the path refused"]:
            check(want in warnings, "warnings lack %r: %r" % (want, warnings))

        # Two artifacts with the same last folder name: named by the parts that differ.
        p = run(b, "batch", j("ci1", "logs"), j("ci2", "logs"), "--out", j("o"), "-q")
        check(p.returncode == 0, "batch ci1/logs ci2/logs: exit %d: %s" % (p.returncode, p.stderr))
        index = load_index(j("o"))
        check([r["name"] for r in index["runs"]] == ["ci1-logs", "ci2-logs"], "names %r" %
              [r["name"] for r in index["runs"]])
        # Ratios rounded as stats --json rounds them (6 decimals).
        for r in index["runs"]:
            check(r["bubble_ratio"] == round(r["bubble_ratio"], 6), "bubble_ratio not rounded: %r" % r["bubble_ratio"])
        # The default outputs: no Chrome JSON (the large one), the others there.
        kinds = sorted(index["runs"][0]["outputs"])
        check(kinds == ["perfetto_trace", "report", "stats_json", "svg"], "default outputs %r" % kinds)
        check(not os.path.exists(j("o", "ci1-logs", "trace.json")), "trace.json written by default")
        stats = json.load(open(j("o", "ci1-logs", "stats.json")))
        check(stats["bubble_ratio"] == index["runs"][0]["bubble_ratio"], "stats.json and index.json disagree")

        # Reusing --out: the run folders of the last batch go, what the user put there stays.
        os.makedirs(j("o", "mine"))
        open(j("o", "mine", "notes.txt"), "w").write("keep\n")
        open(j("o", "readme.txt"), "w").write("keep\n")
        p = run(b, "batch", j("ci1", "logs"), "--out", j("o"), "-q", "--outputs", "svg")
        check(p.returncode == 0, "second batch into o: exit %d: %s" % (p.returncode, p.stderr))
        index = load_index(j("o"))
        check([r["name"] for r in index["runs"]] == ["logs"], "names in the reused --out %r" % index["runs"])
        check(not os.path.exists(j("o", "ci1-logs")) and not os.path.exists(j("o", "ci2-logs")),
              "stale run folders left: %r" % sorted(os.listdir(j("o"))))
        check(os.path.exists(j("o", "mine", "notes.txt")) and os.path.exists(j("o", "readme.txt")),
              "a file batch did not write was removed")
        check(sorted(os.listdir(j("o", "logs"))) == ["timeline.svg"],
              "--outputs svg wrote %r" % sorted(os.listdir(j("o", "logs"))))
        check(index["runs"][0]["outputs"] == {"svg": "logs/timeline.svg"}, "outputs %r" % index["runs"][0]["outputs"])
        p = run(b, "batch", j("ci1", "logs"), "--out", j("o2"), "--outputs", "svg,bogus")
        check(p.returncode == 2 and "bogus" in p.stderr, "--outputs bogus: exit %d %r" % (p.returncode, p.stderr))

        # Links in summary.md: relative by default, absolute under --link-base, and in GitHub Actions
        # (whose artifacts' files have no address) the run page and the artifact's name instead.
        md = open(j("o", "summary.md")).read()
        check("](logs/" not in md, "a link to a run that has no report: %r" % md)
        p = run(b, "batch", j("ci1", "logs"), "--out", j("o3"), "-q")
        md = open(j("o3", "summary.md")).read()
        check("[logs](logs/report.html)" in md, "relative link: %r" % md)
        p = run(b, "batch", j("ci1", "logs"), "--out", j("o3"), "-q", "--link-base", "https://ci.example/a/b/")
        md = open(j("o3", "summary.md")).read()
        check("[logs](https://ci.example/a/b/logs/report.html)" in md, "--link-base link: %r" % md)
        env = dict(os.environ, GITHUB_ACTIONS="true", GITHUB_SERVER_URL="https://github.com",
                   GITHUB_REPOSITORY="o/r", GITHUB_RUN_ID="42")
        p = run(b, "batch", j("ci1", "logs"), "--out", j("o3"), "-q", "--artifact-name", "pp-reports", env=env)
        check(p.returncode == 0, "batch in Actions: %s" % p.stderr)
        md = open(j("o3", "summary.md")).read()
        check("](logs/report.html)" not in md, "a relative link in a GitHub step summary: %r" % md)
        check("https://github.com/o/r/actions/runs/42" in md and "`pp-reports`" in md and "`logs/report.html`" in md,
              "Actions summary does not name the run page, the artifact and the file: %r" % md)

        # --baseline: the baseline converted too, each run compared with it; --fail-if-slower gates.
        write_run(j("base", "logs"))
        write_slow_run(j("slow", "logs"), 1.2)
        write_run(j("same", "logs"))
        p = run(b, "batch", "--baseline", j("base", "logs"), j("same", "logs"), j("slow", "logs"), "--out", j("ob"), "-q")
        check(p.returncode == 0, "batch --baseline without a gate: exit %d: %s" % (p.returncode, p.stderr))
        index = load_index(j("ob"))
        check(index["baseline"] == "base-logs", "index baseline %r" % index.get("baseline"))
        runs = {r["name"]: r for r in index["runs"]}
        check(sorted(runs) == ["base-logs", "same-logs", "slow-logs"], "baseline runs %r" % sorted(runs))
        check(runs["base-logs"]["role"] == "baseline" and runs["base-logs"]["baseline"] is None,
              "baseline entry %r" % runs["base-logs"])
        slow = runs["slow-logs"]["baseline"]
        check(slow["verdict"] == "slower" and abs(slow["step_time_delta_pct"] - 20.0) < 0.5,
              "slow run against the baseline %r" % slow)
        check(runs["same-logs"]["baseline"]["verdict"] == "same", "same run %r" % runs["same-logs"]["baseline"])
        check(slow["step_time_delta_pct"] == round(slow["step_time_delta_pct"], 3), "delta not rounded %r" % slow)
        md = open(j("ob", "summary.md")).read()
        check("vs base-logs" in md and "+20.0% (slower)" in md, "summary.md baseline column: %r" % md)
        p = run(b, "batch", "--baseline", j("base", "logs"), j("same", "logs"), j("slow", "logs"), "--out", j("ob"),
                "-q", "--fail-if-slower", "10")
        check(p.returncode == 1, "--fail-if-slower 10 with a 20%% slower run: exit %d" % p.returncode)
        check("slow-logs" in p.stderr and "slower than the baseline" in p.stderr, "gate message: %r" % p.stderr)
        index = load_index(j("ob"))
        check(index["runs"][2]["baseline"]["gate_failed"] is True and index["runs"][1]["baseline"]["gate_failed"] is False,
              "gate_failed %r" % [r["baseline"] for r in index["runs"][1:]])
        p = run(b, "batch", "--baseline", j("base", "logs"), j("same", "logs"), j("slow", "logs"), "--out", j("ob"),
                "-q", "--fail-if-slower", "30")
        check(p.returncode == 0, "--fail-if-slower 30 with a 20%% slower run: exit %d %s" % (p.returncode, p.stderr))
        p = run(b, "batch", j("same", "logs"), "--out", j("ob2"), "--fail-if-slower", "10")
        check(p.returncode == 2 and "--baseline" in p.stderr, "--fail-if-slower without --baseline: %r" % p.stderr)
        md = open(j("ob", "summary.md")).read()
        check("**Gate passed:** 2 runs compared with the baseline, none slower by more than 30% (the mean step "
              "period, every step)" in md and "gate passed" in md.splitlines()[0],
              "summary.md says the gate passed, on what: %r" % md[:400])

        # The selection options mean in batch what they mean in stats and diff: a run whose step 0 (the
        # warm-up) is slow fails the gate with it and passes without it, in the gate and every figure.
        write_warm_run(j("warm", "logs"), steps=4)
        write_warm_run(j("base4", "logs"), steps=4, warmup=1.0)
        p = run(b, "batch", "--baseline", j("base4", "logs"), j("warm", "logs"), "--out", j("ow"), "-q",
                "--fail-if-slower", "10")
        check(p.returncode == 1, "the warm-up counted: gate fails (exit %d: %s)" % (p.returncode, p.stderr))
        # One figure, one name: the report's card headlines the step period as batch shows it, the mean.
        warm = [r for r in load_index(j("ow"))["runs"] if r["name"] == "warm-logs"][0]
        page = j("warm.html")
        p = run(b, "report", "--log_dir", j("warm", "logs"), "-o", page, "-q")
        card = re.search(r'data-figure="period"><div class="name">([^<]*)</div><div class="value">([^<]*)<',
                         open(page).read())
        check(card is not None and card.group(1) == "step period (mean)" and
              card.group(2) == "%.3f ms" % (warm["step_metric_us"] / 1000),
              "the card's period is batch's mean (%.3f ms): %r" % (warm["step_metric_us"] / 1000,
                                                                   card.groups() if card else None))
        p = run(b, "batch", "--baseline", j("base4", "logs"), j("warm", "logs"), "--out", j("ow"), "-q",
                "--fail-if-slower", "10", "--skip-warmup", "1")
        check(p.returncode == 0, "--skip-warmup 1: gate passes (exit %d: %s)" % (p.returncode, p.stderr))
        check("gate passed: 1 run compared with the baseline, none more than --fail-if-slower 10% slower "
              "(--skip-warmup 1)" in p.stderr, "the gate that passed says so on stderr: %r" % p.stderr)
        index = load_index(j("ow"))
        check([r["steps"] for r in index["runs"]] == [3, 3], "--skip-warmup 1: 3 steps measured %r" %
              [r["steps"] for r in index["runs"]])
        md = open(j("ow", "summary.md")).read()
        check("**Gate passed:**" in md and "--skip-warmup 1" in md, "summary.md names the selection: %r" % md[:400])
        stats = json.load(open(os.path.join(j("ow"), index["runs"][1]["outputs"]["stats_json"])))
        check([s["step"] for s in stats["steps"]] == [1, 2, 3], "stats.json's steps %r" % stats.get("steps"))
        p = run(b, "batch", "--baseline", j("base4", "logs"), j("warm", "logs"), "--out", j("ow"), "-q",
                "--fail-if-slower", "10", "--steps", "1:")
        check(p.returncode == 0, "--steps 1: measures steps 1 on: gate passes (exit %d: %s)" % (p.returncode, p.stderr))
        # A folder of logs under other names: batch says what it saw and how to read them.
        os.makedirs(j("shimlogs"))
        for r in range(2):
            with open(j("warm", "logs", "workerlog.%d" % r)) as src, open(j("shimlogs", "shim.%d.log" % r), "w") as dst:
                dst.write(src.read())
        p = run(b, "batch", j("shimlogs"), "--out", j("os"), "-q")
        error = load_index(j("os"))["runs"][0]["error"]
        check(p.returncode == 1 and "2 other log files (shim.0.log, shim.1.log)" in p.stderr and
              "pp-timeline %s %s" % (j("shimlogs", "shim.0.log"), j("shimlogs", "shim.1.log")) in error,
              "batch on a folder of shim.<rank>.log names them and the command line: %r %r" % (p.stderr, error))
        p = run(b, "batch", j("warm", "logs"), "--out", j("ow"), "-q", "--skip-warmup", "9")
        check(p.returncode == 1 and "no step is left" in p.stderr, "--skip-warmup 9 of 4 steps: %r" % p.stderr)


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
        index = load_index(os.path.join(w, "o1"))
        check([r["status"] for r in index["runs"]] == ["ok", "ok"], "statuses %r" % index["runs"])
        check([r["name"] for r in index["runs"]] == ["good", "ci-7-logs"], "names %r" % index["runs"])
        for r in index["runs"]:
            for rel in r["outputs"].values():
                check(os.path.getsize(os.path.join(w, "o1", rel)) > 0, "missing output " + rel)

        # batch: one bad among good -> 1, the others still written
        p = run(b, "batch", os.path.join(w, "good"), os.path.join(w, "bad.tar.gz"), os.path.join(w, "nope"),
                "--out", os.path.join(w, "o2"), "-q")
        check(p.returncode == 1, "batch with bad artifacts: exit %d" % p.returncode)
        check("bad_artifact" in p.stderr and "nope: no such file or directory" in p.stderr,
              "failures not listed under -q: %r" % p.stderr)
        index = load_index(os.path.join(w, "o2"))
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
        # A step of 6 jobs over a cap of 4: its first 4 jobs are drawn, never more.
        check(p.returncode == 0 and "showing the first 4 of step 0's 6 jobs" in p.stderr, "cap note: %r" % p.stderr)
        check(open(page).read().count('<rect class="job"') == 4, "report --max-jobs 4 drew %d jobs" %
              open(page).read().count('<rect class="job"'))
        p = run(b, "report", "--log_dir", os.path.join(w, "good"), "-o", page, "--max-jobs", "12")
        check(p.returncode == 0 and "showing steps 0-1 (12 of 18 jobs)" in p.stderr, "cap note: %r" % p.stderr)

        # convert -o .svg / .html
        svg, rep = os.path.join(w, "t.svg"), os.path.join(w, "t.html")
        p = run(b, "--log_dir", os.path.join(w, "good"), "-o", svg, "-o", rep, "--steps", "2")
        check(p.returncode == 0, "convert -o .svg -o .html: %s" % p.stderr)
        check(open(svg).read().count('<rect class="job"') == 6, "convert --steps 2 .svg")
        check(open(rep).read().startswith("<!DOCTYPE html>"), "convert .html is not the page")
        png = os.path.join(w, "t.png")
        p = run(b, "--log_dir", os.path.join(w, "good"), "-o", svg, "-o", png, "--width", "900", "--scale", "1")
        check(p.returncode == 0, "convert -o .png: %s" % p.stderr)
        head = open(png, "rb").read(24)
        check(head[:8] == b"\x89PNG\r\n\x1a\n", "convert -o .png wrote no PNG")
        check(int.from_bytes(head[16:20], "big") == 900, "--width 900 --scale 1: PNG %d wide" %
              int.from_bytes(head[16:20], "big"))
        check(' width="900"' in open(svg).read()[:600], "--width 900: the SVG's width")
        p = run(b, "--log_dir", os.path.join(w, "good"), "-o", png, "--scale", "0")
        check(p.returncode == 2 and "--scale" in p.stderr, "convert --scale 0: %r" % p.stderr)
        p = run(b, "--log_dir", os.path.join(w, "good"), "-o", svg, "--steps", "x")
        check(p.returncode == 2 and "--steps" in p.stderr, "convert bad --steps: %r" % p.stderr)
        p = run(b, "--log_dir", os.path.join(w, "good"), "-o", svg, "--steps", "40:50")
        check(p.returncode == 2 and "--steps 40:50: no step is left; the run has steps 0-2" in p.stderr,
              "steps out of range: %r" % p.stderr)


def write_gappy_run(folder, gap, ranks=2, steps=3):
    """write_run with the same jobs, but steps `gap` us apart (write_run's are 2000): the busy span is the
    same, the step period is not."""
    os.makedirs(folder)
    for r in range(ranks):
        with open(os.path.join(folder, "workerlog.%d" % r), "w") as f:
            for s in range(steps):
                t = s * gap + r * 40
                for (typ, mb, a, b) in [("forward", 0, 0, 200), ("backward", 0, 300, 700), ("optimizer", 0, 800, 850)]:
                    f.write(JOB_LINE % (mb, typ, mb, ms(EPOCH_NS + (t + a) * 1000), ms(EPOCH_NS + (t + b) * 1000)))


def check_batch_untrusted(b):
    """What batch promises about artifacts it cannot trust and about --out (docs/hardening.md)."""
    import fcntl
    with temp_dir("ppt-batch-untrusted-") as w:
        j = lambda *p: os.path.join(w, *p)
        write_run(j("src", "run"))
        # Messages about an archive's files name the archive and the entry, never the extraction folder.
        with open(j("src", "run", "workerlog.1"), "a") as f:
            f.write(JOB_LINE % (0, "forward", 0, "abc", "def"))
        with zipfile.ZipFile(j("art.zip"), "w", zipfile.ZIP_DEFLATED) as z:
            for name in sorted(os.listdir(j("src", "run"))):
                z.write(j("src", "run", name), "run/" + name)
        p = run(b, "batch", j("art.zip"), "--out", j("o"), "-q")
        check(p.returncode == 0, "batch of a zip with a bad line: exit %d: %s" % (p.returncode, p.stderr))
        index = load_index(j("o"))
        report = open(j("o", "art-run", "report.html")).read()
        for f in ["index.json", "summary.md", "index.html", "art-run/report.html", "art-run/timeline.svg",
                  "art-run/trace.pftrace"]:
            with open(j("o", f), "rb") as fh:
                check(b".extract-" not in fh.read(), "%s names the extraction folder" % f)
        check((j("art.zip") + ":run/workerlog.1:10: error: job_start_time = abc") in report,
              "the report does not name archive:entry: %r" % report[report.find("Input problems"):][:400])

        # --out is the user's: a file of theirs in a run folder batch wrote into, and one beside, survive.
        with open(j("o", "art-run", "notes.txt"), "w") as f:
            f.write("mine")
        with open(j("o", "mine.txt"), "w") as f:
            f.write("mine too")
        write_run(j("src2", "other"))
        p = run(b, "batch", j("src2", "other"), "--out", j("o"), "-q")
        check(p.returncode == 0, "second batch into --out: exit %d: %s" % (p.returncode, p.stderr))
        check(open(j("o", "art-run", "notes.txt")).read() == "mine", "the user's file in a run folder was removed")
        check(open(j("o", "mine.txt")).read() == "mine too", "the user's file in --out was removed")
        check(not os.path.exists(j("o", "art-run", "report.html")), "the last batch's report was left")
        check(sorted(os.listdir(j("o"))) == [".pp-timeline-batch.json", ".pp-timeline-batch.lock", "art-run",
                                            "index.html", "index.json", "mine.txt", "other", "summary.md"],
              "--out holds %r" % sorted(os.listdir(j("o"))))

        # Two writers into one --out: the second is refused while the first holds the lock.
        with open(j("o", ".pp-timeline-batch.lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            before = sorted(os.listdir(j("o")))
            p = run(b, "batch", j("src", "run"), "--out", j("o"), "-q")
            check(p.returncode == 1 and "another pp-timeline batch is writing into this output directory" in p.stderr,
                  "a second batch into a busy --out: exit %d: %s" % (p.returncode, p.stderr))
            check(sorted(os.listdir(j("o"))) == before, "the refused batch changed --out")
        p = run(b, "batch", j("src", "run"), "--out", j("o"), "-q")
        check(p.returncode == 0, "batch once the lock is free: exit %d: %s" % (p.returncode, p.stderr))

        # One step metric: the column shows what "vs baseline" compares (the gate's metric, its mean), named;
        # a failed gate shows in the title and marks the slow run.
        write_run(j("base", "logs"))
        write_gappy_run(j("gappy", "logs"), 2600)
        p = run(b, "batch", "--baseline", j("base", "logs"), j("gappy", "logs"), "--out", j("og"), "-q",
                "--fail-if-slower", "10")
        check(p.returncode == 1, "a 30%% longer period past a 10%% gate: exit %d: %s" % (p.returncode, p.stderr))
        index = load_index(j("og"))
        base, gappy = index["runs"]
        check(base["step_metric"] == "period" and gappy["step_metric"] == "period", "metrics %r" % index["runs"])
        check(abs(base["step_metric_us"] - 2000) < 1 and abs(gappy["step_metric_us"] - 2600) < 1,
              "step_metric_us %r %r" % (base["step_metric_us"], gappy["step_metric_us"]))
        delta = gappy["baseline"]["step_time_delta_pct"]
        check(gappy["baseline"]["metric"] == "period" and
              abs(delta - 100.0 * (gappy["step_metric_us"] / base["step_metric_us"] - 1)) < 0.01,
              "the delta %r is not the change of the figure shown" % gappy["baseline"])
        md = open(j("og", "summary.md")).read()
        check("step period (mean)" in md and "2.600 ms" in md and "2.000 ms" in md, "summary.md: %r" % md)
        html = open(j("og", "index.html")).read()
        check("gate failed: 1 run slower than the baseline by more than 10%" in html, "index.html title: %r" % html[:600])
        check(html.count('data-gate="failed"') == 1 and "step period (mean)" in html, "slow run not marked: %r" % html)


def main():
    b = arg_parser(__doc__).parse_args().binary
    try:
        check_batch_untrusted(b)
        check_all(b)
        check_batch_ci(b)
    except Failure as e:
        print("FAIL: %s" % e)
        return 1
    print("ok: report, batch and .svg/.html outputs through the binary")
    return 0


if __name__ == "__main__":
    sys.exit(main())
