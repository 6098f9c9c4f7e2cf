// The critical path of a step: the chain of jobs, and the waits between
// them, that ends with the step's last job and explains when each of its jobs
// could start.
//
// Walking back from the job that ends last, a job's predecessor is whichever
// of these ended last before the job started:
//  - the rank's previous job (it runs one job at a time), or
//  - the producer of one of its dependencies (dependencies.h: a forward's
//    input from the previous virtual stage, a backward's from the next; the
//    same pass draws the trace's flow arrows, so the path follows the arrows).
// The walk stops at a job with no predecessor in the step. The gap between a
// predecessor's end and the next job's start is a wait: communication latency
// when the hop crosses ranks, host overhead or a stall when it does not.
//
// A dependency whose producer appears to end after its consumer started
// (clocks that disagree even after clock_align.h) is not taken; the path then
// follows the rank's own previous job.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/timeline.h"
#include "passes/dependencies.h"

namespace ppt {

struct CriticalHop {
  int32_t rank = 0;
  std::string type;
  int32_t micro_batch = -1;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t wait_ns = 0;           // from the previous hop's end to this start (0 for the first)
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
    uint32_t track = 0;                                   // index into Timeline::tracks
    std::vector<uint32_t, BulkAllocator<uint32_t>> jobs;  // indices into the track's jobs, ascending (start order)
  };
  std::vector<Rank> ranks;
};

CriticalPath critical_path(const Timeline& timeline, const StepJobs& step, const StepSpan& span,
                           const Dependencies& deps, const DependencyIndex& index);

}  // namespace ppt
