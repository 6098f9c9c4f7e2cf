// The instrumentation shim: times the jobs of a pipeline-parallel step on a
// CUDA stream and prints them as PaddlePaddle's job schedule profiler does, so
// that pp-timeline (and Paddle's own profiler_helper_static.py) read them like
// any Paddle launch log.
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
//     profiler.flush(step);  // ends step `step`; never waits for the device
//   }
//   profiler.finish();       // writes what is left (the destructor does too)
//
// What it promises:
// - begin() and end() record one CUDA event each on the profiler's stream and
//   do nothing else with the device: no synchronisation, no host callback, no
//   allocation once the first steps have sized the event pool and job lists.
// - flush(step) names the step that just ended: it is the one source of step
//   numbers. It never waits for the device: a step is written at the first
//   flush (or finish()) at which its last event is done, usually the next
//   step's. Its marks are then mapped to wall-clock time through anchors (an
//   event on an idle stream paired with the host clock reading at which the
//   host saw it complete), one per flush, each mark placed on the line
//   through the anchors before and after it so that the GPU clock's drift is
//   followed. A job's start is thus when the GPU reached the job, not when the
//   host enqueued it.
// - Without CUDA (disabled, no runtime, no device, or Options::use_cuda
//   false) the same API times jobs with the host's steady clock, mapped to
//   wall time on the line through the clock pairs of consecutive flushes, and
//   each step is written at its own flush.
// - Lines are written in the one format of pp_timeline/log_line.h, in the
//   order the jobs began, by default to stderr with a glog-style prefix
//   (Options::sink and Options::log_file say otherwise). The log is written
//   by a writer thread from a bounded queue: a stalled pipe or slow disk
//   never blocks flush(); a line that finds the queue full is dropped,
//   counted (Stats::log_lines_dropped) and said. finish(), the destructor
//   and the program's exit wait for the queue (boundedly). A sink is called
//   on the thread that flushes.
// - A step is never lost without an error: a step in the window that was not
//   recorded (its number was not the one expected), jobs over the per-step
//   cap, a job open at flush, or an unflushed step at destruction are all
//   reported (the last as a warning).
// - Misuse is returned as a Status with a message, never a crash.
//
// - Where CUDA was asked for and cannot be used, the host clock is said once
//   on the log stream; with Options::require_cuda nothing is timed instead.
//
// Threads: a Profiler may be shared by the threads of a process (a
// communication or data thread beside the compute one): every call takes
// its lock, each thread has its own open job (begin/end pair on one thread;
// an end() on a thread with no job of its own is kEndWithoutBegin), and the
// lines of a step are in the order its jobs began, whatever their threads.
// flush() closes the step for every thread: a job open on any thread then is
// dropped (kOpenJobAtFlush). One device per Profiler (its jobs on
// Options::stream, or on the stream begin_on() names). flush() refuses
// (kCaptureActive) while the stream is being captured into a CUDA graph, and
// begin() refuses a job inside a capture.
//
// Processes: a Profiler made before fork() does nothing in the child (every
// call is kInvalidArgument, the destructor writes and frees nothing): its
// steps are the parent's to write. At exit() (without the destructor having
// run, as a C program that never calls ppt_shim_destroy) the flushed steps
// are written as the destructor would, waiting 10 s at most for the device.
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
  kStepNotRecorded = 8,   // flush(step) of a step in the window that was not recorded
  kTooManyJobs = 9,       // begin() past Options::max_jobs_per_step
  kCaptureActive = 10,    // flush() or begin() while the stream is captured into a CUDA graph
  kCudaUnavailable = 11,  // CUDA events were required (Options::require_cuda) and cannot be used
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
  kNone = 2,        // nothing is timed: CUDA was required and cannot be used
};

// How flush() waits for the step's last event.
enum class FlushWait : int {
  kSynchronize = 0,  // one cudaEventSynchronize on the last event
  kPoll = 1,         // cudaEventQuery until done, yielding the thread between
};

// Receives one line, without a newline. The default writes it to stderr (or
// Options::log_file) after a glog-style prefix.
using LineSink = std::function<void(std::string_view line)>;

// How a job line looks.
enum class LineFormat : int {
  // As Paddle prints it: `micro_batch_id = N` always, 0 for a job without a
  // micro-batch (Paddle's Job starts with micro-batch 0, its optimizer
  // prints 0), which Paddle's profiler_helper_static.py requires.
  kPaddle = 0,
  // A job without a micro-batch has no micro_batch_id field and is numbered
  // by its position in the step (older builds' form; pp-timeline reads both).
  kCompact = 1,
};

// One written job as numbers: exactly what its line says.
struct JobTimes {
  std::string_view type;
  int64_t micro_batch;
  int64_t start_ns;  // wall clock, nanoseconds since the Unix epoch
  int64_t end_ns;
  // How far off the step's times may be, from the anchors they were mapped
  // through (Stats::last_step_uncertainty_ns); 0 on the host clock.
  int64_t step_uncertainty_ns = 0;
};
using JobCallback = std::function<void(const JobTimes& job)>;

inline constexpr int64_t kNoEndStep = std::numeric_limits<int64_t>::max();

struct Options {
  // The caller's stream, a cudaStream_t; nullptr is the legacy default stream.
  void* stream = nullptr;
  // The stream's device; -1 takes the stream's own (cudaStreamGetDevice,
  // CUDA 12.8+), else the device current when the Profiler is made. The
  // caller's current device is left as it was.
  int device = -1;
  // false forces the host clock even where CUDA works.
  bool use_cuda = true;
  // CUDA events or nothing (PPT_SHIM_CLOCK=cuda): where CUDA cannot be used
  // the profiler times nothing rather than write host-timed lines that would
  // pass for GPU-timed ones; it says why once, and every flush() of a step
  // with jobs returns kCudaUnavailable. Without it (auto) the host clock is
  // used, and that too is said once on the log stream.
  bool require_cuda = false;
  FlushWait wait = FlushWait::kSynchronize;
  // The profiling window [window_start, window_end). Only steps in it are
  // recorded and written; the marker line is written only when window_set.
  bool window_set = false;
  int64_t window_start = 0;
  int64_t window_end = kNoEndStep;
  // Jobs per step to make room for up front (events are created here rather
  // than in the first step). More are added as needed during warm-up.
  size_t reserve_jobs = 256;
  // The most jobs a step may have; begin() past it is kTooManyJobs. It bounds
  // the events and memory a missing flush() can take.
  size_t max_jobs_per_step = 4096;
  LineFormat format = LineFormat::kPaddle;
  // Where lines go; empty means the log (stderr, or log_file).
  LineSink sink;
  // When not empty, the log is this file (appended to) instead of stderr.
  // `{rank}` and `{local_rank}` in it are replaced by the launcher's ranks
  // (expand_log_path()), so that each rank of a job writes its own file.
  std::string log_file;
  // Where warnings go (a step left unflushed at destruction, a type Paddle's
  // helper cannot read); empty means the log, with a W prefix.
  LineSink warning_sink;
  // Called after each job line is written, for callers that want numbers
  // rather than text. Optional.
  JobCallback on_job;
};

// Reads the PPT_SHIM_* variables into *options (the variables override what
// is there; unset ones change nothing):
//   PPT_SHIM_START_STEP, PPT_SHIM_END_STEP   the window [start, end)
//   PPT_SHIM_CLOCK       auto | cuda | host   (host forces the host clock)
//   PPT_SHIM_FLUSH_WAIT  sync | poll
//   PPT_SHIM_FORMAT      paddle | compact
//   PPT_SHIM_LOG_FILE    a path: the log is appended there instead of stderr
// Returns kBadEnvironment, naming the variable and its value, on a value it
// cannot use; *options is then unchanged.
Status options_from_environment(Options* options);

// `pattern` with `{rank}` replaced by the process's global rank and
// `{local_rank}` by its rank on the node, as the launcher set them:
// PaddlePaddle's launch (PADDLE_TRAINER_ID, PADDLE_GLOBAL_RANK;
// PADDLE_RANK_IN_NODE, PADDLE_LOCAL_RANK), torchrun (RANK; LOCAL_RANK), then
// Open MPI and Slurm (OMPI_COMM_WORLD_RANK, SLURM_PROCID;
// OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID), the first set one winning.
// Without any, a placeholder becomes "pid<process id>", so that two
// processes never share a file by accident. `getenv` is for tests.
std::string expand_log_path(std::string_view pattern, const char* (*getenv)(const char*) = nullptr);

// Counters for checks and benchmarks.
struct Stats {
  int64_t jobs_recorded = 0;               // jobs timed since construction
  int64_t jobs_written = 0;                // job lines written
  int64_t steps_written = 0;               // steps that wrote at least one line
  int64_t steps_pending = 0;               // flushed steps whose events are not done yet
  int64_t jobs_dropped = 0;                // recorded jobs not written (an error said why)
  int64_t hot_path_growths = 0;            // begin() calls that had to grow storage
  int64_t flush_waits = 0;                 // waits for the device (only finish(), or a full queue)
  int64_t flush_polls = 0;                 // cudaEventQuery calls, anchors included
  int64_t device_switches = 0;             // marks taken with another device current
  int64_t anchors = 0;                     // anchors taken
  int64_t last_anchor_uncertainty_ns = 0;  // half-width of the last anchor's bracket
  int64_t jobs_refused_in_capture = 0;     // begin()/end() refused during a graph capture
  int64_t anchors_rejected = 0;            // anchors that queued behind other work, not used
  int64_t late_anchors = 0;                // anchors found done at a later flush (wide brackets)
  // Of the last step written: the largest uncertainty of its times from the
  // anchors they were mapped through (their brackets' half-widths, and the
  // drift that could not be followed where a mark had one anchor only).
  int64_t last_step_uncertainty_ns = 0;
  // Log lines dropped because the log's queue was full (the file or pipe
  // did not keep up); each batch is said in a warning.
  int64_t log_lines_dropped = 0;
  // Options::log_file could not be opened: the log is stderr (said once).
  bool log_file_failed = false;
};

// Flushed steps kept while their events are not done; one more makes flush()
// wait for the oldest.
inline constexpr size_t kMaxPendingSteps = 8;

class Profiler {
 public:
  explicit Profiler(Options options = {});
  ~Profiler();
  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;

  // Opens a job of `type` (as Paddle names it: forward, backward_b, forward1,
  // optimizer...) for `micro_batch` (below 0: the line has no micro_batch_id).
  Status begin(std::string_view type, int64_t micro_batch);
  // The same on `stream` (a cudaStream_t of the profiler's device, nullptr
  // the legacy default stream) instead of Options::stream: for work inside
  // `with torch.cuda.stream(s)`. A step may mix streams; it is written once
  // every stream has run its jobs. While `stream` is being captured into a
  // CUDA graph the job is refused (kCaptureActive, one warning per
  // profiler): its events would become graph nodes, which cannot be timed,
  // and nothing else is lost.
  Status begin_on(void* stream, std::string_view type, int64_t micro_batch);
  // Closes the open job.
  Status end();
  // Ends step `step` (the number is what its lines and the marker say):
  // queues its jobs when `step` is in the window, writes every queued step
  // whose events are done, and expects step + 1 next. It never waits for the
  // device (unless kMaxPendingSteps steps are already queued). With a job
  // still open, the job is dropped, the others are written, and
  // kOpenJobAtFlush is returned. kStepNotRecorded when `step` is in the
  // window but was not recorded because another number was expected. While
  // the stream is being captured into a CUDA graph it does nothing and
  // returns kCaptureActive.
  Status flush(int64_t step);
  // Writes every flushed step, waiting for the device at most timeout_ms in
  // all (a step not done by then is dropped with an error), then waits for
  // the log's queue within what is left of it. The destructor calls it, and
  // warns about an unflushed step.
  Status finish(int64_t timeout_ms = 10'000);
  // The same, but a step the device has not run within timeout_ms stays
  // queued (with the steps after it) instead of being dropped: for callers
  // that wait in slices, such as the Python package, whose finish() must
  // see Ctrl-C between them.
  Status wait(int64_t timeout_ms);

  // Declares the number of the step about to run, so that a step whose number
  // is not the previous one + 1 is recorded (or not) by its window. Before the
  // first flush() or set_step() every step is recorded. Not while a job is
  // open.
  Status set_step(int64_t step);
  // Sets the window [start, end); start < end. Not while a job is open.
  Status set_window(int64_t start, int64_t end);
  // Whether the current step is recorded.
  bool recording() const;
  // Replaces the sink (empty: the log). Not while a job is open.
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
