#!/usr/bin/env python3
"""The old converter's approach, rewritten plainly, as the benchmark baseline.

This is not Paddle's code: it reproduces how Paddle's profiler_helper_static.py
works (see docs/log-format.md) so that
scripts/bench.sh can time the same approach on the same logs:

  - read each workerlog file whole into memory;
  - run one regular expression that starts with `.*?` over the whole text
    (this is what makes it crawl on noisy logs);
  - build B/E event dicts with string tids (`GPU<d>`), named `<type>_<job id>`,
    with a cname colour per type, absolute epoch microseconds as floats;
  - json.dump a Chrome trace (--output) and a Perfetto-flavoured one beside it
    (`<output stem>_perfetto.json`: integer tids from 2334, thread names,
    a STEP track at tid 2333, steps numbered from 0).

Its known faults are kept on purpose (device ids used as file indices, machine
folders in directory order, types with parentheses dropped, steps from 0).
"""

import argparse
import json
import os
import re
import sys

PATTERN = re.compile(
    r".*?Profiler Info: Job \((\d+)\), type = (\w+), micro_batch_id = (\d+), "
    r"job_start_time = (\d+.\d+), job_end_time = (\d+.\d+)"
)

COLORS = {
    "forward": "thread_state_running",
    "backward": "rail_idle",
    "optimizer": "rail_response",
}


def process_file(path, device, machine, events, perfetto_events, tid, step_state):
    with open(path, "r", errors="replace") as f:
        text = f.read()
    step_state["bytes"] += os.path.getsize(path)
    matches = PATTERN.findall(text)
    for job_id, job_type, mb, start, end in matches:
        name = "%s_%s" % (job_type, job_id)
        cname = COLORS.get(job_type, "thread_state_unknown")
        start_us = float(start) * 1000
        end_us = float(end) * 1000
        for ph, ts in (("B", start_us), ("E", end_us)):
            events.append({"name": name, "cat": job_type, "ph": ph, "pid": 0,
                           "tid": "GPU" + str(device), "ts": ts, "cname": cname})
            perfetto_events.append({"name": name, "cat": job_type, "ph": ph, "pid": 0,
                                    "tid": tid, "ts": ts, "cname": cname,
                                    "args": {"micro_batch_id": mb}})
        # The step track follows the first file only; steps always count from 0.
        if step_state["owner"] is None:
            step_state["owner"] = tid
        if step_state["owner"] == tid:
            if step_state["start"] is None:
                step_state["start"] = start_us
            if job_type == "optimizer":
                n = step_state["n"]
                perfetto_events.append({"name": str(n), "cat": "step", "ph": "B", "pid": 0,
                                        "tid": 2333, "ts": step_state["start"]})
                perfetto_events.append({"name": str(n), "cat": "step", "ph": "E", "pid": 0,
                                        "tid": 2333, "ts": end_us})
                step_state["n"] = n + 1
                step_state["start"] = None
    return len(matches)


def main(argv=None):
    p = argparse.ArgumentParser(description="Old-style pipeline profile converter (benchmark baseline).")
    p.add_argument("--log_dir", required=True)
    p.add_argument("--multi_machine", action="store_true", help="read machine*/ sub-folders")
    p.add_argument("--devices", default="0,1,2,3,4,5,6,7", help="comma-separated ids (used as file indices)")
    p.add_argument("--output", default="pipeline_profile.json")
    p.add_argument("--max_files", type=int, default=0, help="stop after this many files (0: all)")
    a = p.parse_args(argv)

    devices = [int(d) for d in a.devices.split(",") if d.strip()]
    if a.multi_machine:
        # Directory order, as the old helper does (not natural order).
        machines = [d for d in os.listdir(a.log_dir) if d.startswith("machine")]
        folders = [(i, os.path.join(a.log_dir, d)) for i, d in enumerate(machines)]
    else:
        folders = [(None, a.log_dir)]

    events = []
    perfetto_events = [{"name": "thread_name", "ph": "M", "pid": 0, "tid": 2333, "args": {"name": "STEP"}}]
    step_state = {"owner": None, "start": None, "n": 0, "bytes": 0}
    tid = 2334
    files = 0
    jobs = 0
    for machine, folder in folders:
        for device in devices:
            if a.max_files and files >= a.max_files:
                break
            path = os.path.join(folder, "workerlog.%d" % device)
            if not os.path.exists(path):
                continue
            label = "GPU:%d" % device if machine is None else "GPU:%d(machine:%d)" % (device, machine)
            perfetto_events.append({"name": "thread_name", "ph": "M", "pid": 0, "tid": tid,
                                    "args": {"name": label}})
            jobs += process_file(path, device, machine, events, perfetto_events, tid, step_state)
            files += 1
            tid += 1

    with open(a.output, "w") as f:
        json.dump({"traceEvents": events}, f)
    stem, ext = os.path.splitext(a.output)
    with open(stem + "_perfetto" + (ext or ".json"), "w") as f:
        json.dump({"traceEvents": perfetto_events}, f)
    sys.stderr.write("old_helper.py: %d files, %d bytes, %d jobs\n" % (files, step_state["bytes"], jobs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
