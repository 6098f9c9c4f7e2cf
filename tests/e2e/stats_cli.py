#!/usr/bin/env python3
"""The `stats` and `diff` subcommands through the real binary: reports in
every format, the CI gate's exit status and its metric (the step period, the
busy span, the throughput), a stats JSON as a diff baseline (also one written
before periods were measured), the two-run trace, diff of several runs, the
selection (--run, --steps, --skip-warmup) on every command, appended runs
measured one at a time, short ranks flagged, every JSON validated against its
schema in docs/schemas/, and the usage errors.

  stats_cli.py --binary build/pp-timeline
"""

import copy
import json
import os
import re
import sys

import jsonschema  # Debian: python3-jsonschema (scripts/setup.sh installs it)

import ppt_test
from ppt_test import Checks, arg_parser, temp_dir

SCHEMAS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "schemas")
RUN = ["--schedule", "1f1b", "--stages", "4", "--micro-batches", "8", "--steps", "3", "--seed", "9"]

checks = Checks()
check = checks.check


def gen(out, *extra):
    ppt_test.gen_logs(out, RUN + list(extra))


def run(binary, *args):
    p = ppt_test.run(binary, args, timeout=120)
    return p.returncode, p.stdout, p.stderr


def schema(name):
    with open(os.path.join(SCHEMAS, name)) as f:
        return json.load(f)


def schema_errors(doc, name):
    """The validation errors of `doc` against docs/schemas/NAME, as text."""
    v = jsonschema.Draft202012Validator(schema(name))
    return ["/".join(str(p) for p in e.absolute_path) + ": " + e.message for e in v.iter_errors(doc)][:5]


def gate_and_selection(binary, tmp):
    """The gate's metric, the selection, appended runs, short ranks, diff A B C."""
    # +100 ms between steps, the same work: the busy span is the same, the period is not
    fast, gap, fast2 = (os.path.join(tmp, n) for n in ("fast", "gap", "fast2"))
    gen(fast, "--steps", "4")
    gen(fast2, "--steps", "4")
    gen(gap, "--steps", "4", "--step-gap-us", "100500")
    rc, out, err = run(binary, "diff", fast, gap, "--fail-if-slower", "3")
    check(rc == 1, f"+100 ms between steps trips --fail-if-slower 3 (rc {rc}: {out[:300]})")
    check(re.search(r"verdict +slower: step period \+\d", out) and "metric: period" in out,
          f"the verdict line says the period is slower and that the period is the metric ({out[:400]})")
    check("metric: period" in err and "--fail-if-slower 3" in err, f"the gate's line names its metric ({err.strip()})")
    rc, out, _ = run(binary, "diff", fast, gap, "--fail-if-slower", "3", "--gate", "busy")
    check(rc == 0 and "metric: busy" in out, f"--gate busy: the spans are the same (rc {rc})")
    rc, out, _ = run(binary, "diff", fast, gap, "--fail-if-slower", "3", "--gate", "throughput", "--json")
    d = json.loads(out) if out.startswith("{") else {}
    check(rc == 1 and d.get("metric") == "throughput" and d.get("throughput", {}).get("delta_pct", 0) < -3,
          f"--gate throughput trips on fewer steps per second (rc {rc}, {d.get('throughput')})")
    check(d.get("gate", {}).get("metric") == "throughput", "the JSON gate names its metric")
    check(len(d.get("steps", [])) == 4 and d["steps"][0]["period_b_us"] > d["steps"][0]["period_a_us"] + 90000,
          f"diff --json has the per-step table ({d.get('steps', [])[:1]})")
    check(d.get("steps") and d["steps"][-1]["period_a_us"] is None, "the last step has no period")
    rc, out, _ = run(binary, "diff", fast, gap)
    check("steps (B against A)" in out and "period A ms" in out, "diff's text has the per-step table")
    rc, out, _ = run(binary, "diff", fast, gap, "--markdown")
    check("Steps (B against A)" in out and "| period A ms |" in out, "diff --markdown has the per-step table")
    page = os.path.join(tmp, "d.html")
    rc, _, err = run(binary, "diff", fast, gap, "-o", page)
    html = open(page).read() if rc == 0 else ""
    check("Steps (B against A)" in html and "period A ms" in html, f"the diff page has the per-step table ({err})")

    # throughput: micro-batches per second, samples with --micro-batch-size
    rc, out, _ = run(binary, "stats", fast, "--json", "--micro-batch-size", "4")
    st = json.loads(out) if rc == 0 else {}
    tp = st.get("throughput", {})
    per = st.get("step_period", {})
    check(per.get("count") == 3 and abs(tp.get("steps_per_second", 0) * per.get("mean_us", 0) - 1e6) < 1,
          f"steps per second is 1 / the mean period ({tp}, {per})")
    check(abs(tp.get("micro_batches_per_second", 0) - 8 * tp.get("steps_per_second", 0)) < 0.01
          and abs(tp.get("samples_per_second", 0) - 32 * tp.get("steps_per_second", 0)) < 0.01,
          f"micro-batches/s = M x steps/s, samples/s x the micro-batch size ({tp})")
    rc, out, _ = run(binary, "stats", fast)
    check("samples/s with --micro-batch-size N" in out and "period" in out and "busy span" in out,
          "the table has the period, the busy span and says how to get samples/s")

    # an old baseline (pp-timeline-stats/1, no period keys) still gates on the period
    rc, out, _ = run(binary, "stats", fast, "--json")
    old = json.loads(out)
    old["schema"] = "pp-timeline-stats/1"
    for k in ("step_period", "throughput", "measured_run", "selection", "notes", "rank_steps",
              "complete_rank_steps", "short_ranks", "ranks_without_jobs"):
        old.pop(k, None)
    for step in old["steps"]:
        step.pop("period_us", None)
        step.pop("incomplete_ranks", None)
    old_path = os.path.join(tmp, "old.json")
    with open(old_path, "w") as f:
        json.dump(old, f)
    rc, out, err = run(binary, "diff", old_path, gap, "--fail-if-slower", "3")
    check(rc == 1 and "metric: period" in out, f"a /1 baseline's periods follow from its steps (rc {rc}: {err})")
    for step in old["steps"]:
        step.pop("start_us", None)
    with open(old_path, "w") as f:
        json.dump(old, f)
    rc, out, err = run(binary, "diff", old_path, gap, "--fail-if-slower", "3")
    check("the busy span is compared" in out and "metric: busy" in out,
          f"a baseline without step starts falls back to the busy span and says so (rc {rc})")
    rc, out, err = run(binary, "diff", old_path, gap, "--gate", "period")
    check(rc == 2 and "--gate period" in err and "no step period" in err,
          f"--gate period with a baseline without periods is a usage error ({err.strip()})")

    # diff A B C: each against A; the gate trips if any does
    rc, out, err = run(binary, "diff", fast, fast2, gap, "--fail-if-slower", "3")
    check(rc == 1 and out.count("pp-timeline diff: A = ") == 2 and gap in err and fast2 not in err,
          f"diff A B C compares B and C with A and names the one that trips (rc {rc}: {err.strip()})")
    rc, out, err = run(binary, "diff", fast, fast2, fast2, "--fail-if-slower", "3")
    check(rc == 0, f"diff A B C passes when none trips (rc {rc}: {err.strip()})")
    rc, out, _ = run(binary, "diff", fast, fast2, gap, "--json")
    dset = json.loads(out) if rc == 0 else {}
    check(dset.get("schema") == "pp-timeline-diff-set/2" and len(dset.get("diffs", [])) == 2,
          "diff A B C --json holds one diff per run")
    rc, _, err = run(binary, "diff", fast, fast2, gap, "-o", os.path.join(tmp, "three.json"))
    three = json.load(open(os.path.join(tmp, "three.json"))) if rc == 0 else {}
    check(three.get("schema") == "pp-timeline-diff-set/2", f"diff A B C -o x.json writes the diff set ({err.strip()})")
    for name, flag in (("three.html", "-o"), ("three_trace.json", "--trace")):
        rc, _, err = run(binary, "diff", fast, fast2, gap, flag, os.path.join(tmp, name))
        check(rc == 2 and not os.path.exists(os.path.join(tmp, name)),
              f"{flag} {name} with three runs is a usage error: a page or trace holds two ({err.strip()})")

    # the selection, the same on every command
    rc, out, err = run(binary, "stats", fast, "--steps", "1:2", "--json")
    st = json.loads(out) if rc == 0 else {}
    check([s["step"] for s in st.get("steps", [])] == [1, 2], f"stats --steps 1:2 measures steps 1 and 2 ({err})")
    check("steps 1-2 of 0-3" in st.get("selection", ""), f"the JSON says what was selected ({st.get('selection')})")
    rc, out, _ = run(binary, "stats", fast, "--skip-warmup", "1", "--json")
    st = json.loads(out) if rc == 0 else {}
    check([s["step"] for s in st.get("steps", [])] == [1, 2, 3], "stats --skip-warmup 1 leaves out step 0")
    for cmd in (["stats", fast], ["report", fast, "-o", os.path.join(tmp, "r.html")],
                ["diff", fast, gap], [fast, "-o", os.path.join(tmp, "t.json")]):
        rc, out, err = run(binary, *cmd, "--steps", "7:9")
        check(rc == 2 and "steps 0-3" in err, f"{cmd[0]} --steps 7:9: a usage error naming the steps ({rc}: {err.strip()})")
        rc, out, err = run(binary, *cmd, "--run", "2")
        check(rc == 2 and "1 run" in err, f"{cmd[0]} --run 2 of a one-run log: a usage error ({rc}: {err.strip()})")
    rc, _, err = run(binary, fast, "-o", os.path.join(tmp, "sel.json"), "--steps", "1:2")
    trace = json.load(open(os.path.join(tmp, "sel.json"))) if rc == 0 else {"traceEvents": []}
    steps = {e["args"]["step"] for e in trace["traceEvents"] if e.get("ph") == "X" and "step" in e.get("args", {})}
    check(steps == {1, 2}, f"convert --steps 1:2 writes only those steps ({steps})")
    seen, written, rejected = ppt_test.summary_counts(err)
    left = re.search(r"([\d,]+) left out by the selection", err)
    check(left and written + rejected + int(left.group(1).replace(",", "")) == seen,
          f"the summary accounts for the jobs left out ({err.strip()})")

    # two appended runs: measured one at a time, never pooled
    rerun = os.path.join(tmp, "rerun")
    gen(rerun, "--rerun")
    rc, out, err = run(binary, "stats", rerun, "--json")
    st = json.loads(out) if rc == 0 else {}
    check(st.get("runs") == 2 and st.get("measured_run") == 1 and len(st.get("steps", [])) == 3,
          f"a two-run log: the last run's 3 steps, not 6 pooled ({st.get('runs')}, {len(st.get('steps', []))})")
    check(any("2 runs" in n and "run 1" in n for n in st.get("notes", [])), f"a note names the other run ({st.get('notes')})")
    check(st.get("step_period", {}).get("max_us", 1e9) < 1e6, "no period spans the 60 s between the runs")
    rc, out, _ = run(binary, "stats", rerun, "--run", "1", "--json")
    st1 = json.loads(out) if rc == 0 else {}
    check(st1.get("runs") == 1 and "run 1 of 2" in st1.get("selection", ""), f"--run 1 measures the first ({st1.get('selection')})")
    rc, out, _ = run(binary, "stats", rerun)
    check("note" in out and "2 runs" in out, "the table notes the other run")

    # a rank cut short after a few jobs: flagged, left out of the run's figures
    cut = os.path.join(tmp, "cut")
    gen(cut, "--steps", "4")
    rc, out, _ = run(binary, "stats", cut, "--json")
    whole = json.loads(out)["bubble_ratio"] if rc == 0 else -1
    lines = open(os.path.join(cut, "workerlog.3")).readlines()
    keep, n = [], 0
    for l in lines:
        n += 1 if "Profiler Info: Job" in l else 0
        if n > 5:
            break
        keep.append(l)
    with open(os.path.join(cut, "workerlog.3"), "w") as f:
        f.writelines(keep)
    rc, out, err = run(binary, "stats", cut, "--json")
    st = json.loads(out) if rc == 0 else {}
    check(st.get("short_ranks") == [3], f"the cut rank is flagged ({st.get('short_ranks')}: {err})")
    check(abs(st.get("bubble_ratio", 0) - whole) < 0.03,
          f"the run's bubble counts complete rank-steps ({st.get('bubble_ratio')} vs {whole} uncut)")
    check(st.get("complete_rank_steps", 0) < st.get("rank_steps", 0), "the figures say what they include")
    rc, out, err = run(binary, "stats", cut)
    check("short rank: rank 3" in out and "complete rank-steps" in out and "4 ranks" in out,
          f"the headline flags the short rank and says what the figures include ({out[:900]})")
    return cut, rerun


def validate_outputs(binary, tmp, cut, rerun):
    """Every stats and diff JSON against its schema; drift must be caught."""
    vpp, dp = os.path.join(tmp, "vpp"), os.path.join(tmp, "dp")
    ppt_test.gen_logs(vpp, ["--schedule", "vpp", "--stages", "4", "--micro-batches", "8", "--chunks", "2",
                            "--steps", "3", "--seed", "3"])
    ppt_test.gen_logs(dp, ["--schedule", "1f1b", "--stages", "2", "--dp", "2", "--steps", "3", "--seed", "4"])
    stats_docs = {}
    for name, args in {"plain": [os.path.join(tmp, "a")], "multi-run": [rerun], "vpp": [vpp], "replicas": [dp],
                       "short rank": [cut], "devices": [os.path.join(tmp, "a"), "--devices", "1,2"],
                       "selection": [rerun, "--run", "1", "--steps", "1:"],
                       "micro-batch size": [vpp, "--micro-batch-size", "2"]}.items():
        rc, out, err = run(binary, "stats", *args, "--json", "-q")
        check(rc == 0, f"stats --json ({name}) ({err.strip()})")
        if rc != 0:
            continue
        doc = json.loads(out)
        stats_docs[name] = doc
        errors = schema_errors(doc, "stats.v2.json")
        check(not errors, f"stats --json ({name}) matches docs/schemas/stats.v2.json: {errors}")
    diff_docs = {}
    for name, args in {"two runs": [os.path.join(tmp, "fast"), os.path.join(tmp, "gap"), "--fail-if-slower", "3"],
                       "no gate": [vpp, vpp], "baseline json": [os.path.join(tmp, "base.json"), os.path.join(tmp, "slow")]}.items():
        rc, out, err = run(binary, "diff", *args, "--json", "-q")
        check(rc in (0, 1) and out.startswith("{"), f"diff --json ({name}) ({err.strip()})")
        if not out.startswith("{"):
            continue
        doc = json.loads(out)
        diff_docs[name] = doc
        errors = schema_errors(doc, "diff.v2.json")
        check(not errors, f"diff --json ({name}) matches docs/schemas/diff.v2.json: {errors}")
    rc, out, err = run(binary, "diff", vpp, vpp, vpp, "--json", "-q")
    errors = schema_errors(json.loads(out), "diff.v2.json") if rc == 0 else ["no output"]
    check(not errors, f"diff A B C --json matches docs/schemas/diff.v2.json: {errors}")

    # drift: a key renamed, added or dropped, or of another type, is caught
    if stats_docs.get("plain"):
        base = stats_docs["plain"]
        for what, change in [
            ("a renamed key", lambda d: d["step_period"].update(mean_ms=d["step_period"].pop("mean_us"))),
            ("a new key", lambda d: d.update(extra=1)),
            ("a new key in a rank", lambda d: d["ranks"][0].update(extra=1)),
            ("a dropped key", lambda d: d["steps"][0].pop("period_us")),
            ("a string for a number", lambda d: d["throughput"].update(steps_per_second="1.0")),
            ("another schema", lambda d: d.update(schema="pp-timeline-stats/9")),
        ]:
            doc = copy.deepcopy(base)
            change(doc)
            check(schema_errors(doc, "stats.v2.json"), f"the stats schema catches {what}")
    if diff_docs.get("two runs"):
        base = diff_docs["two runs"]
        for what, change in [
            ("a renamed key", lambda d: d.update(gate_metric=d.pop("metric"))),
            ("a new key in a step", lambda d: d["steps"][0].update(extra=1)),
            ("a dropped key", lambda d: d["period"].pop("b_us")),
            ("an unknown metric", lambda d: d.update(metric="latency")),
        ]:
            doc = copy.deepcopy(base)
            change(doc)
            check(schema_errors(doc, "diff.v2.json"), f"the diff schema catches {what}")


def two_runs_of_other_shapes(binary, tmp):
    """A log with two runs: 6 steps at M=4, then a rerun of 3 steps at M=8.
    The figures are the last run's, and so must the schedule, M and the ideal
    be: the schedule used to come from the run with more steps (M=4) beside
    the M=8 run's times."""
    first, second, both = (os.path.join(tmp, n) for n in ("m4", "m8", "m4-then-m8"))
    ppt_test.gen_logs(first, ["--schedule", "1f1b", "--stages", "4", "--micro-batches", "4", "--steps", "6",
                              "--seed", "3"])
    ppt_test.gen_logs(second, ["--schedule", "1f1b", "--stages", "4", "--micro-batches", "8", "--steps", "3",
                               "--seed", "4", "--epoch-ms", "1697800000000"])
    os.makedirs(both)
    for i in range(4):
        with open(os.path.join(both, f"workerlog.{i}"), "wb") as out:
            for d in (first, second):
                with open(os.path.join(d, f"workerlog.{i}"), "rb") as f:
                    out.write(f.read())
    want = {}
    for name, d in (("alone", second), ("last run", both)):
        rc, out, err = run(binary, "stats", "--log_dir", d, "--json")
        doc = json.loads(out) if rc == 0 else {}
        sched = doc.get("schedule", {})
        check(rc == 0 and sched.get("micro_batches") == 8,
              f"{name}: the measured run's M is 8 (got {sched.get('micro_batches')}: {err.strip()[:200]})")
        if name == "alone":
            want = sched
        else:
            for key in ("name", "pp_degree", "micro_batches", "ideal_bubble_ratio"):
                check(sched.get(key) == want.get(key),
                      f"two runs: schedule.{key} is the last run's ({sched.get(key)} against {want.get(key)})")


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
        check(doc.get("schema") == "pp-timeline-stats/2", "stats --json has its schema")
        check(len(doc.get("ranks", [])) == 4 and all("bubble_ratio" in r for r in doc.get("ranks", [])),
              "stats --json lists the ranks")
        check([s.get("step") for s in doc.get("steps", [])] == [0, 1, 2], "stats --json lists the steps")
        base = os.path.join(tmp, "base.json")
        rc, out, _ = run(binary, "stats", "--log_dir", a, "-o", base)
        check(rc == 0 and out == "" and json.load(open(base))["schema"] == "pp-timeline-stats/2",
              "stats -o x.json writes JSON to the file")
        files = [os.path.join(a, f"workerlog.{i}") for i in range(4)]
        rc, out, _ = run(binary, "stats", "--json", *files)
        check(rc == 0 and json.loads(out)["ranks"][3]["busy_us"] == doc["ranks"][3]["busy_us"],
              "stats on files equals stats on the directory")
        # The suggestions' replays run beside the stats: the same bytes on
        # one thread or two; --no-suggestions leaves out only them.
        outs = {t: run(binary, "stats", "--log_dir", slow, "--json", "--threads", t) for t in ("1", "2", "3")}
        check(all(o[0] == 0 for o in outs.values()) and outs["1"][1] == outs["2"][1] == outs["3"][1],
              "stats --json is the same on 1, 2 and 3 threads")
        with_s = json.loads(outs["2"][1]) if outs["2"][0] == 0 else {}
        rc, out, err = run(binary, "stats", "--log_dir", slow, "--json", "--no-suggestions")
        without = json.loads(out) if rc == 0 else {}
        check(with_s.get("suggestions"), "the slow stage's run gets a suggestion")
        check(rc == 0 and without.get("suggestions") == [] and "suggestion_warnings" not in without,
              f"stats --no-suggestions makes none ({err.strip()})")
        for d in (with_s, without):
            d.pop("suggestions", None)
            d.pop("suggestion_warnings", None)
        check(with_s == without and with_s, "stats --no-suggestions changes nothing else")
        rc, out, _ = run(binary, "stats", "--log_dir", slow, "--no-suggestions")
        check(rc == 0 and "would help" not in out, "stats --no-suggestions prints no 'would help' line")
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

        cut, rerun = gate_and_selection(binary, tmp)
        validate_outputs(binary, tmp, cut, rerun)
        two_runs_of_other_shapes(binary, tmp)

    return checks.exit_code("stats/diff CLI")


if __name__ == "__main__":
    sys.exit(main())
