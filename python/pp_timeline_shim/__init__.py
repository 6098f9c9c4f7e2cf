"""Times the jobs of a pipeline-parallel step and logs them as Paddle does.

A thin ctypes layer over the shim's C API (pp_timeline/shim_c.h) in
libppt_shim.so, which exports only that API and needs neither glog nor a
particular CUDA runtime: it uses the one already loaded in the process
(PyTorch's, Paddle's), so it loads next to either.

    import pp_timeline_shim as ppt
    shim = ppt.Shim(stream=torch.cuda.current_stream().cuda_stream)
    shim.set_window(10, 20)
    for step in range(steps):
        with shim.job("forward", micro_batch=3):
            ...
        shim.flush(step)
    shim.finish()

The library is found through the environment variable PPT_SHIM_LIBRARY (a
path), else next to this package, else by the dynamic loader's search
(LD_LIBRARY_PATH) as libppt_shim.so.0 or libppt_shim.so.
"""
import contextlib
import ctypes
import os

__all__ = ["Shim", "ShimError", "HOST_CLOCK", "POLL", "IGNORE_ENV", "COMPACT_LINES", "load_library"]

HOST_CLOCK = 1 << 0
POLL = 1 << 1
IGNORE_ENV = 1 << 2
COMPACT_LINES = 1 << 3

_STATUS_NAMES = {
    0: "ok", 1: "end_without_begin", 2: "nested_begin", 3: "invalid_type",
    4: "open_job_at_flush", 5: "invalid_argument", 6: "cuda_error", 7: "bad_environment",
    8: "step_not_recorded", 9: "too_many_jobs", 10: "capture_active",
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
    for name in sorted(os.listdir(here)):
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
        "ppt_shim_create_error": (ctypes.c_char_p, []),
        "ppt_shim_destroy": (None, [h]),
        "ppt_shim_begin": (ctypes.c_int, [h, ctypes.c_char_p, i64]),
        "ppt_shim_end": (ctypes.c_int, [h]),
        "ppt_shim_flush": (ctypes.c_int, [h, i64]),
        "ppt_shim_finish": (ctypes.c_int, [h, i64]),
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


class Shim:
    """One profiler for one stream, used from one thread.

    stream: a cudaStream_t as an int (torch.cuda.current_stream().cuda_stream,
    paddle.device.current_stream().cuda_stream), or None for the legacy
    default stream. device: -1 for the current one. flags: HOST_CLOCK, POLL,
    IGNORE_ENV, COMPACT_LINES. sink: a callable taking each line (a str)
    instead of the log on stderr (or PPT_SHIM_LOG_FILE).
    """

    def __init__(self, stream=None, device=-1, flags=0, sink=None):
        self._lib = load_library()
        self._h = self._lib.ppt_shim_create(stream or None, device, flags)
        if not self._h:
            raise ShimError(7, self._lib.ppt_shim_create_error().decode())
        self._sink = None
        if sink is not None:
            self.set_sink(sink)

    def _check(self, status):
        if status != 0:
            raise ShimError(status, self._lib.ppt_shim_last_error(self._h).decode())

    def begin(self, job_type, micro_batch=-1):
        self._check(self._lib.ppt_shim_begin(self._h, job_type.encode(), micro_batch))

    def end(self):
        self._check(self._lib.ppt_shim_end(self._h))

    @contextlib.contextmanager
    def job(self, job_type, micro_batch=-1):
        """with shim.job("forward", micro_batch=3): ... times the block."""
        self.begin(job_type, micro_batch)
        try:
            yield
        finally:
            self.end()

    def flush(self, step):
        """Ends step `step`; its lines are written once the device has run it."""
        self._check(self._lib.ppt_shim_flush(self._h, step))

    def finish(self, timeout_ms=10000):
        """Writes every flushed step, waiting for the device."""
        self._check(self._lib.ppt_shim_finish(self._h, timeout_ms))

    def set_step(self, step):
        self._check(self._lib.ppt_shim_set_step(self._h, step))

    def set_window(self, start, end):
        """Profiles steps [start, end) and writes Paddle's marker line."""
        self._check(self._lib.ppt_shim_set_window(self._h, start, end))

    def set_sink(self, sink):
        if sink is None:
            self._sink = None
            self._check(self._lib.ppt_shim_set_sink(self._h, _SINK(), None))
            return

        def call(data, length, _user):
            sink(ctypes.string_at(data, length).decode("utf-8", "replace"))

        cb = _SINK(call)
        self._check(self._lib.ppt_shim_set_sink(self._h, cb, None))
        self._sink = cb  # keeps the callback alive

    @property
    def recording(self):
        return bool(self._lib.ppt_shim_recording(self._h))

    @property
    def backend(self):
        return "cuda" if self._lib.ppt_shim_backend(self._h) == 1 else "host"

    @property
    def backend_note(self):
        return self._lib.ppt_shim_backend_note(self._h).decode()

    def counts(self):
        """(jobs written, jobs dropped, steps waiting for the device)."""
        w, d, p = ctypes.c_int64(), ctypes.c_int64(), ctypes.c_int64()
        self._check(self._lib.ppt_shim_counts(self._h, ctypes.byref(w), ctypes.byref(d),
                                              ctypes.byref(p)))
        return w.value, d.value, p.value

    def close(self):
        """Writes what is left and frees the profiler (also at garbage collection)."""
        if self._h:
            self._lib.ppt_shim_destroy(self._h)
            self._h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass
