#!/usr/bin/env python3
"""Synthetic PaddlePaddle "job schedule profiler" launch logs, with ground truth.

Simulates a pipeline-parallel training job so that the logs look like the real
thing (see docs/log-format.md): every pipeline stage runs the job plan
of the chosen schedule in order, a job waits for its predecessor on the same
stage and for the job it depends on on the neighbouring stage (plus a small
communication latency), every stage ends a step with its optimizer job, and
step k+1 starts only after every rank's optimizer of step k (a barrier). The
bubbles in the output are therefore the ones the schedule really has.

Each rank's file gets a few start-up lines (Paddle prints its `Please NOTE:
device: ...` line once per process), then per step: N noise lines
(glog lines of other source files and threads, Python warnings, progress
lines, the odd long or non-ASCII line), then the step's job lines, printed
together in plan order after the step ran (as Paddle does), then a progress
line or two.

Everything is deterministic for a given --seed. Times are carried as integer
nanoseconds (whole microseconds, like gettimeofday) and printed as
milliseconds with exactly six decimals without ever going through a float.

Plans (stage s of P, M micro-batches, V chunks; "F"/"B" = forward/backward):
  fthenb     F0..F(M-1), B0..B(M-1), optimizer.
  1f1b       Paddle's form (pipeline_1f1b.py): P-s warm-up F, then (B, F)
             pairs, then the remaining B; needs M >= P, as Paddle asserts.
             This is the same sequence as Megatron's P-1-s warm-up forwards
             followed by (F, B) pairs.
  pir1f1b    1f1b, plus on stages s > 0 a `recv_forward` job before every
             forward and a `send_backward` job after every backward, both
             printed with 0.000000 times (their timers never start). Where
             exactly PIR puts them is not documented; this is a choice.
  eager1f1b  Paddle's Eager1F1B (pipeline_eager_1f1b.py): 2*(P-s)-1 warm-up
             F, then (B, F) pairs, then the remaining B; needs M >= 2P-1.
  vpp        Megatron/Paddle interleaved 1F1B over V chunks (chunk c of stage s
             is virtual stage c*P+s): warm-up (P-s-1)*2 + (V-1)*P forwards
             (all of them when M == P), then (F, B) pairs, then the remaining
             B. Types forward<c>/backward<c>; micro-batch ids restart per chunk.
             Needs M % P == 0.
  zbh1       Paddle's ZB-H1 plan: P-s warm-up F, s (backward_b, F) pairs,
             (backward, F) pairs, P-s-1 backward, backward_b+backward_w of the
             last micro-batch (backward on stage 0), then the s deferred
             backward_w jobs. Note that the real plan prints the combined
             `backward` type in its steady phase, not only backward_b/_w.
  zbvpp      Paddle's ZB-VPP plan (pipeline_zero_bubble.py, VScheduleCreator):
             V chunks placed in a V shape (even chunks run down the stages,
             odd chunks back up), every backward split into backward_b<c> and
             backward_w<c>, the order from Paddle's greedy list schedule with
             its default program runtimes and no memory limit (the same
             algorithm as src/schedule/plan_builders.cc). Needs V >= 2 and
             M % P == 0.
  overlap    1f1b whose steady-phase (B, F) pairs are split into V pieces each
             and interleaved: backward(chunk0), forward(chunk0),
             backward(chunk1), forward(chunk1), ... (Paddle's
             backward/forward overlap). Warm-up and cool-down jobs keep the
             plain forward/backward types.
  default    no pipeline: one `default` job per step and rank, no
             dependencies.
--lr prepends the 2023 design's `lr` job to every step's plan.

Durations: forward = --fwd-ms, backward 2x, backward_b and backward_w 1x each,
optimizer 0.5x, lr 0.05x, a default job M*3x + 0.5x, jobs of one chunk
(vpp, zbvpp) 1/V of that, overlap pieces 1/V each; each with +-(--jitter)
uniform noise, times the rank's --slow factor, rounded to whole microseconds.

Truth (--truth FILE): JSON with "ranks" (rank, machine, local, file, stage,
replica, skew_ns), "jobs" (rank, run, step, type, mb, job_id, start_ns,
end_ns, line; printed, i.e. skewed, integer nanoseconds; 1-based line number
in the rank's file; listed per rank, run, step in plan order) and
"zero_time_jobs". "mb" is the simulated micro-batch, also with --no-mb.
Step numbers start at --start-step when given, else at 0,
in every run.

--start-step also prints the schedule marker, `Schedule Profiler start at step
X and end at step X+S+1`: by default once at start-up in PaddleNLP's logger
format; with --marker every-iteration as current Paddle's
paddle.profiler.utils.switch_job_schedule_profiler() does, through the root
logger (`INFO:root:...`) at every iteration 0 .. X+S: before the window, before
each logged step's job lines, and once more at iteration X+S, which exits
before running. --rerun-same-pid gives the rerun the first run's thread id. Jobs dropped by --missing-step are not in the truth.

--details only|mixed writes the dynamic-graph pipeline's `[Pipeline details]`
lines (FLAGS_profile_pipeline_details_steps) with a memory model, for the
schedules whose jobs are whole forwards and backwards (fthenb, 1f1b,
eager1f1b, vpp). Per step and rank: `Start_forward_backward_pipeline` 0.2 ms
before the first job, `Before_forward_step_chunk_<c>_step_<s>` at each job's
start and `After_...` at its end (the backward ones alike), and
`End_forward_backward_pipeline` 0.3 ms after the last backward (before the
optimizer, which prints no details line). Stamps are Python's asctime,
`[YYYY-MM-DD HH:MM:SS,mmm]`, the time truncated to the millisecond, printed as
UTC (gmtime). `chunk_None` and step_<mb> without vpp; with vpp chunk_<c> and
step_<k>, k the virtual micro-step (the k-th forward, or backward, of the
stage's step), as Paddle's interleaved class passes it. --details-step-none
prints step_None (older Paddle). `only`: the details lines are the file's only
job information (no job line; the optimizer is not logged); `mixed`: the job
lines are printed as usual, after the step's details lines.
The memory model (sizes are whole hundredths of a GiB, so the printed two
decimals are exact): stage s holds static = --mem-static-gib + 0.07*s GiB
(weights, gradients, optimizer state) at all times; each forward's activation,
--mem-act-gib per micro-batch (1/V of it per chunk with vpp, rounded down to
0.01 GiB), is allocated by the forward (After_forward includes it) and freed by
the backward of the same micro-batch and chunk (After_backward excludes it).
Under a split backward (ZB) the activation would be held until backward_w; the
schedules printed here have none. Reserved memory is the allocator's cache:
the allocated size rounded up to a multiple of 2 GiB, never shrinking within
a run. Sizes are printed `%.2f` GiB, as Paddle does.
With --details the truth gains "memory": {"resolution_bytes": 10737418,
"stages": [{"stage", "static_bytes", "activation_bytes_per_micro_batch" (one
forward job's: per chunk with vpp), "chunks", "peak_allocated_bytes",
"peak_reserved_bytes", "peak_in_flight" (most forward activations held at
once: forwards minus backwards done), "peak_step" (the first step that
reaches the peak)}]}, every byte count round(GiB * 2^30) of a printed value;
and with `only` its "jobs" are the details jobs: type forward/backward (or
forward<c>/backward<c>), mb, job_id = mb, start_ns/end_ns the Before/After
stamps (whole ms), line the Before line; no optimizer job.

--self-test generates a few small sets for every schedule and checks the files
against the truth, the plans' shapes, the dependencies, the barrier and the
determinism.
"""

import argparse
import json
import multiprocessing
import os
import random
import re
import shutil
import sys
import tempfile
import time

SCHEDULES = ("fthenb", "1f1b", "eager1f1b", "vpp", "zbh1", "zbvpp", "pir1f1b", "overlap", "default")
CHUNKED = ("vpp", "zbvpp")
DETAILS_SCHEDULES = ("fthenb", "1f1b", "eager1f1b", "vpp")
GIB = 1 << 30
# round(0.01 GiB in bytes): the resolution of the details lines' sizes.
DETAILS_RESOLUTION_BYTES = (GIB + 50) // 100

# Job kinds inside the simulator. A plan item is (kind, chunk, mb, piece):
# piece is -1 for a whole job, else the index of an overlap piece.
F, B, BB, BW, OPT, RECV, SEND, DEF, LR = range(9)
ZERO_TIME_KINDS = (RECV, SEND)
KIND_FACTOR = {F: 1.0, B: 2.0, BB: 1.0, BW: 1.0, OPT: 0.5, LR: 0.05, RECV: 0.0, SEND: 0.0}

NS_PER_US = 1000
NS_PER_MS = 1000000
NS_PER_S = 1000000000

JOB_RE = re.compile(
    r"Profiler Info: Job \(([^)]*)\), type = (.*?)(?:, micro_batch_id = ([^,]*))?, "
    r"job_start_time = ([^,]*), job_end_time = ([^,\r\n]*?)[ \t\r]*$"
)


def fmt_ms(ns):
    """Integer nanoseconds -> milliseconds text with exactly six decimals."""
    if ns < 0:
        return "-" + fmt_ms(-ns)
    return "%d.%06d" % (ns // NS_PER_MS, ns % NS_PER_MS)


def parse_ms(text):
    """Milliseconds text -> integer nanoseconds, exactly (no float)."""
    neg = text.startswith("-")
    if neg:
        text = text[1:]
    whole, _, frac = text.partition(".")
    frac = (frac + "000000")[:6]
    ns = int(whole or "0") * NS_PER_MS + int(frac)
    return -ns if neg else ns


# --------------------------------------------------------------------------
# Plans
# --------------------------------------------------------------------------


class PlanError(ValueError):
    pass


def vstage_of(schedule, P, s, c):
    """Virtual stage index of chunk c on stage s."""
    if schedule == "vpp":
        return c * P + s
    if schedule == "zbvpp":
        return c * P + (s if c % 2 == 0 else P - 1 - s)
    return s


def stage_of_vstage(schedule, P, v):
    if schedule == "zbvpp":
        c, k = divmod(v, P)
        return k if c % 2 == 0 else P - 1 - k
    return v % P


def num_vstages(schedule, P, V):
    return P * V if schedule in CHUNKED else P


def plan_1f1b_like(P, M, s, warm):
    if warm > M:
        raise PlanError("Paddle's plan needs --micro-batches >= %d here (its warm-up)" % warm)
    plan = [(F, 0, m, -1) for m in range(warm)]
    fwd, bwd = warm, 0
    while fwd < M:
        plan.append((B, 0, bwd, -1))
        plan.append((F, 0, fwd, -1))
        bwd += 1
        fwd += 1
    while bwd < M:
        plan.append((B, 0, bwd, -1))
        bwd += 1
    return plan


def plan_vpp(P, M, V, s):
    if M % P != 0:
        raise PlanError("vpp needs --micro-batches to be a multiple of --stages")
    total = M * V
    if M == P:
        warm = total
    else:
        warm = min((P - s - 1) * 2 + (V - 1) * P, total)
    fcount = [0] * V
    bcount = [0] * V
    plan = []

    def fwd(k):
        c = (k // P) % V
        plan.append((F, c, fcount[c], -1))
        fcount[c] += 1

    def bwd(k):
        c = V - 1 - (k // P) % V
        plan.append((B, c, bcount[c], -1))
        bcount[c] += 1

    for k in range(warm):
        fwd(k)
    for i in range(total - warm):
        fwd(warm + i)
        bwd(i)
    for k in range(total - warm, total):
        bwd(k)
    return plan


def plan_zbh1(P, M, s):
    if M < P:
        raise PlanError("zbh1 needs --micro-batches >= --stages")
    plan = []
    f = b = 0
    for _ in range(P - s):
        plan.append((F, 0, f, -1))
        f += 1
    for _ in range(s):
        plan.append((BB, 0, b, -1))
        plan.append((F, 0, f, -1))
        b += 1
        f += 1
    for _ in range(M - P):
        plan.append((B, 0, b, -1))
        plan.append((F, 0, f, -1))
        b += 1
        f += 1
    for _ in range(P - s - 1):
        plan.append((B, 0, b, -1))
        b += 1
    if s > 0:
        plan.append((BB, 0, b, -1))
        plan.append((BW, 0, b, -1))
    else:
        plan.append((B, 0, b, -1))
    for m in range(s):
        plan.append((BW, 0, m, -1))
    return plan


class _VSchedule:
    """Paddle's ZB-VPP plan (pipeline_zero_bubble.py, VScheduleCreator, as
    PipelineZeroBubbleVirtualPipelinePass._create_job_list runs it), with its
    default program runtimes (forward 61, backward_b 72, backward_w 71, the
    loss 34 more for the last chunk on the loss stage, communication 3) and no
    memory limit (every memory check passes). The same algorithm as
    src/schedule/plan_builders.cc; the two are compared by the unit tests."""

    COMM = 3

    def __init__(self, P, M, V):
        self.P, self.M, self.V = P, M, V
        self.loss_stage = 0 if V % 2 == 0 else P - 1

    def runtime(self, t, s, c):
        r = {F: 61, BB: 72, BW: 71}[t]
        return r + 34 if s == self.loss_stage and c == self.V - 1 else r

    def init(self):
        P, M, V = self.P, self.M, self.V
        self.count = {(s, t, c): 0 for s in range(P) for t in (F, BB, BW) for c in range(V)}
        self.end = {}
        self.now = [0] * P
        self.pending = [[] for _ in range(P)]
        self.plans = [[] for _ in range(P)]
        self.bubbles = [0] * P

    def prev_stage(self, t, c, s):
        odd = c % 2 == 1
        if t == F:
            return s + 1 if odd else s - 1
        return s - 1 if odd else s + 1

    def dep_end(self, t, c, s, m):
        prev = self.prev_stage(t, c, s)
        if prev < 0 or prev >= self.P:
            return 0
        return self.end.get((t, c, prev, m), -1)

    def forwards(self, s, chunks):
        return sum(self.count[(s, F, c)] for c in range(chunks))

    def max_bubble(self, s=-1, approved=None):
        most = max(self.bubbles)
        if s >= 0 and approved is not None:
            most = max(most, max(approved) - approved[s])
        return most

    def can(self, t, c, s):
        m = self.count[(s, t, c)]
        if m >= self.M:
            return False
        if t == F and c > 0 and self.count[(s, F, c - 1)] <= m:
            return False
        if t == BB:
            prev = self.count[(s, F, self.V - 1)] if c + 1 >= self.V else self.count[(s, BB, c + 1)]
            if prev <= m:
                return False
        return self.dep_end(t, c, s, m) >= 0

    def fits(self, t, c, s, next_start):
        dep = self.dep_end(t, c, s, self.count[(s, t, c)])
        return max(self.now[s], dep + self.COMM) + self.runtime(t, s, c) <= next_start

    def put(self, t, c, s):
        rt = self.runtime(t, s, c)
        end = self.now[s] + rt
        m = self.count[(s, t, c)]
        if m >= self.M:
            raise PlanError("zbvpp: a job beyond the last micro-batch")
        if t == F:
            ordered = c == 0 or (F, c - 1, s, m) in self.end
        elif t == BB:
            ordered = c == self.V - 1 or (BB, c + 1, s, m) in self.end
        else:
            ordered = (BB, c, s, m) in self.end
        if not ordered:
            raise PlanError("zbvpp: a job before the one it follows on its stage")
        if t != BW:
            dep = self.dep_end(t, c, s, m)
            if dep < 0:
                raise PlanError("zbvpp: a job before its input")
            end = max(end, dep + self.COMM + rt)
        if self.count[(s, F, 0)] > 0:
            self.bubbles[s] += end - self.now[s] - rt
        self.end[(t, c, s, m)] = end
        self.now[s] = end
        self.plans[s].append((t, c, m, -1))
        if t == BB:
            self.pending[s].append(c)
        self.count[(s, t, c)] += 1

    def put_w(self, s):
        self.put(BW, self.pending[s].pop(0), s)

    def w_runtime(self, s):
        return self.runtime(BW, s, self.pending[s][0])

    def check_before_insert(self, chunks, order, next_start, less):
        s = order[-1]
        if self.forwards(s, chunks) < less:
            return True
        left = any(self.count[(s, F, c)] < self.M for c in range(chunks))
        for c in range(chunks):
            for i in order:
                if self.can(F, c, i) and (self.forwards(i, chunks) < less or self.fits(F, c, i, next_start)):
                    return left
        return False

    def fill_forwards(self, s, chunks, c, next_start, up):
        less = self.forwards(0, chunks) if up else 0
        order = list(range(self.P - 1, s - 1, -1)) if up else list(range(0, s + 1))
        idle = 0
        while self.check_before_insert(chunks, order, next_start, less):
            put_any = False
            for i in order:
                if not self.can(F, c, i):
                    continue
                if self.forwards(i, chunks) >= less and not self.fits(F, c, i, next_start):
                    continue
                self.put(F, c, i)
                put_any = True
            idle = 0 if put_any else idle + 1
            if idle > chunks:
                raise PlanError("zbvpp: filling forwards makes no progress")
            c = (c + 1) % chunks

    def fill_before(self, end_type, end_chunk, chunks, up, insert):
        order = list(range(self.P)) if up else list(range(self.P - 1, -1, -1))
        lt, lc, lm, _ = self.plans[order[0]][-1]
        start = self.end[(lt, lc, order[0], lm)]
        if insert:
            self.put(end_type, end_chunk, order[0])
        for s in order[1:]:
            first = (self.plans[s][-1][1] + 1) % chunks
            start += self.COMM + self.runtime(end_type, s, end_chunk)
            self.fill_forwards(s, chunks, first, start, up)
            if insert:
                self.put(end_type, end_chunk, s)

    def after_backward_start(self, w_before_f, w_before_b, fill_loss, approved):
        P, V = self.P, self.V
        first_b = 0 if V % 2 == 0 else P - 1
        order = list(range(P - 1, -1, -1)) if V % 2 else list(range(P))
        while sum(self.count[(first_b, BB, c)] for c in range(V)) < V * self.M:
            before = sum(len(p) for p in self.plans)
            for s in order:
                for c in range(V):
                    if not self.can(BB, c, s):
                        continue
                    dep = self.dep_end(BB, c, s, self.count[(s, BB, c)])
                    while self.pending[s] and dep + self.COMM >= self.now[s] + self.w_runtime(s):
                        self.put_w(s)
                    if s == self.loss_stage and fill_loss:
                        while self.pending[s] and dep + self.COMM >= self.now[s] + self.w_runtime(s) * 0.2:
                            self.put_w(s)
                    most = self.max_bubble(s, approved)
                    if self.pending[s] and dep + self.COMM - self.now[s] > most - self.bubbles[s] and w_before_b:
                        self.put_w(s)
                    self.put(BB, c, s)
                    break
            for s in order:
                for c in range(V - 1, -1, -1):
                    if not self.can(F, c, s):
                        continue
                    dep = self.dep_end(F, c, s, self.count[(s, F, c)])
                    while self.pending[s] and dep + self.COMM >= self.now[s] + self.w_runtime(s):
                        self.put_w(s)
                    most = self.max_bubble(s, approved)
                    if self.pending[s] and dep + self.COMM - self.now[s] > most - self.bubbles[s] and w_before_f:
                        self.put_w(s)
                    self.put(F, c, s)
                    break
            if sum(len(p) for p in self.plans) == before:
                raise PlanError("zbvpp: the backward phase makes no progress")
        for s in range(P):
            while self.pending[s]:
                self.put_w(s)

    def create(self, w_before_f, w_before_b, fill_loss, approved=None, depth=0):
        self.init()
        max_approved = max(approved) if approved is not None else -1
        for s in range(self.P):
            self.put(F, 0, s)
        self.fill_before(F, 1, 1, False, True)
        for c in range(2, self.V):
            self.fill_before(F, c, c, (c - 1) % 2 == 1, True)
        self.fill_before(BB, 0, self.V, (self.V - 1) % 2 == 1, False)
        self.after_backward_start(w_before_f, w_before_b, fill_loss, approved)
        plans = [list(p) for p in self.plans]
        max_end = max(self.end.values())
        bubble = self.max_bubble()
        if (max_approved < 0 or bubble < max_approved) and depth < 1000:
            again = self.create(w_before_f, w_before_b, fill_loss, list(self.bubbles), depth + 1)
            if again[1] < max_end:
                return again
        return plans, max_end

    def build(self):
        best = None
        for w_before_b in (True, False):
            for w_before_f in (True, False):
                for fill_loss in (True, False):
                    got = self.create(w_before_f, w_before_b, fill_loss)
                    if best is None or got[1] < best[1]:
                        best = got
        return best[0]


def plans_zbvpp(P, M, V):
    """Paddle's ZB-VPP plans, one per stage (see _VSchedule)."""
    if V < 2:
        raise PlanError("zbvpp needs --chunks >= 2")
    if M % P != 0:
        raise PlanError("zbvpp needs --micro-batches to be a multiple of --stages")
    return _VSchedule(P, M, V).build()


def plan_overlap(P, M, s, V):
    base = plan_1f1b_like(P, M, s, P - s)
    # The steady phase is the (B, F) pairs that follow the warm-up forwards.
    warm = min(P - s, M)
    steady = M - warm
    head = base[:warm]
    tail = base[warm + 2 * steady:]
    plan = list(head)
    for i in range(steady):
        bm, fm = i, warm + i
        for k in range(V):
            plan.append((B, 0, bm, k))
            plan.append((F, 0, fm, k))
    plan.extend(tail)
    return plan


def build_plans(schedule, P, M, V, lr=False):
    """One job plan (list of (kind, chunk, mb, piece)) per stage, optimizer last."""
    if schedule == "zbvpp":
        plans = plans_zbvpp(P, M, V)
    else:
        plans = []
        for s in range(P):
            if schedule == "fthenb":
                p = [(F, 0, m, -1) for m in range(M)] + [(B, 0, m, -1) for m in range(M)]
            elif schedule == "1f1b":
                p = plan_1f1b_like(P, M, s, P - s)
            elif schedule == "eager1f1b":
                p = plan_1f1b_like(P, M, s, 2 * (P - s) - 1)
            elif schedule == "pir1f1b":
                p = []
                for item in plan_1f1b_like(P, M, s, P - s):
                    if item[0] == F and s > 0:
                        p.append((RECV, 0, item[2], -1))
                    p.append(item)
                    if item[0] == B and s > 0:
                        p.append((SEND, 0, item[2], -1))
            elif schedule == "vpp":
                p = plan_vpp(P, M, V, s)
            elif schedule == "zbh1":
                p = plan_zbh1(P, M, s)
            elif schedule == "overlap":
                p = plan_overlap(P, M, s, V)
            elif schedule == "default":
                p = [(DEF, 0, 0, -1)]
            else:
                raise PlanError("unknown schedule " + schedule)
            plans.append(p)
    out = []
    for p in plans:
        p = list(p)
        if schedule != "default":
            p.append((OPT, 0, 0, -1))
        if lr:
            p.insert(0, (LR, 0, 0, -1))
        out.append(p)
    return out


def type_name(schedule, item):
    kind, c, _, piece = item
    if kind == F:
        if piece >= 0:
            return "forward(chunk%d)" % piece
        return "forward%d" % c if schedule in CHUNKED else "forward"
    if kind == B:
        if piece >= 0:
            return "backward(chunk%d)" % piece
        return "backward%d" % c if schedule in CHUNKED else "backward"
    if kind == BB:
        return "backward_b%d" % c if schedule in CHUNKED else "backward_b"
    if kind == BW:
        return "backward_w%d" % c if schedule in CHUNKED else "backward_w"
    return {OPT: "optimizer", RECV: "recv_forward", SEND: "send_backward", DEF: "default", LR: "lr"}[kind]


def parse_type(type_):
    """Inverse of type_name: (kind, chunk, piece) or None."""
    m = re.match(r"^(forward|backward|backward_b|backward_w)(\d*)$", type_)
    if m:
        kind = {"forward": F, "backward": B, "backward_b": BB, "backward_w": BW}[m.group(1)]
        return kind, int(m.group(2) or 0), -1
    m = re.match(r"^(forward|backward)\(chunk(\d+)\)$", type_)
    if m:
        return (F if m.group(1) == "forward" else B), 0, int(m.group(2))
    k = {"optimizer": OPT, "recv_forward": RECV, "send_backward": SEND, "default": DEF, "lr": LR}.get(type_)
    return None if k is None else (k, 0, -1)


# --------------------------------------------------------------------------
# Simulation
# --------------------------------------------------------------------------


class Config:
    pass


def simulate(cfg):
    """Runs the schedule. Returns sim[rank][run] = list of steps, each step a
    list of (type, mb, real_start_ns, real_end_ns) in plan order (zero-time
    jobs have 0, 0)."""
    P, D, M, V = cfg.stages, cfg.dp, cfg.micro_batches, cfg.chunks
    plans = build_plans(cfg.schedule, P, M, V, cfg.lr)
    types = [[type_name(cfg.schedule, it) for it in p] for p in plans]
    npieces = V
    nv = num_vstages(cfg.schedule, P, V)
    rng = random.Random(cfg.seed * 1000003 + 17)
    fwd_us = cfg.fwd_us
    jit = cfg.jitter
    comm_us = cfg.comm_us
    nranks = P * D
    slow = [cfg.slow.get(r, 1.0) for r in range(nranks)]
    dur_base = {}
    for kind, f in KIND_FACTOR.items():
        dur_base[kind] = fwd_us * f
    dur_base[DEF] = fwd_us * (3 * M + 0.5)
    if cfg.schedule in CHUNKED:
        # A chunk holds 1/V of the stage's layers.
        for kind in (F, B, BB, BW):
            dur_base[kind] /= V
    sim = [[[] for _ in range(cfg.runs)] for _ in range(nranks)]
    vmap = [[vstage_of(cfg.schedule, P, s, c) for c in range(V)] for s in range(P)]
    vstage_stage = [stage_of_vstage(cfg.schedule, P, v) for v in range(nv)]
    uniform = rng.uniform
    t = cfg.epoch_ms * NS_PER_MS
    for run in range(cfg.runs):
        if run > 0:
            t += 60 * NS_PER_S
        for _step in range(cfg.steps):
            step_end = t
            for rep in range(D):
                ends = {}
                now = []
                for s in range(P):
                    # Each rank leaves the barrier a little apart from the others.
                    now.append(t + rng.randrange(0, 40) * NS_PER_US)
                recs = [[] for _ in range(P)]
                ptr = [0] * P
                left = P
                while left:
                    progressed = False
                    for s in range(P):
                        plan = plans[s]
                        i = ptr[s]
                        n = len(plan)
                        if i >= n:
                            continue
                        r = rep * P + s
                        sl = slow[r]
                        cur = now[s]
                        rec = recs[s]
                        ty = types[s]
                        while i < n:
                            kind, c, m, piece = plan[i]
                            if kind in ZERO_TIME_KINDS:
                                rec.append((ty[i], m, 0, 0))
                                i += 1
                                continue
                            ready = cur
                            dep = None
                            if piece <= 0:
                                if kind == F:
                                    v = vmap[s][c]
                                    if v > 0:
                                        dep = (0, v - 1, m)
                                elif kind == B or kind == BB:
                                    v = vmap[s][c]
                                    dep = (1, v + 1, m) if v < nv - 1 else (0, v, m)
                                elif kind == BW:
                                    dep = (1, vmap[s][c], m)
                            if dep is not None:
                                e = ends.get(dep)
                                if e is None:
                                    break
                                if vstage_stage[dep[1]] != s:
                                    e += int(comm_us * (1.0 + uniform(-jit, jit)) + 0.5) * NS_PER_US
                                if e > ready:
                                    ready = e
                            d = dur_base[kind] * sl
                            if piece >= 0:
                                d /= npieces
                            d = int(d * (1.0 + uniform(-jit, jit)) + 0.5)
                            if d < 1:
                                d = 1
                            end = ready + d * NS_PER_US
                            rec.append((ty[i], m, ready, end))
                            cur = end
                            if piece < 0 or piece == npieces - 1:
                                if kind == F:
                                    ends[(0, vmap[s][c], m)] = end
                                elif kind == B or kind == BB:
                                    ends[(1, vmap[s][c], m)] = end
                            i += 1
                            progressed = True
                        now[s] = cur
                        ptr[s] = i
                        if i >= n:
                            left -= 1
                    if left and not progressed:
                        raise AssertionError("the %s plan deadlocks (internal error)" % cfg.schedule)
                for s in range(P):
                    sim[rep * P + s][run].append(recs[s])
                    if now[s] > step_end:
                        step_end = now[s]
            # The barrier: the next step starts after every rank's optimizer,
            # plus the time to fetch the next batch.
            t = step_end + int(cfg.step_gap_us * (1.0 + uniform(-jit, jit)) + 0.5) * NS_PER_US
    return sim


# --------------------------------------------------------------------------
# Text
# --------------------------------------------------------------------------

_WARN_TEXTS = (
    ("paddle/distributed/auto_parallel/static/engine.py", 1530,
     "UserWarning: The Engine is running in static mode with an optimizer state that was not restored"),
    ("paddle/base/framework.py", 812,
     "DeprecationWarning: `paddle.base.framework._non_static_mode` is deprecated and will be removed in a future release"),
    ("paddle/nn/layer/layers.py", 2190,
     "UserWarning: Skip loading for lm_head.weight. lm_head.weight is not found in the provided dict."),
    ("paddlenlp/trainer/trainer.py", 1011,
     "UserWarning: The `max_grad_norm` is ignored when the optimizer has its own grad_clip"),
)

_GLOG_MSGS = (
    ("I", "interpretercore.cc:237", "New Executor is Running."),
    ("I", "program_interpreter.cc:212", "New Executor is Running."),
    ("I", "pir_interpreter.cc:1466", "New Executor is Running ..."),
    ("I", "interpreter_util.cc:1085", "Standalone Executor is Used."),
    ("W", "multiply_fwd_func.cc:75", "got different data type, run type promotion automatically, this may cause data type been changed."),
    ("I", "standalone_executor.cc:83", "Job type {ty}, micro batch {mb} of plan {n} prepared"),
    ("I", "auto_growth_best_fit_allocator.cc:{n}", "Allocate {big} bytes, ptr = 0x7f{hx}"),
    ("I", "process_group_nccl.cc:{n}", "ProcessGroupNCCL allreduce of {big} bytes on ring {mb}, rank {rank}"),
    ("I", "reducer.cc:{n}", "Start fused allreduce of {mb} vars, {big} bytes in group {rank}"),
    ("W", "dist_tensor.cc:{n}", "The tensor with placements [Shard(0), Replicate()] is resharded on rank {rank} to [Replicate(), Replicate()]"),
    ("I", "tcp_store.cc:{n}", "TCPStore get key pp_send_recv_{mb}_{rank} took {mb} ms"),
    ("W", "eager_method.cc:140", "Warning:: 0D Tensor cannot be used as 'Tensor.numpy()[0]' . In order to avoid this problem, 0D Tensor will be changed to 1D numpy currently, but it's not correct and will be removed in future. For Tensor contain only one element, Please modify  'Tensor.numpy()[0]' to 'float(Tensor)' as soon as possible, otherwise 'Tensor.numpy()[0]' will raise error in future."),
    ("I", "nccl_comm_context.cc:70", "init NCCLCommContext rank: {rank}, size: {n}, unique_comm_key: {big}, unique_key: NCCLCommContext_{big}, nccl_id: 5a0d{hx}"),
    ("I", "dygraph_functions.cc:{n}", "Running AD API: matmul"),
)

_TYPES_FOR_NOISE = ("forward", "backward", "optimizer")


class Printer:
    """Builds the text of one rank's file."""

    def __init__(self, cfg, rank, machine, local):
        self.cfg = cfg
        self.rank = rank
        self.local = local
        self.rng = random.Random(cfg.seed * 7919 + rank * 104729 + 1)
        self.tid = 20000 + (cfg.seed * 131 + rank * 977) % 40000
        self.style = cfg.prefix
        self.sec_cache = {}
        self.py_cache = {}
        # Weighted pool of noise kinds: 0 glog, 1 python logger, 2 warning (2 lines),
        # 3 progress, 4 long line, 5 empty, 6 non-ASCII, 7 coloured.
        pool = [0] * 60 + [1] * 16 + [2] * 6 + [3] * 5 + [6] * 3 + [7] * 3 + [5] * 1
        self.pool = pool
        self.long_every = 1000  # about one long line per this many noise lines

    def glog(self, sev, t_ns, tid, src):
        if self.style == "none":
            return ""
        sec = t_ns // NS_PER_S
        base = self.sec_cache.get(sec)
        if base is None:
            tm = time.gmtime(sec)
            if self.style == "glog-year":
                base = time.strftime("%Y%m%d %H:%M:%S", tm)
            else:
                base = time.strftime("%m%d %H:%M:%S", tm)
            self.sec_cache[sec] = base
        return "%s%s.%06d %d %s] " % (sev, base, (t_ns // NS_PER_US) % 1000000, tid, src)

    def pylog(self, level, t_ns):
        sec = t_ns // NS_PER_S
        base = self.py_cache.get(sec)
        if base is None:
            base = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(sec))
            self.py_cache[sec] = base
        return "[%s,%03d] [%8s] - " % (base, (t_ns // NS_PER_MS) % 1000, level)

    def startup(self, t_ns, out):
        r, loc = self.rank, self.local
        out.append(self.pylog("INFO", t_ns) + "PaddleNLP version: 3.0.0b2, Paddle version: 3.0.0-beta2")
        out.append("LAUNCH INFO %s Run Pod: job-%d, replicas 1, status ready" % (self.pylog("INFO", t_ns)[1:24], r // 8))
        out.append(self.glog("W", t_ns + 1000, self.tid, "gpu_resources.cc:119")
                   + "Please NOTE: device: %d, GPU Compute Capability: 9.0, Driver API Version: 12.4, Runtime API Version: 12.3" % loc)
        out.append(self.glog("W", t_ns + 3000, self.tid, "gpu_resources.cc:164")
                   + "device: %d, cuDNN Version: 9.0." % loc)
        out.append(self.pylog("INFO", t_ns + 5000) + "distributed strategy: pipeline {'schedule_mode': '%s', "
                   "'accumulate_steps': %d, 'vpp_degree': %d, 'job_schedule_profiler_start': %d, "
                   "'job_schedule_profiler_stop': %d}" % (
                       self.cfg.schedule, self.cfg.micro_batches, self.cfg.chunks,
                       self.cfg.start_step if self.cfg.start_step is not None else -1,
                       self.cfg.start_step + self.cfg.steps + 1 if self.cfg.start_step is not None else -1))
        out.append(self.glog("I", t_ns + 9000, self.tid + 3, "tcp_utils.cc:181")
                   + "The server starts to listen on IP_ANY:%d" % (60000 + r))
        out.append(self.glog("I", t_ns + 12000, self.tid, "process_group_nccl.cc:150")
                   + "ProcessGroupNCCL pg_timeout_ 1800000")

    def noise(self, n, t0, t1, step, out):
        """n noise lines spread over [t0, t1] (printed times)."""
        rng = self.rng
        rand = rng.random
        pool = self.pool
        plen = len(pool)
        span = max(t1 - t0, 1)
        emitted = 0
        i = 0
        while emitted < n:
            # Other threads print a little out of order: up to 1 ms of disorder.
            t = t0 + (span * i) // n + int(rand() * 1000) * NS_PER_US
            i += 1
            if rand() * self.long_every < 1.0:
                k = 4
            else:
                k = pool[int(rand() * plen)]
            if k == 0:
                sev, src, msg = _GLOG_MSGS[int(rand() * len(_GLOG_MSGS))]
                if "{" in src or "{" in msg:
                    vals = dict(
                        n=int(rand() * 2000) + 10, big=int(rand() * 1e9), hx="%08x" % int(rand() * 0xffffffff),
                        mb=int(rand() * 64), rank=self.rank, local=self.local,
                        ty=_TYPES_FOR_NOISE[int(rand() * 3)])
                    src = src.format(**vals)
                    msg = msg.format(**vals)
                tid = self.tid if rand() < 0.5 else self.tid + 1 + int(rand() * 40)
                out.append(self.glog(sev, t, tid, src) + msg)
                emitted += 1
            elif k == 1:
                out.append(self.pylog("INFO", t) + "dataloader: fetched batch %d of step %d in %.3f ms (queue %d)" % (
                    int(rand() * 64), step, rand() * 5, int(rand() * 8)))
                emitted += 1
            elif k == 2:
                path, line, text = _WARN_TEXTS[int(rand() * len(_WARN_TEXTS))]
                out.append("/usr/local/lib/python3.10/dist-packages/%s:%d: %s" % (path, line, text))
                emitted += 1
                if emitted < n:
                    out.append("  warnings.warn(")
                    emitted += 1
            elif k == 3:
                out.append(self.pylog("INFO", t) + (
                    "loss: %.8f, learning_rate: 3e-05, global_step: %d, current_memory_allocated: %.4f, "
                    "current_memory_reserved: %.4f, interval_runtime: %.4f, interval_samples_per_second: %.4f, "
                    "interval_steps_per_second: %.4f, progress_or_epoch: %.4f") % (
                    7 + rand(), step, 20 + rand(), 30 + rand(), rand(), 90 + rand() * 10, rand(), step / 1000.0))
                emitted += 1
            elif k == 4:
                vals = ", ".join("%.6f" % (rand() * 2 - 1) for _ in range(60 + int(rand() * 240)))
                out.append(self.pylog("INFO", t) + "fetch_list: {'loss': array([%s], dtype=float32)}" % vals)
                emitted += 1
            elif k == 5:
                out.append("")
                emitted += 1
            elif k == 6:
                out.append(self.pylog("INFO", t) + "训练进度: 第 %d 步, 已处理样本 %d 条, 平均耗时 %.3f 秒" % (
                    step, step * 512 + int(rand() * 512), rand()))
                emitted += 1
            else:
                out.append("\x1b[32m" + self.pylog("INFO", t)[:-3] + "\x1b[0m - Saving model checkpoint skipped at step %d (save_steps=%d)" % (
                    step, 1000))
                emitted += 1

    def progress(self, t, step, out):
        out.append(self.pylog("INFO", t) + (
            "global_step: %d, loss: %.8f, lr: 3e-05, batch_cost: %.5f s, ips: %.3f tokens/s") % (
            step, 7 + self.rng.random(), 0.5 + self.rng.random(), 20000 + self.rng.random() * 5000))


def machine_layout(cfg):
    """[(rank, machine, local, relpath)]"""
    n = cfg.stages * cfg.dp
    per = n // cfg.machines
    out = []
    for r in range(n):
        k, loc = divmod(r, per)
        if cfg.machines > 1:
            rel = "machine%d/workerlog.%d" % (k, loc)
        else:
            rel = "workerlog.%d" % r
        out.append((r, k, loc, rel))
    return out


def printed_jobs(cfg, sim, rank, machine):
    """Applies the printing artefacts to one rank's simulated jobs.
    Returns runs -> steps -> list of (type, mb, start_ns, end_ns) or None for a dropped step."""
    skew = cfg.skew.get(machine, 0)
    out = []
    for run, steps in enumerate(sim[rank]):
        rsteps = []
        for n, jobs in enumerate(steps):
            label = step_label(cfg, n)
            if (rank, label, run) in cfg.missing or (rank, label, None) in cfg.missing:
                rsteps.append(None)
                continue
            js = [(ty, m, s + skew if s else 0, e + skew if e else 0) for ty, m, s, e in jobs]
            if (rank, label, run) in cfg.overlap or (rank, label, None) in cfg.overlap:
                timed = [i for i, j in enumerate(js) if j[2]]
                if len(timed) >= 2:
                    k = max(0, len(timed) // 2 - 1)
                    a, b = timed[k], timed[k + 1]
                    ty, m, s0, e0 = js[a]
                    bs, be = js[b][2], js[b][3]
                    half = ((be - bs) // 2) // NS_PER_US * NS_PER_US
                    js[a] = (ty, m, s0, bs + max(half, NS_PER_US))
            rsteps.append(js)
        out.append(rsteps)
    return out


def marker_text(cfg):
    """The schedule marker: the window [start, end) whose iteration end-1 exits."""
    return "Schedule Profiler start at step %d and end at step %d" % (cfg.start_step, cfg.start_step + cfg.steps + 1)


def step_label(cfg, n):
    return (cfg.start_step if cfg.start_step is not None else 0) + n


def cg_bytes(cg):
    """Hundredths of a GiB -> bytes, round(GiB * 2^30) (never a tie)."""
    return (cg * GIB + 50) // 100


def details_stamp(ns):
    """Python logging's asctime of a time in ns: truncated to the ms, as UTC."""
    ms = ns // NS_PER_MS
    return "[%s,%03d]" % (time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(ms // 1000)), ms % 1000)


def details_line(ns, msg, alloc_cg, reserved_cg, lineno):
    return "%s [    INFO] pipeline_parallel.py:%d - [Pipeline details] %s: memory_allocated_size=%d.%02d, " \
           "memory_reserved_size=%d.%02d" % (details_stamp(ns), lineno, msg, alloc_cg // 100, alloc_cg % 100,
                                             reserved_cg // 100, reserved_cg % 100)


class MemoryModel:
    """One rank's memory, in hundredths of a GiB, and its truth."""

    def __init__(self, cfg, stage):
        self.static = int(round(cfg.mem_static_gib * 100)) + 7 * stage
        self.act = int(round(cfg.mem_act_gib * 100)) // (cfg.chunks if cfg.schedule == "vpp" else 1)
        self.alloc = self.static
        self.reserved = 0
        self.held = 0
        self.peak = -1
        self.peak_reserved = 0
        self.peak_held = 0
        self.peak_step = -1
        self.reserve()

    def reserve(self):
        two = 200  # the cache grows by 2 GiB blocks
        self.reserved = max(self.reserved, (self.alloc + two - 1) // two * two)

    def sample(self, step):
        if self.alloc > self.peak:
            self.peak, self.peak_step = self.alloc, step
        self.peak_reserved = max(self.peak_reserved, self.reserved)
        self.peak_held = max(self.peak_held, self.held)
        return self.alloc, self.reserved

    def change(self, forward):
        self.held += 1 if forward else -1
        self.alloc += self.act if forward else -self.act
        self.reserve()

    def truth(self, stage, chunks):
        return {"stage": stage, "static_bytes": cg_bytes(self.static), "activation_bytes_per_micro_batch":
                cg_bytes(self.act), "chunks": chunks, "peak_allocated_bytes": cg_bytes(self.peak),
                "peak_reserved_bytes": cg_bytes(self.peak_reserved), "peak_in_flight": self.peak_held,
                "peak_step": self.peak_step}


def render_details(cfg, mem, js, label, lines, details_jobs, run):
    """Appends one step's `[Pipeline details]` lines (jobs in plan order)."""
    timed = [j for j in js if j[2] and (parse_type(j[0]) or (None,))[0] in (F, B)]
    if not timed:
        return
    counts = {F: 0, B: 0}
    first = min(j[2] for j in timed)
    last = max(j[3] for j in timed)
    a, r = mem.sample(label)
    lines.append(details_line(first - 200 * NS_PER_US, "Start_forward_backward_pipeline", a, r, 1020))
    for ty, m, s, e in timed:
        kind, c, _ = parse_type(ty)
        word = "forward" if kind == F else "backward"
        chunk = str(c) if cfg.schedule == "vpp" else "None"
        step_id = counts[kind] if cfg.schedule == "vpp" else m
        counts[kind] += 1
        step = "None" if cfg.details_step_none else str(step_id)
        msg = "%s_step_chunk_%s_step_%s" % (word, chunk, step)
        a, r = mem.sample(label)
        lines.append(details_line(s, "Before_" + msg, a, r, 1187 if kind == F else 1262))
        before_line = len(lines)
        mem.change(kind == F)
        a, r = mem.sample(label)
        lines.append(details_line(e, "After_" + msg, a, r, 1232 if kind == F else 1334))
        ms = NS_PER_MS
        details_jobs.append((run, label, ty, m, m, s // ms * ms, e // ms * ms, before_line))
    a, r = mem.sample(label)
    lines.append(details_line(last + 300 * NS_PER_US, "End_forward_backward_pipeline", a, r, 1161))


_G = {}


def render_rank(rank):
    """Writes one rank's file. Returns (rank, bytes, [line numbers of its job lines])."""
    cfg = _G["cfg"]
    sim = _G["sim"]
    r, machine, local, rel = _G["layout"][rank]
    pr = Printer(cfg, r, machine, local)
    skew = cfg.skew.get(machine, 0)
    jobs = printed_jobs(cfg, sim, r, machine)
    step_bounds = _G["step_bounds"]
    lines = []
    job_lines = []
    details_jobs = []
    mem = MemoryModel(cfg, r % cfg.stages) if cfg.details else None
    no_mb = cfg.no_mb
    id_mode = cfg.job_id
    base_tid = pr.tid
    src = cfg.job_src
    glog = pr.glog
    for run, steps in enumerate(jobs):
        # A rerun is a new process: glog prints its new thread id, unless the
        # restarted container gave the trainer the same PID (--rerun-same-pid).
        pr.tid = base_tid + (0 if cfg.rerun_same_pid else run * 1009)
        tid = pr.tid
        if mem is not None:
            mem.reserved = 0  # a new process's allocator
            mem.reserve()
        run_start = step_bounds[run][0][0] + skew
        pr.startup(run_start - 5 * NS_PER_S, lines)
        every = cfg.start_step is not None and cfg.marker == "every-iteration"
        if cfg.start_step is not None:
            window = marker_text(cfg)
            if every:
                # Paddle's switch_job_schedule_profiler() logs the marker at
                # every iteration, through the root logger; iterations before
                # the window print nothing else here.
                for it in range(cfg.start_step):
                    lines.append("INFO:root:" + window)
            else:
                # PaddleNLP's auto-parallel engine: once, at start-up.
                lines.append(pr.pylog("INFO", run_start - 4 * NS_PER_S) + window)
        for n, js in enumerate(steps):
            label = step_label(cfg, n)
            t0, t1 = step_bounds[run][n]
            t0 += skew
            t1 += skew
            if every:
                # Logged before the iteration runs, so before its job lines.
                lines.append("INFO:root:" + marker_text(cfg))
            nn = cfg.noise
            after = 1 if nn >= 2 else 0
            pr.noise(nn - after, t0, t1, label, lines)
            real = sim[r][run][n]
            last_end = max(e for _, _, _, e in real) if real else t1 - skew
            tprint = last_end + skew + 150 * NS_PER_US
            if js is not None and mem is not None:
                render_details(cfg, mem, js, label, lines, details_jobs, run)
            if js is not None and cfg.details != "only":
                counters = {}
                for idx, (ty, m, s, e) in enumerate(js):
                    if id_mode == "index":
                        jid = idx
                    elif id_mode == "mb":
                        jid = m
                    else:
                        jid = counters.get(ty, 0)
                        counters[ty] = jid + 1
                    if no_mb:
                        body = "Profiler Info: Job (%d), type = %s, job_start_time = %d.%06d, job_end_time = %d.%06d" % (
                            jid, ty, s // NS_PER_MS, s % NS_PER_MS, e // NS_PER_MS, e % NS_PER_MS)
                    else:
                        body = ("Profiler Info: Job (%d), type = %s, micro_batch_id = %d, job_start_time = %d.%06d, "
                                "job_end_time = %d.%06d") % (
                            jid, ty, m, s // NS_PER_MS, s % NS_PER_MS, e // NS_PER_MS, e % NS_PER_MS)
                    lines.append(glog("I", tprint + idx * 3 * NS_PER_US, tid, src) + body)
                    job_lines.append((run, label, ty, m, jid, s, e, len(lines)))
            if after:
                pr.progress(tprint + 2 * NS_PER_MS, label, lines)
        if every:
            # Iteration end-1 logs its marker, then sys.exit() ends the process
            # before it runs: the window's last logged step is end-2.
            lines.append("INFO:root:" + marker_text(cfg))
    nl = "\r\n" if cfg.crlf else "\n"
    text = nl.join(lines) + nl
    data = text.encode("utf-8")
    path = os.path.join(cfg.out, rel)
    with open(path, "wb") as f:
        f.write(data)
    nzero = sum(1 for j in job_lines if j[5] == 0 and j[6] == 0)
    if cfg.details == "only":
        job_lines = details_jobs
    memory = mem.truth(r % cfg.stages, cfg.chunks if cfg.schedule == "vpp" else 1) if mem is not None else None
    return rank, len(data), len(job_lines), nzero, (job_lines if cfg.truth else None), memory


def generate(cfg):
    t_begin = time.time()
    sim = simulate(cfg)
    layout = machine_layout(cfg)
    nranks = len(layout)
    # Global step bounds (real times), for spreading the noise lines.
    step_bounds = []
    for run in range(cfg.runs):
        b = []
        for n in range(cfg.steps):
            starts = [j[2] for r in range(nranks) for j in sim[r][run][n] if j[2]]
            ends = [j[3] for r in range(nranks) for j in sim[r][run][n] if j[3]]
            b.append((min(starts), max(ends)))
        step_bounds.append(b)
    os.makedirs(cfg.out, exist_ok=True)
    for k in range(cfg.machines if cfg.machines > 1 else 0):
        os.makedirs(os.path.join(cfg.out, "machine%d" % k), exist_ok=True)
    _G.clear()
    _G.update(cfg=cfg, sim=sim, layout=layout, step_bounds=step_bounds)
    workers = cfg.jobs or min(os.cpu_count() or 1, nranks)
    workers = max(1, min(workers, nranks))
    if workers > 1:
        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(workers) as pool:
            results = pool.map(render_rank, range(nranks), chunksize=1)
    else:
        results = [render_rank(r) for r in range(nranks)]
    results.sort()
    total_bytes = sum(x[1] for x in results)
    total_jobs = sum(x[2] for x in results)
    zero = sum(x[3] for x in results)
    if cfg.details == "only":
        zero = 0
    if cfg.truth:
        ranks_json = []
        for r, k, loc, rel in layout:
            ranks_json.append({"rank": r, "machine": k, "local": loc, "file": rel,
                               "stage": r % cfg.stages, "replica": r // cfg.stages,
                               "skew_ns": cfg.skew.get(k, 0)})
        parts = []
        for r, _, _, _, jl, _ in results:
            for run, step, ty, m, jid, s, e, line in jl:
                parts.append('{"rank":%d,"run":%d,"step":%d,"type":%s,"mb":%d,"job_id":%d,'
                             '"start_ns":%d,"end_ns":%d,"line":%d}' % (
                                 r, run, step, json.dumps(ty), m, jid, s, e, line))
        config = {k: v for k, v in vars(cfg).items() if isinstance(v, (int, float, str, bool, type(None)))}
        memory = ""
        if cfg.details:
            # Per stage: the first replica's rank (every replica runs the same model).
            stages = [x[5] for x in results if x[0] < cfg.stages]
            memory = '"memory":%s,\n' % json.dumps({"resolution_bytes": DETAILS_RESOLUTION_BYTES, "stages": stages})
        with open(cfg.truth, "w") as f:
            f.write('{"config":%s,\n"ranks":%s,\n%s"zero_time_jobs":%d,\n"jobs":[\n' % (
                json.dumps(config, sort_keys=True), json.dumps(ranks_json), memory, zero))
            f.write(",\n".join(parts))
            f.write("\n]}\n")
    return {"files": nranks, "bytes": total_bytes, "jobs": total_jobs, "zero_time_jobs": zero,
            "seconds": time.time() - t_begin}


# --------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------


def parse_pairs(values, what, key_type, val_parse):
    out = {}
    for v in values or ():
        if ":" not in v:
            raise SystemExit("gen_logs.py: %s expects KEY:VALUE, got %r" % (what, v))
        k, _, val = v.partition(":")
        try:
            out[key_type(k)] = val_parse(val)
        except ValueError:
            raise SystemExit("gen_logs.py: bad %s value %r" % (what, v))
    return out


def parse_skew_ms(text):
    """Milliseconds (may be fractional or negative) -> ns, rounded to whole us."""
    text = text.strip()
    if not re.match(r"^[+-]?(\d+(\.\d*)?|\.\d+)$", text):
        raise ValueError(text)
    neg = text.startswith("-")
    text = text.lstrip("+-")
    whole, _, frac = text.partition(".")
    frac9 = (frac + "000000000")[:9]  # ms -> 9 digits of picoseconds.. keep ns + 3
    ps = int(whole or "0") * 10 ** 9 + int(frac9)  # units of 1e-9 ms = 1 ps
    us = (ps + 500000) // 10 ** 6  # 1 us = 1e6 ps
    ns = us * NS_PER_US
    return -ns if neg else ns


def parse_rank_step(values, what):
    out = set()
    for v in values or ():
        parts = v.split(":")
        if len(parts) not in (2, 3):
            raise SystemExit("gen_logs.py: %s expects RANK:STEP[:RUN], got %r" % (what, v))
        try:
            out.add((int(parts[0]), int(parts[1]), int(parts[2]) if len(parts) == 3 else None))
        except ValueError:
            raise SystemExit("gen_logs.py: bad %s value %r" % (what, v))
    return out


def make_parser():
    p = argparse.ArgumentParser(
        prog="gen_logs.py",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=__doc__,
        epilog="Example (the benchmark set): gen_logs.py --out .bench/logs --stages 8 --dp 8 --machines 8 "
               "--schedule 1f1b --micro-batches 64 --steps 20 --noise 1000",
    )
    p.add_argument("--out", help="output folder (created)")
    p.add_argument("--stages", type=int, default=4, help="pipeline depth P (default 4)")
    p.add_argument("--dp", type=int, default=1, help="data-parallel replicas D; global rank = replica*P + stage")
    p.add_argument("--machines", type=int, default=1,
                   help="machines K; ranks are split machine-major; with K>1 files go to OUT/machine<k>/workerlog.<local>")
    p.add_argument("--schedule", choices=SCHEDULES, default="1f1b")
    p.add_argument("--micro-batches", type=int, default=8, help="micro-batches M per step (default 8)")
    p.add_argument("--chunks", type=int, default=2,
                   help="V: model chunks per stage for vpp/zbvpp, pieces per job for overlap (default 2)")
    p.add_argument("--steps", type=int, default=3, help="steps S per run (default 3)")
    p.add_argument("--start-step", type=int, default=None,
                   help="print 'Schedule Profiler start at step X and end at step X+S+1' and number steps from X")
    p.add_argument("--noise", type=int, default=0, help="other log lines per step per rank (default 0)")
    p.add_argument("--prefix", choices=("glog", "glog-year", "none"), default="glog", help="prefix of the job lines")
    p.add_argument("--no-mb", action="store_true", help="omit ', micro_batch_id = M'")
    p.add_argument("--crlf", action="store_true", help="end lines with CR LF")
    p.add_argument("--job-id", choices=("index", "mb", "counter"), default="mb",
                   help="what Job (N) holds: index in the step's job list, the micro-batch (default), or a per-type counter")
    p.add_argument("--lr", action="store_true", help="start every step's plan with an 'lr' job (2023 design)")
    p.add_argument("--skew", action="append", metavar="MACHINE:MS",
                   help="add MS milliseconds (fractional/negative, rounded to 1 us) to every printed time of that machine")
    p.add_argument("--slow", action="append", metavar="RANK:FACTOR", help="multiply that rank's job durations")
    p.add_argument("--rerun", action="store_true", help="append a second complete run, 60 s after the first ended")
    p.add_argument("--rerun-same-pid", action="store_true",
                   help="the rerun's process has the same glog thread id as the first run's (a restarted container)")
    p.add_argument("--marker", choices=("once", "every-iteration"), default="once",
                   help="with --start-step: the schedule marker once at start-up in PaddleNLP's logger format "
                        "(default), or at every iteration in the root logger's format, as Paddle's "
                        "paddle.profiler.utils.switch_job_schedule_profiler() logs it")
    p.add_argument("--missing-step", action="append", metavar="RANK:STEP[:RUN]",
                   help="drop that step's job lines from that rank (all runs unless RUN given); "
                        "STEP is numbered as in the truth: from --start-step, else from 0")
    p.add_argument("--overlap", action="append", metavar="RANK:STEP[:RUN]",
                   help="make two consecutive jobs of that rank's step overlap (the first one's end moves to the "
                        "middle of the second)")
    p.add_argument("--details", choices=("off", "only", "mixed"), default="off",
                   help="write [Pipeline details] lines with memory: only them (no job line), or beside the job lines")
    p.add_argument("--details-step-none", action="store_true", help="details lines say step_None (older Paddle)")
    p.add_argument("--mem-static-gib", type=float, default=8.0,
                   help="details: stage 0's static memory in GiB (stage s: + 0.07*s; default 8)")
    p.add_argument("--mem-act-gib", type=float, default=1.5,
                   help="details: activation memory of one micro-batch on a stage in GiB (1/V per chunk; default 1.5)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--epoch-ms", type=int, default=1697793307000, help="start time, ms since the epoch")
    p.add_argument("--fwd-ms", type=float, default=1.0, help="base forward duration in ms (default 1)")
    p.add_argument("--jitter", type=float, default=0.05, help="relative uniform jitter of durations (default 0.05)")
    p.add_argument("--comm-us", type=int, default=20, help="stage-to-stage latency in us (default 20)")
    p.add_argument("--step-gap-us", type=int, default=500, help="gap after the step barrier in us (default 500)")
    p.add_argument("--truth", metavar="FILE", help="write the ground truth JSON here")
    p.add_argument("--jobs", type=int, default=0, help="worker processes (default: CPU count)")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--self-test", action="store_true", help="run the built-in checks and exit")
    p.add_argument("--print-plans", action="store_true",
                   help="print each stage's plan for --schedule, --stages, --micro-batches and --chunks (one line "
                        "per stage, 'type:micro-batch' words, the optimizer left out) and exit")
    return p


def config_from_args(a):
    cfg = Config()
    if not a.out:
        raise SystemExit("gen_logs.py: --out is required")
    for name, lo in (("stages", 1), ("dp", 1), ("machines", 1), ("micro_batches", 1), ("chunks", 1), ("steps", 1)):
        if getattr(a, name) < lo:
            raise SystemExit("gen_logs.py: --%s must be >= %d" % (name.replace("_", "-"), lo))
    if a.noise < 0:
        raise SystemExit("gen_logs.py: --noise must be >= 0")
    n = a.stages * a.dp
    if n % a.machines:
        raise SystemExit("gen_logs.py: %d ranks do not split evenly over %d machines" % (n, a.machines))
    cfg.out = a.out
    cfg.stages, cfg.dp, cfg.machines = a.stages, a.dp, a.machines
    cfg.schedule = a.schedule
    cfg.micro_batches, cfg.chunks, cfg.steps = a.micro_batches, a.chunks, a.steps
    if a.schedule not in CHUNKED and a.schedule != "overlap":
        cfg.chunks = 1
    cfg.start_step = a.start_step
    cfg.noise = a.noise
    cfg.prefix = a.prefix
    cfg.no_mb = a.no_mb
    cfg.crlf = a.crlf
    cfg.job_id = a.job_id
    cfg.lr = a.lr
    cfg.skew = parse_pairs(a.skew, "--skew", int, parse_skew_ms)
    for k in cfg.skew:
        if not 0 <= k < a.machines:
            raise SystemExit("gen_logs.py: --skew machine %d out of range" % k)
    cfg.slow = parse_pairs(a.slow, "--slow", int, float)
    cfg.runs = 2 if a.rerun else 1
    cfg.rerun_same_pid = a.rerun_same_pid
    cfg.marker = a.marker
    cfg.missing = parse_rank_step(a.missing_step, "--missing-step")
    cfg.overlap = parse_rank_step(a.overlap, "--overlap")
    cfg.seed = a.seed
    cfg.epoch_ms = a.epoch_ms
    cfg.fwd_us = int(round(a.fwd_ms * 1000))
    cfg.jitter = a.jitter
    cfg.comm_us = a.comm_us
    cfg.step_gap_us = a.step_gap_us
    cfg.truth = a.truth
    cfg.jobs = a.jobs
    cfg.job_src = "standalone_executor.cc:217"
    cfg.details = None if a.details == "off" else a.details
    cfg.details_step_none = a.details_step_none
    cfg.mem_static_gib = a.mem_static_gib
    cfg.mem_act_gib = a.mem_act_gib
    if cfg.details and cfg.schedule not in DETAILS_SCHEDULES:
        raise SystemExit("gen_logs.py: --details needs a schedule of whole forwards and backwards: "
                         + ", ".join(DETAILS_SCHEDULES))
    if cfg.details and (a.mem_static_gib < 0 or a.mem_act_gib < 0):
        raise SystemExit("gen_logs.py: --mem-static-gib and --mem-act-gib must be >= 0")
    try:
        build_plans(cfg.schedule, cfg.stages, cfg.micro_batches, cfg.chunks, cfg.lr)
    except PlanError as e:
        raise SystemExit("gen_logs.py: " + str(e))
    return cfg


# --------------------------------------------------------------------------
# Self-test
# --------------------------------------------------------------------------


def expected_warmup(schedule, P, M, V, s):
    """Forwards before the first backward-type job, per stage, or None if not checked."""
    if schedule in ("1f1b", "pir1f1b", "overlap", "zbh1"):
        return min(P - s, M)
    if schedule == "eager1f1b":
        return min(2 * (P - s) - 1, M)
    if schedule == "fthenb":
        return M
    if schedule == "vpp":
        # The steady phase starts with a forward, then its backward.
        total = M * V
        warm = total if M == P else min((P - s - 1) * 2 + (V - 1) * P, total)
        return warm + 1 if warm < total else total
    return None


def check_set(args, workdir, label):
    """Generates one set with args and checks it; returns the truth."""
    out = os.path.join(workdir, label)
    truth_path = os.path.join(workdir, label + ".json")
    a = make_parser().parse_args(args + ["--out", out, "--truth", truth_path, "--quiet"])
    cfg = config_from_args(a)
    generate(cfg)
    with open(truth_path) as f:
        truth = json.load(f)
    P, D, M, V = cfg.stages, cfg.dp, cfg.micro_batches, cfg.chunks
    problems = []

    def fail(msg):
        problems.append("%s: %s" % (label, msg))

    ranks = {x["rank"]: x for x in truth["ranks"]}
    if len(ranks) != P * D:
        fail("rank count")
    # 1. Every truth job is at its line, with exactly the printed fields.
    by_rank = {}
    for j in truth["jobs"]:
        by_rank.setdefault(j["rank"], []).append(j)
    for r, info in ranks.items():
        with open(os.path.join(out, info["file"]), "rb") as f:
            raw = f.read()
        if cfg.crlf:
            if raw.count(b"\r\n") != raw.count(b"\n"):
                fail("rank %d: a line without CR" % r)
        elif b"\r" in raw:
            fail("rank %d: stray CR" % r)
        lines = raw.decode("utf-8").split("\n")
        jobs = by_rank.get(r, [])
        marked = [i + 1 for i, ln in enumerate(lines) if "Profiler Info: Job (" in ln]
        if marked != [j["line"] for j in jobs]:
            fail("rank %d: job lines at %s.. but truth says %s.." % (r, marked[:3], [j["line"] for j in jobs][:3]))
            continue
        markers = [ln for ln in lines if "Schedule Profiler start at step" in ln]
        if cfg.start_step is not None:
            want = marker_text(cfg)
            # every-iteration: iterations 0 .. end-1, the last one exits.
            per_run = cfg.start_step + cfg.steps + 1 if cfg.marker == "every-iteration" else 1
            if len(markers) != cfg.runs * per_run or any(not m.rstrip("\r").endswith(want) for m in markers):
                fail("rank %d: markers %r" % (r, markers[:4]))
            if cfg.marker == "every-iteration" and any(not m.startswith("INFO:root:") for m in markers):
                fail("rank %d: markers not in the root logger's format" % r)
        elif markers:
            fail("rank %d: unexpected marker" % r)
        for j in jobs:
            ln = lines[j["line"] - 1]
            m = JOB_RE.search(ln)
            if not m:
                fail("rank %d line %d does not parse: %r" % (r, j["line"], ln))
                continue
            jid, ty, mb, st, en = m.groups()
            if cfg.prefix == "none" and not ln.startswith("Profiler Info"):
                fail("prefix not empty")
            if cfg.prefix == "glog-year" and not re.match(r"^I\d{8} \d\d:\d\d:\d\d\.\d{6} \d+ \S+:\d+\] ", ln):
                fail("glog-year prefix: %r" % ln[:40])
            if cfg.prefix == "glog" and not re.match(r"^I\d{4} \d\d:\d\d:\d\d\.\d{6} \d+ \S+:\d+\] ", ln):
                fail("glog prefix: %r" % ln[:40])
            if int(jid) != j["job_id"] or ty != j["type"]:
                fail("rank %d line %d: id/type" % (r, j["line"]))
            if cfg.no_mb != (mb is None) or (mb is not None and int(mb) != j["mb"]):
                fail("rank %d line %d: micro_batch_id" % (r, j["line"]))
            if st != fmt_ms(j["start_ns"]) or en != fmt_ms(j["end_ns"]):
                fail("rank %d line %d: times %s %s vs %d %d" % (r, j["line"], st, en, j["start_ns"], j["end_ns"]))
            if j["start_ns"] % NS_PER_US or j["end_ns"] % NS_PER_US:
                fail("times not whole microseconds")
    # 2. Plan shapes, dependencies and the barrier, on un-skewed times.
    groups = {}
    for j in truth["jobs"]:
        groups.setdefault((j["run"], j["step"]), []).append(j)
    zero = 0
    prev_max_end = None
    nv = num_vstages(cfg.schedule, P, V)
    for (run, step), js in sorted(groups.items()):
        per_rank = {}
        for j in js:
            per_rank.setdefault(j["rank"], []).append(j)
        ends = {}  # (replica, cls, v, m) -> end
        tainted = set()  # ends moved by --overlap
        overlapped = {(x[0], x[1]) for x in cfg.overlap}
        real = {}
        for r, rj in per_rank.items():
            sk = ranks[r]["skew_ns"]
            s = ranks[r]["stage"]
            rep = ranks[r]["replica"]
            seq = []
            counters = {}
            for idx, j in enumerate(rj):
                if j["start_ns"] == 0 and j["end_ns"] == 0:
                    zero += 1
                    if parse_type(j["type"])[0] not in ZERO_TIME_KINDS:
                        fail("zero time on a timed job")
                    seq.append(None)
                else:
                    seq.append((j["start_ns"] - sk, j["end_ns"] - sk))
                # job id semantics
                want = {"index": idx, "mb": j["mb"]}.get(cfg.job_id)
                if cfg.job_id == "counter":
                    want = counters.get(j["type"], 0)
                    counters[j["type"]] = want + 1
                if j["job_id"] != want:
                    fail("job id %d, want %d (%s)" % (j["job_id"], want, cfg.job_id))
            real[r] = seq
            timed = [x for x in seq if x]
            for a_, b_ in zip(timed, timed[1:]):
                if b_[0] < a_[1] and (r, step) not in {(x[0], x[1]) for x in cfg.overlap}:
                    fail("rank %d step %d: jobs overlap" % (r, step))
            if (r, step) in {(x[0], x[1]) for x in cfg.missing}:
                fail("missing step still printed")
            kinds = [parse_type(j["type"]) for j in rj]
            if None in kinds:
                fail("unknown type")
                continue
            if cfg.schedule != "default" and kinds[-1][0] != OPT:
                fail("optimizer not last")
            if cfg.lr and kinds[0][0] != LR:
                fail("lr not first")
            # counts per chunk
            cnt = {}
            for (k, c, pc), j in zip(kinds, rj):
                if pc > 0:
                    continue
                cnt[(k, c)] = cnt.get((k, c), 0) + 1
            if cfg.schedule not in ("default",):
                for c in range(V if cfg.schedule in CHUNKED else 1):
                    f = cnt.get((F, c), 0)
                    b = cnt.get((B, c), 0) + cnt.get((BB, c), 0)
                    if f != M or b != M:
                        fail("stage %d chunk %d: %d forwards %d backwards" % (s, c, f, b))
                if cfg.schedule in ("zbh1", "zbvpp"):
                    for c in range(V if cfg.schedule == "zbvpp" else 1):
                        if cnt.get((BW, c), 0) != cnt.get((BB, c), 0):
                            fail("backward_w count")
            warm = expected_warmup(cfg.schedule, P, M, V, s)
            if warm is not None:
                nf = 0
                for k, c, pc in kinds:
                    if k in (B, BB):
                        break
                    if k == F and pc <= 0:
                        nf += 1
                if nf != warm:
                    fail("stage %d: %d forwards before the first backward, want %d" % (s, nf, warm))
            for (k, c, pc), j, x in zip(kinds, rj, seq):
                if x is None:
                    continue
                v = vstage_of(cfg.schedule, P, s, c)
                if pc < 0 or pc == V - 1:
                    key = None
                    if k == F:
                        key = (rep, 0, v, j["mb"])
                    elif k in (B, BB):
                        key = (rep, 1, v, j["mb"])
                    if key:
                        ends[key] = x[1]
                        if (r, step) in overlapped:
                            tainted.add(key)
        checked = 0
        for r, rj in per_rank.items():
            s = ranks[r]["stage"]
            rep = ranks[r]["replica"]
            for j, x in zip(rj, real[r]):
                if x is None:
                    continue
                k, c, pc = parse_type(j["type"])
                if pc > 0:
                    continue
                v = vstage_of(cfg.schedule, P, s, c)
                dep = None
                if k == F and v > 0:
                    dep = (rep, 0, v - 1, j["mb"])
                elif k in (B, BB):
                    dep = (rep, 1, v + 1, j["mb"]) if v < nv - 1 else (rep, 0, v, j["mb"])
                elif k == BW:
                    dep = (rep, 1, v, j["mb"])
                if dep is None or cfg.schedule == "default" or dep in tainted:
                    continue
                e = ends.get(dep)
                if e is None:
                    if not cfg.missing:
                        fail("dependency %r of rank %d not found" % (dep, r))
                    continue
                checked += 1
                if x[0] < e:
                    fail("rank %d step %d %s mb %d starts %d ns before its dependency ends" % (
                        r, step, j["type"], j["mb"], e - x[0]))
        if cfg.schedule != "default" and P > 1 and not checked:
            fail("no dependency checked")
        starts = [x[0] for seq in real.values() for x in seq if x]
        if prev_max_end is not None and starts and min(starts) < prev_max_end:
            fail("step %d starts before the barrier" % step)
        prev_max_end = max(x[1] for seq in real.values() for x in seq if x)
    if zero != truth["zero_time_jobs"]:
        fail("zero_time_jobs %d vs %d" % (truth["zero_time_jobs"], zero))
    if cfg.schedule == "pir1f1b" and P > 1 and zero == 0:
        fail("pir1f1b without zero-time jobs")
    return truth, problems, out


def self_test():
    t0 = time.time()
    work = tempfile.mkdtemp(prefix="gen_logs_selftest_")
    problems = []
    try:
        base = ["--stages", "4", "--dp", "2", "--machines", "2", "--micro-batches", "8", "--steps", "3",
                "--noise", "30", "--jobs", "1"]
        cases = []
        for sched in SCHEDULES:
            cases.append((sched, base + ["--schedule", sched]))
        cases += [
            ("vpp3", ["--schedule", "vpp", "--chunks", "3", "--stages", "4", "--micro-batches", "12", "--steps", "2", "--jobs", "1"]),
            ("vpp_mp", ["--schedule", "vpp", "--stages", "4", "--micro-batches", "4", "--steps", "2", "--jobs", "1"]),
            ("zbvpp3", ["--schedule", "zbvpp", "--chunks", "3", "--stages", "3", "--micro-batches", "6", "--steps", "2", "--jobs", "1"]),
            ("overlap3", ["--schedule", "overlap", "--chunks", "3", "--steps", "2", "--jobs", "1"]),
            ("p1", ["--schedule", "1f1b", "--stages", "1", "--micro-batches", "3", "--steps", "2", "--jobs", "1"]),
            ("variants", base + ["--schedule", "fthenb", "--prefix", "glog-year", "--no-mb", "--crlf", "--job-id", "index",
                                 "--lr", "--start-step", "10", "--rerun", "--skew", "1:-3.25", "--skew", "0:0.0004",
                                 "--slow", "5:1.5", "--jobs", "2"]),
            ("counter", base + ["--schedule", "zbh1", "--prefix", "none", "--job-id", "counter", "--start-step", "5"]),
            ("artefacts", base + ["--schedule", "1f1b", "--missing-step", "3:1", "--overlap", "2:2", "--rerun"]),
            ("every_iteration", base + ["--schedule", "1f1b", "--start-step", "4", "--marker", "every-iteration",
                                        "--rerun", "--rerun-same-pid"]),
        ]
        truths = {}
        for label, args in cases:
            truth, probs, _ = check_set(args, work, label)
            truths[label] = truth
            problems += probs
        # Artefacts: the missing step is gone, the overlap is there.
        t = truths["artefacts"]
        per = {}
        for j in t["jobs"]:
            per.setdefault((j["rank"], j["run"], j["step"]), []).append(j)
        if (3, 0, 1) in per or (3, 1, 1) in per or (2, 0, 1) not in per:
            problems.append("artefacts: --missing-step not applied")
        js = per.get((2, 0, 2), [])
        if not any(b["start_ns"] < a["end_ns"] for a, b in zip(js, js[1:])):
            problems.append("artefacts: --overlap not applied")
        runs = sorted({j["run"] for j in t["jobs"]})
        if runs != [0, 1]:
            problems.append("artefacts: --rerun not applied")
        else:
            end0 = max(j["end_ns"] for j in t["jobs"] if j["run"] == 0)
            start1 = min(j["start_ns"] for j in t["jobs"] if j["run"] == 1)
            if not 60 * NS_PER_S <= start1 - end0 < 61 * NS_PER_S:
                problems.append("artefacts: rerun gap %d ns" % (start1 - end0))
        # Every-iteration markers: one right before each step's first job line
        # (after the noise-free gap), and the rerun keeps the thread id.
        t = truths["every_iteration"]
        info0 = [x for x in t["ranks"] if x["rank"] == 0][0]
        with open(os.path.join(work, "every_iteration", info0["file"])) as f:
            lines0 = f.read().split("\n")
        firsts = {}
        for j in t["jobs"]:
            if j["rank"] == 0:
                firsts.setdefault((j["run"], j["step"]), j["line"])
        for (run, step), line in sorted(firsts.items()):
            before = [ln for ln in lines0[:line - 1] if "Schedule Profiler" in ln]
            want = run * (4 + 3 + 1) + 4 + (step - 4) + 1
            if len(before) != want:
                problems.append("every_iteration: %d markers before run %d step %d, want %d" % (
                    len(before), run, step, want))
        tids = {ln.split()[2] for ln in lines0 if "Profiler Info: Job" in ln}
        if len(tids) != 1:
            problems.append("every_iteration: --rerun-same-pid gave thread ids %r" % sorted(tids))
        # Skew: machine 1 printed 3.25 ms early, machine 0 0.0004 ms -> 0 us.
        t = truths["variants"]
        sk = {x["machine"]: x["skew_ns"] for x in t["ranks"]}
        if sk != {0: 0, 1: -3250000}:
            problems.append("variants: skew %r" % sk)
        # The slow rank is slower.
        def busy(truth, rank):
            return sum(j["end_ns"] - j["start_ns"] for j in truth["jobs"] if j["rank"] == rank)
        if not busy(t, 5) > 1.3 * busy(t, 4):
            problems.append("variants: --slow had no effect")
        # 1F1B has fewer bubbles than FThenB? Both end-to-end are longer than the busy time.
        # Determinism: same seed -> same bytes (also with more workers); other seed -> different.
        args = base + ["--schedule", "vpp", "--rerun", "--start-step", "3", "--skew", "1:0.5"]
        _, p1, o1 = check_set(args, work, "det1")
        _, p2, o2 = check_set(args + ["--jobs", "3"], work, "det2")
        _, p3, o3 = check_set(args + ["--seed", "2"], work, "det3")
        problems += p1 + p2 + p3
        for rel in ("machine0/workerlog.0", "machine1/workerlog.3"):
            a = open(os.path.join(o1, rel), "rb").read()
            b = open(os.path.join(o2, rel), "rb").read()
            c = open(os.path.join(o3, rel), "rb").read()
            if a != b:
                problems.append("determinism: %s differs between runs with the same seed" % rel)
            if a == c:
                problems.append("determinism: %s equal for different seeds" % rel)
        # Time formatting round trip at epoch magnitude.
        for ns in (0, 1, 999999, 1000000, 1697793307213760986, 1697793307254006104):
            if parse_ms(fmt_ms(ns)) != ns:
                problems.append("fmt_ms round trip %d" % ns)
        if fmt_ms(1697793307213760000) != "1697793307213.760000":
            problems.append("fmt_ms")
        if parse_skew_ms("-3.25") != -3250000 or parse_skew_ms("0.0015") != 2000 or parse_skew_ms("2") != 2000000:
            problems.append("parse_skew_ms")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if problems:
        for p in problems[:50]:
            print("FAIL " + p)
        print("self-test: %d problem(s)" % len(problems))
        return 1
    print("self-test: ok (%d schedules, %.1f s)" % (len(SCHEDULES), time.time() - t0))
    return 0


def main(argv=None):
    a = make_parser().parse_args(argv)
    if a.self_test:
        return self_test()
    if a.print_plans:
        try:
            plans = build_plans(a.schedule, a.stages, a.micro_batches, a.chunks)
        except PlanError as e:
            sys.stderr.write("gen_logs.py: %s\n" % e)
            return 2
        for plan in plans:
            print(" ".join("%s:%d" % (type_name(a.schedule, it), it[2]) for it in plan if it[0] != OPT))
        return 0
    cfg = config_from_args(a)
    res = generate(cfg)
    if not a.quiet:
        sys.stderr.write("gen_logs.py: %d files, %.1f MB, %d job lines (%d zero-time) in %.2f s -> %s\n" % (
            res["files"], res["bytes"] / 1e6, res["jobs"], res["zero_time_jobs"], res["seconds"], cfg.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
