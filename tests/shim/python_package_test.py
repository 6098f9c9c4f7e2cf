#!/usr/bin/env python3
"""The Python package drives the shim through its C API (PYTHONPATH=python,
PPT_SHIM_LIBRARY=<libppt_shim.so>); no pip install is needed."""
import logging
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

# With strict=True errors are exceptions with the shim's message and code name.
shim.strict = True
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

# A bad environment variable is refused at creation: strict raises, the
# default says it once and times nothing.
os.environ["PPT_SHIM_END_STEP"] = "soon"
try:
    ppt.Shim(strict=True)
    failures.append("a bad PPT_SHIM_END_STEP did not raise")
except ppt.ShimError as e:
    check("PPT_SHIM_END_STEP='soon'" in str(e), "error: %s" % e)
lenient = ppt.Shim()
with lenient.job("forward", 0):
    pass
lenient.flush(0)
check(lenient.problems == {"bad_environment": 1}, "bad env: %r" % lenient.problems)
del os.environ["PPT_SHIM_END_STEP"]


class Records(logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


records = Records()
logging.getLogger("pp_timeline_shim").addHandler(records)
logging.getLogger("pp_timeline_shim").propagate = False


def host_shim(**kw):
    lines = []
    return ppt.Shim(flags=ppt.HOST_CLOCK | ppt.IGNORE_ENV, sink=lines.append, **kw), lines


# Never kill training: a nested range (activation recompute inside a
# backward) is not timed, the job around it is, and it is said once.
s3, lines3 = host_shim()
for step in range(2):
    with s3.job("backward", micro_batch=0):
        for _ in range(3):
            with s3.job("recompute_forward", micro_batch=0):
                pass
    s3.flush(step)
check(len(lines3) == 2 and all("type = backward" in l for l in lines3), "nested: %r" % lines3)
check(s3.problems == {"nested_begin": 6}, "nested problems: %r" % s3.problems)
check(sum("nested_begin" in m for m in records.messages) == 1, "said once: %r" % records.messages)

# A job open across flush: the flush drops it, and its late end() does not raise.
s4, lines4 = host_shim()
s4.begin("forward", 0)
s4.flush(0)
s4.end()
with s4.job("forward", 1):
    pass
s4.flush(1)
check(s4.problems.get("open_job_at_flush") == 1, "open at flush: %r" % s4.problems)
check(len(lines4) == 1 and "micro_batch_id = 1" in lines4[0], "after: %r" % lines4)

# A job whose body raised without end(): the rest of its step is not timed,
# the next steps are.
s5, lines5 = host_shim()
try:
    s5.begin("forward", 0)
    raise ValueError("out of memory")
except ValueError:
    pass
with s5.job("forward", 1):
    pass
s5.flush(0)
for step in range(1, 3):
    with s5.job("forward", 0):
        pass
    s5.flush(step)
check(len(lines5) == 2, "after an exception: %r" % lines5)

# strict=True raises on a nested range, and leaves the outer job open.
s6, _ = host_shim(strict=True)
s6.begin("backward", 0)
try:
    s6.begin("recompute", 0)
    failures.append("strict nested begin did not raise")
except ppt.ShimError as e:
    check(e.name == "nested_begin", "strict: %s" % e)
s6.end()
s6.flush(0)
check(s6.counts()[0] == 1, "strict outer job: %r" % (s6.counts(),))

# The decorator times each call, with the micro-batch from the arguments.
s7, lines7 = host_shim()


@s7.timed("forward", micro_batch=lambda mb, x: mb)
def forward(mb, x):
    return x * 2


check(forward(3, 4) == 8 and forward(5, 1) == 2, "decorated results")
s7.flush(0)
check([l.split("micro_batch_id = ")[1].split(",")[0] for l in lines7] == ["3", "5"],
      "decorated: %r" % lines7)


# Streams: raw handles, torch's and Paddle's stream objects.
class TorchLikeStream:  # torch.cuda.Stream: .cuda_stream, .device_index
    def __init__(self, handle, device):
        self.cuda_stream = handle
        self.device_index = device


class PaddlePlace:  # Paddle's CUDAPlace
    def __init__(self, device):
        self._d = device

    def get_device_id(self):
        return self._d


class PaddleCoreStream:  # paddle.base.core.CUDAStream: .cuda_stream, .place
    def __init__(self, handle, device):
        self.cuda_stream = handle
        self.place = PaddlePlace(device)


class PaddleStream:  # paddle.device.Stream: .stream_base, .device
    def __init__(self, handle, device):
        self.stream_base = PaddleCoreStream(handle, device)
        self.device = PaddlePlace(device)


check(ppt.stream_handle(None) == (None, None), "None stream")
check(ppt.stream_handle(0x1234) == (0x1234, None), "raw stream")
check(ppt.stream_handle(TorchLikeStream(0x10, 3)) == (0x10, 3), "torch stream")
check(ppt.stream_handle(PaddleStream(0x20, 2)) == (0x20, 2), "paddle stream")
check(ppt.stream_handle(PaddleCoreStream(0x30, 1)) == (0x30, 1), "paddle core stream")
try:
    ppt.stream_handle("stream")
    failures.append("a str was taken for a stream")
except TypeError:
    pass
# The device is the stream's, not the one current when the Shim is made.
s8 = ppt.Shim(stream=TorchLikeStream(0, 3), flags=ppt.HOST_CLOCK | ppt.IGNORE_ENV)
check(s8._args[1] == 3, "device from the stream: %r" % (s8._args,))
s8.close()
s9, lines9 = host_shim()
with s9.job("forward", 0, stream=TorchLikeStream(0, 0)):
    pass
with s9.job("backward", 0, stream=PaddleStream(0, 0)):
    pass
s9.flush(0)
check(len(lines9) == 2, "jobs on other streams: %r" % lines9)

# Made before set_device: without a stream or a device the native profiler
# is made at the first job, on the device current then.
lazy = ppt.Shim(sink=lambda line: None)
check(lazy._h is None, "made eagerly")
with lazy.job("forward", 0):
    pass
check(lazy._h is not None, "not made at the first job")
lazy.flush(0)
lazy.close()

# Ranks apart: {rank} in the log path is the launcher's rank.
with tempfile.TemporaryDirectory() as d:
    os.environ["RANK"] = "7"
    with ppt.Shim(flags=ppt.HOST_CLOCK | ppt.IGNORE_ENV,
                  log_file=os.path.join(d, "workerlog.{rank}")) as s10:
        with s10.job("forward", micro_batch=0):
            pass
        s10.flush(0)
    del os.environ["RANK"]
    check(os.listdir(d) == ["workerlog.7"], "log files: %r" % os.listdir(d))

# Without CUDA: the host clock is said on the log stream in a line Paddle's
# helper ignores, and PPT_SHIM_CLOCK=cuda times nothing (strict: raises).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import paddle_helper_regex_test as paddle_re  # noqa: E402

with tempfile.TemporaryDirectory() as d:
    log = os.path.join(d, "workerlog.0")
    probe = ppt.Shim(flags=ppt.IGNORE_ENV, log_file=log)
    with probe.job("forward", 0):
        pass
    probe.flush(0)
    backend = probe.backend
    probe.close()
    if backend == "host":
        text = open(log).read()
        notes = [l for l in text.splitlines() if "host clock" in l]
        check(len(notes) == 1 and notes[0].startswith("W"), "host clock note: %r" % text)
        check(len(re.findall(paddle_re.PADDLE_JOB, text)) == 1, "Paddle reads one job: %r" % text)
        check(not re.findall(paddle_re.PADDLE_START, "\n".join(notes)), "marker regex")
        os.environ["PPT_SHIM_CLOCK"] = "cuda"
        need = ppt.Shim(sink=lambda line: None)
        with need.job("forward", 0):
            pass
        need.flush(0)
        check(need.backend == "none", "backend without CUDA: %s" % need.backend)
        check(need.problems == {"cuda_unavailable": 1}, "cuda required: %r" % need.problems)
        try:
            strict = ppt.Shim(strict=True)
            strict.begin("forward", 0)
            failures.append("strict with PPT_SHIM_CLOCK=cuda and no CUDA did not raise")
        except ppt.ShimError as e:
            check(e.name == "cuda_unavailable", "strict cuda: %s" % e)
        del os.environ["PPT_SHIM_CLOCK"]



# torch.distributed.pipelining: a fake of the schedule's interface, as torch
# defines it (stage.py: forward_one_chunk(fwd_chunk_id, args, kwargs),
# backward_one_chunk(bwd_chunk_id, loss=None, full_backward=True,
# last_backward=False), backward_weight_one_chunk(bwd_chunk_id,
# last_backward=False); schedules.py: a multi-stage schedule keeps _stages,
# runs its actions (PP:0F1...) through those methods in step()).
from pp_timeline_shim.torch import instrument  # noqa: E402


class FakeStage:
    def __init__(self, stage_index):
        self.stage_index = stage_index
        self.calls = []

    def forward_one_chunk(self, fwd_chunk_id, args, kwargs=None, save_forward_output=True):
        self.calls.append(("F", fwd_chunk_id))
        return args

    def backward_one_chunk(self, bwd_chunk_id, loss=None, full_backward=True, last_backward=False):
        self.calls.append(("B" if full_backward else "I", bwd_chunk_id))

    def backward_weight_one_chunk(self, bwd_chunk_id, last_backward=False):
        self.calls.append(("W", bwd_chunk_id))


class FakeZeroBubbleSchedule:
    """Two local stages (0 and 2 of 4), two micro-batches, actions as
    torch's runtime runs them: F, I (input backward), W (weight backward)."""

    def __init__(self):
        self._stages = [FakeStage(0), FakeStage(2)]
        self._n_microbatches = 2
        self.order = ["0F0", "0F1", "2F0", "2F1", "2I0", "2W0", "2I1", "2W1", "0B0", "0B1"]

    def step(self, *args, target=None, losses=None, **kwargs):
        by_index = {s.stage_index: s for s in self._stages}
        for action in self.order:
            stage, kind, mb = by_index[int(action[0])], action[1], int(action[2:])
            if kind == "F":
                stage.forward_one_chunk(mb, args, kwargs)
            elif kind == "I":
                stage.backward_one_chunk(mb, loss=None, full_backward=False)
            elif kind == "B":
                stage.backward_one_chunk(mb, loss=None, full_backward=True)
            else:
                stage.backward_weight_one_chunk(mb, last_backward=mb == 1)


tl = []
pp_shim = ppt.Shim(flags=ppt.HOST_CLOCK | ppt.IGNORE_ENV, sink=tl.append)
schedule = FakeZeroBubbleSchedule()
timed = instrument(schedule, shim=pp_shim)
for _ in range(2):
    schedule.step("x", target="y")
jobs_seen = [(m.group(2), int(m.group(3))) for m in (JOB.match(l) for l in tl) if m]
check(jobs_seen[:10] == [("forward0", 0), ("forward0", 1), ("forward1", 0), ("forward1", 1),
                         ("backward_b1", 0), ("backward_w1", 0), ("backward_b1", 1),
                         ("backward_w1", 1), ("backward0", 0), ("backward0", 1)],
      "pipelining jobs: %r" % jobs_seen)
check(len(jobs_seen) == 20 and pp_shim.counts() == (20, 0, 0), "two steps: %r" % (pp_shim.counts(),))
check(schedule._stages[1].calls[:2] == [("F", 0), ("F", 1)], "the stages still run")
timed.remove()
schedule.step("x")
check(len(tl) == 20, "remove() leaves the schedule as it was")
check("forward_one_chunk" not in schedule._stages[0].__dict__, "instance patch left behind")


# torch's eval() is a validation pass, not a step: torch runs step() with
# _has_backward false (schedules.py), and a 1F1B schedule still calls
# backward_one_chunk. Nothing of it is timed, flushed or counted.
class FakeEvalSchedule(FakeZeroBubbleSchedule):
    def __init__(self):
        super().__init__()
        self._has_backward = True

    def eval(self, *args, target=None, losses=None, **kwargs):
        saved = self._has_backward
        try:
            self._has_backward = False
            return self.step(*args, target=target, losses=losses, **kwargs)
        finally:
            self._has_backward = saved


el = []
eval_shim = ppt.Shim(flags=ppt.HOST_CLOCK | ppt.IGNORE_ENV, sink=el.append)
eval_schedule = FakeEvalSchedule()
eval_timed = instrument(eval_schedule, shim=eval_shim)
for k in range(3):
    eval_schedule.step("x", target="y")
eval_schedule.eval("x", target="y")
check(eval_timed.step == 3, "eval() counted as a step: the counter is %d" % eval_timed.step)
check(eval_shim.counts() == (30, 0, 0), "eval() jobs written: %r" % (eval_shim.counts(),))
eval_schedule.step("x", target="y")
check(eval_timed.step == 4 and eval_shim.counts()[0] == 40, "after eval(): %r" % (eval_shim.counts(),))
steps_seen = sorted({int(m.group(1)) for m in (JOB.match(l) for l in el) if m})
eval_timed.remove()
check("eval" not in eval_schedule.__dict__, "eval patch left behind")

# Lenient means never raising into the loop: arguments that convert are
# taken (numpy and tensor integers through __index__, bytes types,
# micro_batch=None for none), the rest are counted, and the job is not timed.
class Index:  # what numpy.int64 and an integer torch tensor offer
    def __init__(self, v):
        self.v = v

    def __index__(self):
        return self.v


la, ll = host_shim()
with la.job("forward", micro_batch=Index(3)):
    pass
with la.job(b"backward", micro_batch=None):
    pass
for bad_mb in (3.0, "1", [1], 2 ** 63, True):
    with la.job("forward", micro_batch=bad_mb):
        pass
for bad_type in (None, 7, object()):
    with la.job(bad_type, micro_batch=0):
        pass
la.flush(Index(0))
check(len(ll) == 2 and "micro_batch_id = 3" in ll[0] and "type = backward" in ll[1],
      "lenient jobs: %r" % ll)
check(la.problems.get("invalid_argument") == 5 and la.problems.get("invalid_type") == 3,
      "lenient problems: %r" % la.problems)
la.flush("1")     # not a step number: ends step 1, the one expected
la.flush(2 ** 63)  # out of range: not wrapped to a negative step
la.finish("soon")
la.set_step(None)
la.set_window(None, 4)
check(la.problems.get("invalid_argument") == 10, "lenient flush: %r" % la.problems)
with la.job("forward", 0):
    pass
la.flush(3)
check(len(ll) == 3, "after bad flushes: %r" % ll)
ls, _ = host_shim(strict=True)
for bad in (lambda: ls.begin("forward", 3.0), lambda: ls.begin(None, 0),
            lambda: ls.flush("1"), lambda: ls.flush(2 ** 63)):
    try:
        bad()
        failures.append("strict took a bad argument")
    except ppt.ShimError:
        pass
    except Exception as e:  # noqa: BLE001
        failures.append("strict raised %r, not ShimError" % e)
    ls._local.stack = []

# A log file that cannot be opened is said (lenient) or raised (strict).
bad_dir = tempfile.mkdtemp()
os.chmod(bad_dir, 0o500)
unwritable = os.path.join(bad_dir, "sub", "workerlog.0")
lw = ppt.Shim(flags=ppt.HOST_CLOCK | ppt.IGNORE_ENV, log_file=unwritable)
check(lw.problems.get("invalid_argument") == 1 and lw.stat("log_file_failed") == 1,
      "unopenable log: %r" % lw.problems)
lw.close()
try:
    ppt.Shim(flags=ppt.HOST_CLOCK | ppt.IGNORE_ENV, log_file=unwritable, strict=True)
    failures.append("strict took a log file it cannot open")
except ppt.ShimError as e:
    check("cannot open the log file" in str(e), "strict log: %s" % e)
os.rmdir(bad_dir)

# Threads share one Shim: each has its own open job, and every job is written.
import threading  # noqa: E402

tl2 = []
shared = ppt.Shim(flags=ppt.HOST_CLOCK | ppt.IGNORE_ENV, sink=tl2.append)


def worker(t):
    for k in range(500):
        with shared.job("forward%d" % t, micro_batch=k):
            pass


threads = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
shared.flush(0)
check(len(tl2) == 2000 and shared.problems == {}, "threads: %d lines, %r" % (len(tl2), shared.problems))
shared.close()

# fork(): a child that leaves normally (sys.exit, as multiprocessing workers
# may) writes nothing of its parent's Shim into the rank's log.
fork_dir = tempfile.mkdtemp()  # not a context: the child leaves through sys.exit
if True:
    log = os.path.join(fork_dir, "workerlog.0")
    parent = ppt.Shim(flags=ppt.HOST_CLOCK | ppt.IGNORE_ENV, log_file=log)
    for step in range(3):
        for mb in range(4):
            with parent.job("forward", mb):
                pass
        parent.flush(step)
    with parent.job("forward", 0):  # a step under way at the fork
        pass
    pid = os.fork()
    if pid == 0:
        try:
            del parent
            import gc
            gc.collect()
        finally:
            sys.exit(0)
    _, status = os.waitpid(pid, 0)
    check(status == 0, "child status %d" % status)
    parent.flush(3)
    parent.close()
    text = open(log).read()
    check(len(re.findall(r"Profiler Info: Job", text)) == 13 and len(text.splitlines()) == 13,
          "after fork: %r" % text)
    os.remove(log)
    os.rmdir(fork_dir)

for f in failures:
    print("FAIL:", f)
print("ok" if not failures else "%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
