// What a measured run would do under another schedule: a cost model fitted
// from the run's own jobs, and the run replayed with it (passes/replay.h)
// under the measured plan and under the plans asked for.
//
// The model (docs/whatif.md is the user's copy):
//  - a job's cost: per pipeline stage, model chunk and role (forward,
//    backward, backward_b, backward_w), from the durations of the measured
//    run's jobs of that kind on the stage's ranks (every replica, every step
//    the selection kept): their median, with the 10th and 90th percentiles as
//    its spread, and as the cost a replay charges the mean of the jobs from
//    the 10th to the 90th percentile: a stage's time is a sum of its jobs, so
//    a mean (not a median) adds up to it, and the trimmed ends keep an
//    outlier (a stall, a first step) out;
//  - a link: the lag from a producer's end to its consumer's start on another
//    stage, measured on the dependency edges (passes/dependencies.h) where
//    the consumer was waiting on it (its rank's previous job had ended before
//    the producer did, so nothing else held it back); per step and stage pair
//    the smallest such lag, and the link is the median of those minima over
//    the steps; a pair never measured takes the median of the measured links;
//  - the optimizer: per rank the median of its optimizer jobs, per stage the
//    median over its ranks; other timed jobs of a step (lr, communication
//    jobs with a length) are added to the stage's optimizer;
//  - the gap between steps: the median of next step's start - step's end.
// The replay: each of the measured steps (the last 32) on each data-parallel
// replica on its own, every job charged its cost times the ratio its
// measured counterpart (same rank, step, chunk, role, micro-batch modulo M)
// had to its cost in that step; a step lasts as long as its slowest
// replica, and the period is the mean over the steps of that plus the gap.
// So the jitter the step's critical path picks up, and the wait for a slow
// replica, are replayed instead of averaged away. --balance takes each
// rank's own factor (its mean ratio) out and keeps the jitter.
// The fit's own error: the measured plan replayed with the model gives the
// "replayed" period; its difference from the measured period is what the
// model misses (jitter on the critical path, overlaps, clocks).
//
// Changes: another schedule, micro-batch count or chunk count (a chunk costs
// its stage's time / V unless that V was measured), the backward_w share of a
// split backward, every stage at the median stage's costs (balance), a stage's
// or every link's costs scaled. Every number is a pure function of the
// Timeline, the plan, the dependencies, the stats and the changes.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "analysis/stats.h"
#include "model/timeline.h"
#include "passes/dependencies.h"
#include "passes/pipeline.h"
#include "passes/plan.h"
#include "passes/replay.h"

namespace ppt {

inline constexpr size_t kPlanRoles = 4;  // PlanRole's values

// The durations of one kind of job.
struct DurationFit {
  uint64_t count = 0;
  int64_t cost_ns = 0;    // what a replay charges: the mean of the middle 80 % (see above)
  int64_t median_ns = 0;  // median_of_sorted, rounded
  int64_t p10_ns = 0;     // nearest-rank percentiles
  int64_t p90_ns = 0;
};

struct CostModel {
  int32_t stages = 0;         // P
  int32_t chunks = 1;         // V as measured
  int32_t micro_batches = 0;  // M as measured
  int32_t replicas = 1;       // data-parallel replicas pooled into each stage's figures
  ScheduleKind schedule = ScheduleKind::kUnknown;
  uint32_t steps = 0;  // steps of the measured run the fit read
  // [stage][chunk][PlanRole]: count 0 where the run has no such job.
  std::vector<std::vector<std::array<DurationFit, kPlanRoles>>> jobs;
  // (from stage, to stage) -> the fitted lag, for the pairs measured only:
  // memory follows the edges of the run, not P x P (P may be large when
  // few of a run's ranks are loaded: docs/hardening.md).
  std::map<std::pair<int32_t, int32_t>, int64_t> link_ns;
  int64_t median_link_ns = 0;          // over the measured pairs: the lag of a pair never measured
  std::vector<DurationFit> optimizer;  // by stage (over its ranks' per-rank medians)
  std::vector<std::pair<int32_t, int64_t>> optimizer_by_rank;  // (rank, median optimizer)
  std::vector<int64_t> other_ns;  // by stage: other timed jobs per step (lr, ...), median over steps
  uint64_t other_jobs = 0;        // how many such jobs
  uint64_t pieces = 0;            // pieces of overlapped jobs, not modelled
  int64_t step_gap_ns = 0;        // median of next start - end; 0 with one step
  double w_share = -1;            // backward_w / (backward_b + backward_w), -1 when not measured
};

// The model of the measured run `stats.run` (stats computed with `plan` and
// `deps`, after the selection and clock alignment).
CostModel fit_cost_model(const Timeline& timeline, const PipelinePlan& plan, const Dependencies& deps,
                         const Stats& stats);

// What a user can change (pp-timeline whatif's options).
struct WhatifChanges {
  std::vector<ScheduleKind> schedules;                  // empty: the measured one
  std::vector<int32_t> micro_batches;                   // empty: the measured M
  int32_t chunks = 0;                                   // V of the chunked schedules; 0: measured, else 2
  double w_share = -1;                                  // < 0: measured, else 0.5
  bool balance = false;                                 // every stage at the median stage's costs
  std::vector<std::pair<int32_t, double>> stage_scale;  // (stage, factor)
  double link_scale = 1;
};

// One run's figures: measured, replayed or predicted.
struct WhatifOutcome {
  PlanShape shape;
  std::string label;                    // "ZBH1 M=8", "VPP M=16 V=2"
  double period_ns = 0;                 // start of a step to the next one's, the mean
  double busy_ns = 0;                   // a step's span, first start to last end, the mean
  double bubble_ratio = 0;              // stats' definition
  double micro_batches_per_second = 0;  // M x replicas / period: what the targets are ranked by
  double time_per_micro_batch_ns = 0;   // period / M: how targets of different M compare
  std::vector<int32_t> peak_in_flight;  // by stage
  std::string error;                    // a target with no plan (check_plan_shape) or a replay that failed
  ReplayResult replay;                  // predicted and replayed only
};

struct WhatifReport {
  CostModel model;
  WhatifOutcome measured;
  WhatifOutcome replayed;  // the measured plan with the model; error when it has no plan
  // Ranked by predicted throughput, micro-batches per second (the period's
  // order when M is the same: a step of 2M micro-batches does twice the
  // work), the failed ones last.
  std::vector<WhatifOutcome> predicted;
  std::vector<std::string> assumptions;
};

// How `o` compares with `base`: o / base - 1 of the period, or of the time
// per micro-batch where the two have different M (then *per_micro_batch is
// set); 0 when either has no figures.
double relative_time(const WhatifOutcome& o, const WhatifOutcome& base, bool* per_micro_batch = nullptr);

// Fits the model and replays the measured plan and every target (each
// schedule x each M); `steps` steps are replayed (2 or more give a period).
WhatifReport run_whatif(const Timeline& timeline, const PipelinePlan& plan, const Dependencies& deps,
                        const Stats& stats, const WhatifChanges& changes, int32_t steps = 3);

// The peak in-flight micro-batches per stage of the measured run: per rank
// and step, the most (chunk, micro-batch) pairs whose forward has started and
// whose backward (or backward_b) has not ended; the max over the stage's
// ranks and steps.
std::vector<int32_t> measured_peak_in_flight(const Timeline& timeline, const PipelinePlan& plan, uint32_t run);

// The suggestions stats makes: the other schedules Paddle has at the run's M,
// 2M at the measured schedule, every stage balanced; those with a gain
// (relative_time against the measured plan replayed: 2M's gain is in time
// per micro-batch), best first, at most `limit`. Empty when the measured plan cannot be
// replayed.
std::vector<WhatifSuggestion> suggest_changes(const Timeline& timeline, const PipelinePlan& plan,
                                              const Dependencies& deps, const Stats& stats, size_t limit = 3);

}  // namespace ppt
