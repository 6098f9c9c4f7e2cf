// The critical path of a step: the chain of jobs, and the waits between
// them, that ends with the step's last job and explains when each of its jobs
// could start.
//
// Walking back from the job that ends last, a job's predecessor is whichever
// of these ended last before the job started:
//  - the rank's previous job (it runs one job at a time), or
//  - the job it needs data from: a forward needs the same micro-batch's
//    forward on the previous virtual stage; a backward (or backward_b) the
//    same micro-batch's backward on the next virtual stage, or its own
//    forward on the last one; a backward_w its backward_b.
// Virtual stages follow schedule.h (chunk*P + stage, V-shaped for ZBVPP);
// dependencies stay within a data-parallel replica. The walk stops at a job
// with no predecessor in the step. The gap between a predecessor's end and the
// next job's start is a wait: communication latency when the hop crosses
// ranks, host overhead or an unexplained stall when it does not.
//
// Jobs only ever ran on clocks that can disagree across machines; a
// dependency that appears to end after its consumer started is not taken.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pp_timeline/schedule.h"
#include "pp_timeline/timeline.h"

namespace ppt {

struct CriticalHop {
  int32_t rank = 0;
  std::string type;
  int32_t micro_batch = -1;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t wait_ns = 0;       // from the previous hop's end to this start (0 for the first)
  bool from_other_rank = false;  // the previous hop ran on another rank (a dependency)
};

struct CriticalPath {
  std::vector<CriticalHop> hops;  // in time order; the last ends the step
  int64_t job_ns = 0;             // sum of the hops' durations
  int64_t wait_ns = 0;            // sum of the waits between hops
  double share = 0;               // (last end - first start) / step time, at most 1
};

// The jobs of one step, rank by rank.
struct StepJobs {
  struct Rank {
    int32_t rank = 0;
    std::vector<const Job*> jobs;  // in start order
  };
  std::vector<Rank> ranks;
};

struct PipelineMap {
  ScheduleKind kind = ScheduleKind::kUnknown;
  int32_t pp_degree = 1;
};

CriticalPath critical_path(const StepJobs& step, const StepSpan& span, const std::vector<std::string>& types,
                           const std::vector<JobClass>& classes, const PipelineMap& map);

}  // namespace ppt
