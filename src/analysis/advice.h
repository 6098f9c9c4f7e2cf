// What whatif and stats' suggestions say besides their figures, as values:
// where the model does not hold for a run (ModelWarning, and the Refusal
// that stops every prediction), what the figures rest on (Assumption), and
// the change a suggestion names (SuggestedChange). Each carries the numbers
// it cites and no text: output/text/advice_text makes the one sentence of
// each, for every writer that shows them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <variant>

#include "schedule/shape.h"

namespace ppt {

// Where a rank's step first differs from the plan the model replays: the
// job (from 1) where it does, and what the step runs there and what the plan
// has (nullopt: the step's, or the plan's, end).
struct PlanDifference {
  int32_t rank = -1;
  int32_t step = 0;
  size_t job = 0;
  std::optional<PlanJob> got;
  std::optional<PlanJob> want;
};

namespace model_warning {

// The logs hold several runs: which one (from 0) is modelled, and its steps
// (none: first_step and last_step unset) and ranks.
struct SeveralRuns {
  size_t runs = 0;
  uint32_t modelled = 0;
  bool has_steps = false;
  int32_t first_step = 0, last_step = 0;
  size_t ranks = 0;
};
// Jobs that overlap another on their rank, of all the run's jobs.
struct OverlappingJobs {
  uint64_t overlapping = 0, jobs = 0;
};
// A time resolution coarser than a tenth of the typical (median) job.
struct CoarseResolution {
  int64_t resolution_ns = 0, typical_job_ns = 0;
};
// One step: no period.
struct OneStep {};
// The model's error (replayed / measured period - 1) above 2%.
struct ModelError {
  double error = 0;
};
// Rank-steps that do not run their rank's usual jobs, and the rank with the
// largest share of them.
struct UnusualSteps {
  uint32_t off_steps = 0, rank_steps = 0;
  int32_t worst_rank = -1;
  double worst_share = 0;
};
// Rank-steps running another plan than `shape`'s, the first of them.
struct OffPlan {
  uint32_t off_plan = 0, plan_steps = 0;
  PlanShape shape;
  PlanDifference example;
};
// The memory model's error on the stage where it is largest, above `limit`.
struct MemoryModelError {
  double error = 0;
  int32_t stage = -1;
  double limit = 0;
};
// A suggestion balancing `stage`, which stats finds no straggler on.
struct BalancingNoise {
  int32_t stage = -1;
};

// Why no prediction from the run means anything: the share of its rank-steps
// that run another plan than `shape`'s (over a quarter), the first of them.
struct Refusal {
  double share = 0;
  PlanShape shape;
  PlanDifference example;
};

}  // namespace model_warning

using ModelWarning =
    std::variant<model_warning::SeveralRuns, model_warning::OverlappingJobs, model_warning::CoarseResolution,
                 model_warning::OneStep, model_warning::ModelError, model_warning::UnusualSteps, model_warning::OffPlan,
                 model_warning::MemoryModelError, model_warning::BalancingNoise>;

namespace assumption {

// Job costs: the trimmed means over the fit's steps and replicas.
struct JobCosts {
  uint32_t steps = 0;
  int32_t replicas = 1;
};
// Links: their median, and --link-scale.
struct Links {
  int64_t median_ns = 0;
  double scale = 1;
};
// The run modelled (from 0), of how many, over how many steps.
struct Modelled {
  uint32_t run = 0;
  size_t runs = 0;
  uint32_t steps = 0;
};
// The input's time resolution (above 1 ns).
struct Resolution {
  int64_t resolution_ns = 0;
};
// The gap between steps (steps > 1), or none measured.
struct StepGap {
  uint32_t steps = 0;
  int64_t gap_ns = 0;
};
// What the ranges are.
struct Ranges {};
// The host gaps: the pairs measured and their median.
struct HostGap {
  uint64_t samples = 0;
  int64_t median_ns = 0;
};
// The backward_w share of a backward: asked for, measured, or the default.
struct WShare {
  enum class Source : uint8_t { kAsked, kMeasured, kDefault };
  Source source = Source::kDefault;
  double share = 0.5;
};
// Another V: a chunk's cost, against the run's V.
struct ChunkCost {
  int32_t measured_chunks = 1;
};
// A target Paddle would refuse (paddle_refuses of `shape`).
struct PaddleRefuses {
  PlanShape shape;
};
// --balance.
struct Balanced {};
// --stage-scale STAGE:FACTOR.
struct StageScale {
  int32_t stage = 0;
  double factor = 1;
};
// Other timed jobs counted with the optimizer.
struct OtherJobs {
  uint64_t count = 0;
};
// The measured steps replayed, on how many replicas.
struct ReplayedSteps {
  size_t steps = 0;
  int32_t replicas = 0;
};
// Pieces of overlapped jobs, not modelled.
struct Pieces {
  uint64_t count = 0;
};
// The memory model: no samples; what it is; a split backward; another V.
struct NoMemorySamples {};
struct MemoryModel {};
struct MemorySplitBackward {};
struct MemoryOtherV {};
// --device-memory.
struct DeviceMemory {
  int64_t bytes = 0;
};

}  // namespace assumption

using Assumption = std::variant<assumption::JobCosts, assumption::Links, assumption::Modelled, assumption::Resolution,
                                assumption::StepGap, assumption::Ranges, assumption::HostGap, assumption::WShare,
                                assumption::ChunkCost, assumption::PaddleRefuses, assumption::Balanced,
                                assumption::StageScale, assumption::OtherJobs, assumption::ReplayedSteps,
                                assumption::Pieces, assumption::NoMemorySamples, assumption::MemoryModel,
                                assumption::MemorySplitBackward, assumption::MemoryOtherV, assumption::DeviceMemory>;

// The change a suggestion names: another schedule (`shape`'s schedule and
// V), another M (`shape`'s), or every stage balanced (named after `stage`,
// the busiest; -1: none). `shape` is the plan replayed.
struct SuggestedChange {
  enum class Kind : uint8_t { kSchedule, kMicroBatches, kBalance };
  Kind kind = Kind::kSchedule;
  PlanShape shape;
  int32_t stage = -1;
};

}  // namespace ppt
