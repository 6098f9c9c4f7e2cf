// The pipeline's shape and schedule, decided once per timeline.
//
// P (and with it which ranks are stages of which replica) and the schedule
// are read off the ranks' job orders (schedule.h). Every later pass and
// writer needs them: the dependencies (which stage feeds which), the clock
// alignment (through those dependencies), the stats (stages, the ideal
// bubble), the summary. They are decided here, in one pass right after the
// timeline is built and before the clocks are aligned, and handed to all of
// them; nothing else infers them again, so no two outputs of one command can
// disagree on P.
#pragma once

#include <cstdint>
#include <vector>

#include "model/timeline.h"
#include "passes/schedule.h"

namespace ppt {

struct PipelinePlan {
  std::vector<JobClass> classes;  // one per Timeline::types entry
  std::vector<RankOrder> orders;  // each rank's plan, by rank
  PipelineShape shape;            // P, replicas and where P came from
  ScheduleInfo schedule;          // recognised with that shape
};

// P and the schedule are those of the timeline's last run, the run the
// figures are about (--run keeps one run before this pass).
// `pp_degree_option` > 0 is the user's P (checked with check_pp_degree(),
// pipeline_stage.h); 0 infers it. `threads` for the rank orders (0: one per
// core); the result does not depend on it.
// `last_run_only`: the job orders of the last run only (the run stats,
// whatif and batch measure), else of every run pooled (watch, whose window
// may hold the first jobs of a run just started beside the steps it reports:
// a few jobs of a new run are no order to infer P from).
PipelinePlan decide_pipeline(const Timeline& timeline, int32_t pp_degree_option, unsigned threads = 0,
                             bool last_run_only = true);

}  // namespace ppt
