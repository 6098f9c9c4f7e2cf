// The Profiler's rules: which steps are recorded, how begin/end nest, which
// types are accepted, and what a step's lines look like. Timing itself is the
// Timer's (timer.h).
#include <glog/logging.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

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

}  // namespace

struct Profiler::Impl {
  struct Job {
    uint32_t type;
    int64_t micro_batch;
  };

  Options options;
  std::unique_ptr<detail::Timer> timer;
  std::string note;

  // Types are interned so that begin() stores an index, never a string.
  std::vector<std::string> type_names;
  std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>> type_index;

  std::vector<Job> jobs;   // the current step's recorded jobs, in begin order
  std::vector<int64_t> wall_ns;  // flush()'s scratch, sized with the timer

  bool open = false;            // a job is open
  bool open_recorded = false;   // ... and its begin was marked
  uint32_t open_type = 0;
  int64_t open_micro_batch = -1;

  int64_t current_step = 0;
  bool recording = false;
  bool marker_written = false;
  Stats stats;

  bool in_window(int64_t step) const {
    return step >= options.window_start && step < options.window_end;
  }
  void update_recording() { recording = in_window(current_step); }

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
    const auto i = static_cast<uint32_t>(type_names.size());
    type_names.emplace_back(type);
    type_index.emplace(type_names.back(), i);
    *index = i;
    return {};
  }

  // Room for one more job; allocates only while warming up.
  Status make_room() {
    const size_t marks = 2 * (jobs.size() + 1);
    if (marks <= timer->capacity() && jobs.size() < jobs.capacity()) return {};
    ++stats.hot_path_growths;
    if (marks > timer->capacity()) {
      const size_t want = std::max(marks, 2 * timer->capacity());
      if (Status s = timer->reserve(want); !s.ok()) return s;
      wall_ns.resize(timer->capacity());
    }
    if (jobs.size() == jobs.capacity()) jobs.reserve(std::max<size_t>(16, 2 * jobs.capacity()));
    return {};
  }

  void write(std::string_view line) {
    if (options.sink) {
      options.sink(line);
    } else {
      LOG(INFO) << line;
    }
  }

  void write_step(int64_t step) {
    if (options.window_set && !marker_written) {
      write(log_line::format_schedule_marker(step, options.window_end));
      marker_written = true;
    }
    for (size_t i = 0; i < jobs.size(); ++i) {
      const Job& j = jobs[i];
      // Current Paddle prints the micro-batch id as the job id.
      const int64_t id = j.micro_batch >= 0 ? j.micro_batch : static_cast<int64_t>(i);
      write(log_line::format_job_line(id, type_names[j.type], j.micro_batch, wall_ns[2 * i],
                                      wall_ns[2 * i + 1]));
      if (options.on_job) {
        options.on_job(JobTimes{type_names[j.type], j.micro_batch, wall_ns[2 * i], wall_ns[2 * i + 1]});
      }
    }
    stats.jobs_written += static_cast<int64_t>(jobs.size());
    ++stats.steps_written;
  }
};

Profiler::Profiler(Options options) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.options = std::move(options);
  if (m.options.window_start >= m.options.window_end) {
    // An empty window would silently record nothing; record everything instead
    // and say so in the note.
    m.options.window_start = 0;
    m.options.window_end = kNoEndStep;
    m.options.window_set = false;
    m.note = "empty window ignored; ";
  }
  std::string why_not;
  std::string cuda_note;
  if (m.options.use_cuda) {
    m.timer = detail::make_cuda_timer(m.options, &why_not, &cuda_note);
  } else {
    why_not = "CUDA not asked for";
  }
  if (m.timer) {
    m.note += cuda_note;
  } else {
    m.timer = detail::make_host_timer();
    m.note += "host clock: " + why_not;
    (void)m.timer->reserve(2 * m.options.reserve_jobs);
  }
  m.jobs.reserve(m.options.reserve_jobs);
  m.wall_ns.resize(m.timer->capacity());
  m.current_step = m.options.first_step;
  m.update_recording();
}

Profiler::~Profiler() = default;

Status Profiler::begin(std::string_view type, int64_t micro_batch) {
  Impl& m = *impl_;
  if (m.open) {
    return {Code::kNestedBegin, "begin() of " + describe_job(type, micro_batch) + " while " +
                                    describe_job(m.type_names[m.open_type], m.open_micro_batch) +
                                    " is open; jobs do not nest, call end() first"};
  }
  uint32_t index = 0;
  if (Status s = m.intern(type, &index); !s.ok()) return s;
  bool recorded = false;
  if (m.recording) {
    if (Status s = m.make_room(); !s.ok()) return s;
    if (Status s = m.timer->mark(2 * m.jobs.size()); !s.ok()) return s;
    m.jobs.push_back(Impl::Job{index, micro_batch});
    recorded = true;
  }
  m.open = true;
  m.open_recorded = recorded;
  m.open_type = index;
  m.open_micro_batch = micro_batch;
  return {};
}

Status Profiler::end() {
  Impl& m = *impl_;
  if (!m.open) {
    return {Code::kEndWithoutBegin, "end() with no job open; every end() must follow a begin()"};
  }
  m.open = false;
  if (m.open_recorded) {
    if (Status s = m.timer->mark(2 * m.jobs.size() - 1); !s.ok()) {
      m.jobs.pop_back();  // a job without an end cannot be written
      return s;
    }
    ++m.stats.jobs_recorded;
  }
  return {};
}

Status Profiler::flush(int64_t step) {
  Impl& m = *impl_;
  Status result;
  if (m.open) {
    result = Status(Code::kOpenJobAtFlush,
                    "flush(" + std::to_string(step) + ") with " +
                        describe_job(m.type_names[m.open_type], m.open_micro_batch) +
                        " still open; that job was dropped, call end() before flush()");
    if (m.open_recorded) m.jobs.pop_back();
    m.open = false;
  }
  if (!m.jobs.empty() && m.in_window(step)) {
    Status s = m.timer->resolve(2 * m.jobs.size(), m.wall_ns.data());
    if (s.ok()) {
      m.write_step(step);
    } else if (result.ok()) {
      result = Status(s.code(), "flush(" + std::to_string(step) + ") could not time its " +
                                    std::to_string(m.jobs.size()) + " jobs: " + s.message());
    }
  }
  m.jobs.clear();
  m.current_step = step + 1;
  m.update_recording();
  return result;
}

Status Profiler::set_step(int64_t step) {
  Impl& m = *impl_;
  if (m.open) return {Code::kInvalidArgument, "set_step() while a job is open; call end() first"};
  m.current_step = step;
  m.update_recording();
  return {};
}

Status Profiler::set_window(int64_t start, int64_t end) {
  Impl& m = *impl_;
  if (start >= end) {
    return {Code::kInvalidArgument, "set_window(" + std::to_string(start) + ", " +
                                        std::to_string(end) +
                                        ") is empty: the start must be below the end"};
  }
  if (m.open) return {Code::kInvalidArgument, "set_window() while a job is open; call end() first"};
  m.options.window_set = true;
  m.options.window_start = start;
  m.options.window_end = end;
  m.marker_written = false;
  m.update_recording();
  return {};
}

Status Profiler::set_sink(LineSink sink) {
  Impl& m = *impl_;
  if (m.open) return {Code::kInvalidArgument, "set_sink() while a job is open; call end() first"};
  m.options.sink = std::move(sink);
  return {};
}

bool Profiler::recording() const { return impl_->recording; }
Backend Profiler::backend() const { return impl_->timer->backend(); }
const std::string& Profiler::backend_note() const { return impl_->note; }

Stats Profiler::stats() const {
  Stats s = impl_->stats;
  impl_->timer->add_stats(&s);
  return s;
}

}  // namespace ppt::shim
