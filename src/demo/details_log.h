// The memory side of a demo rank's step: which jobs allocate and free
// activations (HeldMemory), and, with --pipeline-details, the lines Paddle's
// dynamic-graph pipeline (`PipelineParallel`, `PipelineParallelWithInterleave`)
// logs with FLAGS_profile_pipeline_details_steps, exactly as it formats them:
//
//   [2024-11-20 12:34:56,789] [    INFO] pipeline_parallel.py:1187 - [Pipeline details]
//       Before_forward_step_chunk_None_step_3: memory_allocated_size=0.25, memory_reserved_size=0.25
//
// (one line). The stamp is Python's asctime with milliseconds, in the
// process's local time, which the demo takes as UTC (gmtime), as the readers
// of these lines take it. The sizes are GiB (bytes / 2^30, two decimals).
//
// - A forward allocates its activations (--act-mb, a VPP chunk 1/V of it)
//   keyed by (micro-batch, chunk); a backward frees them; with the split
//   backward (ZB-H1) backward_b keeps them and backward_w frees them.
// - Lines: Start_forward_backward_pipeline before the step's first job,
//   Before/After_forward_step and Before/After_backward_step around every
//   forward and backward, End_forward_backward_pipeline after the last one
//   (before the optimizer). `chunk_<c>` under VPP, `chunk_None` otherwise;
//   `step_<micro-batch>` as Paddle's 1F1B loop passes it, and under VPP the
//   virtual micro-step (the how-many-th forward, or backward, of the step on
//   this stage), as the interleaved class passes it. Paddle's lines know only
//   forward and backward, so backward_b and backward_w get none: what a
//   backward_w frees shows in the next line.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "activations.h"
#include "schedule.h"

namespace ppt::demo {

// The logging call's place in Paddle, which its lines show.
inline constexpr char kDetailsSource[] = "pipeline_parallel.py:1187";

// "[Pipeline details] Before_forward_step_chunk_None_step_3"
std::string details_step_message(bool before, bool forward, std::optional<int> chunk, int step);
inline constexpr char kStartPipelineMessage[] = "[Pipeline details] Start_forward_backward_pipeline";
inline constexpr char kEndPipelineMessage[] = "[Pipeline details] End_forward_backward_pipeline";

// One whole line (no newline) for `message` at `at`.
std::string details_line(std::string_view message, int64_t allocated_bytes, int64_t reserved_bytes,
                         std::chrono::system_clock::time_point at);

class JobMemory {
 public:
  // `act_bytes` is one micro-batch's activations on the stage (a VPP chunk
  // holds act_bytes / V). With `log_details`, lines go to `out`, each after
  // `synchronize` (the device drained, as Paddle's logger waits for it).
  JobMemory(const PipelineShape& shape, int64_t act_bytes, HeldMemory* memory, bool log_details, std::FILE* out,
            std::function<bool(std::string*)> synchronize);

  bool start_step(std::string* error);
  bool end_step(std::string* error);
  // Around a job: before_job before it is timed, begin_job when its timing
  // has begun (a forward allocates), end_job before its timing ends (a
  // backward or backward_w frees), after_job once it ended.
  bool before_job(const JobSpec& job, std::string* error);
  bool begin_job(const JobSpec& job, std::string* error);
  bool end_job(const JobSpec& job, std::string* error);
  bool after_job(const JobSpec& job, std::string* error);

  int64_t bytes_per_job() const { return bytes_per_job_; }

 private:
  bool log(const std::string& message, std::string* error);
  std::string job_message(const JobSpec& job, bool before) const;

  bool chunked_;
  int64_t bytes_per_job_;
  HeldMemory* memory_;
  bool log_details_;
  std::FILE* out_;
  std::function<bool(std::string*)> synchronize_;
  int forwards_ = 0;  // this step's forwards so far (VPP's forward micro-step)
  int backwards_ = 0;
};

}  // namespace ppt::demo
