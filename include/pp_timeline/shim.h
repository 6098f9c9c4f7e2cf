// The instrumentation shim: times the jobs of a pipeline-parallel step on a
// CUDA stream and prints them as PaddlePaddle's job schedule profiler does, so
// that pp-timeline reads them like any Paddle launch log.
//
//   ppt::shim::Options options;
//   options.stream = my_stream;                  // a cudaStream_t, or nullptr
//   if (auto s = ppt::shim::options_from_environment(&options); !s.ok()) ...;
//   ppt::shim::Profiler profiler(options);
//   for (int64_t step = 0; ...; ++step) {
//     for (auto& job : plan) {
//       profiler.begin(job.type, job.micro_batch);  // records a CUDA event
//       run(job);                                   // enqueues the job's kernels
//       profiler.end();                             // records a CUDA event
//     }
//     profiler.flush(step);  // waits once, prints one line per job
//   }
//
// What it promises:
// - begin() and end() record one CUDA event each on the profiler's stream and
//   do nothing else with the device: no synchronisation, no host callback, no
//   allocation once the first step has sized the event pool and the job list.
// - flush() waits once for the step's last event (or polls, Options::wait),
//   then maps every event to wall-clock time through an anchor (an event on an
//   idle stream paired with the host clock reading at which the host saw it
//   complete), taken anew at every flush and interpolated with the previous
//   one so that the GPU clock's drift is followed. A job's start is thus when
//   the GPU reached the job, not when the host enqueued it.
// - Without CUDA (not built with it, no device, or Options::use_cuda false)
//   the same API times jobs with the host's steady clock, mapped to wall time
//   at each flush.
// - Lines are written in the one format of pp_timeline/log_line.h, through
//   glog (LOG(INFO)) unless Options::sink says otherwise; all lines of a step
//   are written together at flush(), in the order the jobs began.
// - Only steps in the profiling window [start, end) are recorded; outside it
//   begin() and end() only check their use. When a window is set, the
//   `Schedule Profiler start at step X and end at step Y` marker is written
//   once, before the first step written.
// - Misuse is returned as a Status with a message, never a crash; a failed
//   call changes nothing, except that flush() always ends the step.
//
// Thread safety: a Profiler belongs to one thread and one stream; use one
// Profiler per executor thread. Distinct Profilers are independent.
// Not supported: recording while the stream is being captured into a graph.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <string_view>

namespace ppt::shim {

enum class Code : int {
  kOk = 0,
  kEndWithoutBegin = 1,   // end() with no job open
  kNestedBegin = 2,       // begin() while a job is open
  kInvalidType = 3,       // empty type, or a comma, newline, CR or NUL in it
  kOpenJobAtFlush = 4,    // flush() while a job is open (the job is dropped)
  kInvalidArgument = 5,   // e.g. an empty window, a null handle (C API)
  kCudaError = 6,         // a CUDA call failed; the message names it
  kBadEnvironment = 7,    // a PPT_SHIM_* variable could not be understood
};

// The result of a call. Cheap when ok (no allocation).
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  // A whole sentence a user can act on; empty when ok.
  const std::string& message() const { return message_; }

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

// A stable name for a code, such as "nested_begin".
const char* code_name(Code code);

enum class Backend : int {
  kHostClock = 0,   // std::chrono::steady_clock mapped to wall time
  kCudaEvents = 1,  // CUDA events on the profiler's stream
};

// How flush() waits for the step's last event.
enum class FlushWait : int {
  kSynchronize = 0,  // one cudaEventSynchronize on the last event
  kPoll = 1,         // cudaEventQuery until done, yielding the thread between
};

// Receives one line, without a newline. The default writes it with LOG(INFO).
using LineSink = std::function<void(std::string_view line)>;

// One written job as numbers: exactly what its line says.
struct JobTimes {
  std::string_view type;
  int64_t micro_batch;
  int64_t start_ns;  // wall clock, nanoseconds since the Unix epoch
  int64_t end_ns;
};
using JobCallback = std::function<void(const JobTimes& job)>;

inline constexpr int64_t kNoEndStep = std::numeric_limits<int64_t>::max();

struct Options {
  // The caller's stream, a cudaStream_t; nullptr is the legacy default stream.
  void* stream = nullptr;
  // The stream's device; -1 takes the device current when the Profiler is
  // made. The caller's current device is left as it was.
  int device = -1;
  // false forces the host clock even where CUDA works.
  bool use_cuda = true;
  FlushWait wait = FlushWait::kSynchronize;
  // The profiling window [window_start, window_end). Only steps in it are
  // recorded and written; the marker line is written only when window_set.
  bool window_set = false;
  int64_t window_start = 0;
  int64_t window_end = kNoEndStep;
  // The number of the first step, when set_step() is never called: each
  // flush(step) makes the next step step + 1.
  int64_t first_step = 0;
  // Jobs per step to make room for up front (events are created here rather
  // than in the first step). More are added as needed during warm-up.
  size_t reserve_jobs = 256;
  // Where lines go; empty means glog.
  LineSink sink;
  // Called after each job line is written, for callers that want numbers
  // rather than text. Optional.
  JobCallback on_job;
};

// Reads the PPT_SHIM_* variables into *options (the variables override what
// is there; unset ones change nothing):
//   PPT_SHIM_START_STEP, PPT_SHIM_END_STEP   the window [start, end)
//   PPT_SHIM_CLOCK       auto | cuda | host   (host forces the host clock)
//   PPT_SHIM_FLUSH_WAIT  sync | poll
// Returns kBadEnvironment, naming the variable and its value, on a value it
// cannot use; *options is then unchanged.
Status options_from_environment(Options* options);

// Counters for checks and benchmarks.
struct Stats {
  int64_t jobs_recorded = 0;     // jobs timed since construction
  int64_t jobs_written = 0;      // job lines written
  int64_t steps_written = 0;     // flushes that wrote at least one line
  int64_t hot_path_growths = 0;  // begin() calls that had to grow storage
  int64_t flush_waits = 0;       // blocking waits in flush (cudaEventSynchronize)
  int64_t flush_polls = 0;       // cudaEventQuery calls in flush, anchors included
  int64_t anchors = 0;           // anchors taken
  int64_t last_anchor_uncertainty_ns = 0;  // half-width of the last anchor's bracket
};

class Profiler {
 public:
  explicit Profiler(Options options = {});
  ~Profiler();
  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;

  // Opens a job of `type` (as Paddle names it: forward, backward_b, forward1,
  // optimizer...) for `micro_batch` (below 0: the line has no micro_batch_id).
  Status begin(std::string_view type, int64_t micro_batch);
  // Closes the open job.
  Status end();
  // Ends step `step`: writes its jobs when `step` is in the window, then makes
  // step + 1 the current step. With a job still open, the job is dropped, the
  // others are written, and kOpenJobAtFlush is returned.
  Status flush(int64_t step);

  // Declares the number of the step about to run, for callers whose steps are
  // not numbered consecutively. Not while a job is open.
  Status set_step(int64_t step);
  // Sets the window [start, end); start < end. Not while a job is open.
  Status set_window(int64_t start, int64_t end);
  // Whether the current step is recorded.
  bool recording() const;
  // Replaces the sink (empty: glog). Not while a job is open.
  Status set_sink(LineSink sink);

  Backend backend() const;
  // Why the backend is what it is, e.g. "CUDA events on device 0" or
  // "host clock: no CUDA device (cudaErrorNoDevice)".
  const std::string& backend_note() const;
  Stats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Opens a job for the scope. The Status of begin() is in status().
class ScopedJob {
 public:
  ScopedJob(Profiler& profiler, std::string_view type, int64_t micro_batch)
      : profiler_(profiler), status_(profiler.begin(type, micro_batch)) {}
  ~ScopedJob() {
    if (status_.ok()) (void)profiler_.end();
  }
  ScopedJob(const ScopedJob&) = delete;
  ScopedJob& operator=(const ScopedJob&) = delete;
  const Status& status() const { return status_; }

 private:
  Profiler& profiler_;
  Status status_;
};

}  // namespace ppt::shim
