#!/usr/bin/env python3
"""Properties that must hold for every schedule and line variant.

For each scenario, scripts/gen_logs.py simulates a pipeline run and writes its
logs and the ground truth; the real binary converts them, and we check:
  - every job of the truth appears exactly once, at its source line, with its
    type, micro-batch, job id, step number and exact times (to the ns);
  - nothing else appears (zero-time jobs are not drawn, and are counted);
  - every thread's slices nest (B/E balanced, never partially overlapping);
  - the step track has one slice per step, none starting before the last ended;
  - the summary accounts for every profiler line: written + rejected = seen;
  - 1 thread and 2 threads give identical bytes; both JSON flavours agree.

And for machines whose clocks are seconds apart (CLOCK_SCENARIOS), with the
default --align-clocks auto: each machine's offset is within 0.5 ms of the
generator's skew, every job is in its true step and run, shown minus offset is
the logged time; with --align-clocks off the same runs and steps, times as
logged.

  properties.py --binary build/pp-timeline [--only NAME]
"""

import os
import re
import subprocess
import sys
from decimal import Decimal

from ppt_test import Failure, arg_parser, check, gen_logs, read_json, run, summary_counts, temp_dir

SCENARIOS = {
    "fthenb": ["--schedule", "fthenb", "--stages", "4", "--micro-batches", "6"],
    "1f1b": ["--schedule", "1f1b", "--stages", "4", "--micro-batches", "8", "--noise", "20"],
    "eager1f1b": ["--schedule", "eager1f1b", "--stages", "4", "--micro-batches", "8"],
    "vpp": ["--schedule", "vpp", "--stages", "4", "--micro-batches", "8", "--chunks", "2"],
    "zbh1": ["--schedule", "zbh1", "--stages", "4", "--micro-batches", "8"],
    "zbvpp": ["--schedule", "zbvpp", "--stages", "4", "--micro-batches", "8", "--chunks", "2"],
    "pir1f1b_zero_times": ["--schedule", "pir1f1b", "--stages", "4", "--micro-batches", "4"],
    "overlap_types": ["--schedule", "overlap", "--stages", "4", "--micro-batches", "8"],
    "no_pipeline": ["--schedule", "default", "--stages", "1", "--dp", "4"],
    "glog_year_prefix": ["--schedule", "1f1b", "--prefix", "glog-year"],
    "no_prefix": ["--schedule", "1f1b", "--prefix", "none"],
    "no_micro_batch_id_index_ids": ["--schedule", "1f1b", "--no-mb", "--job-id", "index"],
    "no_micro_batch_id_vpp": ["--schedule", "vpp", "--no-mb", "--job-id", "index", "--micro-batches", "8"],
    "counter_ids": ["--schedule", "zbh1", "--job-id", "counter"],
    "crlf": ["--schedule", "1f1b", "--crlf", "--noise", "5"],
    "lr_job_2023": ["--schedule", "fthenb", "--lr"],
    "start_step_marker": ["--schedule", "1f1b", "--start-step", "10", "--steps", "4"],
    "twelve_machines_natural_order": ["--schedule", "1f1b", "--stages", "4", "--dp", "3", "--machines", "12"],
    "data_parallel_machines": ["--schedule", "1f1b", "--stages", "4", "--dp", "2", "--machines", "2"],
    "rerun_appended": ["--schedule", "1f1b", "--rerun", "--steps", "2"],
    "rerun_with_marker_no_prefix": ["--schedule", "1f1b", "--rerun", "--start-step", "5", "--prefix", "none"],
    "marker_every_iteration": ["--schedule", "vpp", "--start-step", "10", "--steps", "3", "--marker", "every-iteration",
                               "--noise", "5"],
    "rerun_same_pid": ["--schedule", "1f1b", "--rerun", "--rerun-same-pid", "--steps", "2"],
    "rerun_same_pid_every_iteration_no_prefix": ["--schedule", "zbh1", "--rerun", "--rerun-same-pid", "--start-step", "4",
                                                 "--marker", "every-iteration", "--prefix", "none"],
    "missing_step_on_one_rank": ["--schedule", "1f1b", "--steps", "4", "--missing-step", "2:1"],
    "missing_first_step": ["--schedule", "vpp", "--steps", "4", "--missing-step", "0:0", "--micro-batches", "8"],
    "overlapping_jobs": ["--schedule", "1f1b", "--overlap", "1:0", "--overlap", "3:1"],
}

# Machines' clocks far apart (--skew MACHINE:MS): alignment must find every
# offset, and the runs and steps must be matched by structure, not by time.
CLOCK_SCENARIOS = {
    "clocks_1f1b_2_machines_plus_10s": ["--schedule", "1f1b", "--stages", "4", "--machines", "2",
                                        "--skew", "1:10000"],
    # A run longer than the offset: the machines' times overlap, so the run is
    # one, but the steps must still be matched by structure.
    "clocks_1f1b_long_run_half_s": ["--schedule", "1f1b", "--stages", "4", "--machines", "2", "--steps", "30",
                                    "--skew", "1:500"],
    "clocks_1f1b_2_machines_minus_10s": ["--schedule", "1f1b", "--stages", "4", "--machines", "2",
                                         "--skew", "1:-10000", "--steps", "4"],
    "clocks_vpp_3_machines_half_s_minus_3s": ["--schedule", "vpp", "--stages", "6", "--machines", "3",
                                              "--micro-batches", "12", "--chunks", "2",
                                              "--skew", "1:500", "--skew", "2:-3000"],
    "clocks_zbh1_8_machines": ["--schedule", "zbh1", "--stages", "8", "--machines", "8",
                               "--skew", "1:10000", "--skew", "2:-10000", "--skew", "3:5000", "--skew", "4:500",
                               "--skew", "5:-3000", "--skew", "6:0.7", "--skew", "7:-500"],
    "clocks_fthenb_3_machines_reference_skewed": ["--schedule", "fthenb", "--stages", "6", "--machines", "3",
                                                  "--skew", "0:5000", "--skew", "2:-10000"],
    "clocks_1f1b_rerun_5s": ["--schedule", "1f1b", "--stages", "4", "--machines", "2", "--rerun",
                             "--steps", "2", "--skew", "1:5000"],
    "clocks_missing_step_minus_3s": ["--schedule", "1f1b", "--stages", "4", "--machines", "2", "--steps", "4",
                                     "--missing-step", "2:1", "--skew", "1:-3000"],
    # Two replicas, each over two machines: dependencies connect machines 0-1
    # and 2-3 only, so machines 0 and 2 keep their clocks (and agree here).
    "clocks_replicas_4_machines_5s": ["--schedule", "1f1b", "--stages", "4", "--dp", "2", "--machines", "4",
                                      "--skew", "1:5000", "--skew", "3:-3000"],
    "clocks_marker_vpp_2_machines_5s": ["--schedule", "vpp", "--stages", "4", "--machines", "2",
                                        "--start-step", "10", "--skew", "1:5000"],
}


def check_scenario(binary, name, gen_args, work):
    logs = os.path.join(work, "logs")
    truth = gen_logs(logs, gen_args, truth=os.path.join(work, "truth.json"), seed=7, jobs=None)
    # Jobs whose timer never ran are counted, not drawn.
    zero = [j for j in truth["jobs"] if j["start_ns"] == 0 and j["end_ns"] == 0]
    truth["jobs"] = [j for j in truth["jobs"] if not (j["start_ns"] == 0 and j["end_ns"] == 0)]
    check(len(zero) == truth.get("zero_time_jobs", 0), "truth: zero-time job count mismatch")
    out1 = os.path.join(work, "t1.json")
    out2 = os.path.join(work, "t2.json")
    outp = os.path.join(work, "tp.json")
    p1 = run(binary, ["--log_dir", logs, "-o", out1, "--threads", "1", "--align-clocks", "off"])
    if "--align-clocks" in p1.stderr and p1.returncode == 2:
        # Before clock alignment existed the option was unknown.
        p1 = run(binary, ["--log_dir", logs, "-o", out1, "--threads", "1"])
        extra = []
    else:
        extra = ["--align-clocks", "off"]
    check(p1.returncode == 0, "exit %d\n%s" % (p1.returncode, p1.stderr))
    p2 = run(binary, ["--log_dir", logs, "-o", out2, "--perfetto-json", outp, "--threads", "2"] + extra)
    check(p2.returncode == 0, "exit %d\n%s" % (p2.returncode, p2.stderr))
    with open(out1, "rb") as a, open(out2, "rb") as b:
        check(a.read() == b.read(), "1 thread and 2 threads wrote different bytes")

    seen, written, rejected = summary_counts(p1.stderr)
    check(written + rejected == seen, "written %d + rejected %d != seen %d" % (written, rejected, seen))
    check(written == len(truth["jobs"]), "written %d, truth has %d jobs" % (written, len(truth["jobs"])))
    check(rejected == truth.get("zero_time_jobs", 0), "rejected %d, truth has %d zero-time jobs" %
          (rejected, truth.get("zero_time_jobs", 0)))

    trace = read_json(out1, exact=True)
    ptrace = read_json(outp, exact=True)
    events = trace["traceEvents"]
    origin = int(trace["metadata"]["time_origin_epoch_ns"])

    # One complete (X) event per slice; no B/E. Times are read as the viewers
    # read them: Perfetto rounds x * 1000 to ns (must give the exact ns), the
    # others add ts + dur in doubles (must give exactly the next slice's ts
    # where they touch, so the end in doubles is compared too).
    begins = []
    for e in events:
        ph = e.get("ph")
        check(ph not in ("B", "E"), "a %s event: slices are X events" % ph)
        if ph != "X":
            continue
        check(isinstance(e.get("pid"), int) and e["pid"] > 0, "pid not a positive integer")
        check(isinstance(e.get("tid"), int) and e["tid"] > 0, "tid not a positive integer")
        check(Decimal(e["dur"]) >= 0, "negative dur")
        e["_start_ns"] = int((Decimal(e["ts"]) * 1000).to_integral_value())
        e["_end_ns"] = e["_start_ns"] + int((Decimal(e["dur"]) * 1000).to_integral_value())
        e["_end"] = Decimal(e["_end_ns"]) / 1000
        e["_end_double"] = float(e["ts"]) + float(e["dur"])
        begins.append(e)
    # Slices on one thread must be disjoint, in ns and in doubles; where they
    # touch in ns, they touch in doubles.
    last = {}
    for b in begins:
        key = (b["pid"], b["tid"])
        if key in last:
            prev = last[key]
            check(b["_start_ns"] >= prev["_end_ns"], "overlap on one track %s" % (key,))
            check(float(b["ts"]) >= prev["_end_double"], "overlap in doubles on %s: %s then %s" % (key, prev, b))
            if b["_start_ns"] == prev["_end_ns"]:
                check(float(b["ts"]) == prev["_end_double"], "touching slices apart in doubles on %s" % (key,))
        last[key] = b

    jobs = [b for b in begins if b.get("cat") != "step"]
    steps = [b for b in begins if b.get("cat") == "step"]
    files = {r["rank"]: r["file"] for r in truth["ranks"]}
    by_source = {}
    for b in jobs:
        src = b["args"]["source"]
        check(src not in by_source, "job drawn twice: " + src)
        by_source[src] = b
    check(len(by_source) == len(truth["jobs"]), "drawn %d jobs, truth %d" % (len(by_source), len(truth["jobs"])))
    for j in truth["jobs"]:
        src = "%s:%d" % (os.path.join(logs, files[j["rank"]]), j["line"])
        b = by_source.get(src)
        check(b is not None, "truth job missing: " + src)
        check(b["cat"] == j["type"], "%s: type %s != %s" % (src, b["cat"], j["type"]))
        want_name = ("%s (Job %d)" % (j["type"], j["job_id"]) if "--no-mb" in gen_args
                     else "%s mb%d" % (j["type"], j["mb"]))
        check(b["name"] == want_name, "%s: name %s, want %s" % (src, b["name"], want_name))
        check(b["args"]["job_id"] == j["job_id"], "%s: job_id %s" % (src, b["args"]["job_id"]))
        check(b["args"]["rank"] == j["rank"], "%s: rank %s != %s" % (src, b["args"]["rank"], j["rank"]))
        if "--no-mb" not in gen_args:
            check(b["args"]["micro_batch_id"] == j["mb"], "%s: mb" % src)
        check(b["args"]["step"] == j["step"], "%s: step %s != truth %s" % (src, b["args"]["step"], j["step"]))
        start_ns = b["_start_ns"] + origin
        end_ns = b["_end_ns"] + origin
        check(start_ns == j["start_ns"] and end_ns == j["end_ns"],
              "%s: times %s..%s != %s..%s" % (src, start_ns, end_ns, j["start_ns"], j["end_ns"]))

    runs = sorted({j.get("run", 0) for j in truth["jobs"]})
    want_steps = sorted({(j.get("run", 0), j["step"]) for j in truth["jobs"]})
    check(len(steps) == len(want_steps), "%d step slices, truth has %d steps" % (len(steps), len(want_steps)))
    names = [e["args"]["name"] for e in events if e.get("name") == "process_name"]
    if len(runs) > 1:
        check(any(n.startswith("run 2/") for n in names), "second run not shown separately: %s" % names)
    shown = {n.split(":")[0] for n in names if n.startswith("run ")}
    want_runs = {"run %d/%d" % (k + 1, len(runs)) for k in range(len(runs))} if len(runs) > 1 else set()
    check(shown == want_runs, "runs shown %s, the truth has %d" % (sorted(shown), len(runs)))
    prev = {}
    for s in steps:
        key = s["pid"]
        check(key not in prev or Decimal(s["ts"]) >= prev[key], "a step starts before the previous ended")
        prev[key] = s["_end"]

    # Both flavours draw the same slices.
    pj = [(e.get("pid"), e.get("tid"), e.get("ts"), e.get("dur"), e.get("name")) for e in ptrace["traceEvents"]
          if e.get("ph") == "X"]
    cj = [(e.get("pid"), e.get("tid"), e.get("ts"), e.get("dur"), e.get("name")) for e in events if e.get("ph") == "X"]
    check(pj == cj, "Chrome and Perfetto flavours differ in their slices")
    check(all("cname" not in e for e in ptrace["traceEvents"]), "Perfetto flavour carries cname")


def drawn(trace_path):
    """The jobs of a Chrome JSON trace by source, each with its epoch ns times,
    step, machine and run; the step slices; the metadata."""
    trace = read_json(trace_path, exact=True)
    origin = int(trace["metadata"]["time_origin_epoch_ns"])
    names = {e["pid"]: e["args"]["name"] for e in trace["traceEvents"] if e.get("name") == "process_name"}
    jobs, steps = {}, []
    for e in trace["traceEvents"]:
        if e.get("ph") != "X":
            continue
        start_ns = int((Decimal(e["ts"]) * 1000).to_integral_value())
        start = start_ns + origin
        end = start_ns + int((Decimal(e["dur"]) * 1000).to_integral_value()) + origin
        if e.get("cat") == "step":
            steps.append((e["pid"], start, end))
            continue
        check(e["args"]["source"] not in jobs, "job drawn twice: " + e["args"]["source"])
        m = re.match(r"run (\d+)/", names.get(e["pid"], ""))
        jobs[e["args"]["source"]] = {"start": start, "end": end, "step": e["args"]["step"],
                                     "machine": e["args"].get("machine"), "run": int(m.group(1)) - 1 if m else 0}
    return jobs, steps, trace["metadata"]


def check_clock_scenario(binary, name, gen_args, work):
    logs = os.path.join(work, "logs")
    truth = gen_logs(logs, gen_args, truth=os.path.join(work, "truth.json"), seed=7, jobs=None)
    files = {r["rank"]: r["file"] for r in truth["ranks"]}
    skew = {r["machine"]: r["skew_ns"] for r in truth["ranks"]}
    machine_of = {r["rank"]: r["machine"] for r in truth["ranks"]}
    ref = machine_of[0]  # the machine of the lowest rank keeps its clock
    runs = sorted({j.get("run", 0) for j in truth["jobs"]})
    want_steps = sorted({(j.get("run", 0), j["step"]) for j in truth["jobs"]})
    for mode in ("auto", "off"):
        out = os.path.join(work, "%s.json" % mode)
        p = run(binary, ["--log_dir", logs, "-o", out, "--align-clocks", mode])
        check(p.returncode == 0, "%s: exit %d\n%s" % (mode, p.returncode, p.stderr))
        summary = p.stderr.strip().splitlines()[-1]
        jobs, steps, meta = drawn(out)
        check(meta["runs"] == len(runs), "%s: %d runs drawn, truth has %d" % (mode, meta["runs"], len(runs)))
        offsets = {}
        for o in meta.get("clock_offsets", []):
            offsets[(o["run"], int(o["machine"][len("machine"):]))] = o["offset_ns"]
        if mode == "off":
            check(not offsets, "off: offsets in the metadata")
            check("contradicted by the times" in summary, "off: contradictions not counted: " + summary)
        else:
            check("contradicted" not in summary, "auto: contradictions left: " + summary)
            for r in runs:
                for m, s in skew.items():
                    residual = s + offsets.get((r, m), 0) - skew[ref]
                    check(abs(residual) <= 500000, "auto: run %d machine%d offset %d ns, skew %d ns (residual %d ns)"
                          % (r, m, offsets.get((r, m), 0), s - skew[ref], residual))
        check(len(jobs) == len(truth["jobs"]), "%s: drawn %d jobs, truth %d" % (mode, len(jobs), len(truth["jobs"])))
        for j in truth["jobs"]:
            src = "%s:%d" % (os.path.join(logs, files[j["rank"]]), j["line"])
            b = jobs.get(src)
            check(b is not None, "%s: truth job missing: %s" % (mode, src))
            check(b["step"] == j["step"], "%s: %s: step %s != truth %s" % (mode, src, b["step"], j["step"]))
            check(b["run"] == j.get("run", 0), "%s: %s: run %s != truth %s" % (mode, src, b["run"], j.get("run", 0)))
            off = offsets.get((j.get("run", 0), machine_of[j["rank"]]), 0)
            check(b["start"] - off == j["start_ns"] and b["end"] - off == j["end_ns"],
                  "%s: %s: shown %s..%s minus offset %d != logged %s..%s" %
                  (mode, src, b["start"], b["end"], off, j["start_ns"], j["end_ns"]))
        check(len(steps) == len(want_steps), "%s: %d step slices, truth has %d steps" % (mode, len(steps), len(want_steps)))
        prev = {}
        for pid, start, end in steps:
            check(pid not in prev or start >= prev[pid], "%s: a step starts before the previous ended" % mode)
            prev[pid] = end


def main():
    ap = arg_parser(__doc__)
    ap.add_argument("--only")
    a = ap.parse_args()
    binary = a.binary
    failed = 0
    scenarios = {n: (check_scenario, args) for n, args in SCENARIOS.items()}
    scenarios.update({n: (check_clock_scenario, args) for n, args in CLOCK_SCENARIOS.items()})
    names = [n for n in scenarios if not a.only or n == a.only]
    for name in names:
        with temp_dir("ppt-prop-") as work:
            try:
                fn, args = scenarios[name]
                fn(binary, name, args, work)
                print("ok   %s" % name)
            except (Failure, subprocess.CalledProcessError) as e:
                failed += 1
                print("FAIL %s: %s" % (name, e))
    print("%d passed, %d failed" % (len(names) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
