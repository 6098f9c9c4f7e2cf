#!/usr/bin/env python3
"""`pp-timeline whatif` through the real binary: the model's accuracy against
runs scripts/gen_logs.py made with the same stage costs (replaying the
measured schedule within 1% of the measured period, predicting another
schedule or micro-batch count within 3% of the period of a run generated that
way), the table and the JSON (validated against docs/schemas/whatif.v1.json),
several targets ranked, the predicted timeline written as a run is, the
suggestions of `stats`, and the usage errors.

  whatif_cli.py --binary build/pp-timeline [--table]

--table prints only the accuracy table (what scripts/bench.sh shows).
"""

import json
import re
import os
import sys

import jsonschema  # Debian: python3-jsonschema (scripts/setup.sh installs it)

import ppt_test
from ppt_test import Checks, arg_parser, temp_dir

SCHEMAS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "schemas")

# The stage costs every run of a case shares: 4 stages, forward 1 ms
# (backward 2 ms), stage 2 30% slower, 5% jitter, 20 us links, 500 us between steps.
COSTS = ["--stages", "4", "--steps", "5", "--fwd-ms", "1", "--jitter", "0.05", "--comm-us", "20",
         "--step-gap-us", "500", "--slow", "2:1.3"]

# (name, the measured run, whatif's target options, the run generated under the target)
CASES = [
    ("1F1B -> ZBH1", ["--schedule", "1f1b", "--micro-batches", "8"], ["--schedule", "zbh1"],
     ["--schedule", "zbh1", "--micro-batches", "8"]),
    ("1F1B -> FThenB", ["--schedule", "1f1b", "--micro-batches", "8"], ["--schedule", "fthenb"],
     ["--schedule", "fthenb", "--micro-batches", "8"]),
    ("1F1B -> Eager1F1B", ["--schedule", "1f1b", "--micro-batches", "8"], ["--schedule", "eager1f1b"],
     ["--schedule", "eager1f1b", "--micro-batches", "8"]),
    ("1F1B -> VPP V=2", ["--schedule", "1f1b", "--micro-batches", "8"], ["--schedule", "vpp", "--chunks", "2"],
     ["--schedule", "vpp", "--chunks", "2", "--micro-batches", "8"]),
    ("1F1B M=8 -> M=16", ["--schedule", "1f1b", "--micro-batches", "8"], ["--micro-batches", "16"],
     ["--schedule", "1f1b", "--micro-batches", "16"]),
    ("1F1B -> ZBVPP V=2", ["--schedule", "1f1b", "--micro-batches", "8"], ["--schedule", "zbvpp", "--chunks", "2"],
     ["--schedule", "zbvpp", "--chunks", "2", "--micro-batches", "8"]),
    ("ZBH1 -> 1F1B", ["--schedule", "zbh1", "--micro-batches", "8"], ["--schedule", "1f1b"],
     ["--schedule", "1f1b", "--micro-batches", "8"]),
    ("VPP V=2 -> 1F1B", ["--schedule", "vpp", "--chunks", "2", "--micro-batches", "8"], ["--schedule", "1f1b"],
     ["--schedule", "1f1b", "--micro-batches", "8"]),
    ("ZBVPP V=2 -> 1F1B", ["--schedule", "zbvpp", "--chunks", "2", "--micro-batches", "8"], ["--schedule", "1f1b"],
     ["--schedule", "1f1b", "--micro-batches", "8"]),
    ("1F1B x8 replicas -> ZBH1", ["--schedule", "1f1b", "--micro-batches", "16", "--dp", "8"],
     ["--schedule", "zbh1"], ["--schedule", "zbh1", "--micro-batches", "16", "--dp", "8"]),
    ("1F1B x8 replicas -> VPP V=2", ["--schedule", "1f1b", "--micro-batches", "16", "--dp", "8"],
     ["--schedule", "vpp", "--chunks", "2"], ["--schedule", "vpp", "--chunks", "2", "--micro-batches", "16",
                                              "--dp", "8"]),
    ("FThenB M=8 -> 1F1B M=16", ["--schedule", "fthenb", "--micro-batches", "8"],
     ["--schedule", "1f1b", "--micro-batches", "16"], ["--schedule", "1f1b", "--micro-batches", "16"]),
]

checks = Checks()
check = checks.check


def run(binary, *args):
    p = ppt_test.run(binary, args, timeout=120)
    return p.returncode, p.stdout, p.stderr


def whatif_json(binary, logs, *args):
    rc, out, err = run(binary, "whatif", "--log_dir", logs, "--json", *args)
    if rc != 0:
        raise ppt_test.Failure(f"whatif {' '.join(args)} on {logs}: exit {rc}: {err.strip()[:300]}")
    return json.loads(out)


def measured_period_us(binary, logs):
    rc, out, err = run(binary, "stats", "--log_dir", logs, "--json")
    if rc != 0:
        raise ppt_test.Failure(f"stats on {logs}: exit {rc}: {err.strip()[:300]}")
    return json.loads(out)["step_period"]["mean_us"]


def schema_errors(doc, name):
    with open(os.path.join(SCHEMAS, name)) as f:
        v = jsonschema.Draft202012Validator(json.load(f))
    return ["/".join(str(p) for p in e.absolute_path) + ": " + e.message for e in v.iter_errors(doc)][:5]


def accuracy(binary, tmp, seed=5):
    """Every case: (name, measured, replayed, predicted, generated) periods in us."""
    rows = []
    made = {}

    def logs_for(args):
        key = tuple(args)
        if key not in made:
            out = os.path.join(tmp, "acc%d" % len(made))
            ppt_test.gen_logs(out, COSTS + list(args) + ["--seed", str(seed)])
            made[key] = out
        return made[key]

    for name, measured_args, target, generated_args in CASES:
        logs = logs_for(measured_args)
        doc = whatif_json(binary, logs, *target)
        truth = measured_period_us(binary, logs_for(generated_args))
        rows.append((name, doc["measured"]["period_us"], doc["replayed"]["period_us"],
                     doc["predicted"][0]["period_us"], truth))
    return rows


def format_table(rows):
    lines = ["%-32s %12s %12s %8s %12s %12s %8s" % ("case", "measured ms", "replayed ms", "error", "predicted ms",
                                                      "generated ms", "error")]
    for name, measured, replayed, predicted, truth in rows:
        lines.append("%-32s %12.3f %12.3f %7.2f%% %12.3f %12.3f %7.2f%%" % (
            name, measured / 1e3, replayed / 1e3, (replayed / measured - 1) * 100, predicted / 1e3, truth / 1e3,
            (predicted / truth - 1) * 100))
    return "\n".join(lines)


def check_accuracy(rows):
    for name, measured, replayed, predicted, truth in rows:
        check(abs(replayed / measured - 1) < 0.01,
              f"{name}: the measured schedule replayed within 1% of the measured period "
              f"({replayed:.1f} vs {measured:.1f} us)")
        check(abs(predicted / truth - 1) < 0.03,
              f"{name}: the prediction within 3% of the generated run's period ({predicted:.1f} vs {truth:.1f} us)")


def outputs_and_errors(binary, tmp):
    logs = os.path.join(tmp, "small")
    ppt_test.gen_logs(logs, COSTS + ["--schedule", "1f1b", "--micro-batches", "8", "--seed", "2"])

    # The table: measured, replayed, each target ranked, the assumptions.
    rc, out, err = run(binary, "whatif", "--log_dir", logs, "--schedule", "1f1b,zbh1,fthenb", "--micro-batches",
                       "8,16")
    check(rc == 0, f"whatif exits 0 (got {rc}: {err.strip()[:300]})")
    for word in ("measured", "replayed", "predicted #1", "predicted #6", "assumptions:", "model error",
                 "period ms (mean)", "busy ms (mean)", "0.5, not measured"):
        check(word in out, f"the table has {word!r} ({out[:600]})")

    check("ranked by throughput" in out and "per mb" in out and "time per micro-batch" in out,
          f"the table says it ranks by throughput and compares another M per micro-batch ({out[:900]})")

    doc = whatif_json(binary, logs, "--schedule", "1f1b,zbh1,fthenb", "--micro-batches", "8,16")
    rates = [p["micro_batches_per_second"] for p in doc["predicted"]]
    check(len(rates) == 6 and rates == sorted(rates, reverse=True), f"six targets, ranked by throughput ({rates})")
    # M=16 has the smaller bubble: each schedule's M=16 ranks above its M=8, though its period is longer.
    for sched in ("1f1b", "zbh1", "fthenb"):
        rank = {p["micro_batches"]: i for i, p in enumerate(doc["predicted"]) if p["schedule"] == sched}
        check(rank[16] < rank[8], f"{sched}: M=16 ranks above M=8 ({rank})")
    for p in doc["predicted"]:
        per_mb = p["micro_batches"] != doc["measured"]["micro_batches"]
        want = (p["time_per_micro_batch_us"] / doc["measured"]["time_per_micro_batch_us"] - 1) * 100 if per_mb \
            else (p["period_us"] / doc["measured"]["period_us"] - 1) * 100
        check(p["vs_measured_of"] == ("time_per_micro_batch" if per_mb else "period") and
              abs(p["vs_measured_pct"] - want) < 0.01,
              f"{p['label']}: vs measured compares {'the time per micro-batch' if per_mb else 'the period'} ({p})")
    check(doc["measured"]["vs_measured_pct"] is None, "the measured run is not compared with itself")
    check({(p["schedule"], p["micro_batches"]) for p in doc["predicted"]} ==
          {(s, m) for s in ("1f1b", "zbh1", "fthenb") for m in (8, 16)}, "every schedule x every M")
    check(doc["measured"]["schedule"] == "1f1b" and doc["measured"]["peak_in_flight"] == [4, 3, 2, 1],
          f"the measured run: 1F1B, P-s micro-batches in flight ({doc['measured']})")
    fthenb = [p for p in doc["predicted"] if p["schedule"] == "fthenb" and p["micro_batches"] == 16]
    check(fthenb and fthenb[0]["peak_in_flight"] == [16] * 4, "FThenB holds every micro-batch on every stage")
    errors = schema_errors(doc, "whatif.v1.json")
    check(not errors, f"whatif --json follows docs/schemas/whatif.v1.json ({errors})")
    one = whatif_json(binary, logs)
    check(isinstance(one["predicted"], list) and len(one["predicted"]) == 1,
          "one target: predicted is still an array")
    errors = schema_errors(one, "whatif.v1.json")
    check(not errors, f"the one-target JSON follows the schema ({errors})")

    # A shape Paddle refuses is an entry with its error, ranked last, and a
    # warning; so is one of Paddle's VPP plans that deadlocks (P=4 M=13 V=3).
    rc, out, err = run(binary, "whatif", "--log_dir", logs, "--schedule", "vpp,1f1b", "--micro-batches", "3",
                       "--json")
    d = json.loads(out) if rc == 0 else {}
    check(rc == 0 and all(p["error"] and "M >= P" in p["error"] for p in d["predicted"]),
          f"M=3 on 4 stages: both refused, saying why (rc {rc}: {err.strip()[:200]})")
    rc, out, err = run(binary, "whatif", "--log_dir", logs, "--schedule", "vpp,1f1b", "--chunks", "3",
                       "--micro-batches", "13", "--json")
    d = json.loads(out) if rc == 0 else {}
    check(rc == 0 and "deadlock" in (d["predicted"][-1]["error"] or "") and d["predicted"][0]["schedule"] == "1f1b",
          f"VPP M=13 V=3 on 4 stages deadlocks, and goes last (rc {rc}: {err.strip()[:200]})")
    check("warning" in err and "VPP" in err and "deadlock" in err, f"and a warning says so ({err.strip()[:300]})")
    rc, out, err = run(binary, "whatif", "--log_dir", logs, "--schedule", "vpp", "--micro-batches", "6", "--json")
    d = json.loads(out) if rc == 0 else {}
    check(rc == 0 and d["predicted"][0]["error"] is None,
          f"VPP M=6 on 4 stages is Paddle's plan with M not a multiple of P: predicted ({err.strip()[:200]})")

    # -o: the best target's timeline, drawn and written as a measured run is.
    trace, page = os.path.join(tmp, "predicted.json"), os.path.join(tmp, "predicted.html")
    rc, out, err = run(binary, "whatif", "--log_dir", logs, "--schedule", "zbh1,fthenb", "-o", trace, "-o", page)
    check(rc == 0 and os.path.exists(trace) and os.path.exists(page), f"-o writes both (rc {rc}: {err[:300]})")
    if os.path.exists(trace):
        t = ppt_test.read_json(trace)
        types = {str(e.get("name")).split(" ")[0] for e in t.get("traceEvents", []) if e.get("ph") == "X"}
        check({"forward", "backward_b", "backward_w", "optimizer"} <= types,
              f"the written timeline is the ZBH1 prediction ({sorted(types)})")
    if os.path.exists(page):
        # The page: the measured run above the prediction, on one time scale.
        with open(page, encoding="utf-8") as f:
            html = f.read()
        sides = re.findall(r'<h3 class="side" data-side="(a|b)">([^<]*)</h3>', html)
        check([s for s, _ in sides] == ["a", "b"] and sides[0][1].startswith("A (measured)") and
              sides[1][1].startswith("B (predicted)") and "ZBH1" in sides[1][1],
              f"the page shows the measured timeline above the predicted one ({sides})")
        check(html.count("<svg") == 2 and "Timelines, measured above predicted, one time scale" in html,
              "the page has both timelines under one heading")
        # Each side starts at its own drawn step; the scale is one: the same
        # width, the same tick spacing in ms and in pixels.
        def scale(svg):
            ticks = [(float(x), int(v)) for x, v in re.findall(r'<text x="([\d.]+)"[^>]*>(\d+) ms</text>', svg)]
            return (re.search(r'width="(\d+)"', svg).group(1), ticks[1][1] - ticks[0][1],
                    round(ticks[1][0] - ticks[0][0], 1)) if len(ticks) > 1 else None
        svgs = re.findall(r"<svg.*?</svg>", html, re.S)
        drawn = [re.findall(r'data-first-step="(\d+)" data-last-step="(\d+)"', svg) for svg in svgs]
        check(len(drawn) == 2 and drawn[0] and drawn[0] == drawn[1],
              f"both sides draw the same steps: the predicted step k stands for the measured step k ({drawn})")
        scales = [scale(svg) for svg in svgs]
        check(len(scales) == 2 and scales[0] is not None and scales[0] == scales[1],
              f"both timelines are drawn on one time scale: width, ms and pixels between ticks ({scales})")
    # Every predicted output says it is a prediction, and of which target:
    # the trace's process names and metadata, the picture's title.
    pftrace, svg = os.path.join(tmp, "predicted.pftrace"), os.path.join(tmp, "predicted.svg")
    rc, out, err = run(binary, "whatif", "--log_dir", logs, "--schedule", "zbh1", "-o", trace, "-o", pftrace,
                       "-o", svg)
    check(rc == 0, f"-o writes .json, .pftrace and .svg (rc {rc}: {err[:300]})")
    said = "predicted (ZBH1 M=8)"
    if os.path.exists(trace):
        t = ppt_test.read_json(trace)
        names = [e["args"]["name"] for e in t.get("traceEvents", [])
                 if e.get("ph") == "M" and e.get("name") == "process_name"]
        check(names and all(n.startswith(said) for n in names),
              f"the predicted trace's processes say {said!r} ({names})")
        check(t.get("metadata", {}).get("prediction") == said,
              f"the predicted trace's metadata says {said!r} ({t.get('metadata')})")
    if os.path.exists(pftrace):
        with open(pftrace, "rb") as f:
            data = f.read()
        check(said.encode() in data and b"pipeline" not in data,
              f"the predicted .pftrace's root track is {said!r}, not 'pipeline'")
    if os.path.exists(svg):
        with open(svg, encoding="utf-8") as f:
            picture = f.read()
        titles = re.findall(r"<title>([^<]*)</title>\n<style>", picture)
        heading = re.findall(r'<text class="title"[^>]*>([^<]*)</text>', picture)
        check(titles and titles[0].startswith(said) and heading and heading[0].startswith(said),
              f"the predicted picture's title says {said!r} ({titles[:1]}, {heading[:1]})")
    rc, out, err = run(binary, "--log_dir", logs, "-o", trace)
    t = ppt_test.read_json(trace) if rc == 0 else {}
    check(rc == 0 and "prediction" not in t.get("metadata", {}) and
          all("predicted" not in str(e.get("args", {}).get("name")) for e in t.get("traceEvents", [])
              if e.get("ph") == "M"), "a measured run's trace says nothing of a prediction")

    rc, out, _ = run(binary, "stats", trace.replace(".json", ".missing"))
    check(rc == 2, "a missing input is a usage error")

    # stats says what would help, in the text and the JSON.
    rc, out, err = run(binary, "stats", "--log_dir", logs)
    check(rc == 0 and "would help" in out and "balancing stage 2" in out,
          f"stats names the slow stage's balancing among what would help ({out[:1500]})")
    rc, out, err = run(binary, "stats", "--log_dir", logs, "--json")
    s = json.loads(out) if rc == 0 else {}
    sug = s.get("suggestions", [])
    check(all(x["gain_of"] == ("time_per_micro_batch" if x["change"].startswith("M=") else "period") and
              ("time per micro-batch" in x["text"]) == x["change"].startswith("M=") for x in sug),
          f"stats --json: another M is compared per micro-batch, and says so ({sug})")
    check(sug and all(x["period_gain"] > 0 for x in sug) and
          [x["period_gain"] for x in sug] == sorted((x["period_gain"] for x in sug), reverse=True),
          f"stats --json: suggestions with a gain, best first ({sug})")
    errors = schema_errors(s, "stats.v2.json")
    check(not errors, f"stats --json with suggestions follows stats.v2.json ({errors})")

    # Usage errors: one line, exit 2.
    for args, what in [
        (["--schedule", "zbh2"], "an unknown schedule"),  # GPipe is FThenB
        (["--stage-scale", "2"], "a stage scale without a factor"),
        (["--stage-scale", "2:fast"], "a stage scale factor that is not a number"),
        (["--stage-scale", "9:1.5"], "a stage the run does not have"),
        (["--micro-batches", "0"], "zero micro-batches"),
        (["--w-share", "1.5"], "a w share above 1"),
    ]:
        rc, _, err = run(binary, "whatif", "--log_dir", logs, *args)
        check(rc == 2, f"{what}: exit 2 (got {rc}: {err.strip()[:200]})")
        check(err.count("\n") <= 2 and "Traceback" not in err, f"{what}: a short message ({err.strip()[:300]})")
    rc, _, err = run(binary, "whatif", "--log_dir", logs, "--schedule", "zbh2")
    check("pp-timeline whatif: error: --schedule zbh2" in err, f"the error names the option ({err.strip()})")
    rc, _, err = run(binary, "whatif")
    check(rc == 2 and "--log_dir" in err, "no input: exit 2")


def warnings(binary, tmp):
    """Where the model does not hold, whatif and stats say so (the top-level
    `warnings`), and every prediction has a range."""
    testdata = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "testdata")
    logs = os.path.join(tmp, "warn-plain")
    ppt_test.gen_logs(logs, COSTS + ["--schedule", "1f1b", "--micro-batches", "8", "--seed", "4"])
    doc = whatif_json(binary, logs, "--schedule", "1f1b,zbh1,fthenb")
    check(doc["warnings"] == [] and doc["refusal"] is None,
          f"a generated run the model describes: no warning ({doc['warnings']})")
    for p in doc["predicted"] + [doc["replayed"]]:
        lo, hi = p["period_range_us"]
        check(lo < p["period_us"] < hi, f"{p['label']}: a range around the period ({lo} {p['period_us']} {hi})")
    check(doc["measured"]["period_range_us"] is None, "the measured run has no range")
    noise = [p["label"] for p in doc["predicted"] if p["within_noise_of_best"]]
    check("FThenB M=8" not in noise, f"FThenB, 10% slower than ZBH1, is not within its noise ({noise})")

    # Several runs: which one is modelled.
    rerun = os.path.join(tmp, "warn-rerun")
    ppt_test.gen_logs(rerun, COSTS + ["--schedule", "1f1b", "--micro-batches", "8", "--seed", "4", "--rerun"])
    w = whatif_json(binary, rerun)["warnings"]
    check(any("the logs hold 2 runs; the model is run 2 (the last" in x for x in w),
          f"a log of two runs: the warning says run 2 is modelled ({w})")
    w = whatif_json(binary, rerun, "--run", "1")["warnings"]
    check(not any("logs hold" in x for x in w), f"--run 1 keeps one run: nothing to say ({w})")

    # One step: no period.
    one = os.path.join(tmp, "warn-one")
    ppt_test.gen_logs(one, ["--stages", "4", "--steps", "1", "--schedule", "1f1b", "--micro-batches", "8"])
    rc, out, err = run(binary, "whatif", "--log_dir", one, "--schedule", "zbh1")
    check(rc == 0 and "warnings (where the model does not hold):" in out and "one step: there is no period" in out
          and "between steps: none measured" in out, f"one step: the table says there is no period ({out[-900:]})")

    # Whole milliseconds (dygraph profiles) against 4 ms forwards: the resolution.
    dy = os.path.join(testdata, "cases", "dygraph-stats-json", "logs")
    doc = whatif_json(binary, dy, "--schedule", "zbh1")
    check(any("whole 1000.0 us, coarser than a tenth of the typical job" in x for x in doc["warnings"]),
          f"whole-millisecond records: the resolution is a warning ({doc['warnings']})")
    check(any("whole 1000.0 us" in a for a in doc["assumptions"]), "and the assumptions name it")
    rc, out, err = run(binary, "stats", "--log_dir", dy, "--json")
    s = json.loads(out) if rc == 0 else {}
    check(any("coarser than a tenth" in x for x in s.get("suggestion_warnings", [])),
          f"stats --json: the suggestions carry the same warning ({s.get('suggestion_warnings')})")
    rc, out, err = run(binary, "stats", "--log_dir", dy)
    check("caveat" in out and "coarser than a tenth" in out, f"stats: a caveat line ({out[:1500]})")


def main():
    ap = arg_parser(__doc__)
    ap.add_argument("--table", action="store_true", help="print only the accuracy table")
    a = ap.parse_args()
    with temp_dir("ppt-whatif-cli-") as tmp:
        rows = accuracy(a.binary, tmp)
        print(format_table(rows), flush=True)
        if a.table:
            return 0
        check_accuracy(rows)
        outputs_and_errors(a.binary, tmp)
        warnings(a.binary, tmp)
    return checks.exit_code("whatif CLI")


if __name__ == "__main__":
    sys.exit(main())
