// What a measured run would do under another schedule: a cost model fitted
// from the run's own jobs, and the run replayed with it (schedule/replay.h)
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
//  - the gap between steps: the median of next step's start - step's end;
//  - the host gap: per stage and job kind (the optimizer one of them), the
//    median time from a job's end to the next job's start on its rank where
//    the next job's input was already there: time no job covers, which a
//    schedule of more jobs pays more often.
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
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/advice.h"
#include "analysis/memory.h"
#include "analysis/stats.h"
#include "model/timeline.h"
#include "passes/dependencies.h"
#include "passes/pipeline.h"
#include "schedule/plan.h"
#include "schedule/replay.h"

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
  // The host gap: [stage][PlanRole, or kPlanRoles for the optimizer] the
  // median time from a job's end to the next job's start on the same rank
  // and step, where the next job's input was already there (its producers'
  // ends plus their links no later than the previous job's end): the
  // framework's own work between jobs (transport, logging, launches), which
  // no job's time covers. -1 where the run shows no such pair; a stage that
  // shows none at all has no entry (memory follows the stages measured, not
  // P, as for link_ns).
  std::map<int32_t, std::array<int64_t, kPlanRoles + 1>> host_gap_ns;
  uint64_t host_gap_samples = 0;  // the pairs those medians are over
  double w_share = -1;            // backward_w / (backward_b + backward_w), -1 when not measured
};

// The model of the run `run` (the run stats measures, StatsOptions::run and
// measured_run_index; the timeline after the selection and clock alignment,
// `plan` and `deps` its pipeline and dependencies). The stages are fitted
// on `threads` threads (0: one per core); the model is the same for any.
CostModel fit_cost_model(const Timeline& timeline, const PipelinePlan& plan, const Dependencies& deps, uint32_t run,
                         unsigned threads = 1);
// The same for `stats.run`.
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
  // Named by its schedule alone ("unknown", "none": no plan), not its shape
  // ("ZBH1 M=8", "VPP M=16 V=2"); output/text/advice_text's outcome_label.
  bool named_by_schedule = false;
  double period_ns = 0;                 // start of a step to the next one's, the mean
  double busy_ns = 0;                   // a step's span, first start to last end, the mean
  double bubble_ratio = 0;              // stats' definition
  double micro_batches_per_second = 0;  // M x replicas / period: what the targets are ranked by
  double time_per_micro_batch_ns = 0;   // period / M: how targets of different M compare
  std::vector<int32_t> peak_in_flight;  // by stage
  std::string error;                    // a target with no plan (check_plan_shape) or a replay that failed
  // A target of a report whose run is refused (WhatifReport::refusal): it
  // fails with the refusal's reason.
  bool refused = false;
  bool failed() const { return refused || !error.empty(); }
  // Predicted and replayed only: one step per measured step replayed (the
  // slowest replica's, one after the other with the gap between steps), so
  // its mean period is period_ns; without measured steps, `steps` steps of
  // the fitted costs.
  ReplayResult replay;
  // How sure the period is (predicted and replayed): the mean period, widened
  // by twice its standard error over the replayed steps (the per-step
  // replays' spread) and by the model's own error (|replayed / measured - 1|,
  // when known) on both sides. lo == hi == period_ns with one replayed step
  // and no model error.
  double period_lo_ns = 0;
  double period_hi_ns = 0;
  std::vector<double> step_periods_ns;  // the per-step replays (span + gap), in step order
  // Memory (measured: the logged peaks; replayed and predicted: the memory
  // model over the plan, predict_peak_memory): the peak allocated bytes by
  // stage, -1 for a stage without memory samples; empty when the run has no
  // memory samples (or the outcome has an error).
  std::vector<int64_t> peak_memory_bytes;
  // With a device size (WhatifReport::device_memory_bytes > 0) and a peak:
  // whether the highest stage's peak fits, and the device size less that
  // peak (negative when it does not fit).
  bool fits = true;
  int64_t margin_bytes = 0;
};

struct WhatifReport {
  CostModel model;
  WhatifOutcome measured;
  WhatifOutcome replayed;  // the measured plan with the model; error when it has no plan
  // Ranked by predicted throughput, micro-batches per second (the period's
  // order when M is the same: a step of 2M micro-batches does twice the
  // work), the failed ones last.
  std::vector<WhatifOutcome> predicted;
  std::vector<Assumption> assumptions;
  // Where the model does not hold for this run (whatif_warnings): overlapping
  // jobs, a coarse time resolution, one step, several runs, a large model
  // error, a schedule that changes inside the run, the memory model's error.
  std::vector<ModelWarning> warnings;
  // Set when no prediction from this run can mean anything (every target is
  // then refused, WhatifOutcome::refused): the reason.
  std::optional<model_warning::Refusal> refusal;
  // Predicted targets (by index into `predicted`) whose period ranges overlap
  // the best-ranked one's: within each other's noise, not a win.
  std::vector<size_t> within_noise_of_best;
  // The number of the first measured step replayed: a predicted replay's
  // step k stands for the measured step first_replayed_step + k.
  int32_t first_replayed_step = 0;
  // The model's own error: the replayed period / the measured one - 1; NaN
  // where either has no period. It widens every range (see above).
  double model_error = std::numeric_limits<double>::quiet_NaN();
  // Memory: what the memory model was fitted from (Stats::memory; absent,
  // and every peak_memory_bytes empty, when the run has no memory samples),
  // the device size of --device-memory (0: not given), and the memory
  // model's own error: the replayed peak / the measured peak - 1 of the
  // stage where it is largest in size (NaN where not known), and that stage.
  MemoryStats memory;
  int64_t device_memory_bytes = 0;
  double memory_model_error = std::numeric_limits<double>::quiet_NaN();
  int32_t memory_error_stage = -1;
};

// How `o` compares with `base`: o / base - 1 of the period, or of the time
// per micro-batch where the two have different M (then *per_micro_batch is
// set); 0 when either has no figures.
double relative_time(const WhatifOutcome& o, const WhatifOutcome& base, bool* per_micro_batch = nullptr);

// Whether two outcomes' period ranges overlap, compared as relative_time
// compares them (per micro-batch where M differs): neither is surely faster.
bool within_noise(const WhatifOutcome& a, const WhatifOutcome& b);

// What whatif_warnings reads in the modelled run's jobs (check_run), before
// it is said: it needs the run alone, not the stats.
struct RunChecks {
  uint64_t jobs = 0, overlapping = 0;      // the run's jobs; those overlapping another job on their rank
  uint32_t off_steps = 0, rank_steps = 0;  // rank-steps not running their rank's usual jobs; all rank-steps
  int32_t worst_rank = -1;                 // the rank with the largest share of such steps
  double worst_share = 0;
  bool plan_compared = false;             // the measured plan could be built and the run compared with it
  PlanShape shape;                        // that plan's shape
  uint32_t off_plan = 0, plan_steps = 0;  // rank-steps running another plan; rank-steps compared
  std::optional<PlanDifference> example;  // the first of them, where it first differs
};
RunChecks check_run(const Timeline& timeline, const PipelinePlan& plan, uint32_t run, const CostModel& model,
                    PlanCache& plans);

// What the model cannot see in the measured run, for the user:
// overlapping jobs (the replay runs one job at a time per stage), a time
// resolution coarser than a tenth of the median job, one step (no period),
// several runs (which one is modelled), a model error above 2%
// (`model_error`, replayed / measured - 1; NaN when not known), and ranks
// whose steps do not follow one plan (a schedule that changes inside the
// run), and rank-steps that run another plan than the measured one replayed
// (the schedule recognised is not this run's). `refusal` gets the reason
// when the prediction cannot mean anything: over a quarter of the rank-steps
// run another plan (steps that only lost jobs do not count). `checks`: the
// run's check_run.
std::vector<ModelWarning> whatif_warnings(const Timeline& timeline, const Stats& stats, const CostModel& model,
                                          double model_error, const RunChecks& checks,
                                          std::optional<model_warning::Refusal>* refusal);
// The same, checking the run here. `plans`: the caller's plan cache for this
// run (plan.h), or nullptr.
std::vector<ModelWarning> whatif_warnings(const Timeline& timeline, const PipelinePlan& plan, const Stats& stats,
                                          const CostModel& model, double model_error,
                                          std::optional<model_warning::Refusal>* refusal, PlanCache* plans = nullptr);

// Fits the model and replays the measured plan and every target (each
// schedule x each M); `steps` steps are replayed (2 or more give a period).
// The targets' replays and the run's checks run on up to `threads` threads
// (0: one per core); the report is the same on any number. `fitted`: the
// model fit_cost_model gives for stats.run, when the caller fitted it
// already (beside the stats), moved into the report (a model holds a row
// per stage: a copy would hold them twice); none: fitted here.
WhatifReport run_whatif(const Timeline& timeline, const PipelinePlan& plan, const Dependencies& deps,
                        const Stats& stats, const WhatifChanges& changes, int32_t steps = 3, unsigned threads = 1,
                        std::optional<CostModel> fitted = std::nullopt);

// The peak in-flight micro-batches per stage of the measured run: per rank
// and step, the most (chunk, micro-batch) pairs whose forward has started and
// whose backward (or backward_b) has not ended; the max over the stage's
// ranks and steps.
std::vector<int32_t> measured_peak_in_flight(const Timeline& timeline, const PipelinePlan& plan, uint32_t run);

// The memory model: per stage, the measured static part plus the
// activations the plan holds at once. Each stage's plan is walked in order:
// a forward of (chunk, micro-batch) adds that chunk's activation, a whole
// backward frees it, a backward_b keeps it and its backward_w frees it. A
// chunk's activation is the measured chunk's where `shape` has the measured
// V, else the stage's activation per micro-batch / V; another M holds the
// same activation per micro-batch. By stage of `shape`: the peak allocated
// bytes, -1 for a stage the measurement has no samples of; empty when
// `memory` has none or the shape has no plan. `plans`: the caller's plan
// cache for this run (plan.h), or nullptr.
std::vector<int64_t> predict_peak_memory(const MemoryStats& memory, const PlanShape& shape, PlanCache* plans = nullptr);

// The allocated bytes a stage holds at the peak of `peak_memory_bytes`
// (the highest entry; -1 when none is known).
int64_t highest_peak(const std::vector<int64_t>& peak_memory_bytes);

// Memory samples for the predicted timeline `predicted` (replay_timeline of
// `replay`): on each stage's track, a Before and an After sample of each
// forward and backward at its replayed start and end, with the allocated
// bytes of the memory model (predict_peak_memory's walk) and as reserved
// the running peak of allocated plus the measured stage's reserved above
// allocated at its peak. Nothing when `memory` has no samples.
void add_predicted_memory(Timeline& predicted, const ReplayResult& replay, const MemoryStats& memory,
                          int32_t first_step);

struct SuggestionTargets;  // what finish_suggestion_replays replays (whatif.cc)

// What stats' suggestions need of the run alone, not of its stats: the
// model, the measured plan and every candidate change replayed, and the
// run's checks; the driver makes it beside compute_stats (replay_suggestions).
struct SuggestionReplays {
  bool replayable = false;  // false: the measured plan cannot be replayed, no suggestion
  CostModel model;
  PlanCache plans;     // their costly plans (PlanCache), built once each
  WhatifOutcome base;  // the measured plan replayed
  struct Change {
    SuggestedChange change;  // a balancing one's stage is named after the stats (suggest_changes)
    WhatifOutcome outcome;
  };
  std::vector<Change> changes;  // the other schedules at the run's M, 2M, every stage balanced
  RunChecks checks;
  // Between begin_suggestion_replays and finish_suggestion_replays: the
  // candidate changes still to replay, with what their replays read.
  std::shared_ptr<const SuggestionTargets> pending;
};

// The replays of stats' suggestions for the run `run` (measured_run_index),
// on up to `threads` threads (0: one per core); the same on any number.
SuggestionReplays replay_suggestions(const Timeline& timeline, const PipelinePlan& plan, const Dependencies& deps,
                                     uint32_t run, unsigned threads);
// replay_suggestions in its two parts, for a caller that makes the second
// beside other work: begin reads the run's jobs (the fit, the jitter
// samples, the measured plan's replay); finish replays the candidate changes
// and checks the run (which reads its jobs again: `timeline`, `plan` and
// `run` must be begin's). Finishing a result that is not pending (nothing
// to replay, or finished already) does nothing. Begin's jitter samples are
// taken on `threads` threads.
SuggestionReplays begin_suggestion_replays(const Timeline& timeline, const PipelinePlan& plan, const Dependencies& deps,
                                           uint32_t run, unsigned threads);
void finish_suggestion_replays(SuggestionReplays& replays, const Timeline& timeline, const PipelinePlan& plan,
                               uint32_t run, unsigned threads);

// The suggestions stats makes: the other schedules Paddle has at the run's M,
// 2M at the measured schedule, every stage balanced; those with a gain
// (relative_time against the measured plan replayed: 2M's gain is in time
// per micro-batch) whose range (WhatifSuggestion::gain_lo) is above 0, best
// first, at most `limit`; with memory samples (Stats::memory) and a device
// size, a change whose predicted peak does not fit is never suggested. Empty
// when the measured plan cannot be replayed or whatif_warnings refuses the
// run. `warnings` gets whatif_warnings' warnings
// and one for a balancing suggestion on a stage with no straggler.
// `replays`: replay_suggestions of `stats.run`.
std::vector<WhatifSuggestion> suggest_changes(SuggestionReplays& replays, const Timeline& timeline, const Stats& stats,
                                              size_t limit = 3, std::vector<ModelWarning>* warnings = nullptr);
// The same, replaying here.
std::vector<WhatifSuggestion> suggest_changes(const Timeline& timeline, const PipelinePlan& plan,
                                              const Dependencies& deps, const Stats& stats, size_t limit = 3,
                                              std::vector<ModelWarning>* warnings = nullptr);

}  // namespace ppt
