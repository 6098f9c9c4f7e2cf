#!/usr/bin/env python3
"""whatif against real processes: pp-demo's measured period under each target.

pp-demo (docs/shim.md, "The demo run") runs a 1F1B pipeline of 4 rank
processes, M=8; `pp-timeline whatif --json` on its logs predicts ZBH1,
FThenB, VPP V=2 and 1F1B M=16 (and replays the measured 1F1B). pp-demo then
runs under each of those shapes, and each prediction is compared with the
median period `pp-timeline stats --json` reads from that run, over the same
steps (the first left out as warm-up). Each must be within 8%, as the
median of five repetitions of the whole comparison (the measured run, the
predictions and every target run).

Why five: the runs are real processes on a shared machine, and a stall
from other work in one run moves the comparison. In 13 runs by hand on 2
shared cores, one had all five rows 3-8% short together (the measured
run's own replay 3% short: the measured run had run slower than the model
of it), while the others were all within 1.5%; a full ctest run failed the
same way once that day. With three repetitions a full ctest run failed
again on a later day, and of two runs by hand after it one had a
repetition whose four targets were all 12-16% long (a measured run slowed
by other work: every prediction from it long, its own replay within 1%). Two disturbed
repetitions of five do not move the median; a model that is wrong is
wrong in every repetition.

pp-demo's --work_us is a stage's work, which a VPP run splits into its V
chunk jobs, so every target runs the same --work_us (whatif charges a chunk
its stage's time / V too).

The runs are one after the other: pp-demo's jobs sleep to their deadlines,
so each lasts its duration on a loaded machine too, but two runs at once on
2 cores would share them with each other's arithmetic.

  whatif_demo.py --binary build/pp-timeline --demo build/pp-demo [--table] [--repetitions N]

--table prints only the tables (what scripts/bench.sh shows);
--repetitions (default 5) is how many times the comparison runs.
"""

import json
import os
import sys

import ppt_test
from ppt_test import Checks, arg_parser, temp_dir

checks = Checks()

RANKS = 4
M = 8
STEPS = 30       # a run's steps, the first the warm-up, left out: a median over 29 steps
SKIP = 1
WORK_US = 2000   # a forward's work; a backward twice that, the optimizer half
TOLERANCE = 0.08

# (label, schedule, M, V, pp-demo's --work_us): whatif's target and the
# pp-demo run that measures it.
TARGETS = [
    ("1F1B M=8 (replayed)", "1f1b", M, 1, WORK_US),
    ("ZBH1", "zbh1", M, 1, WORK_US),
    ("FThenB", "fthenb", M, 1, WORK_US),
    ("VPP V=2", "vpp", M, 2, WORK_US),
    ("1F1B M=16", "1f1b", 2 * M, 1, WORK_US),
]


def run(binary, args, timeout=120):
    p = ppt_test.run(binary, args, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def demo_run(demo, out, schedule, m, chunks, work_us):
    args = ["--log_dir", out, "--ranks", str(RANKS), "--schedule", schedule, "--micro-batches", str(m),
            "--steps", str(STEPS), "--work_us", str(work_us), "--device", "cpu"]
    if schedule == "vpp":
        args += ["--chunks", str(chunks)]
    rc, _, err = run(demo, args, timeout=240)
    if rc != 0:
        raise ppt_test.Failure(f"pp-demo {' '.join(args)}: exit {rc}: {err.strip()[-400:]}")
    return out


def median_period_us(binary, logs):
    rc, out, err = run(binary, ["stats", "--log_dir", logs, "--json", "--skip-warmup", str(SKIP)])
    if rc != 0:
        raise ppt_test.Failure(f"stats on {logs}: exit {rc}: {err.strip()[:300]}")
    return json.loads(out)["step_period"]["median_us"]


def predictions(binary, logs):
    """{(schedule, M, V): period_us} for every target, and the replayed period."""
    schedules = sorted({t[1] for t in TARGETS})
    ms = sorted({t[2] for t in TARGETS})
    rc, out, err = run(binary, ["whatif", "--log_dir", logs, "--json", "--skip-warmup", str(SKIP),
                               "--schedule", ",".join(schedules), "--micro-batches", ",".join(map(str, ms)),
                               "--chunks", "2"])
    if rc != 0:
        raise ppt_test.Failure(f"whatif on {logs}: exit {rc}: {err.strip()[:300]}")
    doc = json.loads(out)
    got = {}
    for p in doc["predicted"]:
        ppt_test.check(p["error"] is None, f"{p['label']}: predicted ({p['error']})")
        v = p["chunks"] if p["schedule"] == "vpp" else 1
        got[(p["schedule"], p["micro_batches"], v)] = p["period_us"]
    return got, doc["replayed"]["period_us"]


def figures(binary, demo, tmp):
    """Per target: (label, predicted, pp-demo's own) periods in us."""
    measured_logs = demo_run(demo, os.path.join(tmp, "measured"), "1f1b", M, 1, WORK_US)
    predicted, replayed = predictions(binary, measured_logs)
    rows = []
    for i, (label, schedule, m, v, work_us) in enumerate(TARGETS):
        if i == 0:
            rows.append((label, replayed, median_period_us(binary, measured_logs)))
            continue
        key = (schedule, m, v)
        ppt_test.check(key in predicted, f"{label}: whatif predicted it (got {sorted(predicted)})")
        logs = demo_run(demo, os.path.join(tmp, "t%d" % i), schedule, m, v, work_us)
        rows.append((label, predicted[key], median_period_us(binary, logs)))
    return rows


def format_table(rows):
    lines = ["%-22s %13s %12s %8s" % ("target", "predicted ms", "pp-demo ms", "error")]
    for label, predicted, own in rows:
        lines.append("%-22s %13.3f %12.3f %+7.2f%%" % (label, predicted / 1e3, own / 1e3, (predicted / own - 1) * 100))
    return "\n".join(lines)


def median_errors(repetitions):
    """Per target: (label, every repetition's error, their median), errors as fractions."""
    out = []
    for i, (label, _, _) in enumerate(repetitions[0]):
        errors = [rows[i][1] / rows[i][2] - 1 for rows in repetitions]
        out.append((label, errors, sorted(errors)[len(errors) // 2]))
    return out


def format_medians(medians):
    lines = ["%-22s %-30s %8s" % ("target", "errors", "median")]
    for label, errors, median in medians:
        lines.append("%-22s %-30s %+7.2f%%" % (label, " ".join("%+.2f%%" % (e * 100) for e in errors), median * 100))
    return "\n".join(lines)


def main():
    ap = arg_parser(__doc__)
    ap.add_argument("--demo", required=True, help="the pp-demo binary")
    ap.add_argument("--table", action="store_true", help="print only the tables")
    ap.add_argument("--repetitions", type=int, default=5, help="how many times the comparison runs (default 5)")
    ap.add_argument("--sanitized", action="store_true",
                    help="the binaries are built with sanitizers: skip (exit 77)")
    a = ap.parse_args()
    if a.sanitized:
        # Sanitizers slow the host code between pp-demo's jobs (its transport,
        # its logging) several times over, and that time is no job's: the
        # model has no cost for it (docs/whatif.md, "Assumptions and limits"),
        # so its predictions there run 3-10% short. The figures are a
        # release build's.
        print("skipped: the binaries are built with sanitizers; whatif's accuracy is measured on a release build")
        return 77
    demo = os.path.abspath(a.demo)
    repetitions = []
    with temp_dir("ppt-whatif-demo-") as tmp:
        for rep in range(max(1, a.repetitions)):
            rep_dir = os.path.join(tmp, "rep%d" % rep)
            os.mkdir(rep_dir)
            rows = figures(a.binary, demo, rep_dir)
            repetitions.append(rows)
            print("pp-demo, %d ranks, 1F1B M=%d, --work_us %d, %d steps (the first skipped): whatif's period "
                  "against pp-demo's median under the target%s" %
                  (RANKS, M, WORK_US, STEPS, "" if a.repetitions <= 1 else ", repetition %d" % (rep + 1)))
            print(format_table(rows), flush=True)
    medians = median_errors(repetitions)
    if len(repetitions) > 1:
        print("the errors of the %d repetitions and their median" % len(repetitions))
        print(format_medians(medians), flush=True)
    if a.table:
        return 0
    for label, errors, median in medians:
        checks.check(abs(median) < TOLERANCE,
                     f"{label}: predicted within {TOLERANCE:.0%} of pp-demo's own period, the median of "
                     f"{len(errors)} repetitions ({' '.join('%+.2f%%' % (e * 100) for e in errors)})")
    return checks.exit_code("whatif against pp-demo")


if __name__ == "__main__":
    sys.exit(main())
