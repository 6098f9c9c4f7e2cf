// The Profiler's rules: which steps are recorded, how begin/end nest, which
// types are accepted, which steps are written and when, and what a step's
// lines look like. Timing itself is the Timer's (timer.h).
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#if defined(PPT_SHIM_NVTX)
// NVTX v3 is header-only: with no tool attached its calls are no-ops behind
// a function pointer, and a tool (Nsight Systems) is found at run time
// through NVTX_INJECTION64_PATH. No library is linked for it.
#include <nvtx3/nvToolsExt.h>
#endif

#include "clock_map.h"
#include "log_sink.h"
#include "pp_timeline/log_line.h"
#include "pp_timeline/shim.h"
#include "timer.h"

namespace ppt::shim {

const char* code_name(Code code) {
  switch (code) {
    case Code::kOk: return "ok";
    case Code::kEndWithoutBegin: return "end_without_begin";
    case Code::kNestedBegin: return "nested_begin";
    case Code::kInvalidType: return "invalid_type";
    case Code::kOpenJobAtFlush: return "open_job_at_flush";
    case Code::kInvalidArgument: return "invalid_argument";
    case Code::kCudaError: return "cuda_error";
    case Code::kBadEnvironment: return "bad_environment";
    case Code::kStepNotRecorded: return "step_not_recorded";
    case Code::kTooManyJobs: return "too_many_jobs";
    case Code::kCaptureActive: return "capture_active";
    case Code::kCudaUnavailable: return "cuda_unavailable";
  }
  return "unknown";
}

namespace {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// The type as a user would type it in a message, with the characters that
// made it invalid made visible.
std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\0': out += "\\0"; break;
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      default: out.push_back(c);
    }
  }
  out += '"';
  return out;
}

std::string describe_job(std::string_view type, int64_t micro_batch) {
  std::string s = "job " + quoted(type);
  if (micro_batch >= 0) s += " (micro-batch " + std::to_string(micro_batch) + ")";
  return s;
}

// Paddle's profiler_helper_static.py matches a type with \w+.
bool is_word(std::string_view s) {
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return !s.empty();
}

// Each job is also an NVTX range, named by its type with the micro-batch as
// its payload, so that Nsight Systems shows the same jobs the log does. A
// start/end range (not push/pop, whose stack is the calling thread's): a job
// may be dropped by a flush() on another thread than the one that began it.
uint64_t nvtx_start(const std::string& type, int64_t micro_batch) {
#if defined(PPT_SHIM_NVTX)
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = type.c_str();
  a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
  a.payload.llValue = micro_batch;
  return nvtxRangeStartEx(&a);
#else
  (void)type;
  (void)micro_batch;
  return 0;
#endif
}

void nvtx_end(uint64_t range) {
#if defined(PPT_SHIM_NVTX)
  nvtxRangeEnd(range);
#else
  (void)range;
#endif
}

// Forks seen by this process's children: a Profiler made before a fork()
// belongs to the parent, and does nothing in the child (its steps are the
// parent's to write, and CUDA cannot be used there).
std::atomic<uint64_t> g_fork_generation{0};

// A profiler used by a child after fork(): the message of the calls it refuses.
Status forked_status() {
  return {Code::kInvalidArgument,
          "this profiler was made in the parent process before fork(); it does nothing in the child: "
          "make a new one there"};
}

// A step's times off by more than this are said in the log.
constexpr int64_t kUncertainNoteNs = 100'000;

// A device that does not reach a step's events in this long is stuck.
constexpr int64_t kQueueWaitNs = 10'000'000'000;

}  // namespace

struct Profiler::Impl {
  struct Job {
    uint32_t type;
    int64_t micro_batch;
    uint32_t begin_slot;
    uint32_t end_slot;
    void* stream;
  };
  struct Step {
    int64_t number = 0;
    std::vector<Job> jobs;  // in begin order
    // Some job ran on another stream than the first, or ended after a job
    // begun later (threads): the last job's end alone does not say the step
    // is done.
    bool multi_stream = false;
  };
  // A job open on one thread. Each thread has its own (jobs of one thread do
  // not nest); they are few, so a short list searched by thread is enough.
  struct Open {
    std::thread::id thread;
    bool recorded = false;  // its begin was marked: it is current.jobs[job]
    uint32_t type = 0;
    int64_t micro_batch = -1;
    size_t job = 0;
    uint64_t range = 0;  // NVTX
  };

  // Every call takes it: a Profiler may be shared by the threads of an
  // executor (a communication or data thread beside the compute one).
  mutable std::mutex mu;
  uint64_t fork_generation = 0;  // g_fork_generation when made
  bool forked() const { return fork_generation != g_fork_generation.load(std::memory_order_relaxed); }

  Options options;
  std::unique_ptr<detail::Timer> timer;
  bool cuda = false;  // the timer is the CUDA one
  std::unique_ptr<detail::LogFile> log;
  std::string note;

  // Types are interned so that begin() stores an index, never a string.
  std::vector<std::string> type_names;
  std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>> type_index;

  Step current;                      // the step being recorded
  std::vector<Step> pending;         // flushed, in the window, events not all done; oldest first
  std::vector<Step> spare;           // emptied steps, kept for their capacity
  std::vector<uint32_t> free_slots;  // the timer's slots not in use
  std::vector<uint32_t> slots;       // resolve()'s scratch
  std::vector<int64_t> wall_ns;      // resolve()'s scratch

  std::vector<Open> opens;  // the jobs open, one per thread at most
  int64_t begins = 0;       // jobs opened in the current step, recorded or not
  int64_t refused = 0;      // jobs of the current step refused over the cap

  bool step_known = false;    // a flush() or set_step() said which step comes
  int64_t expected_step = 0;  // ... and it is this one
  bool recording = true;
  bool marker_written = false;
  // CUDA was required and cannot be used: nothing is timed (why says why).
  bool disabled = false;
  std::string disabled_why;
  bool capture_warned = false;
  bool log_file_failed = false;
  int64_t uncertainty_said = 0;
  Stats stats;

  Open* open_of(std::thread::id thread) {
    for (Open& o : opens)
      if (o.thread == thread) return &o;
    return nullptr;
  }
  void close_open(const Open* o) { opens.erase(opens.begin() + (o - opens.data())); }

  // Removes current.jobs[index] (a job that will not be written), keeping
  // the other open jobs' indices right.
  void remove_job(size_t index) {
    const Job& j = current.jobs[index];
    free_slots.push_back(j.end_slot);
    free_slots.push_back(j.begin_slot);
    current.jobs.erase(current.jobs.begin() + static_cast<std::ptrdiff_t>(index));
    for (Open& o : opens)
      if (o.recorded && o.job > index) --o.job;
  }

  bool in_window(int64_t step) const { return step >= options.window_start && step < options.window_end; }
  // Until a flush or set_step says which step this is, every step is
  // recorded (and dropped at flush when its number is outside the window).
  void update_recording() { recording = !step_known || in_window(expected_step); }

  void warn(std::string_view text) {
    if (options.warning_sink) {
      options.warning_sink(text);
    } else {
      log->write('W', __LINE__, text);
    }
  }

  // The index of `type`, interning it (and checking it) on first use.
  Status intern(std::string_view type, uint32_t* index) {
    if (auto it = type_index.find(type); it != type_index.end()) {
      *index = it->second;
      return {};
    }
    if (!log_line::is_valid_job_type(type)) {
      std::string m = "job type " + quoted(type);
      m += type.empty() ? " is empty"
                        : " contains a comma, newline, carriage return or NUL, which would break "
                          "the log line apart";
      return {Code::kInvalidType, std::move(m)};
    }
    if (options.format == LineFormat::kPaddle && !is_word(type)) {
      warn("job type " + quoted(type) +
           " is not a word (letters, digits and _): Paddle's profiler_helper_static.py skips its "
           "lines; pp-timeline reads them");
    }
    const auto i = static_cast<uint32_t>(type_names.size());
    type_names.emplace_back(type);
    type_index.emplace(type_names.back(), i);
    *index = i;
    return {};
  }

  // At least n free slots, growing the timer's pool by half or more.
  Status make_free_slots(size_t n) {
    if (free_slots.size() >= n) return {};
    const size_t had = timer->capacity();
    const size_t want = std::max(had + n - free_slots.size(), had + had / 2);
    if (Status s = timer->reserve(want); !s.ok()) return s;
    const size_t now = timer->capacity();
    free_slots.reserve(now);
    slots.reserve(now);
    for (size_t i = now; i-- > had;) free_slots.push_back(static_cast<uint32_t>(i));
    return {};
  }

  // Two free slots and room for one more job; allocates only while warming up.
  Status make_room() {
    if (free_slots.size() >= 2 && current.jobs.size() < current.jobs.capacity()) return {};
    ++stats.hot_path_growths;
    if (free_slots.size() < 2) {
      if (Status s = make_free_slots(2); !s.ok()) return s;
    }
    if (current.jobs.size() == current.jobs.capacity()) {
      current.jobs.reserve(std::max<size_t>(16, 2 * current.jobs.capacity()));
    }
    return {};
  }

  void release(Step& step) {
    for (const Job& j : step.jobs) {
      free_slots.push_back(j.begin_slot);
      free_slots.push_back(j.end_slot);
    }
    step.jobs.clear();
    step.multi_stream = false;
  }

  // Whether every stream of `step` has run its jobs: the last event, and on
  // a step that mixed streams every job's end (a stream's last job is among
  // them; the others are done by then and cost one query each).
  Status step_done(const Step& step, bool* done) {
    if (Status s = timer->reached(step.jobs.back().end_slot, done); !s.ok() || !*done) return s;
    if (!step.multi_stream) return {};
    for (const Job& j : step.jobs) {
      if (Status s = timer->reached(j.end_slot, done); !s.ok() || !*done) return s;
    }
    return {};
  }

  // Waits for every stream of `step`, until `deadline_ns` (steady) at most.
  Status wait_step(const Step& step, int64_t deadline_ns) {
    auto wait_for = [&](uint32_t slot) -> Status {
      const int64_t left = deadline_ns - detail::steady_now_ns();
      if (left <= 0) {
        bool done = false;
        if (Status s = timer->reached(slot, &done); !s.ok() || done) return s;
        return {Code::kCudaError, "the device did not reach the step's last event before the wait's deadline"};
      }
      return timer->wait(slot, left);
    };
    if (!step.multi_stream) return wait_for(step.jobs.back().end_slot);
    for (const Job& j : step.jobs) {
      if (Status s = wait_for(j.end_slot); !s.ok()) return s;
    }
    return {};
  }

  // Makes `current` an empty step, reusing a spare one's storage.
  void next_step() {
    current.jobs.clear();
    current.multi_stream = false;
    begins = 0;
    refused = 0;
  }

  void write(int line, std::string_view text) {
    if (options.sink) {
      options.sink(text);
    } else {
      log->write('I', line, text);
    }
  }

  // Writes a resolved step's lines.
  void write_step(const Step& step) {
    if (options.window_set && !marker_written) {
      write(__LINE__, log_line::format_schedule_marker(step.number, options.window_end));
      marker_written = true;
    }
    const bool paddle = options.format == LineFormat::kPaddle;
    for (size_t i = 0; i < step.jobs.size(); ++i) {
      const Job& j = step.jobs[i];
      // Current Paddle prints the micro-batch id as the job id; Paddle's jobs
      // always have one (0 unless set).
      int64_t mb = j.micro_batch;
      int64_t id = mb >= 0 ? mb : static_cast<int64_t>(i);
      if (paddle && mb < 0) {
        mb = 0;
        id = 0;
      }
      const int64_t start = wall_ns[2 * i];
      const int64_t end = wall_ns[2 * i + 1];
      write(__LINE__, log_line::format_job_line(id, type_names[j.type], mb, start, end));
      if (options.on_job) {
        options.on_job(JobTimes{type_names[j.type], mb, start, end, stats.last_step_uncertainty_ns});
      }
    }
    stats.jobs_written += static_cast<int64_t>(step.jobs.size());
    ++stats.steps_written;
  }

  // Drops a queued step with a reason; returns the error to report.
  Status drop(Step& step, const Status& why) {
    stats.jobs_dropped += static_cast<int64_t>(step.jobs.size());
    Status s(why.code(), "step " + std::to_string(step.number) + ": its " + std::to_string(step.jobs.size()) +
                             " jobs were dropped: " + why.message());
    release(step);
    return s;
  }

  // Writes the queued steps whose last events are done (all of them when
  // `wait` is set), oldest first, and keeps the others for a later flush.
  // Every wait for the device ends by `deadline_ns` (steady), whatever the
  // number of steps: a step not done by then is dropped with an error, or,
  // with keep_late, left queued (with the steps after it) for a later call.
  // Returns the first error.
  Status drain(bool wait, int64_t deadline_ns, bool keep_late = false) {
    Status result;
    auto keep = [&](const Status& s) {
      if (result.ok() && !s.ok()) result = s;
    };
    size_t ready = 0;
    while (ready < pending.size()) {
      Step& step = pending[ready];
      bool done = false;
      Status s = step_done(step, &done);
      // Too many steps queued (the host is far ahead of the device), or
      // asked to: wait for the oldest.
      const bool over = pending.size() - ready > kMaxPendingSteps;
      if (s.ok() && !done && wait && keep_late && !over) {
        // Polls until the deadline, and leaves the step queued after it.
        while (s.ok() && !done && detail::steady_now_ns() < deadline_ns) {
          detail::pause_ns(50'000);
          s = step_done(step, &done);
        }
      } else if (s.ok() && !done && (wait || over)) {
        s = wait_step(step, deadline_ns);
        done = s.ok();
      }
      if (!s.ok()) {
        keep(drop(step, s));
        spare.push_back(std::move(step));
        pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(ready));
        continue;
      }
      if (!done) break;
      ++ready;
    }
    // An anchor (or a clock pair) after the ready steps' marks, and a
    // bracket from before for the steps to come.
    if (ready > 0 || !pending.empty() || recording) {
      if (Status s = timer->checkpoint(); !s.ok()) {
        for (size_t i = 0; i < ready; ++i) {
          keep(drop(pending[i], s));
          spare.push_back(std::move(pending[i]));
        }
        pending.erase(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(ready));
        stats.steps_pending = static_cast<int64_t>(pending.size());
        return result;
      }
    }
    // No anchor yet (the device has been busy since the profiler was made,
    // and the late anchor has not come back): the steps wait for it, never
    // dropped for want of one; finish() waits for it until its deadline.
    if (ready > 0 && !timer->can_resolve()) {
      while (wait && !timer->can_resolve() && detail::steady_now_ns() < deadline_ns) {
        detail::pause_ns(50'000);
        if (Status s = timer->checkpoint(); !s.ok()) break;
      }
      if (!timer->can_resolve()) {
        if (wait) {
          for (size_t i = 0; i < ready; ++i) {
            keep(drop(pending[i],
                      Status(Code::kCudaError, "no clock anchor came back from the device before the deadline")));
            spare.push_back(std::move(pending[i]));
          }
          pending.erase(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(ready));
        }
        stats.steps_pending = static_cast<int64_t>(pending.size());
        return result;
      }
    }
    for (size_t i = 0; i < ready; ++i) {
      Step& step = pending[i];
      slots.clear();
      for (const Job& j : step.jobs) {
        slots.push_back(j.begin_slot);
        slots.push_back(j.end_slot);
      }
      if (wall_ns.size() < slots.size()) wall_ns.resize(slots.size());
      Status s = timer->resolve(slots.data(), slots.size(), wall_ns.data());
      if (s.ok()) {
        stats.last_step_uncertainty_ns = timer->last_resolve_uncertainty_ns();
        say_uncertainty(step.number);
        write_step(step);
        release(step);
      } else {
        keep(drop(step, Status(s.code(), "could not time them: " + s.message())));
      }
      spare.push_back(std::move(step));
    }
    pending.erase(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(ready));
    stats.steps_pending = static_cast<int64_t>(pending.size());
    return result;
  }

  // Writes every flushed step, waiting for the device until timeout_ms from
  // now at most, for all of them together; then waits (within what is left
  // of it) for the log to be written.
  Status finish_locked(int64_t timeout_ms, bool keep_late = false) {
    const int64_t start = detail::steady_now_ns();
    const int64_t timeout_ns = std::max<int64_t>(0, timeout_ms) * 1'000'000;
    Status result;
    if (!pending.empty()) {
      if (Status s = timer->check_capture(options.stream); !s.ok()) {
        return {s.code(), "finish() refused: " + s.message() + "; call it after cudaStreamEndCapture"};
      }
      result = drain(true, start + timeout_ns, keep_late);
    }
    log->say_drops();
    const int64_t left = start + timeout_ns - detail::steady_now_ns();
    (void)log->drain(std::max<int64_t>(left, 0));
    return result;
  }

  // A step whose times may be off by more than kUncertainNoteNs is said in
  // the log, before its lines (again each time the bound doubles), so that
  // it is seen where the lines are read, not only in the stats.
  void say_uncertainty(int64_t step) {
    const int64_t u = stats.last_step_uncertainty_ns;
    if (u < kUncertainNoteNs || u < 2 * uncertainty_said) return;
    uncertainty_said = u;
    warn("pp-timeline shim: step " + std::to_string(step) + ": its times may be off by up to " +
         std::to_string(u / 1000) +
         " us: the GPU clock could not be anchored closely to the host's (every anchor queued behind "
         "other work, as on one hardware queue with CUDA_DEVICE_MAX_CONNECTIONS=1); said again when "
         "the bound doubles");
  }

  // What the destructor and the exit handler do: say what was never
  // flushed, and write what was.
  void wind_down(const char* when) {
    if (!opens.empty() || !current.jobs.empty() || refused > 0) {
      size_t n = current.jobs.size() + static_cast<size_t>(refused);
      for (const Open& o : opens) {
        if (!o.recorded) ++n;
        nvtx_end(o.range);
      }
      opens.clear();
      warn(std::string("the profiler was ") + when + " with " + std::to_string(n) +
           " job(s) of a step that was never flushed; they are not written: call flush(step) "
           "at the end of every step, also when the loop ends early");
      release(current);
      refused = 0;
    }
    if (Status s = finish_locked(10'000); !s.ok()) warn(std::string("at exit: ") + s.message());
  }

  static void at_exit(void* self) {
    Impl& m = *static_cast<Impl*>(self);
    if (m.forked()) return;
    std::lock_guard<std::mutex> lock(m.mu);
    m.wind_down("still alive when the program exited");
  }

  // The parts of flush(step); `name` is "flush(<step>)", for the messages.
  // Each returns what went wrong, or an ok status.

  // Open jobs, on this thread or others, are dropped: a job belongs to one
  // step. Removed last first, so that the indices of the others hold.
  Status drop_open_jobs(const std::string& name) {
    if (opens.empty()) return Status();
    const Open& first = opens.front();
    Status s(Code::kOpenJobAtFlush,
             name + " with " + describe_job(type_names[first.type], first.micro_batch) + " still open" +
                 (opens.size() > 1 ? " (and " + std::to_string(opens.size() - 1) + " more, on other threads)"
                                   : std::string()) +
                 "; dropped, call end() before flush()");
    std::sort(opens.begin(), opens.end(),
              [](const Open& a, const Open& b) { return a.recorded && (!b.recorded || a.job > b.job); });
    while (!opens.empty()) {
      const Open o = opens.front();
      opens.erase(opens.begin());
      nvtx_end(o.range);
      if (o.recorded) {
        remove_job(o.job);
        ++stats.jobs_dropped;
      }
    }
    return s;
  }

  Status drop_refused_jobs(const std::string& name) {
    if (refused <= 0) return Status();
    stats.jobs_dropped += refused;
    return Status(Code::kTooManyJobs, name + ": " + std::to_string(refused) + " job(s) past the cap of " +
                                          std::to_string(options.max_jobs_per_step) +
                                          " per step were refused and are not written; the first ones are");
  }

  Status drop_untimed_jobs(const std::string& name) {
    stats.jobs_dropped += begins;
    return Status(Code::kCudaUnavailable, name + ": its " + std::to_string(begins) +
                                              " jobs were not timed: CUDA events are required (PPT_SHIM_CLOCK=cuda) "
                                              "and CUDA cannot be used: " +
                                              disabled_why);
  }

  Status drop_unrecorded_jobs(int64_t step, const std::string& name) {
    if (recording || begins <= 0) return Status();
    stats.jobs_dropped += begins;
    return Status(Code::kStepNotRecorded,
                  name + ": step " + std::to_string(step) + " is in the window [" +
                      std::to_string(options.window_start) + ", " +
                      (options.window_end == kNoEndStep ? std::string("end") : std::to_string(options.window_end)) +
                      ") but its " + std::to_string(begins) + " jobs were not recorded: step " +
                      std::to_string(expected_step) + " was expected next; call set_step(" + std::to_string(step) +
                      ") before a step whose number is not the previous one + 1");
  }

  // The step's jobs wait for the device; the next step starts empty.
  Status queue_step(int64_t step) {
    if (current.jobs.empty()) return Status();
    current.number = step;
    const size_t size = current.jobs.size();
    pending.push_back(std::move(current));
    if (!spare.empty()) {
      current = std::move(spare.back());
      spare.pop_back();
    } else {
      current = Step{};
    }
    // Room here, not in begin(), for a next step as large as this one:
    // its jobs, and its events while this one waits for the device.
    current.jobs.reserve(std::max(options.reserve_jobs, size));
    return make_free_slots(2 * size);
  }
};

namespace {

// The profilers alive in this process, so that a program that calls exit()
// without destroying its profiler (the C API's ppt_shim_destroy) still has
// its flushed steps written: an atexit handler, registered once after the
// first profiler made its CUDA timer (so that it runs before the CUDA
// runtime's own teardown), writes them.
struct Registry {
  std::mutex mu;
  std::vector<std::pair<void*, void (*)(void*)>> live;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: used at exit
  return *r;
}

void run_exit_handlers() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (auto& [impl, fn] : r.live) fn(impl);
}

void install_process_hooks() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::atexit(run_exit_handlers);
    // A fork() while another thread holds the registry would leave the
    // child's copy locked: it is held across the fork instead.
    pthread_atfork([] { registry().mu.lock(); }, [] { registry().mu.unlock(); },
                   [] {
                     g_fork_generation.fetch_add(1, std::memory_order_relaxed);
                     registry().mu.unlock();
                   });
  });
}

}  // namespace

Profiler::Profiler(Options options) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.options = std::move(options);
  std::string log_error;
  m.options.log_file = expand_log_path(m.options.log_file);
  m.log = std::make_unique<detail::LogFile>(m.options.log_file, &log_error);
  m.fork_generation = g_fork_generation.load(std::memory_order_relaxed);
  if (!log_error.empty()) {
    m.note = log_error + "; ";
    m.log_file_failed = true;
    m.warn("pp-timeline shim: " + log_error);
  }
  if (m.options.window_start >= m.options.window_end) {
    // An empty window would silently record nothing; record everything instead
    // and say so in the note.
    m.options.window_start = 0;
    m.options.window_end = kNoEndStep;
    m.options.window_set = false;
    m.note += "empty window ignored; ";
  }
  if (m.options.max_jobs_per_step == 0) m.options.max_jobs_per_step = 1;
  m.options.reserve_jobs = std::min(m.options.reserve_jobs, m.options.max_jobs_per_step);
  std::string why_not;
  std::string cuda_note;
  if (m.options.use_cuda) {
    m.timer = detail::make_cuda_timer(m.options, &why_not, &cuda_note);
  } else {
    why_not = "CUDA not asked for";
  }
  if (m.timer) {
    m.note += cuda_note;
    m.cuda = true;
  } else {
    m.timer = detail::make_host_timer();
    (void)m.timer->reserve(2 * m.options.reserve_jobs);
    if (m.options.use_cuda && m.options.require_cuda) {
      m.disabled = true;
      m.disabled_why = why_not;
      m.note +=
          "nothing is timed: CUDA events are required (PPT_SHIM_CLOCK=cuda) and CUDA cannot "
          "be used: " +
          why_not;
    } else {
      m.note += "host clock: " + why_not;
    }
    // Said once, on the log stream, so that host-timed lines are never taken
    // for GPU-timed ones; the text avoids the words Paddle's helper matches.
    if (m.options.use_cuda) {
      m.warn(m.disabled ? "pp-timeline shim: " + m.note +
                              "; set PPT_SHIM_CLOCK=auto to time with "
                              "the host clock instead"
                        : "pp-timeline shim: jobs are timed with the host clock, not CUDA "
                          "events: " +
                              why_not);
    }
  }
  const size_t capacity = m.timer->capacity();
  m.free_slots.reserve(capacity);
  m.slots.reserve(capacity);
  for (size_t i = capacity; i-- > 0;) m.free_slots.push_back(static_cast<uint32_t>(i));
  m.wall_ns.resize(capacity);
  m.current.jobs.reserve(m.options.reserve_jobs);
  m.pending.reserve(kMaxPendingSteps + 2);
  m.spare.reserve(kMaxPendingSteps + 2);
  m.update_recording();
  m.opens.reserve(16);
  install_process_hooks();
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.live.emplace_back(impl_.get(), &Impl::at_exit);
}

Profiler::~Profiler() {
  Impl& m = *impl_;
  if (m.forked()) {
    // A copy in a child of fork(): the steps are the parent's, the writer
    // thread and the CUDA context are not here, and a lock may have been
    // copied held. Nothing is written, waited for or freed.
    m.log->abandon();
    (void)impl_.release();
    return;
  }
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    for (size_t i = 0; i < r.live.size(); ++i) {
      if (r.live[i].first == impl_.get()) {
        r.live.erase(r.live.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
    }
  }
  try {
    std::lock_guard<std::mutex> lock(m.mu);
    m.wind_down("destroyed");
  } catch (...) {
    // A destructor must not throw; the warning could not be written.
  }
}

Status Profiler::begin(std::string_view type, int64_t micro_batch) {
  return begin_on(impl_->options.stream, type, micro_batch);
}

Status Profiler::begin_on(void* stream, std::string_view type, int64_t micro_batch) {
  Impl& m = *impl_;
  if (m.forked()) return forked_status();
  const std::thread::id self = std::this_thread::get_id();
  std::lock_guard<std::mutex> lock(m.mu);
  if (const Impl::Open* o = m.open_of(self)) {
    return {Code::kNestedBegin, "begin() of " + describe_job(type, micro_batch) + " while " +
                                    describe_job(m.type_names[o->type], o->micro_batch) +
                                    " is open on this thread; jobs do not nest, call end() first"};
  }
  uint32_t index = 0;
  if (Status s = m.intern(type, &index); !s.ok()) return s;
  Impl::Open open;
  open.thread = self;
  open.type = index;
  open.micro_batch = micro_batch;
  if (m.recording && !m.disabled) {
    if (m.cuda) {
      // A graph capture on the stream: an event recorded now would be a
      // graph node, which has no time, and would spoil the whole step.
      if (Status s = m.timer->check_capture(stream); !s.ok()) {
        ++m.stats.jobs_refused_in_capture;
        Status refused(Code::kCaptureActive, "begin() of " + describe_job(type, micro_batch) +
                                                 " refused: " + s.message() +
                                                 "; a job inside a capture is not timed (the rest of the step is)");
        if (!m.capture_warned) {
          m.capture_warned = true;
          m.warn(refused.message() + "; this warning is given once");
        }
        return refused;
      }
    }
    if (m.current.jobs.size() >= m.options.max_jobs_per_step) {
      ++m.refused;
      return {Code::kTooManyJobs, "begin() of " + describe_job(type, micro_batch) + ": the step already has " +
                                      std::to_string(m.options.max_jobs_per_step) +
                                      " jobs, the most a step may have (Options::max_jobs_per_step); call flush(step) "
                                      "at the end of every step"};
    }
    if (Status s = m.make_room(); !s.ok()) return s;
    const uint32_t b = m.free_slots.back();
    m.free_slots.pop_back();
    const uint32_t e = m.free_slots.back();
    m.free_slots.pop_back();
    if (Status s = m.timer->mark(b, stream); !s.ok()) {
      m.free_slots.push_back(e);
      m.free_slots.push_back(b);
      return s;
    }
    if (!m.current.jobs.empty() && m.current.jobs.front().stream != stream) {
      m.current.multi_stream = true;
    }
    open.recorded = true;
    open.job = m.current.jobs.size();
    m.current.jobs.push_back(Impl::Job{index, micro_batch, b, e, stream});
  }
  ++m.begins;
  open.range = nvtx_start(m.type_names[index], micro_batch);
  m.opens.push_back(open);
  return {};
}

Status Profiler::end() {
  Impl& m = *impl_;
  if (m.forked()) return forked_status();
  const std::thread::id self = std::this_thread::get_id();
  std::lock_guard<std::mutex> lock(m.mu);
  Impl::Open* o = m.open_of(self);
  if (o == nullptr) {
    return {Code::kEndWithoutBegin, m.opens.empty()
                                        ? "end() with no job open; every end() must follow a begin()"
                                        : "end() with no job open on this thread (" + std::to_string(m.opens.size()) +
                                              " open on other threads); a job is ended by the thread that began it"};
  }
  const Impl::Open open = *o;
  m.close_open(o);
  nvtx_end(open.range);
  if (!open.recorded) return {};
  const Impl::Job& j = m.current.jobs[open.job];
  if (m.cuda) {
    if (Status s = m.timer->check_capture(j.stream); !s.ok()) {
      // Begun before a capture, ended inside it: its end would be a graph
      // node. The job is dropped; nothing else is.
      ++m.stats.jobs_refused_in_capture;
      ++m.stats.jobs_dropped;
      Status refused(Code::kCaptureActive, "end() of " + describe_job(m.type_names[j.type], j.micro_batch) +
                                               " refused: " + s.message() +
                                               "; the job began before the capture and is not written");
      m.remove_job(open.job);
      if (!m.capture_warned) {
        m.capture_warned = true;
        m.warn(refused.message() + "; this warning is given once");
      }
      return refused;
    }
  }
  if (Status s = m.timer->mark(j.end_slot, j.stream); !s.ok()) {
    // A job without an end cannot be written.
    m.remove_job(open.job);
    return s;
  }
  // Ended after a job begun later (another thread's): the step's last job
  // is not the last to end, so every end is checked before it is written.
  if (open.job + 1 != m.current.jobs.size()) m.current.multi_stream = true;
  ++m.stats.jobs_recorded;
  return {};
}

Status Profiler::flush(int64_t step) {
  Impl& m = *impl_;
  if (m.forked()) return forked_status();
  std::lock_guard<std::mutex> lock(m.mu);
  const std::string name = "flush(" + std::to_string(step) + ")";
  if (Status s = m.timer->check_capture(m.options.stream); !s.ok()) {
    return {s.code(), name + " refused: " + s.message() +
                          "; nothing was done (querying events now would invalidate the "
                          "capture): call flush() after cudaStreamEndCapture"};
  }
  Status result;
  auto keep = [&](Status s) {
    if (result.ok() && !s.ok()) result = std::move(s);
  };
  keep(m.drop_open_jobs(name));
  keep(m.drop_refused_jobs(name));
  if (m.disabled && m.begins > 0 && m.in_window(step)) {
    keep(m.drop_untimed_jobs(name));
  } else if (m.in_window(step)) {
    keep(m.drop_unrecorded_jobs(step, name));
    keep(m.queue_step(step));
  } else {
    m.release(m.current);  // outside the window: recorded only in case it was in it
  }
  m.next_step();
  m.step_known = true;
  m.expected_step = step + 1;
  m.update_recording();
  keep(m.drain(false, detail::steady_now_ns() + kQueueWaitNs));
  return result;
}

Status Profiler::finish(int64_t timeout_ms) {
  Impl& m = *impl_;
  if (m.forked()) return forked_status();
  std::lock_guard<std::mutex> lock(m.mu);
  return m.finish_locked(timeout_ms);
}

Status Profiler::wait(int64_t timeout_ms) {
  Impl& m = *impl_;
  if (m.forked()) return forked_status();
  std::lock_guard<std::mutex> lock(m.mu);
  return m.finish_locked(timeout_ms, true);
}

Status Profiler::set_step(int64_t step) {
  Impl& m = *impl_;
  if (m.forked()) return forked_status();
  std::lock_guard<std::mutex> lock(m.mu);
  if (!m.opens.empty()) return {Code::kInvalidArgument, "set_step() while a job is open; call end() first"};
  m.step_known = true;
  m.expected_step = step;
  m.update_recording();
  return {};
}

Status Profiler::set_window(int64_t start, int64_t end) {
  Impl& m = *impl_;
  if (m.forked()) return forked_status();
  std::lock_guard<std::mutex> lock(m.mu);
  if (start >= end) {
    return {Code::kInvalidArgument, "set_window(" + std::to_string(start) + ", " + std::to_string(end) +
                                        ") is empty: the start must be below the end"};
  }
  if (!m.opens.empty()) return {Code::kInvalidArgument, "set_window() while a job is open; call end() first"};
  m.options.window_set = true;
  m.options.window_start = start;
  m.options.window_end = end;
  m.marker_written = false;
  m.update_recording();
  return {};
}

Status Profiler::set_sink(LineSink sink) {
  Impl& m = *impl_;
  if (m.forked()) return forked_status();
  std::lock_guard<std::mutex> lock(m.mu);
  if (!m.opens.empty()) return {Code::kInvalidArgument, "set_sink() while a job is open; call end() first"};
  m.options.sink = std::move(sink);
  return {};
}

bool Profiler::recording() const {
  if (impl_->forked()) return false;
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->recording;
}
Backend Profiler::backend() const { return impl_->disabled ? Backend::kNone : impl_->timer->backend(); }
const std::string& Profiler::backend_note() const { return impl_->note; }

Stats Profiler::stats() const {
  if (impl_->forked()) return {};  // the parent's; its lock may have been copied held
  std::lock_guard<std::mutex> lock(impl_->mu);
  Stats s = impl_->stats;
  impl_->timer->add_stats(&s);
  s.log_lines_dropped = impl_->log->dropped();
  s.log_file_failed = impl_->log_file_failed;
  return s;
}

}  // namespace ppt::shim
