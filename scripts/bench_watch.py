#!/usr/bin/env python3
"""The watch benchmark (scripts/bench.sh --only watch): a feeder writes a
64-rank log set (8 machines of 8 ranks, an 8-stage 1F1B pipeline with 8
replicas, 4 micro-batches) at a fixed rate of steps per second while
`pp-timeline watch --jsonl -` follows it, and prints:

  - watch's CPU time per step (user + system, over the whole watch);
  - its latency from the write that completes a step (every rank's first job
    lines of the next step) to that step's JSON line, p50 and p95;
  - its peak RSS (VmHWM) after the last step.

  bench_watch.py --binary build/pp-timeline --dir .bench/watch [--steps 2000] [--rate 100]
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time

STAMPER = """
import json, sys, time
with open(sys.argv[1], "w") as out:
    for line in sys.stdin:
        out.write("%d %.6f\\n" % (json.loads(line)["step"], time.monotonic()))
        out.flush()
"""

STAGES, REPLICAS, MB, PER_MACHINE = 8, 8, 4, 8
FWD_US, BWD_US, OPT_US = 100, 200, 50


def plan(stage):
    """Paddle's 1F1B order for a stage: warm-up forwards, (B, F) pairs, the rest."""
    warm = min(STAGES - stage, MB)
    jobs = [("forward", m) for m in range(warm)]
    f, b = warm, 0
    while b < MB:
        jobs.append(("backward", b))
        b += 1
        if f < MB:
            jobs.append(("forward", f))
            f += 1
    return jobs + [("optimizer", -1)]


def step_lines(rank, step, epoch_us):
    stage = rank % STAGES
    t = epoch_us + step * 10000 + stage * FWD_US
    out = []
    for i, (typ, mb) in enumerate(plan(stage)):
        dur = {"forward": FWD_US, "backward": BWD_US, "optimizer": OPT_US}[typ]
        mbv = mb if mb >= 0 else 0
        out.append("I1020 09:15:07.265326 4242 standalone_executor.cc:217] Profiler Info: Job (%d), type = %s, "
                   "micro_batch_id = %d, job_start_time = %d.%03d000, job_end_time = %d.%03d000\n"
                   % (i, typ, mbv, t // 1000, t % 1000, (t + dur) // 1000, (t + dur) % 1000))
        t += dur + 5
    return "".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--rate", type=float, default=100.0)
    ap.add_argument("--poll-ms", type=int, default=100)
    args = ap.parse_args()
    shutil.rmtree(args.dir, ignore_errors=True)
    ranks = STAGES * REPLICAS
    paths = []
    for r in range(ranks):
        d = os.path.join(args.dir, "machine%d" % (r // PER_MACHINE))
        os.makedirs(d, exist_ok=True)
        paths.append(os.path.join(d, "workerlog.%d" % (r % PER_MACHINE)))
    files = [open(p, "w") for p in paths]
    for f in files:
        f.write("W1020 09:15:00.197323 4242 gpu_resources.cc:119] Please NOTE: device: 0, GPU Compute "
                "Capability: 9.0, Driver API Version: 12.4, Runtime API Version: 12.3\n")
        f.flush()
    # The JSON lines are timed by a process of their own (CLOCK_MONOTONIC is
    # system-wide), so the feeder's work never delays the timestamps.
    stamps = os.path.join(args.dir, "arrivals.txt")
    stamper = subprocess.Popen([sys.executable, "-c", STAMPER, stamps], stdin=subprocess.PIPE)
    watch = subprocess.Popen([args.binary, "watch", "--log_dir", args.dir, "--jsonl", "-", "--poll-ms", str(args.poll_ms),
                              "--idle-timeout", "30", "-q", "--threads", "1"],
                             stdout=stamper.stdin, stderr=subprocess.PIPE, text=True)
    stamper.stdin.close()

    def arrived_steps():
        out = {}
        if os.path.exists(stamps):
            with open(stamps) as f:
                for line in f:
                    parts = line.split()
                    if len(parts) == 2:
                        out[int(parts[0])] = float(parts[1])
        return out

    epoch_us = 1697793307000000
    completes = {}  # step -> when the write that completes it ended
    period = 1.0 / args.rate
    start = time.monotonic()
    behind = 0
    for k in range(args.steps + 1):
        for r, f in enumerate(files):
            f.write(step_lines(r, k, epoch_us))
            f.flush()
        if k > 0:
            completes[k - 1] = time.monotonic()
        wait = start + (k + 1) * period - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        else:
            behind += 1
    feed_s = time.monotonic() - start
    deadline = time.monotonic() + 30
    while len(arrived_steps()) < args.steps and time.monotonic() < deadline and watch.poll() is None:
        time.sleep(0.05)
    with open("/proc/%d/status" % watch.pid) as f:
        hwm_kb = next(int(l.split()[1]) for l in f if l.startswith("VmHWM"))
    with open("/proc/%d/stat" % watch.pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    cpu_s = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    watch.send_signal(signal.SIGINT)
    watch.communicate(timeout=60)
    stamper.wait(timeout=30)
    arrived = arrived_steps()
    for f in files:
        f.close()
    lat = sorted(arrived[k] - completes[k] for k in completes if k in arrived and k < args.steps)
    got = sum(1 for k in range(args.steps) if k in arrived)

    def q(p):
        return lat[min(len(lat) - 1, int(p * len(lat)))] * 1000 if lat else float("nan")

    jobs = ranks * (2 * MB + 1) * (args.steps + 1)
    print("watch: %d ranks, %d steps at %.0f steps/s (fed in %.1f s, %d late writes), %d jobs"
          % (ranks, args.steps, args.rate, feed_s, behind, jobs))
    print("watch: steps reported %d of %d" % (got, args.steps))
    print("watch: CPU %.2f s in all, %.2f ms per step (%.0f%% of one core at this rate)"
          % (cpu_s, cpu_s / max(got, 1) * 1000, cpu_s / max(feed_s, 1e-9) * 100))
    print("watch: latency from the completing write to the step's JSON line: p50 %.1f ms, p95 %.1f ms, max %.1f ms"
          % (q(0.5), q(0.95), lat[-1] * 1000 if lat else float("nan")))
    print("watch: peak RSS %.1f MB after %d steps" % (hwm_kb / 1024, args.steps))
    return 0 if got == args.steps else 1


if __name__ == "__main__":
    sys.exit(main())
