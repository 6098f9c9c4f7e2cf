#!/usr/bin/env python3
"""Properties of the dynamic-graph `[Pipeline details]` lines in launch logs.

For each scenario, scripts/gen_logs.py --details simulates a run and writes
workerlog.<i> files whose only job information is the details lines (or, in
the mixed scenario, the job lines beside them) with the ground truth; the real
binary converts them, and we check:
  - every job of the truth appears exactly once, at its Before line, with its
    type (forward<c>/backward<c> with chunks), micro-batch, rank, step and
    times exact to the ms; nothing else is drawn;
  - written + rejected = seen, and seen is the truth's job count (a mixed log
    counts its jobs once, and says so with details_memory_only);
  - the trace's metadata and the summary say the 1 ms resolution of details
    jobs (launch-log ns for the mixed log), stats finds the schedule, P and M
    and gives the bubble's bound;
  - 1 thread and 2 threads give identical bytes.

  details_properties.py --binary build/pp-timeline [--only NAME]
"""

import json
import os
import re
import subprocess
import sys
from decimal import Decimal

from ppt_test import ROOT, Failure, arg_parser, check, run, temp_dir

GEN = os.path.join(ROOT, "scripts", "gen_logs.py")
MS = 1000000

SCENARIOS = {
    "1f1b": ["--schedule", "1f1b", "--stages", "4", "--micro-batches", "8", "--steps", "3", "--fwd-ms", "3"],
    "fthenb": ["--schedule", "fthenb", "--stages", "4", "--micro-batches", "6", "--steps", "2", "--fwd-ms", "3"],
    "1f1b_sub_ms_jobs": ["--schedule", "1f1b", "--stages", "3", "--micro-batches", "6", "--fwd-ms", "0.4"],
    "vpp": ["--schedule", "vpp", "--stages", "4", "--micro-batches", "8", "--chunks", "2", "--fwd-ms", "4"],
    "vpp_step_none_dp": ["--schedule", "vpp", "--stages", "2", "--dp", "2", "--micro-batches", "4", "--chunks", "3",
                         "--fwd-ms", "6", "--details-step-none"],
    "1f1b_noise_crlf": ["--schedule", "1f1b", "--stages", "2", "--micro-batches", "4", "--fwd-ms", "2", "--noise",
                        "40", "--crlf"],
    "mixed": ["--schedule", "1f1b", "--stages", "4", "--micro-batches", "8", "--fwd-ms", "3", "--details", "mixed"],
}

SCHEDULE_NAME = {"1f1b": "1F1B", "fthenb": "FThenB", "vpp": "VPP"}


def summary(stderr):
    m = re.search(r"(\d[\d,]*) profiler lines?: (\d[\d,]*) jobs? written, (\d[\d,]*) rejected(?: \(([^)]*)\))?",
                  stderr)
    check(m, "no summary line in stderr:\n" + stderr)
    seen, written, rejected = [int(g.replace(",", "")) for g in m.groups()[:3]]
    return seen, written, rejected


def count_details(logs):
    n = 0
    for folder, _, files in os.walk(logs):
        for name in files:
            with open(os.path.join(folder, name), "rb") as f:
                n += f.read().count(b"[Pipeline details] ")
    return n


def arg(gen_args, name, default):
    return gen_args[gen_args.index(name) + 1] if name in gen_args else default


def check_jobs(trace, truth, logs, only):
    origin = int(trace["metadata"]["time_origin_epoch_ns"])
    jobs = [e for e in trace["traceEvents"] if e.get("ph") == "X" and e.get("cat") != "step"]
    files = {r["rank"]: r["file"] for r in truth["ranks"]}
    by_source = {}
    for e in jobs:
        src = e["args"]["source"]
        check(src not in by_source, "job drawn twice: " + src)
        by_source[src] = e
    want = [j for j in truth["jobs"] if j["type"] != "optimizer" or not only]
    check(len(by_source) == len(want), "drawn %d jobs, truth %d" % (len(by_source), len(want)))
    zero = 0
    for j in want:
        src = "%s:%d" % (os.path.join(logs, files[j["rank"]]), j["line"])
        e = by_source.get(src)
        check(e is not None, "truth job missing: " + src)
        check(e["cat"] == j["type"], "%s: type %s != %s" % (src, e["cat"], j["type"]))
        check(e["name"] == "%s mb%d" % (j["type"], j["mb"]), "%s: name %s" % (src, e["name"]))
        check(e["args"]["rank"] == j["rank"], "%s: rank %s" % (src, e["args"]["rank"]))
        check(e["args"]["micro_batch_id"] == j["mb"], "%s: mb" % src)
        check(e["args"]["step"] == j["step"], "%s: step %s != %s" % (src, e["args"]["step"], j["step"]))
        start = int((Decimal(e["ts"]) * 1000).to_integral_value()) + origin
        end = start + int((Decimal(e["dur"]) * 1000).to_integral_value())
        check(start == j["start_ns"] and end == j["end_ns"],
              "%s: times %d..%d != %d..%d" % (src, start, end, j["start_ns"], j["end_ns"]))
        if only:
            check(start % MS == 0 and end % MS == 0, "%s: not whole ms" % src)
        zero += j["start_ns"] == j["end_ns"]
    return len(want), zero


def check_scenario(binary, name, gen_args, work):
    logs = os.path.join(work, "logs")
    truth_path = os.path.join(work, "truth.json")
    details = arg(gen_args, "--details", None)
    extra = [] if details else ["--details", "only"]
    only = details in (None, "only")
    subprocess.run([sys.executable, GEN, "--out", logs, "--truth", truth_path, "--seed", "5", "--jobs", "1"] +
                   extra + gen_args, check=True, capture_output=True)
    with open(truth_path) as f:
        truth = json.load(f)
    check("memory" in truth and len(truth["memory"]["stages"]) == int(arg(gen_args, "--stages", 4)),
          "the truth has no memory per stage")
    t1, t2, st = (os.path.join(work, n) for n in ("t1.json", "t2.json", "stats.json"))
    p1 = run(binary, ["--log_dir", logs, "-o", t1, "--threads", "1"])
    check(p1.returncode == 0, "exit %d\n%s" % (p1.returncode, p1.stderr))
    p2 = run(binary, ["--log_dir", logs, "-o", t2, "--threads", "2"])
    check(p2.returncode == 0, "exit %d\n%s" % (p2.returncode, p2.stderr))
    with open(t1, "rb") as a, open(t2, "rb") as b:
        check(a.read() == b.read(), "1 thread and 2 threads wrote different bytes")

    seen, written, rejected = summary(p1.stderr)
    check(written + rejected == seen, "written %d + rejected %d != seen %d" % (written, rejected, seen))
    check(rejected == 0, "rejected %d:\n%s" % (rejected, p1.stderr))
    with open(t1) as f:
        trace = json.load(f, parse_float=Decimal)
    drawn, zero = check_jobs(trace, truth, logs, only)
    check(written == drawn, "written %d, truth %d" % (written, drawn))
    resolution = MS if only else 1
    check(trace["metadata"].get("time_resolution_ns", 1) == resolution,
          "metadata resolution %s" % trace["metadata"].get("time_resolution_ns"))
    check(("times to 1 ms" in p1.stderr) == only, "the summary's resolution is wrong:\n" + p1.stderr)
    check(("details_memory_only" in p1.stderr) == (not only), "details_memory_only:\n" + p1.stderr)
    check("contradicted_dependency" not in p1.stderr, "a contradicted dependency:\n" + p1.stderr)
    samples = count_details(logs)
    check("%d [Pipeline details] lines (%d memory samples)" % (samples, samples) in p1.stderr.replace(",", ""),
          "the summary does not count the details lines:\n" + p1.stderr)

    ps = run(binary, ["stats", "--log_dir", logs, "--json", "-o", st])
    check(ps.returncode == 0, "stats exit %d\n%s" % (ps.returncode, ps.stderr))
    with open(st) as f:
        stats = json.load(f)
    sched = stats["schedule"]
    schedule = arg(gen_args, "--schedule", "1f1b")
    check(sched["name"] == SCHEDULE_NAME[schedule], "schedule %s" % sched)
    check(sched["pp_degree"] == int(arg(gen_args, "--stages", 4)), "P %s" % sched)
    check(sched["micro_batches"] == int(arg(gen_args, "--micro-batches", 8)), "M %s" % sched)
    if schedule == "vpp":
        check(sched["chunks"] == int(arg(gen_args, "--chunks", 2)), "V %s" % sched)
    if only:
        check(stats.get("time_resolution_ns") == MS, "stats resolution %s" % stats.get("time_resolution_ns"))
        check(0 < stats["bubble_ratio_error"] <= 1, "bubble_ratio_error %s" % stats.get("bubble_ratio_error"))
    return "%d jobs (%d zero-length)" % (written, zero)


def main():
    ap = arg_parser(__doc__)
    ap.add_argument("--only")
    a = ap.parse_args()
    failed = 0
    for name, gen_args in SCENARIOS.items():
        if a.only and a.only != name:
            continue
        with temp_dir(prefix="ppt-details-") as work:
            try:
                print("ok   %s: %s" % (name, check_scenario(a.binary, name, gen_args, work)))
            except Failure as e:
                failed += 1
                print("FAIL %s: %s" % (name, e))
    if failed:
        print("%d scenario(s) failed" % failed)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
