#!/usr/bin/env python3
"""Properties of dynamic-graph pipeline profiles (profile_record_tmp_file_for_rank_<N>).

For each scenario, scripts/gen_dygraph_logs.py simulates a run and writes the
profile files and the ground truth; the real binary converts them, and we check:
  - every job of the truth appears exactly once, at its B record's line, with
    its type, micro-batch, rank, step and exact ms times (to the ns);
  - nothing else is drawn; the steps, ranks, stages, P, M, V and replicas are
    the truth's;
  - written + rejected = seen, the seen and each rejected kind as the truth
    says (bad records, truncated files, unmatched halves, mixed formats);
  - the trace's metadata and the summary say the 1 ms resolution, stats gives
    the bubble's bound; no dependency is contradicted (truncation keeps order);
  - 1 thread and 2 threads give identical bytes;
  - diff gives each side's bound, batch finds folders of profile files.

  dygraph_properties.py --binary build/pp-timeline [--only NAME]
"""

import json
import os
import re
import subprocess
import sys
from decimal import Decimal

from ppt_test import ROOT, Failure, arg_parser, check, run, temp_dir

GEN = os.path.join(ROOT, "scripts", "gen_dygraph_logs.py")

SCENARIOS = {
    "1f1b": ["--schedule", "1f1b", "--stages", "4", "--micro-batches", "8", "--steps", "3"],
    "1f1b_dp_replicas": ["--schedule", "1f1b", "--stages", "4", "--dp", "2", "--micro-batches", "8"],
    "1f1b_long_jobs_no_ties": ["--schedule", "1f1b", "--stages", "3", "--micro-batches", "6", "--fwd-ms", "20"],
    "1f1b_sub_ms_jobs": ["--schedule", "1f1b", "--stages", "4", "--micro-batches", "8", "--fwd-ms", "0.3"],
    "interleaved": ["--schedule", "vpp", "--stages", "4", "--micro-batches", "8", "--chunks", "2"],
    "interleaved_dp_machines": ["--schedule", "vpp", "--stages", "4", "--dp", "2", "--machines", "2",
                                "--micro-batches", "8", "--chunks", "3", "--launch-logs"],
    "bad_records_mixed_formats": ["--schedule", "1f1b", "--stages", "4", "--micro-batches", "4", "--truncate", "1",
                                  "--drop-end", "2:3", "--drop-begin", "3:0", "--garbage", "0:5",
                                  "--static-lines", "2"],
}


def summary(stderr):
    m = re.search(r"(\d[\d,]*) profiler lines?: (\d[\d,]*) jobs? written, (\d[\d,]*) rejected(?: \(([^)]*)\))?",
                  stderr)
    check(m, "no summary line in stderr:\n" + stderr)
    seen, written, rejected = [int(g.replace(",", "")) for g in m.groups()[:3]]
    kinds = {}
    for part in (m.group(4) or "").split(", "):
        if part:
            n, kind = part.split(" ")
            kinds[kind] = int(n.replace(",", ""))
    return seen, written, rejected, kinds


def check_scenario(binary, name, gen_args, work):
    logs = os.path.join(work, "logs")
    truth_path = os.path.join(work, "truth.json")
    subprocess.run([sys.executable, GEN, "--out", logs, "--truth", truth_path, "--seed", "7"] + gen_args,
                   check=True, capture_output=True)
    with open(truth_path) as f:
        truth = json.load(f)
    t1, t2, st = (os.path.join(work, n) for n in ("t1.json", "t2.json", "stats.json"))
    p1 = run(binary, ["--log_dir", logs, "-o", t1, "--threads", "1"])
    check(p1.returncode == 0, "exit %d\n%s" % (p1.returncode, p1.stderr))
    p2 = run(binary, ["--log_dir", logs, "-o", t2, "--threads", "2"])
    check(p2.returncode == 0, "exit %d\n%s" % (p2.returncode, p2.stderr))
    with open(t1, "rb") as a, open(t2, "rb") as b:
        check(a.read() == b.read(), "1 thread and 2 threads wrote different bytes")

    seen, written, rejected, kinds = summary(p1.stderr)
    check(written + rejected == seen, "written %d + rejected %d != seen %d" % (written, rejected, seen))
    check(seen == truth["seen"], "seen %d, truth %d" % (seen, truth["seen"]))
    check(written == len(truth["jobs"]), "written %d, truth has %d jobs" % (written, len(truth["jobs"])))
    check(kinds == truth["rejected"], "rejected %s, truth %s" % (kinds, truth["rejected"]))
    check("times to 1 ms" in p1.stderr, "the summary does not say the resolution:\n" + p1.stderr)
    check("%d dynamic-graph profile records" % truth["records"] in p1.stderr.replace(",", ""),
          "the summary does not count the records:\n" + p1.stderr)
    check("contradicted_dependency" not in p1.stderr, "a contradicted dependency:\n" + p1.stderr)
    nranks = len(truth["ranks"])
    check("; %d ranks," % nranks in p1.stderr, "not %d ranks:\n%s" % (nranks, p1.stderr))

    with open(t1) as f:
        trace = json.load(f, parse_float=Decimal)
    meta = trace["metadata"]
    check(meta.get("time_resolution_ns") == truth["resolution_ns"], "metadata resolution %s" %
          meta.get("time_resolution_ns"))
    check(meta["ranks"] == nranks, "metadata ranks %s" % meta["ranks"])
    origin = int(meta["time_origin_epoch_ns"])
    events = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    jobs = [e for e in events if e.get("cat") != "step"]
    steps = [e for e in events if e.get("cat") == "step"]
    files = {r["rank"]: r["file"] for r in truth["ranks"]}
    by_source = {}
    for e in jobs:
        src = e["args"]["source"]
        check(src not in by_source, "job drawn twice: " + src)
        by_source[src] = e
    check(len(by_source) == len(truth["jobs"]), "drawn %d jobs, truth %d" % (len(by_source), len(truth["jobs"])))
    zero = 0
    for j in truth["jobs"]:
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
        zero += j["start_ns"] == j["end_ns"]
    want_steps = sorted({j["step"] for j in truth["jobs"]})
    check(len(steps) == len(want_steps), "%d step slices, truth %d" % (len(steps), len(want_steps)))

    ps = run(binary, ["stats", "--log_dir", logs, "--json", "-o", st])
    check(ps.returncode == 0, "stats exit %d\n%s" % (ps.returncode, ps.stderr))
    with open(st) as f:
        stats = json.load(f)
    sched = stats["schedule"]
    P = int(gen_args[gen_args.index("--stages") + 1])
    D = int(gen_args[gen_args.index("--dp") + 1]) if "--dp" in gen_args else 1
    M = int(gen_args[gen_args.index("--micro-batches") + 1])
    vpp = "vpp" in gen_args
    V = int(gen_args[gen_args.index("--chunks") + 1]) if vpp else 1
    if not truth["rejected"]:
        check(sched["name"] == ("VPP" if vpp else "1F1B"), "schedule %s" % sched)
        check(sched["pp_degree"] == P and sched["replicas"] == D, "P, replicas %s" % sched)
        check(sched["pp_degree_source"] == "stages of the profile records", "P from %s" % sched["pp_degree_source"])
        check(sched["micro_batches"] == M and sched["chunks"] == V, "M, V %s" % sched)
    check(stats.get("time_resolution_ns") == truth["resolution_ns"], "stats resolution %s" %
          stats.get("time_resolution_ns"))
    check(0 < stats["bubble_ratio_error"] <= 1, "bubble_ratio_error %s" % stats.get("bubble_ratio_error"))
    stage_of = {r["rank"]: r["stage"] for r in truth["ranks"]}
    for r in stats["ranks"]:
        check(r["stage"] == stage_of[r["rank"]], "rank %d stage %d" % (r["rank"], r["stage"]))
        check(r["bubble_ratio_error"] > 0, "rank %d has no bound" % r["rank"])
    return "%d jobs (%d zero-length), %d rejected" % (written, zero, rejected)


def check_commands(binary, work):
    """diff carries each side's bound; batch finds profile folders."""
    dirs = []
    for seed in (1, 2):
        d = os.path.join(work, "run%d" % seed)
        subprocess.run([sys.executable, GEN, "--out", d, "--seed", str(seed), "--fwd-ms", "10"], check=True,
                       capture_output=True)
        dirs.append(d)
    base = os.path.join(work, "a.json")
    p = run(binary, ["stats", dirs[0], "--json", "-o", base])
    check(p.returncode == 0, "stats exit %d\n%s" % (p.returncode, p.stderr))
    p = run(binary, ["diff", base, dirs[1], "--json"])
    check(p.returncode == 0, "diff exit %d\n%s" % (p.returncode, p.stderr))
    d = json.loads(p.stdout)
    for side in ("a", "b"):
        check(d[side].get("bubble_ratio_error", 0) > 0, "diff %s has no bound: %s" % (side, d[side]))
    p = run(binary, ["diff", base, dirs[1], "--color", "never"])
    check(p.returncode == 0 and " ± " in p.stdout, "diff text without the bound:\n" + p.stdout + p.stderr)
    p = run(binary, ["batch"] + dirs + ["--out", os.path.join(work, "batch")])
    check(p.returncode == 0 and "2 ok, 0 failed" in p.stderr, "batch:\n" + p.stderr)
    return "diff and batch"


def main():
    ap = arg_parser(__doc__)
    ap.add_argument("--only")
    a = ap.parse_args()
    failed = 0
    for name, gen_args in SCENARIOS.items():
        if a.only and a.only != name:
            continue
        with temp_dir(prefix="ppt-dygraph-") as work:
            try:
                what = check_scenario(a.binary, name, gen_args, work)
                print("ok   %s: %s" % (name, what))
            except Failure as e:
                failed += 1
                print("FAIL %s: %s" % (name, e))
    if not a.only or a.only == "commands":
        with temp_dir(prefix="ppt-dygraph-") as work:
            try:
                print("ok   commands: %s" % check_commands(a.binary, work))
            except Failure as e:
                failed += 1
                print("FAIL commands: %s" % e)
    if failed:
        print("%d scenario(s) failed" % failed)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
