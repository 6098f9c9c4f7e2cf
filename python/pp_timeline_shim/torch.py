"""Times torch.distributed.pipelining schedules with the shim.

    from pp_timeline_shim.torch import instrument
    schedule = ScheduleInterleavedZeroBubble(stages, n_microbatches=8, loss_fn=loss_fn)
    timed = instrument(schedule, log_file="log/workerlog.{rank}")
    for step in range(steps):
        schedule.step(x, target=y, losses=losses)   # flushed at the end of each step()
        if step % 100 == 0:
            schedule.eval(x_val, target=y_val)       # not a step: not timed, not counted

torch's schedules run every action (`PP:0F1`, `PP:1I0`, `PP:1B0`, `PP:2W3`:
stage, computation, micro-batch) through three methods of the pipeline
stage (torch/distributed/pipelining/stage.py, _PipelineStageBase):
forward_one_chunk(fwd_chunk_id, args, kwargs, ...),
backward_one_chunk(bwd_chunk_id, loss=None, full_backward=True,
last_backward=False) and backward_weight_one_chunk(bwd_chunk_id,
last_backward=False). A single-stage schedule keeps its stage in
`_stage`, a multi-stage one (interleaved, zero bubble) in `_stages`
(torch/distributed/pipelining/schedules.py). instrument() wraps those
methods on the schedule's own stage objects and its step(), so that each
action is one job, named as Paddle names them: forward, backward (a full
backward, B), backward_b (the input half, I) and backward_w (the weight
half, W); with several stages on this rank the local chunk is appended
(forward0, backward_w1), as Paddle's interleaved schedule does. With
nvtx=True (and torch present) each job is also an NVTX range named as
torch's profiler names the action (PP:0F1), so Nsight Systems shows the
same jobs.

Validation is not training: torch's schedule.eval() runs step() with the
backward switched off (_has_backward false), and a 1F1B schedule still
calls backward_one_chunk, which then does nothing. instrument() wraps
eval() too, and neither times the jobs of an eval() nor flushes or counts
it as a step; a step() found running with _has_backward false (an eval
entered some other way) is treated the same.
"""
import functools

from . import Shim

__all__ = ["instrument", "Instrumented"]


def _torch():
    try:
        import torch  # noqa: F401  (absolute: the framework, not this module)
        return torch
    except ImportError:
        return None


class Instrumented:
    """What instrument() changed; remove() puts it back."""

    def __init__(self, schedule, shim, first_step):
        self.schedule = schedule
        self.shim = shim
        self.step = first_step
        self.evaluating = 0  # eval() calls under way
        self._saved = []

    def _patch(self, obj, name, wrapper):
        original = getattr(obj, name)
        self._saved.append((obj, name, obj.__dict__.get(name)))
        setattr(obj, name, wrapper(original))

    def remove(self):
        for obj, name, had in reversed(self._saved):
            if had is None:
                delattr(obj, name)
            else:
                setattr(obj, name, had)
        self._saved = []


def _stages(schedule):
    stages = getattr(schedule, "_stages", None)
    if stages:
        return list(stages)
    stage = getattr(schedule, "_stage", None)
    if stage is not None:
        return [stage]
    raise TypeError("%r has neither _stages nor _stage: not a torch.distributed.pipelining "
                    "schedule" % (schedule,))


def _backward_kind(args, kwargs):
    # backward_one_chunk(bwd_chunk_id, loss=None, full_backward=True, ...)
    full = kwargs.get("full_backward", args[2] if len(args) > 2 else True)
    return ("backward", "B") if full else ("backward_b", "I")


def _chunk_id(args, kwargs, name):
    if args:
        return int(args[0])
    return int(kwargs[name])


def instrument(schedule, shim=None, first_step=0, nvtx=False, **shim_args):
    """Times every forward, backward and weight backward of `schedule`'s
    stages per micro-batch, and flushes at the end of every step().

    shim: a Shim to use; else one is made with **shim_args (log_file,
    strict...). Jobs run on the current CUDA stream at each call when torch
    is present. first_step: the number of the first step().
    """
    torch = _torch()
    if shim is None:
        shim = Shim(**shim_args)
    done = Instrumented(schedule, shim, first_step)
    stages = _stages(schedule)
    multi = len(stages) > 1
    cuda = torch is not None and torch.cuda.is_available()
    use_nvtx = nvtx and cuda

    for chunk, stage in enumerate(stages):
        index = int(getattr(stage, "stage_index", chunk))
        suffix = str(chunk) if multi else ""
        done._patch(stage, "forward_one_chunk",
                    _job_wrapper(done, shim, torch, cuda, use_nvtx, index, suffix, "fwd_chunk_id",
                                 lambda a, kw: ("forward", "F")))
        done._patch(stage, "backward_one_chunk",
                    _job_wrapper(done, shim, torch, cuda, use_nvtx, index, suffix, "bwd_chunk_id",
                                 _backward_kind))
        if hasattr(stage, "backward_weight_one_chunk"):
            done._patch(stage, "backward_weight_one_chunk",
                        _job_wrapper(done, shim, torch, cuda, use_nvtx, index, suffix, "bwd_chunk_id",
                                     lambda a, kw: ("backward_w", "W")))

    def step_wrapper(original):
        @functools.wraps(original)
        def step(*args, **kwargs):
            if _evaluating(done):
                return original(*args, **kwargs)
            try:
                return original(*args, **kwargs)
            finally:
                shim.flush(done.step)
                done.step += 1
        return step

    def eval_wrapper(original):
        @functools.wraps(original)
        def evaluate(*args, **kwargs):
            done.evaluating += 1
            try:
                return original(*args, **kwargs)
            finally:
                done.evaluating -= 1
        return evaluate

    done._patch(schedule, "step", step_wrapper)
    if callable(getattr(schedule, "eval", None)):
        done._patch(schedule, "eval", eval_wrapper)
    return done


def _evaluating(done):
    """Whether the schedule is running a validation pass, not a training step."""
    return done.evaluating > 0 or getattr(done.schedule, "_has_backward", True) is False


def _job_wrapper(done, shim, torch, cuda, use_nvtx, stage_index, suffix, chunk_arg, kind_of):
    def wrap(original):
        @functools.wraps(original)
        def call(*args, **kwargs):
            if _evaluating(done):
                return original(*args, **kwargs)
            mb = _chunk_id(args, kwargs, chunk_arg)
            job_type, letter = kind_of(args, kwargs)
            stream = torch.cuda.current_stream() if cuda else None
            if use_nvtx:
                torch.cuda.nvtx.range_push("PP:%d%s%d" % (stage_index, letter, mb))
            try:
                with shim.job(job_type + suffix, mb, stream=stream):
                    return original(*args, **kwargs)
            finally:
                if use_nvtx:
                    torch.cuda.nvtx.range_pop()
        return call
    return wrap
