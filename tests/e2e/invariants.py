#!/usr/bin/env python3
"""Invariants of every command's outputs, through the real binary, on logs
from scripts/gen_logs.py: several schedules and layouts, machines whose
clocks are skewed (one set with a rank that lacks a step), data-parallel
replicas, overlapping jobs, a rerun, and a log whose clock jumps back (two
runs in one file, the second logged earlier than the first ended).

  a. steps after clock alignment (convert, --align-clocks auto): the steps
     track of each run has its slices disjoint and in step order, each the
     span of its step's jobs (earliest start to latest end, as README.md
     says), and every job is in its true step (the generator's truth);
  b. tracks nest: on every (pid, tid) of convert's Chrome JSON and Perfetto
     JSON, of its .pftrace (decoded with protoc, slices paired as a viewer
     pairs them; also the same slices as the JSON) and of the diff trace
     (`diff A B -o d.json`), slices are nested or disjoint;
  c. `convert -o x.html` is byte-identical to `report -o y.html` with the
     same options (--pp-degree, --steps, --align-clocks); nothing in either
     page depends on the output's name or the time of the run, so nothing is
     normalised;
  d. no command writes onto an input: for convert, stats, report, diff and
     batch, each way of naming an output (-o, --perfetto-json, the default
     outputs, diff -o, batch --out where a batch file would land on an input
     archive) that names an input exits 2 with a message naming that path,
     leaves every input byte-identical (hashed before and after) and writes
     no file at all (no temporary file left beside the inputs); and
     `batch root --out root/a`, where root/a is one of the runs, refuses or
     converts that run, never drops it in silence.

Each sub-check prints `ok` or `FAIL` with its name and what was wrong.

  invariants.py --binary build/pp-timeline [--protoc PATH] [--only a,b,c,d] [--keep DIR]
"""

import gzip
import os
import re
import shutil
import sys
import tarfile
import time

from ppt_test import (Checks, Failure, arg_parser, decode_pftrace, find_protoc, gen_logs, json_slices,
                      nesting_problems, pftrace_origin, pftrace_slices, read_json, run, snapshot, temp_dir,
                      us_to_ns)

# name: generator arguments. Every set is a log directory.
SETS = {
    # Rank 0 (the machine that keeps its clock) lacks its first step; the
    # other machine's clock is 10 ms ahead, a third of a step.
    "skew_rank0_lacks_step": ["--schedule", "1f1b", "--stages", "4", "--machines", "2", "--steps", "4",
                              "--missing-step", "0:0", "--skew", "1:10", "--seed", "3"],
    # A rank on the skewed machine lacks a middle step; clocks 3 s apart.
    "skew_rank2_lacks_step": ["--schedule", "1f1b", "--stages", "4", "--machines", "2", "--steps", "4",
                              "--missing-step", "2:1", "--skew", "1:-3000", "--seed", "4"],
    "vpp_3_machines_skewed": ["--schedule", "vpp", "--stages", "6", "--machines", "3", "--micro-batches", "12",
                              "--chunks", "2", "--steps", "3", "--skew", "1:0.5", "--skew", "2:-7",
                              "--missing-step", "4:2", "--seed", "5"],
    "replicas_2x2": ["--schedule", "1f1b", "--stages", "2", "--dp", "2", "--steps", "4", "--seed", "6"],
    "zbh1_overlap_rerun": ["--schedule", "zbh1", "--stages", "4", "--steps", "2", "--overlap", "1:0",
                           "--overlap", "3:1", "--rerun", "--seed", "7"],
    "fthenb_4_machines_skewed": ["--schedule", "fthenb", "--stages", "8", "--machines", "4", "--micro-batches", "4",
                                 "--steps", "3", "--skew", "1:3", "--skew", "2:-5", "--skew", "3:0.7", "--seed", "8"],
}
# Two runs in one file, the second (a restarted trainer) logged 5 ms after
# the first started: the clock jumps back by most of the first run.
JUMP_BACK = "clock_jumps_back"
JUMP_BACK_RUN = ["--schedule", "1f1b", "--stages", "4", "--steps", "3"]
EPOCH_MS = 1697793307000

# (c): options given to both convert -o x.html and report -o y.html.
HTML_OPTIONS = [
    ("replicas_2x2", []),
    ("replicas_2x2", ["--pp-degree", "2"]),
    ("replicas_2x2", ["--pp-degree", "2", "--steps", "1:2"]),
    ("replicas_2x2", ["--steps", "2"]),
    ("skew_rank2_lacks_step", []),
    ("skew_rank2_lacks_step", ["--align-clocks", "off"]),
    ("vpp_3_machines_skewed", ["--steps", "1:"]),
    (JUMP_BACK, []),
]
# (b): the diff traces checked.
DIFF_PAIRS = [
    ("replicas_2x2", "zbh1_overlap_rerun"),
    ("skew_rank2_lacks_step", "skew_rank0_lacks_step"),
    (JUMP_BACK, "zbh1_overlap_rerun"),
    (JUMP_BACK, JUMP_BACK),
]

checks = Checks()


def sub(name, fn, *args):
    """Runs one sub-check: fn raises Failure or returns a list of problems."""
    t0 = time.time()
    try:
        problems = fn(*args) or []
    except (Failure, OSError, ValueError) as e:  # a check that failed; an output missing or unreadable
        problems = [str(e)]
    if checks.check(not problems, "%s: %s" % (name, "\n    ".join(problems))):
        print("ok   %s (%.2f s)" % (name, time.time() - t0), flush=True)


def converted(binary, logs, out, extra=()):
    """convert's Chrome JSON of a log directory, with exact times."""
    p = run(binary, ["--log_dir", logs, "-o", out, "-q"] + list(extra))
    if p.returncode != 0:
        raise Failure("convert exit %d\n%s" % (p.returncode, p.stderr))
    return read_json(out, exact=True)


# ------------------------------------------------------------------ sets --

def make_jump_back(folder):
    """Each rank's file: run 1, then run 2 started 5 ms after run 1 did;
    returns the truth of both (run 2's lines after run 1's)."""
    first, second = folder + ".first", folder + ".second"
    truth = gen_logs(first, JUMP_BACK_RUN + ["--seed", "11", "--epoch-ms", str(EPOCH_MS)], truth=True)
    later = gen_logs(second, JUMP_BACK_RUN + ["--seed", "12", "--epoch-ms", str(EPOCH_MS + 5)], truth=True)
    os.makedirs(folder)
    lines = {}
    for name in sorted(os.listdir(first)):
        with open(os.path.join(folder, name), "wb") as out:
            for part in (first, second):
                with open(os.path.join(part, name), "rb") as f:
                    data = f.read()
                out.write(data)
                lines.setdefault(name, data.count(b"\n"))
    files = {r["rank"]: r["file"] for r in truth["ranks"]}
    for j in later["jobs"]:
        truth["jobs"].append(dict(j, run=1, line=j["line"] + lines[files[j["rank"]]]))
    shutil.rmtree(first)
    shutil.rmtree(second)
    return truth


def make_sets(work):
    logs, truths = {}, {}
    for name, args in SETS.items():
        logs[name] = os.path.join(work, "sets", name)
        truths[name] = gen_logs(logs[name], args, truth=True)
    logs[JUMP_BACK] = os.path.join(work, "sets", JUMP_BACK)
    truths[JUMP_BACK] = make_jump_back(logs[JUMP_BACK])
    return logs, truths


# --------------------------------------------------------------- a. steps --

def steps_tracks(trace):
    """{pid: (run name, step slices in file order)} and each run's jobs."""
    names = {e["pid"]: e["args"]["name"] for e in trace["traceEvents"]
             if e.get("ph") == "M" and e.get("name") == "process_name"}
    steps, jobs = {}, {}
    for e in trace["traceEvents"]:
        if e.get("ph") != "X":
            continue
        pname = names.get(e["pid"], "")
        run_name = pname.split(":")[0] if pname.startswith("run ") else ""
        start = us_to_ns(e["ts"])
        item = (start, start + us_to_ns(e["dur"]), e)
        if e.get("cat") == "step":
            steps.setdefault(e["pid"], (run_name, []))[1].append(item)
        else:
            jobs.setdefault(run_name, []).append(item)
    return steps, jobs


def check_steps_disjoint(trace):
    steps, _ = steps_tracks(trace)
    if not steps:
        return ["no steps track"]
    problems = []
    for pid, (run_name, slices) in sorted(steps.items()):
        tids = {s[2]["tid"] for s in slices}
        if len(tids) != 1:
            problems.append("%s: the steps are on %d tracks" % (run_name or "steps", len(tids)))
        for a, b in zip(slices, slices[1:]):
            if b[2]["args"]["step"] <= a[2]["args"]["step"]:
                problems.append("%s: %s after %s" % (run_name or "steps", b[2]["name"], a[2]["name"]))
            if b[0] < a[1]:
                problems.append("%s: %s [%d, %d] overlaps %s [%d, %d] by %d ns" % (
                    run_name or "steps", a[2]["name"], a[0], a[1], b[2]["name"], b[0], b[1], a[1] - b[0]))
    return problems[:5]


def check_steps_span_jobs(trace):
    steps, jobs = steps_tracks(trace)
    problems = []
    for pid, (run_name, slices) in sorted(steps.items()):
        spans = {}
        for start, end, e in jobs.get(run_name, []):
            k = e["args"]["step"]
            lo, hi = spans.get(k, (start, end))
            spans[k] = (min(lo, start), max(hi, end))
        drawn = {s[2]["args"]["step"]: (s[0], s[1]) for s in slices}
        if set(drawn) != set(spans):
            problems.append("%s: steps drawn %s, steps of the jobs %s" % (run_name or "steps", sorted(drawn),
                                                                         sorted(spans)))
        for k in sorted(set(drawn) & set(spans)):
            if drawn[k] != spans[k]:
                problems.append("%s: step%d drawn [%d, %d], its jobs run [%d, %d]" % (
                    run_name or "steps", k, drawn[k][0], drawn[k][1], spans[k][0], spans[k][1]))
    return problems[:5]


def check_true_steps(trace, truth, logs):
    files = {r["rank"]: r["file"] for r in truth["ranks"]}
    want = {"%s:%d" % (os.path.join(logs, files[j["rank"]]), j["line"]): j["step"] for j in truth["jobs"]}
    wrong, seen = [], 0
    for e in trace["traceEvents"]:
        if e.get("ph") != "X" or e.get("cat") == "step":
            continue
        seen += 1
        src = e["args"]["source"]
        if want.get(src) != e["args"]["step"]:
            wrong.append("%s in step %s, truth %s" % (src, e["args"]["step"], want.get(src)))
    problems = []
    if seen != len(want):
        problems.append("%d jobs drawn, the truth has %d" % (seen, len(want)))
    if wrong:
        problems.append("%d of %d jobs in the wrong step, e.g. %s" % (len(wrong), seen, "; ".join(wrong[:3])))
    return problems


def check_a(binary, work, logs, truths):
    for name in list(SETS) + [JUMP_BACK]:
        try:
            trace = converted(binary, logs[name], os.path.join(work, "a_%s.json" % name), ["--align-clocks", "auto"])
        except (Failure, OSError, ValueError) as e:
            checks.check(False, "a/%s: %s" % (name, e))
            continue
        sub("a/%s: steps disjoint, in order" % name, check_steps_disjoint, trace)
        sub("a/%s: each step the span of its jobs" % name, check_steps_span_jobs, trace)
        sub("a/%s: every job in its true step" % name, check_true_steps, trace, truths[name], logs[name])


# -------------------------------------------------------------- b. nesting --

def json_nesting(path):
    problems = []
    for key, slices in sorted(json_slices(read_json(path, exact=True)).items()):
        problems += ["pid %s tid %s: %s" % (key[0], key[1], p) for p in nesting_problems(slices)]
    return problems[:5]


def pftrace_problems(path, chrome_json, protoc):
    text = decode_pftrace(path, protoc)
    slices, _ = pftrace_slices(text)
    # Both on the JSON's zero: the .pftrace's may be earlier (a memory sample
    # before the first job; trace times cannot be negative).
    doc = read_json(chrome_json, exact=True)
    shift = pftrace_origin(text) - int(doc["metadata"]["time_origin_epoch_ns"])
    slices = {k: [(a + shift, b + shift, n) for a, b, n in v] for k, v in slices.items()}
    problems = []
    for uuid, s in sorted(slices.items()):
        problems += ["track %s: %s" % (uuid, p) for p in nesting_problems(s)]
    # The same slices as the JSON trace, track for track (a track's uuid is
    # the JSON's tid): a viewer pairs each end with the latest begin, so
    # slices that do not nest come out with other spans than the JSON's.
    want = {}
    for (pid, tid), s in json_slices(doc).items():
        want.setdefault(str(tid), []).extend((a, b, n) for a, b, n, _ in s)
    got = {k: sorted(v) for k, v in slices.items()}
    want = {k: sorted(v) for k, v in want.items()}
    for k in sorted(set(got) | set(want), key=lambda x: int(x)):
        if got.get(k) != want.get(k):
            extra = sorted(set(got.get(k, [])) - set(want.get(k, [])))[:2]
            missing = sorted(set(want.get(k, [])) - set(got.get(k, [])))[:2]
            problems.append("track %s: the .pftrace has %d slices, the JSON %d; only in the .pftrace %s, only in "
                            "the JSON %s" % (k, len(got.get(k, [])), len(want.get(k, [])), extra, missing))
    return problems[:5]


def check_b(binary, work, logs, protoc):
    for name in list(SETS) + [JUMP_BACK]:
        chrome, perfetto, pf = (os.path.join(work, "b_%s.%s" % (name, ext)) for ext in ("json", "p.json", "pftrace"))
        p = run(binary, ["--log_dir", logs[name], "-o", chrome, "--perfetto-json", perfetto, "-o", pf, "-q"])
        if p.returncode != 0:
            checks.check(False, "b/%s: convert exit %d\n%s" % (name, p.returncode, p.stderr))
            continue
        sub("b/%s: Chrome JSON tracks nest" % name, json_nesting, chrome)
        sub("b/%s: Perfetto JSON tracks nest" % name, json_nesting, perfetto)
        sub("b/%s: .pftrace tracks nest, the JSON's slices" % name, pftrace_problems, pf, chrome, protoc)
    for a, b in DIFF_PAIRS:
        out = os.path.join(work, "b_diff_%s_%s.json" % (a, b))
        p = run(binary, ["diff", logs[a], logs[b], "--trace", out, "-q"])
        if p.returncode not in (0, 1) or not os.path.exists(out):
            checks.check(False, "b/diff %s %s: exit %d, no trace\n%s" % (a, b, p.returncode, p.stderr))
            continue
        sub("b/diff %s %s: tracks nest" % (a, b), json_nesting, out)


# ----------------------------------------------------------------- c. html --

def first_difference(x, y):
    i = next((k for k in range(min(len(x), len(y))) if x[k] != y[k]), min(len(x), len(y)))
    return "%d and %d bytes, first difference at byte %d:\n      convert: %r\n      report:  %r" % (
        len(x), len(y), i, x[max(0, i - 60):i + 60], y[max(0, i - 60):i + 60])


def html_same(binary, work, logs, options, k):
    x, y = os.path.join(work, "c%d_x.html" % k), os.path.join(work, "c%d_y.html" % k)
    p = run(binary, ["--log_dir", logs, "-o", x, "-q"] + options)
    if p.returncode != 0:
        return ["convert exit %d\n%s" % (p.returncode, p.stderr)]
    q = run(binary, ["report", "--log_dir", logs, "-o", y, "-q"] + options)
    if q.returncode != 0:
        return ["report exit %d\n%s" % (q.returncode, q.stderr)]
    with open(x, "rb") as f1, open(y, "rb") as f2:
        a, b = f1.read(), f2.read()
    return [] if a == b else ["the pages differ: " + first_difference(a, b)]


def check_c(binary, work, logs):
    for k, (name, options) in enumerate(HTML_OPTIONS):
        sub("c/%s %s: convert -o x.html == report -o y.html" % (name, " ".join(options) or "(no options)"),
            html_same, binary, work, logs[name], options, k)


# ------------------------------------------------------------ d. no overwrite --

def make_inputs(base, logs):
    """The inputs every case of (d) starts from, in `base`:
      logs/workerlog.0-2, logs/workerlog.3.gz   a log directory
      files/r0.json r1.html r2.svg r3.pftrace     the same ranks as files named
                                                  like outputs; link.json -> r0.json
                                                  (and each case's hard.json, r0.json's
                                                  second name)
      cwd/pipeline_profile.json, cwd/pipeline_profile_perfetto.json
                                                  two ranks named as the default outputs
      batch_index.json/index.json, batch_summary.md/summary.md,
      batch_index.html/index.html                 archives of the logs, named as
                                                  the files batch writes in --out"""
    src = logs["replicas_2x2"]
    ranks = sorted(os.listdir(src), key=lambda n: int(n.rsplit(".", 1)[1]))
    os.makedirs(os.path.join(base, "logs"))
    for n in ranks[:3]:
        shutil.copy(os.path.join(src, n), os.path.join(base, "logs", n))
    with open(os.path.join(src, ranks[3]), "rb") as f, open(os.path.join(base, "logs", ranks[3] + ".gz"), "wb") as g:
        g.write(gzip.compress(f.read(), mtime=0))
    os.makedirs(os.path.join(base, "files"))
    for n, name in zip(ranks, ("r0.json", "r1.html", "r2.svg", "r3.pftrace")):
        shutil.copy(os.path.join(src, n), os.path.join(base, "files", name))
    os.symlink("r0.json", os.path.join(base, "files", "link.json"))
    os.makedirs(os.path.join(base, "cwd"))
    for n, name in zip(ranks, ("pipeline_profile.json", "pipeline_profile_perfetto.json")):
        shutil.copy(os.path.join(src, n), os.path.join(base, "cwd", name))
    for name in BATCH_FILES:
        os.makedirs(os.path.join(base, "batch_" + name))
        with tarfile.open(os.path.join(base, "batch_" + name, name), "w:gz") as t:
            t.add(src, arcname="logs")


FILES = ["files/r0.json", "files/r1.html", "files/r2.svg", "files/r3.pftrace"]
BATCH_FILES = ("index.json", "summary.md", "index.html")


def overwrite_cases(work):
    """(name, cwd below the case folder or None, args, the output path as
    named). {case} is the case folder's absolute path."""
    f = FILES
    return [
        ("convert -o FILE", None, f + ["-o", "files/r0.json"], "files/r0.json"),
        ("convert -o FILE.html", None, f + ["-o", "files/r1.html"], "files/r1.html"),
        ("convert -o FILE.svg", None, f + ["-o", "files/r2.svg"], "files/r2.svg"),
        ("convert -o FILE.pftrace", None, f + ["-o", "files/r3.pftrace"], "files/r3.pftrace"),
        ("convert --perfetto-json FILE", None, f + ["--perfetto-json", "files/r1.html"], "files/r1.html"),
        ("convert -o another spelling", None, f + ["-o", "./files/../files/r0.json"], "./files/../files/r0.json"),
        ("convert -o absolute path", None, f + ["-o", "{case}/files/r0.json"], "{case}/files/r0.json"),
        ("convert -o a link to an input", None, f + ["-o", "files/link.json"], "files/link.json"),
        ("convert -o a hard link to an input", None, f + ["-o", "files/hard.json"], "files/hard.json"),
        ("convert -o ok -o FILE", None, f + ["-o", "new.json", "-o", "files/r0.json"], "files/r0.json"),
        ("convert --log_dir --perfetto-json LOG", None, ["--log_dir", "logs", "--perfetto-json", "logs/workerlog.0"],
         "logs/workerlog.0"),
        ("convert --log_dir --perfetto-json LOG.gz", None,
         ["--log_dir", "logs", "--perfetto-json", "logs/workerlog.3.gz"], "logs/workerlog.3.gz"),
        ("convert default outputs", "cwd", ["pipeline_profile.json", "pipeline_profile_perfetto.json"],
         "pipeline_profile.json"),
        ("stats -o FILE", None, ["stats"] + f + ["-o", "files/r0.json"], "files/r0.json"),
        ("stats --markdown -o FILE -o -", None, ["stats"] + f + ["--markdown", "-o", "files/r1.html", "-o", "-"],
         "files/r1.html"),
        ("stats --log_dir -o LOG", None, ["stats", "--log_dir", "logs", "-o", "logs/workerlog.0"], "logs/workerlog.0"),
        ("report -o FILE", None, ["report"] + f + ["-o", "files/r1.html"], "files/r1.html"),
        ("report --log_dir -o LOG", None, ["report", "--log_dir", "logs", "-o", "logs/workerlog.1"],
         "logs/workerlog.1"),
        ("report --log_dir -o LOG.gz", None, ["report", "--log_dir", "logs", "-o", "logs/workerlog.3.gz"],
         "logs/workerlog.3.gz"),
        ("diff A-file B -o A", None, ["diff", "files/r1.html", "logs", "-o", "files/r1.html"], "files/r1.html"),
        ("diff A B-file -o B", None, ["diff", "logs", "files/r0.json", "-o", "files/r0.json"], "files/r0.json"),
    ] + [("batch --out holding an input archive (%s)" % name, None,
          ["batch", "batch_%s/%s" % (name, name), "--out", "batch_" + name], "batch_%s/%s" % (name, name))
         for name in BATCH_FILES]


def no_overwrite(binary, pristine, case_dir, cwd, args, named):
    shutil.copytree(pristine, case_dir, symlinks=True)
    # A second name of an input (a copy would not keep it).
    os.link(os.path.join(case_dir, "files", "r0.json"), os.path.join(case_dir, "files", "hard.json"))
    args = [a.replace("{case}", case_dir) for a in args]
    named = named.replace("{case}", case_dir)
    before = snapshot(case_dir)
    p = run(binary, args, cwd=os.path.join(case_dir, cwd) if cwd else case_dir, timeout=120)
    after = snapshot(case_dir)
    problems = []
    if p.returncode != 2:
        problems.append("exit %d, want 2 (usage: the output names an input)" % p.returncode)
    # A log's own name (workerlog.0) is no extension stats or report write:
    # refused for that, before the input check, with the same exit status.
    refused_by_name = os.path.basename(named).startswith("workerlog.") and "writes" in p.stderr
    if not refused_by_name and not any(named in line and "input" in line.lower() for line in p.stderr.splitlines()):
        problems.append("no message names %s as an input" % named)
    changed = [rel for rel, what in sorted(before.items()) if after.get(rel) != what]
    if changed:
        problems.append("inputs changed: %s" % ", ".join("%s %s -> %s" % (r, before[r][:3], after.get(r, ("gone",))[:3])
                                                          for r in changed))
    new = sorted(set(after) - set(before))
    temporary = [n for n in new if ".tmp." in os.path.basename(n)]
    if temporary:
        problems.append("temporary files left: %s" % ", ".join(temporary))
    if [n for n in new if n not in temporary]:
        problems.append("files written: %s" % ", ".join(n for n in new if n not in temporary))
    if problems:
        problems.append("stderr: %s" % p.stderr.strip()[-400:])
    return problems


def batch_into_a_run(binary, src, case_dir):
    """batch root --out root/a, where root/a is one of the runs: refused
    (exit 2 naming root/a, nothing written), or that run converted too and
    listed in index.json; never dropped in silence. The logs stay as they were."""
    for run_name in ("a", "b"):
        shutil.copytree(src, os.path.join(case_dir, "root", run_name))
    before = snapshot(case_dir)
    p = run(binary, ["batch", "root", "--out", "root/a", "-q"], cwd=case_dir, timeout=120)
    after = snapshot(case_dir)
    problems = []
    changed = [rel for rel, what in sorted(before.items()) if after.get(rel) != what]
    if changed:
        problems.append("inputs changed: %s" % ", ".join(changed))
    new = sorted(set(after) - set(before))
    if any(".tmp." in os.path.basename(n) for n in new):
        problems.append("temporary files left: %s" % ", ".join(n for n in new if ".tmp." in n))
    if p.returncode == 2:
        if not any("root/a" in line for line in p.stderr.splitlines()):
            problems.append("exit 2 without a message naming root/a")
        if new:
            problems.append("refused, yet wrote %s" % ", ".join(new))
    else:
        index = os.path.join(case_dir, "root", "a", "index.json")
        sources = [r.get("source") for r in read_json(index)["runs"]] if os.path.exists(index) else []
        if not any(x and re.split(r"[:/]", x.rstrip("/"))[-1] == "a" for x in sources):
            problems.append("exit %d and the run in root/a is not among the runs converted (%s)" % (
                p.returncode, ", ".join(map(str, sources)) or "no index.json"))
    if problems:
        problems.append("stderr: %s" % p.stderr.strip()[-400:])
    return problems


def check_d(binary, work, logs):
    pristine = os.path.join(work, "d_inputs")
    make_inputs(pristine, logs)
    for k, (name, cwd, args, named) in enumerate(overwrite_cases(work)):
        sub("d/%s" % name, no_overwrite, binary, pristine, os.path.join(work, "d%02d" % k), cwd, args, named)
    sub("d/batch --out a run's own log directory: the run refused or converted, not dropped", batch_into_a_run,
        binary, logs["replicas_2x2"], os.path.join(work, "d_batch_into_a_run"))


def main():
    ap = arg_parser(__doc__)
    ap.add_argument("--protoc", default="", help="protoc for the .pftrace (default: the one on PATH)")
    ap.add_argument("--only", default="a,b,c,d", help="which invariants, e.g. a,d")
    ap.add_argument("--keep", help="work in this folder and keep it")
    a = ap.parse_args()
    only = set(a.only.split(","))
    protoc = find_protoc(a.protoc)
    t0 = time.time()
    with temp_dir("ppt-invariants-", keep=a.keep) as work:
        logs, truths = make_sets(work)
        if "a" in only:
            check_a(a.binary, work, logs, truths)
        if "b" in only:
            check_b(a.binary, work, logs, protoc)
        if "c" in only:
            check_c(a.binary, work, logs)
        if "d" in only:
            check_d(a.binary, work, logs)
    print("%.1f s" % (time.time() - t0))
    return checks.exit_code("invariants")


if __name__ == "__main__":
    sys.exit(main())
