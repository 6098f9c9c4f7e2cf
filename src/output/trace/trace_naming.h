// How the model maps onto a viewer's processes and threads, shared by every
// writer so that all outputs of one run name and order things the same way.
//
//  - one process per (run, machine), and one "steps" process per run, first;
//  - one thread per (rank, lane); lane 0 is the rank itself;
//  - pids and tids are small positive integers, never 0, unique over the
//    whole trace, derived only from the model (never from timing).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "model/timeline.h"

namespace ppt {

class TraceNaming {
 public:
  explicit TraceNaming(const Timeline& timeline);

  uint32_t steps_pid(uint32_t run) const { return run * (machines_ + 1) + 1; }
  uint32_t machine_pid(uint32_t run, int32_t machine) const {
    return run * (machines_ + 1) + 2 + static_cast<uint32_t>(machine);
  }
  uint32_t track_pid(const Track& t) const { return machine_pid(t.run, t.machine); }
  uint32_t track_tid(const Track& t, uint32_t lane) const {
    return (t.run * lane_stride_ + lane) * ranks_ + static_cast<uint32_t>(t.rank) + 1;
  }
  uint32_t steps_tid(uint32_t run) const { return runs_ * lane_stride_ * ranks_ + run + 1; }
  // Order within a process: ranks in rank order, a rank's lanes under it.
  uint32_t thread_sort_index(const Track& t, uint32_t lane) const {
    return static_cast<uint32_t>(t.rank) * lane_stride_ + lane;
  }

  // "pipeline", or the timeline's prediction ("predicted (ZBH1 M=8)").
  std::string pipeline_name() const { return tl_.prediction.empty() ? std::string("pipeline") : tl_.prediction; }
  // A predicted timeline's process names start with its prediction.
  std::string process_name(uint32_t run, int32_t machine) const;
  std::string steps_process_name(uint32_t run) const;
  std::string thread_name(const Track& t, uint32_t lane) const;

 private:
  const Timeline& tl_;
  uint32_t machines_ = 1;
  uint32_t ranks_ = 1;
  uint32_t runs_ = 1;
  uint32_t lane_stride_ = 1;
  bool multi_machine_ = false;
};

// The name of a job's slice in every output (JSON traces, .pftrace, SVG and
// report cards, the diff trace): "<type> mb<M>" ("forward mb3",
// "backward_b1 mb0"), so the micro-batch reads from the name whatever
// `Job (N)` holds in the Paddle version; a job without a micro_batch_id is
// "<type> (Job <N>)". The job id is in the slice's args. `type` is appended as
// given (already escaped for the output's syntax); the rest is plain ASCII.
void append_job_name(std::string& out, std::string_view type, int32_t micro_batch, int32_t job_id);
std::string job_name(std::string_view type, const Job& job);

// The name of a step's slice in every trace (JSON, .pftrace, the diff
// trace): "step<N>" ("step5").
void append_step_name(std::string& out, int32_t number);
std::string step_name(int32_t number);

}  // namespace ppt
