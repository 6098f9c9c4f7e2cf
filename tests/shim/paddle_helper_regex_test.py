#!/usr/bin/env python3
"""Paddle's own profiler_helper_static.py reads the shim's lines.

The two regular expressions are Paddle's (PaddlePaddle/Paddle,
python/paddle/distributed/auto_parallel/static/profiler_helper_static.py,
process_job_log() and main()), re-typed here as facts about its reader. They
are run over the logs pp-demo writes through the shim in its default
(Paddle) format: every job line the shim wrote must be one Paddle's helper
matches, with the same fields, and the marker must give the window's start.
"""
import os
import re
import subprocess
import sys
import tempfile

PADDLE_JOB = (r'.*?Profiler Info: Job \((\d+)\), type = (\w+), micro_batch_id = (\d+), '
              r'job_start_time = (\d+.\d+), job_end_time = (\d+.\d+)')
PADDLE_START = r'.*?Schedule Profiler start at step (\d+) and end at step.*'


def main():
    demo = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as d:
        for schedule in ("1f1b", "zbh1", "vpp"):
            out = os.path.join(d, schedule)
            subprocess.run([demo, "--log_dir", out, "--ranks", "2", "--schedule", schedule,
                            "--micro-batches", "4", "--steps", "3", "--work_us", "200",
                            "--device", "cpu", "--profile_start", "1", "--profile_end", "3"],
                           check=True, stdout=subprocess.DEVNULL)
            for rank in range(2):
                path = os.path.join(out, "workerlog.%d" % rank)
                with open(path) as f:
                    data = f.read()
                ours = [l for l in data.splitlines() if "Profiler Info: Job (" in l]
                theirs = re.findall(PADDLE_JOB, data)
                if not ours:
                    failures.append("%s: no job lines" % path)
                if len(theirs) != len(ours):
                    failures.append("%s: Paddle's helper matches %d of the %d job lines" %
                                    (path, len(theirs), len(ours)))
                for line, m in zip(ours, theirs):
                    job_id, job_type, mb, start, end = m
                    if "type = %s, micro_batch_id = %s," % (job_type, mb) not in line:
                        failures.append("%s: fields differ: %s" % (path, line))
                    if float(end) < float(start):
                        failures.append("%s: ends before it starts: %s" % (path, line))
                if not any(t[1] == "optimizer" and t[2] == "0" for t in theirs):
                    failures.append("%s: no optimizer line with micro_batch_id = 0" % path)
                starts = re.findall(PADDLE_START, data)
                if starts[:1] != ["1"]:
                    failures.append("%s: Paddle's helper reads the start step as %s, not 1" %
                                    (path, starts[:1]))
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print("ok: Paddle's profiler_helper_static.py patterns match every line")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
