#!/usr/bin/env python3
"""The `stats` and `diff` subcommands through the real binary: reports in
every format, the CI gate's exit status, a stats JSON as a diff baseline, the
two-run trace, and the usage errors.

  stats_cli.py --binary build/pp-timeline
"""

import json
import os
import sys

import ppt_test
from ppt_test import Checks, arg_parser, temp_dir

RUN = ["--schedule", "1f1b", "--stages", "4", "--micro-batches", "8", "--steps", "3", "--seed", "9"]

checks = Checks()
check = checks.check


def gen(out, *extra):
    ppt_test.gen_logs(out, RUN + list(extra))


def run(binary, *args):
    p = ppt_test.run(binary, args, timeout=120)
    return p.returncode, p.stdout, p.stderr


def main():
    binary = arg_parser(__doc__).parse_args().binary
    with temp_dir("ppt-stats-cli-") as tmp:
        a, same, slow = (os.path.join(tmp, n) for n in ("a", "same", "slow"))
        gen(a)
        gen(same)
        gen(slow, "--slow", "1:1.2")

        # stats, every format
        rc, out, err = run(binary, "stats", "--log_dir", a)
        check(rc == 0, f"stats exits 0 (got {rc}: {err})")
        check("1F1B" in out and "bubble" in out and "critical path" in out, "stats table names the schedule")
        check("\x1b[" not in out, "no colour when stdout is not a terminal")
        rc, out, _ = run(binary, "stats", "--log-dir", a, "--color", "always")
        check(rc == 0 and "\x1b[" in out, "--color always colours")
        rc, out, _ = run(binary, "stats", "--log_dir", a, "--markdown")
        check(rc == 0 and "| rank |" in out and out.startswith("### "), "stats --markdown is a Markdown document")
        rc, out, _ = run(binary, "stats", "--log_dir", a, "--json")
        doc = json.loads(out) if rc == 0 else {}
        check(doc.get("schema") == "pp-timeline-stats/1", "stats --json has its schema")
        check(len(doc.get("ranks", [])) == 4 and all("bubble_ratio" in r for r in doc.get("ranks", [])),
              "stats --json lists the ranks")
        check([s.get("step") for s in doc.get("steps", [])] == [0, 1, 2], "stats --json lists the steps")
        base = os.path.join(tmp, "base.json")
        rc, out, _ = run(binary, "stats", "--log_dir", a, "-o", base)
        check(rc == 0 and out == "" and json.load(open(base))["schema"] == "pp-timeline-stats/1",
              "stats -o x.json writes JSON to the file")
        files = [os.path.join(a, f"workerlog.{i}") for i in range(4)]
        rc, out, _ = run(binary, "stats", "--json", *files)
        check(rc == 0 and json.loads(out)["ranks"][3]["busy_us"] == doc["ranks"][3]["busy_us"],
              "stats on files equals stats on the directory")
        rc, out, _ = run(binary, "stats", "--log_dir", a, "--devices", "0,1", "--json", "--threads", "1")
        check(rc == 0 and len(json.loads(out)["ranks"]) == 2, "stats --devices keeps those ranks")

        # --devices keeps the run's global ranks and stages: the straggler is the rank that was slow
        slow2 = os.path.join(tmp, "slow2")
        gen(slow2, "--slow", "2:1.3")
        rc, out, err = run(binary, "stats", "--log_dir", slow2, "--devices", "1,2,3", "--json", "-q")
        doc = json.loads(out) if rc == 0 else {}
        check([r["rank"] for r in doc.get("ranks", [])] == [1, 2, 3], f"--devices 1,2,3: ranks 1 to 3 ({err})")
        check([r["stage"] for r in doc.get("ranks", [])] == [1, 2, 3], "--devices 1,2,3: the run's stages")
        check([s["rank"] for s in doc.get("stragglers", [])][:1] == [2],
              f"--devices 1,2,3 names rank 2 as the straggler ({doc.get('stragglers')})")
        check(doc.get("schedule", {}).get("pp_degree") == 4 and doc.get("schedule", {}).get("name") == "1F1B",
              f"--devices 1,2,3: the schedule of the 4-stage run ({doc.get('schedule')})")
        check(doc.get("partial", "").startswith("ranks 1-3 of 4"), f"the JSON says the load is partial ({doc.get('partial')})")
        rc, out, err = run(binary, "stats", "--log_dir", slow2, "--devices", "1,2,3", "-q")
        check(rc == 0 and "ranks 1-3 of 4 loaded (--devices)" in out, "the table says the load is partial")
        rc, out, err = run(binary, "stats", "--log_dir", slow2, "--devices", "1,2,3", "--pp-degree", "4", "-q")
        check(rc == 0, f"--pp-degree 4 divides the run's 4 ranks, not the 3 loaded ({err.strip()})")
        rc, out, err = run(binary, "diff", slow2, a, "--devices", "1,2,3", "--json")
        d = json.loads(out) if rc == 0 else {}
        check(d.get("changed_ranks", [None])[0] == 2, f"diff --devices names the changed rank by its global rank ({d.get('changed_ranks')})")

        # diff: identical, slower, gate
        rc, out, err = run(binary, "diff", a, same, "--fail-if-slower", "1")
        check(rc == 0 and "same" in out and "passed" in out, f"identical runs pass the gate (rc {rc}: {err})")
        rc, out, err = run(binary, "diff", a, slow, "--fail-if-slower", "5")
        check(rc == 1, f"a 20% slower rank trips the gate (rc {rc})")
        check("slower" in out and "rank 1 (stage 1)" in out, "diff names the slow rank")
        check("--fail-if-slower 5" in err, "the gate says why on stderr")
        rc, out, _ = run(binary, "diff", a, slow)
        check(rc == 0, "without a gate, slower is not a failure")
        rc, out, _ = run(binary, "diff", base, slow, "--json")
        d = json.loads(out) if rc == 0 else {}
        check(d.get("verdict") == "slower" and d.get("changed_ranks", [None])[0] == 1,
              "a stats JSON works as the baseline")
        check(d.get("step_time", {}).get("delta_pct", 0) > 5, "diff --json has the step time delta")
        rc, out, _ = run(binary, "diff", a, slow, "--markdown")
        check(rc == 0 and out.startswith("### ") and "| rank |" in out, "diff --markdown")

        # the two-run trace
        trace = os.path.join(tmp, "diff.json")
        rc, _, err = run(binary, "diff", a, slow, "--trace", trace)
        check(rc == 0 and os.path.exists(trace), f"diff --trace writes a trace ({err})")
        if os.path.exists(trace):
            names = sorted(e["args"]["name"] for e in json.load(open(trace))["traceEvents"]
                           if e.get("ph") == "M" and e.get("name") == "process_name")
            check(names == ["A: " + a, "B: " + slow], f"the trace has the two runs as processes ({names})")
        rc, _, err = run(binary, "diff", base, slow, "--trace", os.path.join(tmp, "no.json"))
        check(rc == 1 and "needs the logs" in err, "--trace refuses a stats JSON baseline")

        # the steps are the trace's Step track, also when a machine's clock is off
        skew = os.path.join(tmp, "skew")
        gen(skew, "--machines", "2", "--skew", "1:3")
        trace_json = os.path.join(tmp, "skew.json")
        rc, _, err = run(binary, "--log_dir", skew, "-o", trace_json, "-q")
        check(rc == 0, f"convert of the skewed run ({err})")
        spans = {}
        for e in json.load(open(trace_json))["traceEvents"]:
            if e.get("cat") == "step" and e.get("ph") == "X":
                spans[e["args"]["step"]] = (e["ts"], e["ts"] + e["dur"])
        rc, out, _ = run(binary, "stats", "--log_dir", skew, "--json", "-q")
        mine = {s["step"]: (s["start_us"], s["end_us"]) for s in json.loads(out)["steps"]} if rc == 0 else {}
        check(len(spans) == 3 and all(abs(mine[k][0] - v[0]) < 1e-3 and abs(mine[k][1] - v[1]) < 1e-3
                                      for k, v in spans.items() if k in mine) and mine.keys() == spans.keys(),
              f"stats steps are the trace's Step track with clocks aligned ({mine} vs {spans})")
        rc, out, _ = run(binary, "stats", "--log_dir", skew, "--json", "-q")
        aligned = json.loads(out)["ranks"][3]["warmup_us"] if rc == 0 else 0
        rc, out, _ = run(binary, "stats", "--log_dir", skew, "--json", "-q", "--align-clocks", "off")
        logged = json.loads(out)["ranks"][3]["warmup_us"] if rc == 0 else 0
        # rank 3 is on machine1, whose clock runs 3 ms ahead: it seems to start 3 ms later per step
        check(abs(logged - aligned - 3 * 3000) < 300,
              f"--align-clocks off measures the logged times (rank 3 warm-up {logged} vs {aligned} us)")

        # usage and input errors
        bad = os.path.join(tmp, "bad.json")
        with open(bad, "w") as f:
            f.write('{"traceEvents": []}')
        for args, want, what in [
            (["stats"], 2, "stats without input"),
            (["stats", "--log_dir", os.path.join(tmp, "missing")], 2, "stats on a missing directory"),
            (["stats", "--log_dir", a, "--pp-degree", "3"], 2, "a --pp-degree that does not divide the ranks"),
            (["stats", "--log_dir", a, "--json", "--markdown"], 2, "--json with --markdown"),
            (["stats", "--log_dir", a, "--color", "sometimes"], 2, "a bad --color"),
            (["diff", a], 2, "diff with one run"),
            (["diff", a, os.path.join(tmp, "missing")], 2, "diff with a missing run"),
            (["diff", bad, a], 1, "diff with a JSON that is not stats"),
            (["diff", a, slow, "-o", os.path.join(tmp, "x.pdf")], 2, "diff -o with an unknown format"),
            (["diff", a, slow, "--trace", os.path.join(tmp, "x.html")], 2, "diff --trace x.html"),
            (["diff", a, slow, "-o", os.path.join(tmp, "x.svg")], 2, "diff -o with a format diff does not write"),
            (["diff", a, slow, "-o", os.path.join(tmp, "x.pftrace")], 2, "diff -o x.pftrace"),
        ]:
            rc, _, err = run(binary, *args)
            check(rc == want, f"{what}: exit {want} (got {rc}: {err.strip()[:200]})")
            check("Traceback" not in err and "terminate" not in err, f"{what}: no crash")
        rc, _, err = run(binary, "diff", bad, a)
        check("bad.json" in err and "schema" in err, "a bad baseline is named with the reason")

    return checks.exit_code("stats/diff CLI")


if __name__ == "__main__":
    sys.exit(main())
