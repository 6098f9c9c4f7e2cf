/* The instrumentation shim's C API, for callers that cannot use C++, such as
 * a Python executor through ctypes. It is a thin layer over ppt::shim::Profiler
 * (pp_timeline/shim.h), which documents the behaviour; this file documents the
 * C conventions only.
 *
 * Conventions:
 * - Every call that can fail returns a ppt_shim_status; PPT_SHIM_OK is 0.
 *   The message of a handle's last failure is ppt_shim_last_error(handle); it
 *   stays valid until the next call on that handle.
 * - A NULL handle is PPT_SHIM_INVALID_ARGUMENT, never a crash.
 * - Times are never passed through this API; the shim writes them itself.
 * - A handle may be shared by threads, like the Profiler it wraps (each
 *   thread has its own open job); ppt_shim_last_error is then the message
 *   of the calling thread's last failure on that handle.
 *
 * From Python:
 *   lib = ctypes.CDLL("libppt_shim.so")
 *   lib.ppt_shim_create.restype = ctypes.c_void_p
 *   lib.ppt_shim_create.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint]
 *   lib.ppt_shim_begin.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int64]
 *   lib.ppt_shim_end.argtypes = [ctypes.c_void_p]
 *   lib.ppt_shim_flush.argtypes = [ctypes.c_void_p, ctypes.c_int64]
 *   h = lib.ppt_shim_create(stream_ptr, -1, 0)
 *   lib.ppt_shim_begin(h, b"forward", 0); ...; lib.ppt_shim_end(h)
 *   lib.ppt_shim_flush(h, step)
 */
#ifndef PP_TIMELINE_SHIM_C_H_
#define PP_TIMELINE_SHIM_C_H_

#include <stddef.h>
#include <stdint.h>

/* The only symbols libppt_shim.so exports. */
#if defined(__GNUC__)
#define PPT_SHIM_API __attribute__((visibility("default")))
#else
#define PPT_SHIM_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The values of ppt::shim::Code. */
typedef enum ppt_shim_status {
  PPT_SHIM_OK = 0,
  PPT_SHIM_END_WITHOUT_BEGIN = 1,
  PPT_SHIM_NESTED_BEGIN = 2,
  PPT_SHIM_INVALID_TYPE = 3,
  PPT_SHIM_OPEN_JOB_AT_FLUSH = 4,
  PPT_SHIM_INVALID_ARGUMENT = 5,
  PPT_SHIM_CUDA_ERROR = 6,
  PPT_SHIM_BAD_ENVIRONMENT = 7,
  PPT_SHIM_STEP_NOT_RECORDED = 8,
  PPT_SHIM_TOO_MANY_JOBS = 9,
  PPT_SHIM_CAPTURE_ACTIVE = 10,
  PPT_SHIM_CUDA_UNAVAILABLE = 11
} ppt_shim_status;

/* Flags for ppt_shim_create. */
enum {
  PPT_SHIM_HOST_CLOCK = 1u << 0,   /* never use CUDA, time with the host clock */
  PPT_SHIM_POLL = 1u << 1,         /* flush polls the last event instead of waiting on it */
  PPT_SHIM_IGNORE_ENV = 1u << 2,   /* do not read the PPT_SHIM_* variables */
  PPT_SHIM_COMPACT_LINES = 1u << 3 /* leave micro_batch_id out for jobs without one */
};

typedef struct ppt_shim ppt_shim;

/* Makes a profiler for `stream` (a cudaStream_t, or NULL for the default
 * stream) on `device` (-1: the current device). Reads PPT_SHIM_* unless
 * PPT_SHIM_IGNORE_ENV. Returns NULL on failure (a bad environment variable);
 * ppt_shim_create_error() then says why. */
PPT_SHIM_API ppt_shim* ppt_shim_create(void* stream, int device, unsigned flags);
/* The same with the log written to `log_file` (appended; NULL or "": stderr,
 * or PPT_SHIM_LOG_FILE, which overrides it unless PPT_SHIM_IGNORE_ENV).
 * `{rank}` and `{local_rank}` in it are the launcher's ranks. */
PPT_SHIM_API ppt_shim* ppt_shim_create_with_log(void* stream, int device, unsigned flags, const char* log_file);
/* The reason the calling thread's last ppt_shim_create failed, or "". */
PPT_SHIM_API const char* ppt_shim_create_error(void);
PPT_SHIM_API void ppt_shim_destroy(ppt_shim* shim);

PPT_SHIM_API int ppt_shim_begin(ppt_shim* shim, const char* type, int64_t micro_batch);
/* begin on `stream` instead of the handle's (NULL: the legacy default stream). */
PPT_SHIM_API int ppt_shim_begin_on(ppt_shim* shim, void* stream, const char* type, int64_t micro_batch);
PPT_SHIM_API int ppt_shim_end(ppt_shim* shim);
PPT_SHIM_API int ppt_shim_flush(ppt_shim* shim, int64_t step);
/* Writes every flushed step, waiting for the device at most timeout_ms in
 * all; a step not run by then is dropped (an error says so).
 * ppt_shim_destroy does it too (with 10 s), and so does exit() for a handle
 * never destroyed. */
PPT_SHIM_API int ppt_shim_finish(ppt_shim* shim, int64_t timeout_ms);
/* The same, but steps not run within timeout_ms stay queued: for waiting in
 * slices (a caller that must react to a signal between them). */
PPT_SHIM_API int ppt_shim_wait(ppt_shim* shim, int64_t timeout_ms);
PPT_SHIM_API int ppt_shim_set_step(ppt_shim* shim, int64_t step);
PPT_SHIM_API int ppt_shim_set_window(ppt_shim* shim, int64_t start_step, int64_t end_step);

/* Sends lines to `sink` instead of the log (stderr, or PPT_SHIM_LOG_FILE); `line` is not NUL-terminated and
 * lives only for the call. A NULL sink restores the log. */
typedef void (*ppt_shim_line_sink)(const char* line, size_t length, void* user);
PPT_SHIM_API int ppt_shim_set_sink(ppt_shim* shim, ppt_shim_line_sink sink, void* user);

/* Counters: jobs written, jobs dropped (each with an error returned), steps
 * waiting for the device. Any pointer may be NULL. */
/* More counters, by name: "jobs_recorded", "jobs_refused_in_capture",
 * "anchors", "anchors_rejected", "last_step_uncertainty_ns", "flush_waits",
 * "log_lines_dropped", "log_file_failed" (1 when the log file could not be
 * opened)...
 * (the fields of ppt::shim::Stats); -1 for an unknown name or NULL handle. */
PPT_SHIM_API int64_t ppt_shim_stat(const ppt_shim* shim, const char* name);
PPT_SHIM_API int ppt_shim_counts(const ppt_shim* shim, int64_t* jobs_written, int64_t* jobs_dropped,
                                 int64_t* steps_pending);
/* 1 when the current step is recorded, 0 when not or on a NULL handle. */
PPT_SHIM_API int ppt_shim_recording(const ppt_shim* shim);
/* 0 host clock, 1 CUDA events, 2 nothing timed (CUDA required and unusable),
 * -1 for a NULL handle. */
PPT_SHIM_API int ppt_shim_backend(const ppt_shim* shim);
/* Why the backend is what it is. */
PPT_SHIM_API const char* ppt_shim_backend_note(const ppt_shim* shim);
/* The message of the handle's last failed call, or "". */
PPT_SHIM_API const char* ppt_shim_last_error(const ppt_shim* shim);
/* A stable name for a status value, e.g. "nested_begin". */
PPT_SHIM_API const char* ppt_shim_status_name(int status);

#ifdef __cplusplus
}
#endif

#endif /* PP_TIMELINE_SHIM_C_H_ */
