// The C API: a handle around a Profiler and the message of its last failure.
// Nothing here may throw across the C boundary; the only allocations that can
// throw happen in create (caught) and on error paths.
#include "pp_timeline/shim_c.h"

#include <new>
#include <string>
#include <string_view>
#include <utility>

#include "pp_timeline/shim.h"

struct ppt_shim {
  explicit ppt_shim(ppt::shim::Options options) : profiler(std::move(options)) {}
  ppt::shim::Profiler profiler;
};

namespace {

thread_local std::string create_error;

// The last failure's message, per thread (a handle may be shared by
// threads): the handle it was on, and the text.
struct LastError {
  const ppt_shim* handle = nullptr;
  std::string message;
};
thread_local LastError last_error;

void set_error(const ppt_shim* shim, std::string message) {
  last_error.handle = shim;
  last_error.message = std::move(message);
}

int keep(ppt_shim* shim, const ppt::shim::Status& s) {
  if (!s.ok()) set_error(shim, s.message());
  return static_cast<int>(s.code());
}

int null_handle() { return PPT_SHIM_INVALID_ARGUMENT; }

}  // namespace

extern "C" {

ppt_shim* ppt_shim_create(void* stream, int device, unsigned flags) {
  return ppt_shim_create_with_log(stream, device, flags, nullptr);
}

ppt_shim* ppt_shim_create_with_log(void* stream, int device, unsigned flags, const char* log_file) {
  create_error.clear();
  try {
    ppt::shim::Options options;
    options.stream = stream;
    options.device = device;
    if (log_file != nullptr) options.log_file = log_file;
    if ((flags & PPT_SHIM_IGNORE_ENV) == 0) {
      if (auto s = ppt::shim::options_from_environment(&options); !s.ok()) {
        create_error = s.message();
        return nullptr;
      }
    }
    if ((flags & PPT_SHIM_HOST_CLOCK) != 0) options.use_cuda = false;
    if ((flags & PPT_SHIM_POLL) != 0) options.wait = ppt::shim::FlushWait::kPoll;
    if ((flags & PPT_SHIM_COMPACT_LINES) != 0) options.format = ppt::shim::LineFormat::kCompact;
    return new ppt_shim(std::move(options));
  } catch (const std::exception& e) {
    create_error = std::string("ppt_shim_create failed: ") + e.what();
    return nullptr;
  }
}

const char* ppt_shim_create_error(void) { return create_error.c_str(); }

void ppt_shim_destroy(ppt_shim* shim) { delete shim; }  // ~Profiler never throws

int ppt_shim_begin(ppt_shim* shim, const char* type, int64_t micro_batch) {
  if (shim == nullptr) return null_handle();
  if (type == nullptr) {
    set_error(shim, "ppt_shim_begin with a NULL type");
    return PPT_SHIM_INVALID_TYPE;
  }
  return keep(shim, shim->profiler.begin(type, micro_batch));
}

int ppt_shim_begin_on(ppt_shim* shim, void* stream, const char* type, int64_t micro_batch) {
  if (shim == nullptr) return null_handle();
  if (type == nullptr) {
    set_error(shim, "ppt_shim_begin_on with a NULL type");
    return PPT_SHIM_INVALID_TYPE;
  }
  return keep(shim, shim->profiler.begin_on(stream, type, micro_batch));
}

int ppt_shim_end(ppt_shim* shim) {
  if (shim == nullptr) return null_handle();
  return keep(shim, shim->profiler.end());
}

int ppt_shim_flush(ppt_shim* shim, int64_t step) {
  if (shim == nullptr) return null_handle();
  try {
    return keep(shim, shim->profiler.flush(step));
  } catch (const std::exception& e) {  // an allocation failed; never across the C boundary
    set_error(shim, e.what());
    return PPT_SHIM_INVALID_ARGUMENT;
  }
}

int ppt_shim_finish(ppt_shim* shim, int64_t timeout_ms) {
  if (shim == nullptr) return null_handle();
  try {
    return keep(shim, shim->profiler.finish(timeout_ms));
  } catch (const std::exception& e) {
    set_error(shim, e.what());
    return PPT_SHIM_INVALID_ARGUMENT;
  }
}

int ppt_shim_wait(ppt_shim* shim, int64_t timeout_ms) {
  if (shim == nullptr) return null_handle();
  try {
    return keep(shim, shim->profiler.wait(timeout_ms));
  } catch (const std::exception& e) {
    set_error(shim, e.what());
    return PPT_SHIM_INVALID_ARGUMENT;
  }
}

int ppt_shim_counts(const ppt_shim* shim, int64_t* jobs_written, int64_t* jobs_dropped, int64_t* steps_pending) {
  if (shim == nullptr) return null_handle();
  const ppt::shim::Stats s = shim->profiler.stats();
  if (jobs_written != nullptr) *jobs_written = s.jobs_written;
  if (jobs_dropped != nullptr) *jobs_dropped = s.jobs_dropped;
  if (steps_pending != nullptr) *steps_pending = s.steps_pending;
  return PPT_SHIM_OK;
}

int64_t ppt_shim_stat(const ppt_shim* shim, const char* name) {
  if (shim == nullptr || name == nullptr) return -1;
  const ppt::shim::Stats s = shim->profiler.stats();
  const std::string_view n = name;
  const std::pair<const char*, int64_t> fields[] = {
      {"jobs_recorded", s.jobs_recorded},
      {"jobs_written", s.jobs_written},
      {"steps_written", s.steps_written},
      {"steps_pending", s.steps_pending},
      {"jobs_dropped", s.jobs_dropped},
      {"hot_path_growths", s.hot_path_growths},
      {"flush_waits", s.flush_waits},
      {"flush_polls", s.flush_polls},
      {"device_switches", s.device_switches},
      {"anchors", s.anchors},
      {"last_anchor_uncertainty_ns", s.last_anchor_uncertainty_ns},
      {"jobs_refused_in_capture", s.jobs_refused_in_capture},
      {"anchors_rejected", s.anchors_rejected},
      {"late_anchors", s.late_anchors},
      {"last_step_uncertainty_ns", s.last_step_uncertainty_ns},
      {"log_lines_dropped", s.log_lines_dropped},
      {"log_file_failed", s.log_file_failed ? 1 : 0},
  };
  for (const auto& [key, value] : fields)
    if (n == key) return value;
  return -1;
}

int ppt_shim_set_step(ppt_shim* shim, int64_t step) {
  if (shim == nullptr) return null_handle();
  return keep(shim, shim->profiler.set_step(step));
}

int ppt_shim_set_window(ppt_shim* shim, int64_t start_step, int64_t end_step) {
  if (shim == nullptr) return null_handle();
  return keep(shim, shim->profiler.set_window(start_step, end_step));
}

int ppt_shim_set_sink(ppt_shim* shim, ppt_shim_line_sink sink, void* user) {
  if (shim == nullptr) return null_handle();
  ppt::shim::LineSink fn;
  if (sink != nullptr) {
    fn = [sink, user](std::string_view line) { sink(line.data(), line.size(), user); };
  }
  return keep(shim, shim->profiler.set_sink(std::move(fn)));
}

int ppt_shim_recording(const ppt_shim* shim) { return shim != nullptr && shim->profiler.recording() ? 1 : 0; }

int ppt_shim_backend(const ppt_shim* shim) {
  if (shim == nullptr) return -1;
  return static_cast<int>(shim->profiler.backend());
}

const char* ppt_shim_backend_note(const ppt_shim* shim) {
  if (shim == nullptr) return "";
  return shim->profiler.backend_note().c_str();
}

const char* ppt_shim_last_error(const ppt_shim* shim) {
  if (shim == nullptr) return "NULL ppt_shim handle";
  return last_error.handle == shim ? last_error.message.c_str() : "";
}

const char* ppt_shim_status_name(int status) {
  if (status < 0 || status > PPT_SHIM_CUDA_UNAVAILABLE) return "unknown";
  return ppt::shim::code_name(static_cast<ppt::shim::Code>(status));
}

}  // extern "C"
