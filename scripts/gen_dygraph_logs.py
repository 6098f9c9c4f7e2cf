#!/usr/bin/env python3
"""Synthetic PaddlePaddle dynamic-graph pipeline profiles, with ground truth.

Paddle's dynamic-graph pipeline (fleet's PipelineParallel and
PipelineParallelWithInterleave, python/paddle/distributed/fleet/meta_parallel/
pipeline_parallel.py, with hybrid_configs["pp_configs"].profiling = True)
keeps one record per job edge in memory (_record_stamp) and appends them at the
end of every step (_flush_records) to ./profile_record_tmp_file_for_rank_<global
rank>, one JSON object per line:

  {"name": "F3", "cat": "pipeline timeline", "ph": "B", "pid": 0, "tid": 2, "ts": 1697793307213, "cname": "thread_state_running"}

then the matching "ph": "E". The interleaved class names the job "F3_VP1"
(micro-step counted per virtual stage, reset every step) in the category
"virtual pipeline timeline". tid is the stage + 1, ts int(time.time() * 1000):
whole milliseconds, truncated. Only forwards (F) and backwards (B) are
recorded: no optimizer, no W.

The run itself is simulated by gen_logs.py (same seed, same schedule, same
times): 1f1b (Paddle's PipelineParallel) or vpp (the interleaved class);
the optimizer jobs it simulates are not recorded, as in Paddle. Times are
truncated to ms as Paddle's are; with the default --fwd-ms 1 many jobs start
and end in the same ms (zero-length jobs) and neighbours share a ms (ties).

Files: OUT/profile_record_tmp_file_for_rank_<r>, or with --machines K,
OUT/machine<k>/profile_record_tmp_file_for_rank_<r> (global r, machine-major);
--launch-logs also writes each rank's workerlog.<local> beside them, launch
logs without job lines, as a dynamic-graph run has; --static-lines RANK puts
static-graph job lines into that rank's launch log (mixed formats).

Bad input, each in the truth's "rejected" by kind (the job's other record, if
any, is rejected too, as its own kind):
  --truncate RANK      the rank's file ends inside its last record (no newline)
  --drop-end RANK:N    the N-th job's "E" record of the rank is missing
  --drop-begin RANK:N  the N-th job's "B" record of the rank is missing
  --garbage RANK:N     a line of text that is not JSON before the N-th job's records

Truth (--truth FILE): "ranks" (rank, machine, file, stage, replica), "jobs"
(rank, step, type, mb, chunk, start_ns, end_ns, line: the B record's 1-based
line), "seen" (the jobs the records describe), "rejected" {kind: count},
"records" (record lines), "launch_logs" (files), "static_jobs" (static-graph
job lines in launch logs), "resolution_ns" (1000000).

  gen_dygraph_logs.py --out DIR [--schedule 1f1b|vpp] [--stages P] [--dp D] [--micro-batches M]
                      [--chunks V] [--steps S] [--machines K] [--truth FILE] [--seed N] ...
  gen_dygraph_logs.py --self-test
"""

import argparse
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_logs  # noqa: E402

NS_PER_MS = 1_000_000
PREFIX = "profile_record_tmp_file_for_rank_"


def record(name, cat, ph, tid, ts, cname):
    # The text Paddle's _record_format gives, field for field.
    return ('{"name": "%s", "cat": "%s", "ph": "%s", "pid": 0, "tid": %d, "ts": %d, "cname": "%s"}'
            % (name, cat, ph, tid, ts, cname))


def parse_rank_n(values, what):
    out = {}
    for v in values or []:
        try:
            r, n = v.split(":")
            out.setdefault(int(r), set()).add(int(n))
        except ValueError:
            raise SystemExit("gen_dygraph_logs.py: %s wants RANK:N, not %r" % (what, v))
    return out


def make_parser():
    p = argparse.ArgumentParser(prog="gen_dygraph_logs.py", formatter_class=argparse.RawDescriptionHelpFormatter,
                                description=__doc__)
    p.add_argument("--out", help="output folder (created)")
    p.add_argument("--schedule", choices=("1f1b", "vpp"), default="1f1b")
    p.add_argument("--stages", type=int, default=4)
    p.add_argument("--dp", type=int, default=1, help="data-parallel replicas; global rank = replica*P + stage")
    p.add_argument("--machines", type=int, default=1)
    p.add_argument("--micro-batches", type=int, default=8)
    p.add_argument("--chunks", type=int, default=2, help="V for vpp")
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--fwd-ms", type=float, default=1.0)
    p.add_argument("--jitter", type=float, default=0.05)
    p.add_argument("--comm-us", type=int, default=20)
    p.add_argument("--step-gap-us", type=int, default=500)
    p.add_argument("--epoch-ms", type=int, default=1697793307000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--launch-logs", action="store_true", help="write workerlog.<local> launch logs beside")
    p.add_argument("--static-lines", type=int, action="append", metavar="RANK",
                   help="that rank's launch log holds static-graph job lines (implies --launch-logs)")
    p.add_argument("--truncate", type=int, action="append", metavar="RANK")
    p.add_argument("--drop-end", action="append", metavar="RANK:N")
    p.add_argument("--drop-begin", action="append", metavar="RANK:N")
    p.add_argument("--garbage", action="append", metavar="RANK:N")
    p.add_argument("--truth", metavar="FILE")
    p.add_argument("--self-test", action="store_true")
    return p


def simulate(a):
    cfg = gen_logs.Config()
    cfg.stages, cfg.dp, cfg.machines = a.stages, a.dp, a.machines
    cfg.schedule = a.schedule
    cfg.micro_batches, cfg.steps = a.micro_batches, a.steps
    cfg.chunks = a.chunks if a.schedule == "vpp" else 1
    cfg.lr = False
    cfg.seed = a.seed
    cfg.epoch_ms = a.epoch_ms
    cfg.fwd_us = int(round(a.fwd_ms * 1000))
    cfg.jitter, cfg.comm_us, cfg.step_gap_us = a.jitter, a.comm_us, a.step_gap_us
    cfg.slow, cfg.runs = {}, 1
    try:
        gen_logs.build_plans(cfg.schedule, cfg.stages, cfg.micro_batches, cfg.chunks, cfg.lr)
    except gen_logs.PlanError as e:
        raise SystemExit("gen_dygraph_logs.py: " + str(e))
    return gen_logs.simulate(cfg)


def generate(a):
    P, D, K = a.stages, a.dp, a.machines
    n = P * D
    if n % K:
        raise SystemExit("gen_dygraph_logs.py: %d ranks do not split evenly over %d machines" % (n, K))
    per = n // K
    sim = simulate(a)
    vpp = a.schedule == "vpp"
    cat = "virtual pipeline timeline" if vpp else "pipeline timeline"
    truncate = set(a.truncate or [])
    drop_end = parse_rank_n(a.drop_end, "--drop-end")
    drop_begin = parse_rank_n(a.drop_begin, "--drop-begin")
    garbage = parse_rank_n(a.garbage, "--garbage")
    static = set(a.static_lines or [])
    launch = a.launch_logs or bool(static)
    if os.path.exists(a.out):
        shutil.rmtree(a.out)
    os.makedirs(a.out)
    truth = {"ranks": [], "jobs": [], "seen": 0, "rejected": {}, "records": 0, "launch_logs": [],
             "static_jobs": 0, "resolution_ns": NS_PER_MS}

    def reject(kind, k=1):
        truth["rejected"][kind] = truth["rejected"].get(kind, 0) + k
        truth["seen"] += k

    for r in range(n):
        machine, local = divmod(r, per)
        folder = "machine%d" % machine if K > 1 else ""
        rel = os.path.join(folder, PREFIX + str(r))
        stage, replica = r % P, r // P
        truth["ranks"].append({"rank": r, "machine": machine, "file": rel, "stage": stage, "replica": replica})
        lines = []
        jobs = []
        index = 0
        for step, plan in enumerate(sim[r][0]):
            for ty, mb, start, end in plan:
                kind, chunk, _piece = gen_logs.parse_type(ty)
                if kind not in (gen_logs.F, gen_logs.B):
                    continue  # the optimizer is not recorded
                letter = "F" if kind == gen_logs.F else "B"
                name = "%s%d_VP%d" % (letter, mb, chunk) if vpp else "%s%d" % (letter, mb)
                if vpp:
                    cname = ("thread_state_running", "thread_state_unknown")[chunk % 2] if letter == "F" else \
                        ("rail_load", "rail_idle")[chunk % 2]
                else:
                    cname = "thread_state_running" if letter == "F" else "rail_idle"
                ts_b, ts_e = start // NS_PER_MS, end // NS_PER_MS
                if index in garbage.get(r, ()):
                    lines.append("Traceback (most recent call last): stray output in the profile file")
                    reject("bad_profile_record")
                has_b = index not in drop_begin.get(r, ())
                has_e = index not in drop_end.get(r, ())
                b_line = None
                if has_b:
                    lines.append(record(name, cat, "B", stage + 1, ts_b, cname))
                    b_line = len(lines)
                if has_e:
                    lines.append(record(name, cat, "E", stage + 1, ts_e, cname))
                if has_b and has_e:
                    jobs.append({"rank": r, "step": step, "type": ("forward" if letter == "F" else "backward") +
                                 (str(chunk) if vpp else ""), "mb": mb, "chunk": chunk if vpp else -1,
                                 "start_ns": ts_b * NS_PER_MS, "end_ns": ts_e * NS_PER_MS, "line": b_line})
                    truth["seen"] += 1
                elif has_b:
                    reject("unmatched_begin")
                elif has_e:
                    reject("unmatched_end")
                index += 1
        text = "".join(l + "\n" for l in lines)
        if r in truncate and lines:
            # The last record is cut in the middle: its job is rejected, and
            # the B before it (when the cut record is an E) has no E.
            last = lines[-1]
            text = text[: len(text) - 1 - len(last) // 2]
            cut_job = jobs.pop() if jobs and jobs[-1]["line"] == len(lines) - 1 else None
            if cut_job is not None:
                truth["seen"] -= 1
                reject("unmatched_begin")
            reject("truncated_profile_record")
        truth["records"] += len(lines)
        truth["jobs"].extend(jobs)
        os.makedirs(os.path.join(a.out, folder), exist_ok=True)
        with open(os.path.join(a.out, rel), "w") as f:
            f.write(text)
        if launch:
            lrel = os.path.join(folder, "workerlog.%d" % (local if K > 1 else r))
            with open(os.path.join(a.out, lrel), "w") as f:
                f.write("LAUNCH INFO 2023-10-20 09:15:00,000 ------------------------- ERROR LOG DETAIL -------\n")
                f.write("[2023-10-20 09:15:01,000] [    INFO] - Pipeline Info -- num_stages: %d, stage_id: %d\n"
                        % (P, stage))
                if r in static:
                    for k in range(3):
                        f.write("I1020 09:15:07.265326 22317 standalone_executor.cc:217] Profiler Info: Job (%d), "
                                "type = forward, micro_batch_id = %d, job_start_time = %d.000000, "
                                "job_end_time = %d.500000\n" % (k, k, a.epoch_ms + k, a.epoch_ms + k))
                        truth["static_jobs"] += 1
                        reject("mixed_formats")
            truth["launch_logs"].append(lrel)
    if a.truth:
        with open(a.truth, "w") as f:
            json.dump(truth, f, indent=1)
    return truth


def self_test():
    """Checks the files against the truth: every truth job's B line holds its
    name and ts, and the counts add up."""
    import json as _json
    cases = [
        ["--schedule", "1f1b", "--stages", "4", "--micro-batches", "8"],
        ["--schedule", "vpp", "--stages", "4", "--micro-batches", "8", "--chunks", "2", "--dp", "2", "--machines", "2"],
        ["--schedule", "1f1b", "--truncate", "1", "--drop-end", "2:3", "--drop-begin", "3:0", "--garbage", "0:5",
         "--launch-logs", "--static-lines", "2"],
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for k, extra in enumerate(cases):
            out = os.path.join(tmp, "c%d" % k)
            a = make_parser().parse_args(["--out", out] + extra)
            t = generate(a)
            for j in t["jobs"]:
                rel = t["ranks"][j["rank"]]["file"]
                with open(os.path.join(out, rel)) as f:
                    lines = f.read().split("\n")
                rec = _json.loads(lines[j["line"] - 1])
                assert rec["ph"] == "B" and rec["ts"] * NS_PER_MS == j["start_ns"], (rel, j)
                assert rec["tid"] == t["ranks"][j["rank"]]["stage"] + 1
                end = _json.loads(lines[j["line"]])
                assert end["ph"] == "E" and end["name"] == rec["name"] and end["ts"] * NS_PER_MS == j["end_ns"]
            assert t["seen"] == len(t["jobs"]) + sum(t["rejected"].values()), t
    print("gen_dygraph_logs.py self-test: ok")


def main(argv=None):
    a = make_parser().parse_args(argv)
    if a.self_test:
        self_test()
        return 0
    if not a.out:
        raise SystemExit("gen_dygraph_logs.py: --out is required")
    t = generate(a)
    print("gen_dygraph_logs.py: %d ranks, %d jobs, %d records in %s" % (len(t["ranks"]), len(t["jobs"]),
                                                                       t["records"], a.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
