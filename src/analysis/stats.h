// How big the bubbles of a real run are: passes over a const Timeline that
// measure steps, ranks and job types, recognise the schedule, find stragglers
// and each step's critical path.
//
// Definitions (docs/stats.md is the user's copy):
//  - a step's span is Run::steps' span: earliest job start to latest job end
//    over all ranks, its start moved to the previous step's end if earlier
//    (the Step track of the trace);
//  - a rank's busy time in a step is the length of the union of its job
//    intervals clipped to the span, so overlapping jobs count once; idle is
//    span - busy, split into warm-up (before its first job), cool-down (after
//    its last) and the gaps in between;
//  - a rank's bubble ratio is sum(idle) / sum(span) over the steps it ran;
//  - a step's period is the start of step k to the start of step k+1 of the
//    same run: its span plus the time between steps (data loading, logging,
//    the optimizer's host work, anything no job covers). The last step of a
//    run has no next start and no period; it is left out of the period
//    summary (a run of one step has none);
//  - throughput is 1 / mean period in steps per second, times M micro-batches
//    per step and the data-parallel replicas in micro-batches per second, and
//    times the micro-batch size, when given, in samples per second;
//  - a rank-step is incomplete when the rank has fewer jobs in it than in
//    most of its steps (a rank with one step: than most rank-steps of the
//    run); a rank is short when it misses steps the run has, or has an
//    incomplete one (a log cut short). The run's, the steps' and the stages'
//    bubble figures count complete rank-steps only, and say so; a rank's own
//    row counts every step it ran;
//  - with several runs in the timeline (appended logs), one is measured (the
//    last unless StatsOptions::run says) and the others are named in
//    Stats::notes: runs are never pooled;
//  - a straggler is a rank whose jobs of one type are consistently (in at
//    least `straggler_consistency` of them) longer than the median over the
//    other ranks by more than `straggler_margin`.
// Every number is a pure function of the Timeline and the options.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/advice.h"
#include "analysis/critical_path.h"
#include "analysis/memory.h"
#include "model/timeline.h"
#include "passes/dependencies.h"
#include "passes/pipeline.h"
#include "passes/schedule.h"

namespace ppt {

struct StatsOptions {
  double straggler_margin = 0.10;       // 10 % above the others' median
  double straggler_consistency = 0.75;  // of the rank's jobs of that type
  bool critical_paths = true;           // needs the dependencies
  int32_t run = -1;                     // the run measured (index into Timeline::runs); -1: the last
  uint32_t micro_batch_size = 0;        // samples per micro-batch (--micro-batch-size); 0: unknown
};

// Durations of one job type (over all ranks, or over one rank's jobs).
struct TypeDurations {
  std::string type;
  uint64_t count = 0;
  double mean_ns = 0;
  int64_t p50_ns = 0;  // nearest-rank percentiles
  int64_t p95_ns = 0;
  int64_t max_ns = 0;
  int64_t total_ns = 0;
};

struct StepStats {
  uint32_t run = 0;
  int32_t step = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint32_t ranks = 0;   // ranks with jobs in the step
  int64_t busy_ns = 0;  // summed over its ranks
  int64_t idle_ns = 0;
  double bubble_ratio = 0;        // idle / (ranks * span), complete rank-steps only
  int64_t period_ns = -1;         // to the next step's start; -1 for the run's last step
  uint32_t incomplete_ranks = 0;  // ranks whose jobs in the step are fewer than usual (left out above)
  CriticalPath critical_path;
  int64_t time_ns() const { return end_ns - start_ns; }
};

struct RankStats {
  int32_t rank = 0;
  int32_t stage = 0;
  int32_t replica = 0;
  int32_t machine = 0;
  uint32_t steps = 0;  // steps the rank ran (has jobs in)
  uint64_t jobs = 0;
  int64_t span_ns = 0;  // sum of those steps' spans
  int64_t busy_ns = 0;
  int64_t idle_ns = 0;  // span - busy = warmup + gaps + cooldown
  int64_t warmup_ns = 0;
  int64_t cooldown_ns = 0;
  int64_t gaps_ns = 0;
  double bubble_ratio = 0;  // idle / span
  // ± on bubble_ratio from the input's time resolution r (Stats::resolution_ns):
  // both edges of a job are truncated alike, so its length is off by less
  // than r, and each step's span by less than 2r: idle is off by less than
  // r * (jobs + 2 * steps), over span. 0 for ns input.
  double bubble_ratio_error = 0;
  std::vector<TypeDurations> types;  // this rank's jobs, by type name
  uint32_t missing_steps = 0;        // steps of the run it has no job in
  uint32_t incomplete_steps = 0;     // steps with fewer jobs than usual (see above)
  uint64_t missing_jobs = 0;         // jobs those steps lack against the usual count
  bool short_rank() const { return missing_steps > 0 || incomplete_steps > 0; }
  std::vector<std::string> job_order;  // its plan: "forward:0", ... (schedule.h RankOrder)
  uint32_t steps_like_order = 0;       // steps that follow job_order exactly
};

struct StageStats {
  int32_t stage = 0;
  uint32_t ranks = 0;
  int64_t span_ns = 0;
  int64_t busy_ns = 0;
  int64_t idle_ns = 0;
  double bubble_ratio = 0;
  uint32_t rank_steps = 0;  // the complete rank-steps counted above
};

struct Straggler {
  int32_t rank = 0;
  int32_t stage = 0;
  std::string type;
  double median_ns = 0;         // the rank's median duration of the type (median_of_sorted)
  double others_median_ns = 0;  // the median of the other ranks' medians
  double margin = 0;            // median / others - 1
  double consistency = 0;       // share of its jobs above others * (1 + the option's margin)
  uint64_t jobs = 0;
};

struct StepTimeSummary {
  uint32_t count = 0;
  double mean_ns = 0;
  double median_ns = 0;  // median_of_sorted
  int64_t min_ns = 0;
  int64_t max_ns = 0;
  double stdev_ns = 0;  // sample standard deviation; 0 for one step
};

// Steps per second from the mean period, and what follows from it; 0 when
// there is no period.
struct Throughput {
  double steps_per_second = 0;
  double micro_batches_per_second = 0;  // x M x replicas; 0 when M is unknown
  double samples_per_second = 0;        // x the micro-batch size; 0 when it is unknown
  uint32_t micro_batch_size = 0;
};

// A change the what-if model (analysis/whatif.h, suggest_changes) predicts
// would shorten the period, against the measured plan replayed with the same
// model (so the model's own error cancels out).
struct WhatifSuggestion {
  SuggestedChange change;  // ZBH1, VPP V=2, M=16, balancing stage 2 (output/text/advice_text: its name)
  double period_gain = 0;  // 1 - predicted / replayed: 0.17 is a 17 % shorter period
  // How sure the gain is: period_gain less and plus twice the standard error
  // of the per-step gains (each measured step replayed under both plans) and
  // the model's own error. A suggestion is only made when gain_lo > 0.
  double gain_lo = 0;
  double gain_hi = 0;
  bool per_micro_batch = false;     // the gain is in time per micro-batch (period / M): the change has another M
  double peak_memory = 0;           // the most micro-batch activations a stage holds (a chunk's count 1/V)
  double measured_peak_memory = 0;  // the same, for the measured plan replayed
  // The predicted peak allocated bytes of the highest stage (the memory
  // model, analysis/whatif.h predict_peak_memory); -1 when the run has no
  // memory samples.
  int64_t peak_memory_bytes = -1;
  int64_t measured_peak_memory_bytes = -1;  // the same, for the measured plan replayed
};

struct Stats {
  std::string source;   // what was read, for the report's title
  std::string partial;  // "ranks 1-3 of 4 loaded (--devices)", "" when every rank was (Timeline::partial)
  uint64_t jobs = 0;
  uint32_t runs = 0;      // runs in the timeline (after a selection)
  uint32_t run = 0;       // the one measured, index into them
  std::string selection;  // Timeline::selection: what --run/--steps/--skip-warmup kept, "" all
  // What the figures include and leave out, for the headline: the other
  // runs, short ranks, ranks without jobs.
  std::vector<std::string> notes;
  uint32_t rank_steps = 0;                  // (rank, step) pairs with jobs in the measured run
  uint32_t complete_rank_steps = 0;         // of them, the complete ones: the run's bubble figures
  std::vector<int32_t> short_ranks;         // by rank
  std::vector<int32_t> ranks_without_jobs;  // loaded rank files with no job in the measured run
  double straggler_margin = 0;
  ScheduleInfo schedule;
  double bubble_ratio = 0;        // sum(idle) / sum(span) over every rank and step
  int64_t resolution_ns = 1;      // the input's time resolution (Timeline::resolution_ns)
  double bubble_ratio_error = 0;  // ± on bubble_ratio: sum of the ranks' idle bounds / sum(span)
  StepTimeSummary step_time;      // the steps' spans (busy span: first job start to last job end)
  StepTimeSummary step_period;    // start to next start; the run's last step left out
  Throughput throughput;
  std::vector<StepStats> steps;       // by (run, step)
  std::vector<RankStats> ranks;       // by rank
  std::vector<StageStats> stages;     // by stage
  std::vector<TypeDurations> types;   // by type name
  std::vector<Straggler> stragglers;  // by (rank, type)
  // What would help, best first (set by the driver when asked: DriverRequest::suggest).
  std::vector<WhatifSuggestion> suggestions;
  // Where the model behind the suggestions does not hold for this run
  // (analysis/whatif.h, whatif_warnings), and a balancing suggestion that
  // rests on a stage stats finds no straggler on.
  std::vector<ModelWarning> suggestion_warnings;
  // Each stage's device memory (analysis/memory.h), from the measured run's
  // `[Pipeline details]` samples; not present() without them;
  // device_memory_bytes is --device-memory's.
  MemoryStats memory;
};

// The index of the run the stats measure (Stats::run): StatsOptions::run when
// it names one, else the last; 0 when the timeline has none.
uint32_t measured_run_index(const Timeline& timeline, const StatsOptions& options);

// The stats of `timeline` with the pipeline as decided (pipeline.h: P, the
// stages, the schedule; never inferred again here) and the dependencies the
// critical paths follow (found with that plan, after any clock alignment;
// null: no critical paths).
Stats compute_stats(const Timeline& timeline, const PipelinePlan& plan, const Dependencies* dependencies,
                    const StatsOptions& options = {});

// Count, mean, median, min, max and sample standard deviation of `times`.
StepTimeSummary summarize_times(std::vector<int64_t> times);

// Throughput from the mean period, M and the replicas of `schedule`.
Throughput compute_throughput(const StepTimeSummary& period, const ScheduleInfo& schedule, uint32_t micro_batch_size);

// Nearest-rank percentile (0 < q <= 1) of `values`, which it reorders.
int64_t percentile(std::vector<int64_t>& values, double q);

// Length of the union of [start, end) intervals clipped to [lo, hi). The
// intervals must be sorted by start.
int64_t union_length(const std::vector<std::pair<int64_t, int64_t>>& sorted, int64_t lo, int64_t hi);

}  // namespace ppt
