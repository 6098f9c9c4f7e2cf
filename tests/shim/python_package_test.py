#!/usr/bin/env python3
"""The Python package drives the shim through its C API (PYTHONPATH=python,
PPT_SHIM_LIBRARY=<libppt_shim.so>); no pip install is needed."""
import os
import re
import subprocess
import sys
import tempfile

import pp_timeline_shim as ppt

JOB = re.compile(r'Profiler Info: Job \((\d+)\), type = (\w+), micro_batch_id = (\d+), '
                 r'job_start_time = (\d+\.\d{6}), job_end_time = (\d+\.\d{6})$')

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


lines = []
shim = ppt.Shim(flags=ppt.HOST_CLOCK | ppt.IGNORE_ENV, sink=lines.append)
check(shim.backend == "host", "backend %s" % shim.backend)
shim.set_window(10, 12)
for step in range(10, 13):
    for mb in range(2):
        with shim.job("forward", micro_batch=mb):
            pass
    with shim.job("optimizer"):
        pass
    shim.flush(step)
shim.finish()
check(lines[0] == "Schedule Profiler start at step 10 and end at step 12", "marker: %r" % lines[:1])
jobs = [JOB.match(l) for l in lines[1:]]
check(len(jobs) == 6 and all(jobs), "job lines: %r" % lines[1:])
check([m.group(2, 3) for m in jobs if m][:3] == [("forward", "0"), ("forward", "1"),
                                                 ("optimizer", "0")], "fields")
check(shim.counts() == (6, 0, 0), "counts %r" % (shim.counts(),))

# Errors are exceptions with the shim's message and code name.
try:
    shim.end()
    failures.append("end() without begin() did not raise")
except ppt.ShimError as e:
    check(e.name == "end_without_begin" and "end()" in str(e), "error: %s" % e)
try:
    shim.begin("a,b", 0)
    failures.append("a bad type did not raise")
except ppt.ShimError as e:
    check(e.name == "invalid_type", "error: %s" % e)
shim.close()

# Without a sink the lines go to the log file, with a glog-style prefix.
with tempfile.TemporaryDirectory() as d:
    log = os.path.join(d, "workerlog.0")
    os.environ["PPT_SHIM_LOG_FILE"] = log
    with ppt.Shim(flags=ppt.HOST_CLOCK) as s2:
        with s2.job("forward", micro_batch=0):
            pass
        s2.flush(0)
    del os.environ["PPT_SHIM_LOG_FILE"]
    text = open(log).read()
    check(re.match(r'I\d{4} \d\d:\d\d:\d\d\.\d{6} \d+ profiler\.cc:\d+\] Profiler Info: Job \(0\), '
                   r'type = forward, micro_batch_id = 0, ', text) is not None, "log: %r" % text)

# A bad environment variable is refused at creation.
os.environ["PPT_SHIM_END_STEP"] = "soon"
try:
    ppt.Shim()
    failures.append("a bad PPT_SHIM_END_STEP did not raise")
except ppt.ShimError as e:
    check("PPT_SHIM_END_STEP='soon'" in str(e), "error: %s" % e)
del os.environ["PPT_SHIM_END_STEP"]

for f in failures:
    print("FAIL:", f)
print("ok" if not failures else "%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
