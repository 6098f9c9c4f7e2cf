#include "details_log.h"

#include <algorithm>
#include <ctime>
#include <utility>

#include "schedule/schedules.h"

namespace ppt::demo {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Python's asctime: "2024-11-20 12:34:56,789".
std::string asctime_utc(std::chrono::system_clock::time_point at) {
  using namespace std::chrono;
  const int64_t ms = duration_cast<milliseconds>(at.time_since_epoch()).count();
  const int64_t sec = ms >= 0 ? ms / 1000 : (ms - 999) / 1000;
  const std::time_t t = static_cast<std::time_t>(sec);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[64];
  const size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  char out[80];
  std::snprintf(out, sizeof out, "%.*s,%03d", static_cast<int>(n), buf, static_cast<int>(ms - sec * 1000));
  return out;
}

}  // namespace

std::string details_step_message(bool before, bool forward, std::optional<int> chunk, int step) {
  std::string s = "[Pipeline details] ";
  s += before ? "Before_" : "After_";
  s += forward ? "forward" : "backward";
  s += "_step_chunk_";
  s += chunk ? std::to_string(*chunk) : "None";
  s += "_step_" + std::to_string(step);
  return s;
}

std::string details_line(std::string_view message, int64_t allocated_bytes, int64_t reserved_bytes,
                         std::chrono::system_clock::time_point at) {
  char sizes[128];
  std::snprintf(sizes, sizeof sizes, ": memory_allocated_size=%.2f, memory_reserved_size=%.2f",
                static_cast<double>(allocated_bytes) / kGiB, static_cast<double>(reserved_bytes) / kGiB);
  // Paddle's format: '[%(asctime)-15s] [%(levelname)8s] %(filename)s:%(lineno)s - %(message)s'.
  std::string line = "[" + asctime_utc(at) + "] [    INFO] " + kDetailsSource + " - ";
  line.append(message);
  line += sizes;
  return line;
}

namespace {

// Whether a job of this kind allocates, frees or is logged.
bool allocates(const JobSpec& job) { return job.is(PlanRole::kForward); }
bool frees(const JobSpec& job) { return job.is(PlanRole::kBackward) || job.is(PlanRole::kBackwardW); }
bool logged_in_details(const JobSpec& job) { return job.is(PlanRole::kForward) || job.is(PlanRole::kBackward); }

}  // namespace

JobMemory::JobMemory(const PipelineShape& shape, int64_t act_bytes, HeldMemory* memory, bool log_details,
                     std::FILE* out, std::function<bool(std::string*)> synchronize)
    : chunked_(schedule_chunked(shape.schedule)),
      bytes_per_job_(act_bytes / std::max(shape.chunks, 1)),
      memory_(memory),
      log_details_(log_details),
      out_(out),
      synchronize_(std::move(synchronize)) {}

bool JobMemory::log(const std::string& message, std::string* error) {
  if (!log_details_) return true;
  if (synchronize_ && !synchronize_(error)) return false;
  const std::string line =
      details_line(message, memory_->allocated_bytes(), memory_->reserved_bytes(), std::chrono::system_clock::now()) +
      "\n";
  if (std::fputs(line.c_str(), out_) < 0 || std::fflush(out_) != 0) {
    *error = "cannot write the [Pipeline details] line";
    return false;
  }
  return true;
}

std::string JobMemory::job_message(const JobSpec& job, bool before) const {
  const bool forward = job.is(PlanRole::kForward);
  // Paddle's 1F1B loop passes the micro-batch; the interleaved class the
  // virtual micro-step, counted per kind (forward, backward) over the step.
  const int step = chunked_ ? (forward ? forwards_ : backwards_) : job.micro_batch;
  return details_step_message(before, forward, chunked_ ? std::optional<int>(job.chunk) : std::nullopt, step);
}

bool JobMemory::start_step(std::string* error) {
  forwards_ = 0;
  backwards_ = 0;
  return log(kStartPipelineMessage, error);
}

bool JobMemory::end_step(std::string* error) { return log(kEndPipelineMessage, error); }

bool JobMemory::before_job(const JobSpec& job, std::string* error) {
  return !logged_in_details(job) || log(job_message(job, true), error);
}

bool JobMemory::begin_job(const JobSpec& job, std::string* error) {
  return !allocates(job) || memory_->allocate(job.micro_batch, job.chunk, bytes_per_job_, error);
}

bool JobMemory::end_job(const JobSpec& job, std::string* error) {
  return !frees(job) || memory_->release(job.micro_batch, job.chunk, error);
}

bool JobMemory::after_job(const JobSpec& job, std::string* error) {
  if (!logged_in_details(job)) return true;
  const bool ok = log(job_message(job, false), error);
  if (job.is(PlanRole::kForward)) ++forwards_;
  if (job.is(PlanRole::kBackward)) ++backwards_;
  return ok;
}

}  // namespace ppt::demo
