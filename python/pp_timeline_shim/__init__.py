"""Times the jobs of a pipeline-parallel step and logs them as Paddle does.

A thin ctypes layer over the shim's C API (pp_timeline/shim_c.h) in
libppt_shim.so, which exports only that API and needs neither glog nor a
particular CUDA runtime: it uses the one already loaded in the process
(PyTorch's, Paddle's), so it loads next to either.

    import pp_timeline_shim as ppt
    shim = ppt.Shim(log_file="log/workerlog.{rank}")   # the files --log_dir reads
    shim.set_window(10, 20)
    for step in range(steps):
        with shim.job("forward", micro_batch=3):
            ...
        shim.flush(step)
    shim.finish()

By default a profiler never stops training: a call the shim refuses (a
nested range, a job open at flush, a job inside a CUDA graph capture, an
argument that is not an integer, a log file that cannot be opened...) is
logged once per kind on the "pp_timeline_shim" logger, counted in
Shim.problems, and training goes on. Shim(strict=True) raises ShimError
instead, and only ShimError.

A Shim may be shared by threads (a communication or data thread beside the
compute one): each thread has its own open job, and the lines are in the
order the jobs began. A Shim made before os.fork() does nothing in the
child (its steps are the parent's to write).

The library is found through the environment variable PPT_SHIM_LIBRARY (a
path), else next to this package, else by the dynamic loader's search
(LD_LIBRARY_PATH) as libppt_shim.so.0 or libppt_shim.so.
"""
import contextlib
import ctypes
import functools
import logging
import operator
import os
import threading
import time

__all__ = ["Shim", "ShimError", "HOST_CLOCK", "POLL", "IGNORE_ENV", "COMPACT_LINES", "load_library",
           "stream_handle"]

_log = logging.getLogger("pp_timeline_shim")

HOST_CLOCK = 1 << 0
POLL = 1 << 1
IGNORE_ENV = 1 << 2
COMPACT_LINES = 1 << 3

_STATUS_NAMES = {
    0: "ok", 1: "end_without_begin", 2: "nested_begin", 3: "invalid_type",
    4: "open_job_at_flush", 5: "invalid_argument", 6: "cuda_error", 7: "bad_environment",
    8: "step_not_recorded", 9: "too_many_jobs", 10: "capture_active", 11: "cuda_unavailable",
}

_SINK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p)


class ShimError(RuntimeError):
    """A call of the shim failed; .code is the status, .name its stable name."""

    def __init__(self, code, message):
        self.code = code
        self.name = _STATUS_NAMES.get(code, "unknown")
        super().__init__("%s: %s" % (self.name, message))


_lib = None


def _candidates():
    env = os.environ.get("PPT_SHIM_LIBRARY")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    # An installed package ships libppt_shim.so; a source tree may hold more.
    for name in sorted(os.listdir(here), key=lambda n: (n != "libppt_shim.so", n)):
        if name.startswith("libppt_shim.so"):
            yield os.path.join(here, name)
    yield "libppt_shim.so.0"
    yield "libppt_shim.so"


def load_library():
    """Loads libppt_shim.so once and declares its functions."""
    global _lib
    if _lib is not None:
        return _lib
    errors = []
    lib = None
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)
            break
        except OSError as e:
            errors.append("%s: %s" % (path, e))
    if lib is None:
        raise OSError("libppt_shim.so not found (set PPT_SHIM_LIBRARY to its path): " +
                      "; ".join(errors))
    h = ctypes.c_void_p
    i64 = ctypes.c_int64
    decl = {
        "ppt_shim_create": (h, [h, ctypes.c_int, ctypes.c_uint]),
        "ppt_shim_create_with_log": (h, [h, ctypes.c_int, ctypes.c_uint, ctypes.c_char_p]),
        "ppt_shim_begin_on": (ctypes.c_int, [h, h, ctypes.c_char_p, i64]),
        "ppt_shim_stat": (i64, [h, ctypes.c_char_p]),
        "ppt_shim_create_error": (ctypes.c_char_p, []),
        "ppt_shim_destroy": (None, [h]),
        "ppt_shim_begin": (ctypes.c_int, [h, ctypes.c_char_p, i64]),
        "ppt_shim_end": (ctypes.c_int, [h]),
        "ppt_shim_flush": (ctypes.c_int, [h, i64]),
        "ppt_shim_finish": (ctypes.c_int, [h, i64]),
        "ppt_shim_wait": (ctypes.c_int, [h, i64]),
        "ppt_shim_set_step": (ctypes.c_int, [h, i64]),
        "ppt_shim_set_window": (ctypes.c_int, [h, i64, i64]),
        "ppt_shim_set_sink": (ctypes.c_int, [h, _SINK, h]),
        "ppt_shim_recording": (ctypes.c_int, [h]),
        "ppt_shim_backend": (ctypes.c_int, [h]),
        "ppt_shim_backend_note": (ctypes.c_char_p, [h]),
        "ppt_shim_last_error": (ctypes.c_char_p, [h]),
        "ppt_shim_counts": (ctypes.c_int, [h, ctypes.POINTER(i64), ctypes.POINTER(i64),
                                           ctypes.POINTER(i64)]),
    }
    for name, (res, args) in decl.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args
    _lib = lib
    return lib



def _device_of(obj):
    """The device index a stream object says it is on, or None."""
    index = getattr(obj, "device_index", None)  # torch.cuda.Stream
    if isinstance(index, int):
        return index
    for attr in ("device", "place"):  # torch.device / Paddle's CUDAPlace
        dev = getattr(obj, attr, None)
        if dev is None:
            continue
        if isinstance(dev, int):
            return dev
        index = getattr(dev, "index", None)
        if isinstance(index, int):
            return index
        get_id = getattr(dev, "get_device_id", None)
        if callable(get_id):
            return int(get_id())
    return None


def stream_handle(stream):
    """(raw cudaStream_t as an int or None, device index or None) of `stream`.

    Accepts None (the legacy default stream), an int (a raw handle), a
    torch.cuda.Stream (.cuda_stream, .device_index), Paddle's
    paddle.device.Stream (its .stream_base is the core CUDAStream, whose
    .cuda_stream is the handle and .place the device) and Paddle's core
    CUDAStream itself.
    """
    if stream is None:
        return None, None
    if isinstance(stream, bool):
        raise TypeError("a stream, not a bool")
    if isinstance(stream, int):
        return (stream or None), None
    base = getattr(stream, "stream_base", None)  # paddle.device.Stream
    if base is not None:
        handle, device = stream_handle(base)
        own = _device_of(stream)
        return handle, own if own is not None else device
    for attr in ("cuda_stream", "raw_stream"):
        handle = getattr(stream, attr, None)
        if callable(handle):
            handle = handle()
        if isinstance(handle, int):
            return (handle or None), _device_of(stream)
    raise TypeError("%r is not a stream: it has no cuda_stream, raw_stream or stream_base" %
                    (stream,))


_BACKENDS = {0: "host", 1: "cuda", 2: "none"}
_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1
# finish() waits in slices this long, so that Ctrl-C (KeyboardInterrupt) is
# seen between them rather than after the whole timeout.
_FINISH_SLICE_MS = 100


class Shim:
    """One profiler for one device, shared by the threads that use it.

    stream: the stream jobs run on by default: None (the legacy default
    stream), a raw cudaStream_t as an int, or a stream object (torch.cuda.Stream,
    paddle.device.Stream); its device is taken from the object. device: -1 for
    the stream's, or else the current one. When neither a stream nor a device
    is given, the native profiler is made at the first call that needs it, so
    that a Shim made before torch.cuda.set_device() times on the device set
    by then. job(..., stream=s) times one job on another stream of the device
    (work inside `with torch.cuda.stream(s)`).

    flags: HOST_CLOCK, POLL, IGNORE_ENV, COMPACT_LINES. sink: a callable
    taking each line (a str) instead of the log. log_file: the log's path
    instead of stderr; `{rank}` and `{local_rank}` in it are the launcher's
    ranks (PADDLE_TRAINER_ID / RANK...); PPT_SHIM_LOG_FILE overrides it.

    strict: raise ShimError on every call the shim refuses. Without it
    (the default) each kind of refusal is logged once on the
    "pp_timeline_shim" logger and counted in .problems, and training goes on:
    a range inside a job (activation recompute in a backward, a library's
    own range) is not timed, the job around it is; a job left open by an
    exception is dropped at the next flush, and later steps are timed.

    Arguments: a job type is a str (or bytes); micro-batches and steps are
    integers, taken through __index__ (so numpy and tensor integers do),
    between -2**63 and 2**63-1; micro_batch=None is a job without one. A value
    that does not convert is refused as above (invalid_type,
    invalid_argument): the job is not timed; a flush() whose step does not
    convert ends the step numbered as expected (the last flushed + 1).

    Threads: one Shim may be used from several threads; each has its own
    open job. A flush() ends the step for every thread: jobs open on other
    threads then are dropped, and their end() is quietly a no-op.
    """

    def __init__(self, stream=None, device=-1, flags=0, sink=None, log_file=None, strict=False):
        self._lib = load_library()
        self._h = None
        self.strict = strict
        self.problems = {}
        self._pid = os.getpid()
        # Per thread: the ranges open ("job": open in the native profiler, or
        # "skip": not timed) and the flush generation they belong to.
        self._local = threading.local()
        self._generation = 0
        self._next_step = 0
        self._lock = threading.RLock()  # problems and the lazy handle
        if log_file is not None and not isinstance(log_file, (str, bytes, os.PathLike)):
            self._problem(5, "log_file=%r is not a path; the log is stderr" % (log_file,))
            log_file = None
        log_path = os.fsencode(log_file) if log_file else None
        handle, stream_device = stream_handle(stream)
        if device is None or device < 0:
            device = stream_device if stream_device is not None else -1
        self._stream = handle
        self._args = (handle, device, flags, log_path)
        self._sink = None
        self._sink_fn = sink
        self._disabled = False
        self._summarised = False
        if handle is None and device < 0 and not flags & HOST_CLOCK:
            # The device is the one current at the first job: check the
            # environment now all the same, so that a bad variable is said
            # where the Shim is made.
            probe = self._lib.ppt_shim_create_with_log(None, -1, flags | HOST_CLOCK, None)
            if not probe:
                self._create_failed()
            else:
                self._lib.ppt_shim_destroy(probe)
        else:
            self._handle()

    # -- the native handle -------------------------------------------------

    def _create_failed(self):
        message = self._lib.ppt_shim_create_error().decode()
        self._disabled = True
        self._problem(7, message + "; nothing is timed")

    def _handle(self):
        if self._h is None and not self._disabled:
            with self._lock:
                if self._h is not None or self._disabled:
                    return self._h
                h = self._lib.ppt_shim_create_with_log(*self._args)
                if not h:
                    self._create_failed()
                    return None
                self._h = h
            if self._sink_fn is not None:
                self._install_sink(self._sink_fn)
            if self._lib.ppt_shim_stat(h, b"log_file_failed") == 1:
                self._problem(5, self._lib.ppt_shim_backend_note(h).decode().split("; ")[0])
            if self.strict and self._lib.ppt_shim_backend(h) == 2:
                raise ShimError(11, self._lib.ppt_shim_backend_note(h).decode())
        return self._h

    def _problem(self, code, message):
        name = _STATUS_NAMES.get(code, "unknown")
        if self.strict:
            raise ShimError(code, message)
        with self._lock:
            seen = self.problems.get(name, 0)
            self.problems[name] = seen + 1
        if seen == 0:
            _log.warning("pp-timeline shim: %s: %s (said once; later ones are counted in "
                         "Shim.problems)", name, message)

    def _check(self, status):
        if status != 0:
            message = self._lib.ppt_shim_last_error(self._h).decode("utf-8", "replace")
            self._problem(status, message)
        return status == 0

    def _stack(self):
        """The calling thread's open ranges; emptied by a flush since."""
        local = self._local
        if getattr(local, "generation", None) != self._generation:
            # Ranges left open when a flush ended their step: their end()
            # calls are quiet no-ops.
            local.orphans = len(getattr(local, "stack", ()))
            local.generation = self._generation
            local.stack = []
        return local.stack

    def _int(self, value, what, none=None):
        """value as a 64-bit int, or None after saying why (strict: raises)."""
        if value is None and none is not None:
            return none
        try:
            if isinstance(value, (bool, float)):
                raise TypeError
            number = operator.index(value)
        except TypeError:
            self._problem(5, "%s=%r is not an integer (an int, or a numpy or tensor integer)" %
                          (what, value))
            return None
        if not _I64_MIN <= number <= _I64_MAX:
            self._problem(5, "%s=%d is out of the 64-bit range" % (what, number))
            return None
        return number

    def _type(self, job_type):
        """job_type as bytes, or None after saying why (strict: raises)."""
        if isinstance(job_type, (bytes, bytearray)):
            return bytes(job_type)
        if isinstance(job_type, str):
            try:
                return job_type.encode("utf-8")
            except UnicodeError:
                pass
        self._problem(3, "job type %r is not a str" % (job_type,))
        return None

    def _forked(self):
        return os.getpid() != self._pid

    # -- jobs --------------------------------------------------------------

    def begin(self, job_type, micro_batch=-1, stream=None):
        """Opens a job; `stream` (optional) is the stream it runs on."""
        stack = self._stack()
        if stack and not self.strict:
            stack.append("skip")
            self._problem(2, "a range %r inside an open job is not timed; the job around it is "
                             "(jobs do not nest)" % (job_type,))
            return
        stack.append("skip")  # until the native begin succeeds
        try:
            if self._begin(job_type, micro_batch, stream):
                stack[-1] = "job"
        except ShimError:  # strict: nothing was opened
            stack.pop()
            raise

    def _begin(self, job_type, micro_batch, stream):
        name = self._type(job_type)
        mb = self._int(micro_batch, "micro_batch", none=-1)
        if name is None or mb is None:
            return False
        raw = None
        if stream is not None:
            try:
                raw = stream_handle(stream)[0]
            except TypeError as e:
                self._problem(5, str(e) + "; the job is not timed")
                return False
        h = self._handle()
        if h is None:
            return False
        if stream is None:
            status = self._lib.ppt_shim_begin(h, name, mb)
        else:
            status = self._lib.ppt_shim_begin_on(h, raw, name, mb)
        return self._check(status)

    def end(self):
        stack = self._stack()
        if stack:
            kind = stack.pop()
            if kind == "skip":
                return
        elif self._local.orphans > 0:
            self._local.orphans -= 1
            return
        h = self._handle()
        if h is not None:
            self._check(self._lib.ppt_shim_end(h))

    @contextlib.contextmanager
    def job(self, job_type, micro_batch=-1, stream=None):
        """with shim.job("forward", micro_batch=3): ... times the block."""
        self.begin(job_type, micro_batch, stream)
        try:
            yield
        finally:
            self.end()

    def timed(self, job_type, micro_batch=-1, stream=None):
        """A decorator: @shim.timed("forward") times every call of the function.

        micro_batch may be a callable given the call's arguments that returns
        the micro-batch.
        """
        def wrap(fn):
            @functools.wraps(fn)
            def call(*args, **kwargs):
                mb = micro_batch(*args, **kwargs) if callable(micro_batch) else micro_batch
                with self.job(job_type, mb, stream):
                    return fn(*args, **kwargs)
            return call
        return wrap

    def flush(self, step):
        """Ends step `step`; its lines are written once the device has run it.

        A job still open (on any thread) is dropped (said once), and the
        ranges open are forgotten, so that a job left open by an exception
        costs one step."""
        number = self._int(step, "step")
        if number is None:
            number = self._next_step
        self._generation += 1  # every thread's open ranges belong to the ended step
        h = self._handle()
        if h is not None:
            self._check(self._lib.ppt_shim_flush(h, number))
        self._next_step = number + 1 if number < _I64_MAX else number

    def finish(self, timeout_ms=10000):
        """Writes every flushed step, waiting for the device at most
        timeout_ms in all; a step the device has not run by then is dropped
        (said). It waits in short slices, so that Ctrl-C interrupts it."""
        timeout = self._int(timeout_ms, "timeout_ms")
        if timeout is None:
            timeout = 10000
        if self._h is None:
            return
        deadline = time.monotonic() + max(timeout, 0) / 1000.0
        left_ms = max(timeout, 0)
        while self.counts()[2] > 0:
            left_ms = int((deadline - time.monotonic()) * 1000)
            if left_ms <= 0:
                break
            status = self._lib.ppt_shim_wait(self._h, min(left_ms, _FINISH_SLICE_MS))
            if status != 0:
                self._check(status)
                return
        left_ms = int((deadline - time.monotonic()) * 1000)
        # What the device has not run by now is dropped (said); the log's
        # queue is waited for within what is left.
        self._check(self._lib.ppt_shim_finish(self._h, max(left_ms, 0)))

    def set_step(self, step):
        number = self._int(step, "step")
        h = self._handle()
        if number is not None and h is not None and self._check(self._lib.ppt_shim_set_step(h, number)):
            self._next_step = number

    def set_window(self, start, end):
        """Profiles steps [start, end) and writes Paddle's marker line."""
        first, last = self._int(start, "start"), self._int(end, "end")
        h = self._handle()
        if first is not None and last is not None and h is not None:
            self._check(self._lib.ppt_shim_set_window(h, first, last))

    def set_sink(self, sink):
        self._sink_fn = sink
        if self._h is not None:
            self._install_sink(sink)

    def _install_sink(self, sink):
        if sink is None:
            self._sink = None
            self._check(self._lib.ppt_shim_set_sink(self._h, _SINK(), None))
            return

        def call(data, length, _user):
            sink(ctypes.string_at(data, length).decode("utf-8", "replace"))

        cb = _SINK(call)
        self._check(self._lib.ppt_shim_set_sink(self._h, cb, None))
        self._sink = cb  # keeps the callback alive

    # -- state -------------------------------------------------------------

    @property
    def recording(self):
        h = self._handle()
        return h is not None and bool(self._lib.ppt_shim_recording(h))

    @property
    def backend(self):
        """"cuda", "host", or "none" (nothing timed: CUDA required and unusable)."""
        h = self._handle()
        return "none" if h is None else _BACKENDS.get(self._lib.ppt_shim_backend(h), "none")

    @property
    def backend_note(self):
        h = self._handle()
        return "" if h is None else self._lib.ppt_shim_backend_note(h).decode()

    def stat(self, name):
        """A counter of the native profiler by name (jobs_refused_in_capture,
        anchors_rejected, last_step_uncertainty_ns, log_lines_dropped...); -1
        if unknown."""
        h = self._handle()
        return -1 if h is None or not isinstance(name, str) else self._lib.ppt_shim_stat(h, name.encode())

    def counts(self):
        """(jobs written, jobs dropped, steps waiting for the device)."""
        if self._h is None:
            return 0, 0, 0
        w, d, p = ctypes.c_int64(), ctypes.c_int64(), ctypes.c_int64()
        self._lib.ppt_shim_counts(self._h, ctypes.byref(w), ctypes.byref(d), ctypes.byref(p))
        return w.value, d.value, p.value

    def close(self):
        """Writes what is left and frees the profiler (also at garbage collection).

        In a child of os.fork() nothing is written: the steps are the
        parent's (the native profiler knows it too)."""
        self._disabled = True  # closed: later calls do nothing
        forked = self._forked()
        if self._h:
            self._lib.ppt_shim_destroy(self._h)
            self._h = None
        if self.problems and not self._summarised and not forked:
            self._summarised = True
            _log.warning("pp-timeline shim: calls refused over the run: %s", ", ".join(
                "%s x%d" % kv for kv in sorted(self.problems.items())))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass
