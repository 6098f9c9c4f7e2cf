#!/usr/bin/env python3
"""Memory, through the real binary, against the truth of real and generated runs.

1. Generated runs (scripts/gen_logs.py --details: `[Pipeline details]` lines
   with a memory model): `stats --json` reports each stage's peak allocated
   and reserved memory exactly as the generator logged them (the log's
   0.01 GiB), the static part and the activation; `whatif` replays the
   measured plan to the logged peaks and predicts FThenB, VPP V=2 and M=16,
   each stage's peak within 3% of a run generated under that target with the
   same memory model; `--device-memory` marks a target that does not fit and
   never ranks it first.
2. pp-demo runs that hold real memory (--act-mb, --pipeline-details): whatif
   on its 1F1B run predicts FThenB, VPP V=2 and M=16, each stage's peak within
   5% of pp-demo's own run under that target.

  whatif_memory.py --binary build/pp-timeline [--demo build/pp-demo] [--table]

--table prints only the accuracy table.
"""

import json
import os
import sys

import ppt_test
from ppt_test import Checks, arg_parser, temp_dir

checks = Checks()
check = checks.check

GIB = 1 << 30
# 4 stages; the generator's memory model: 2 GiB static (+0.07 GiB per stage),
# 1.5 GiB of activations per micro-batch.
GEN = ["--stages", "4", "--steps", "3", "--fwd-ms", "1", "--jitter", "0.05", "--comm-us", "20",
       "--details", "only", "--mem-static-gib", "2", "--mem-act-gib", "1.5"]
MEASURED = ["--schedule", "1f1b", "--micro-batches", "8"]
# (label, whatif's target options, the generated run under that target)
GEN_TARGETS = [
    ("FThenB", ["--schedule", "fthenb"], ["--schedule", "fthenb", "--micro-batches", "8"]),
    ("VPP V=2", ["--schedule", "vpp", "--chunks", "2"], ["--schedule", "vpp", "--chunks", "2", "--micro-batches", "8"]),
    ("1F1B M=16", ["--micro-batches", "16"], ["--schedule", "1f1b", "--micro-batches", "16"]),
]
GEN_TOLERANCE = 0.03

# pp-demo: 4 ranks, sizes that are whole hundredths of a GiB (0.1 GiB per
# micro-batch, 0.05 per VPP chunk; 0.2 GiB static) so the logged two
# decimals are exact.
DEMO_ACT_MB = "102.4"
DEMO_STATIC_MB = "204.8"
DEMO_TARGETS = [
    ("FThenB", ["--schedule", "fthenb"], "fthenb", 8, 1),
    ("VPP V=2", ["--schedule", "vpp", "--chunks", "2"], "vpp", 8, 2),
    ("1F1B M=16", ["--micro-batches", "16"], "1f1b", 16, 1),
]
DEMO_TOLERANCE = 0.05


def run_json(binary, *args):
    p = ppt_test.run(binary, list(args), timeout=300)
    if p.returncode != 0:
        raise ppt_test.Failure(f"{' '.join(args)}: exit {p.returncode}: {p.stderr.strip()[:400]}")
    return json.loads(p.stdout)


def stage_peaks(stats):
    return {s["stage"]: s["peak_allocated_bytes"] for s in stats["memory"]["stages"]}


def generated(binary, tmp, rows):
    logs = os.path.join(tmp, "measured")
    truth = ppt_test.gen_logs(logs, GEN + MEASURED, truth=True, seed=3)
    stats = run_json(binary, "stats", "--log_dir", logs, "--json")
    mem = stats.get("memory")
    check(mem is not None, "stats --json: a memory block for logs with details lines")
    if mem is None:
        return
    want = {s["stage"]: s for s in truth["memory"]["stages"]}
    for s in mem["stages"]:
        t = want.get(s["stage"], {})
        for key in ("peak_allocated_bytes", "peak_reserved_bytes", "static_bytes",
                    "activation_bytes_per_micro_batch", "peak_in_flight"):
            check(s.get(key) == t.get(key),
                  f"stats: stage {s['stage']} {key} {s.get(key)} as logged ({t.get(key)})")
    check(sorted(want) == sorted(stage_peaks(stats)), f"stats: every stage measured ({sorted(want)})")

    for label, target, gen_args in GEN_TARGETS:
        doc = run_json(binary, "whatif", "--log_dir", logs, "--json", *target)
        measured = doc["measured"]["peak_memory_bytes"]
        replayed = doc["replayed"]["peak_memory_bytes"]
        check(measured == [want[s]["peak_allocated_bytes"] for s in range(len(measured))],
              f"whatif: the measured peaks are the logged ones ({measured})")
        check(replayed == measured, f"whatif: the measured plan replays to the logged peaks ({replayed} vs {measured})")
        out = os.path.join(tmp, "gen-" + label.replace(" ", "").replace("=", ""))
        t = ppt_test.gen_logs(out, GEN + gen_args, truth=True, seed=3)
        truth_peaks = [s["peak_allocated_bytes"] for s in sorted(t["memory"]["stages"], key=lambda s: s["stage"])]
        rows.append(("generated " + label, doc["predicted"][0]["peak_memory_bytes"], truth_peaks, GEN_TOLERANCE))

    # A device the measured plan fits on and FThenB does not.
    fthenb_peak = rows[-3][1]
    device = (max(measured) + max(fthenb_peak)) // 2
    doc = run_json(binary, "whatif", "--log_dir", logs, "--json", "--device-memory", str(device),
                   "--schedule", "fthenb", "--schedule", "1f1b")
    fthenb = [p for p in doc["predicted"] if p["peak_memory_bytes"] == fthenb_peak]
    check(len(fthenb) == 1 and fthenb[0]["fits"] is False and fthenb[0]["margin_bytes"] < 0,
          f"whatif --device-memory: FThenB does not fit on {device} bytes ({fthenb})")
    check(doc["predicted"][0]["fits"] is True, "whatif --device-memory: the first ranked target fits")
    p = ppt_test.run(binary, ["whatif", "--log_dir", logs, "--device-memory", str(device), "--schedule", "fthenb"])
    check(p.returncode == 0 and "does not fit" in p.stdout, f"whatif's table says FThenB does not fit ({p.stdout[:800]})")
    s = run_json(binary, "stats", "--log_dir", logs, "--json", "--device-memory", str(device))
    check(all(st.get("fits") is True for st in s["memory"]["stages"]),
          "stats --device-memory: the measured run fits on a device above its peak")


def demo(binary, demo_bin, tmp, rows):
    def demo_run(out, schedule, m, chunks):
        args = ["--log_dir", out, "--ranks", "4", "--schedule", schedule, "--micro-batches", str(m), "--steps", "3",
                "--work_us", "500", "--device", "cpu", "--act-mb", DEMO_ACT_MB, "--static-mb", DEMO_STATIC_MB,
                "--pipeline-details"]
        if chunks > 1:
            args += ["--chunks", str(chunks)]
        p = ppt_test.run(demo_bin, args, timeout=240)
        if p.returncode != 0:
            raise ppt_test.Failure(f"pp-demo {' '.join(args)}: exit {p.returncode}: {p.stderr.strip()[:400]}")
        return run_json(binary, "stats", "--log_dir", out, "--json")

    measured_dir = os.path.join(tmp, "demo-1f1b")
    measured = demo_run(measured_dir, "1f1b", 8, 1)
    check("memory" in measured, "pp-demo --pipeline-details: stats reads its memory")
    for label, target, schedule, m, chunks in DEMO_TARGETS:
        doc = run_json(binary, "whatif", "--log_dir", measured_dir, "--json", *target)
        real = demo_run(os.path.join(tmp, "demo-" + schedule + str(m)), schedule, m, chunks)
        peaks = stage_peaks(real)
        rows.append(("pp-demo " + label, doc["predicted"][0]["peak_memory_bytes"],
                     [peaks.get(s, -1) for s in range(4)], DEMO_TOLERANCE))


def table(rows):
    lines = ["%-24s %-30s %-30s %9s" % ("case", "predicted peaks GiB", "run's peaks GiB", "worst")]
    for label, pred, truth, _ in rows:
        worst = max(abs(p / t - 1) for p, t in zip(pred, truth)) if len(pred) == len(truth) else float("inf")
        lines.append("%-24s %-30s %-30s %8.2f%%" % (label, " ".join("%.2f" % (p / GIB) for p in pred),
                                                     " ".join("%.2f" % (t / GIB) for t in truth), worst * 100))
    return "\n".join(lines)


def main():
    ap = arg_parser(__doc__)
    ap.add_argument("--demo", help="pp-demo, for the real-process part")
    ap.add_argument("--table", action="store_true", help="print only the accuracy table")
    a = ap.parse_args()
    rows = []
    with temp_dir("ppt-whatif-memory-") as tmp:
        generated(a.binary, tmp, rows)
        if a.demo:
            demo(a.binary, a.demo, tmp, rows)
        print(table(rows), flush=True)
        if a.table:
            return 0
        for label, pred, truth, tol in rows:
            check(len(pred) == len(truth) and all(t > 0 for t in truth), f"{label}: a peak for every stage")
            for s, (p, t) in enumerate(zip(pred, truth)):
                check(abs(p / t - 1) <= tol, f"{label}: stage {s} predicted {p / GIB:.3f} GiB within "
                      f"{tol:.0%} of the run's {t / GIB:.3f} GiB")
    return checks.exit_code("whatif memory")


if __name__ == "__main__":
    sys.exit(main())
