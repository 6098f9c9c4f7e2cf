#include "output/text/advice_text.h"

#include <fmt/format.h>

#include <cmath>
#include <variant>

#include "schedule/plan.h"
#include "schedule/schedules.h"
#include "util/text.h"

namespace ppt {
namespace {

std::string us_text(double ns) { return fmt::format("{:.1f} us", ns / 1e3); }
std::string us_text(int64_t ns) { return us_text(static_cast<double>(ns)); }

// ---- warnings ----------------------------------------------------------

std::string text(const model_warning::SeveralRuns& w) {
  const std::string steps = w.has_steps ? fmt::format("steps {}-{}", w.first_step, w.last_step) : "no steps";
  return fmt::format("the logs hold {} runs; the model is run {} ({}{}, {} rank(s)); --run N models another", w.runs,
                     w.modelled + 1, w.modelled + 1 == w.runs ? "the last, " : "", steps, w.ranks);
}

std::string text(const model_warning::OverlappingJobs& w) {
  return fmt::format(
      "{} of {} jobs ({:.1f}%) overlap another job on their rank: the model runs one job at a time per stage, so "
      "the overlapped time is charged twice and the replay runs long",
      w.overlapping, w.jobs, 100.0 * static_cast<double>(w.overlapping) / static_cast<double>(w.jobs));
}

std::string text(const model_warning::CoarseResolution& w) {
  return fmt::format(
      "the input's times are whole {}, coarser than a tenth of the typical job ({}): job costs are off by up to "
      "the resolution each and links below it read as 0, so predictions of schedules with more or shorter jobs "
      "are unreliable",
      us_text(w.resolution_ns), us_text(w.typical_job_ns));
}

std::string text(const model_warning::OneStep&) {
  return "the run has one step: there is no period; every \"period\" here is a step's busy span (first job start "
         "to last job end), with nothing between steps";
}

std::string text(const model_warning::ModelError& w) {
  return fmt::format(
      "the model's error is {:+.1f}% (the measured plan replayed against the measured period), above 2%: the "
      "run is not what the model describes, and every range here is widened by it",
      w.error * 100);
}

std::string text(const model_warning::UnusualSteps& w) {
  return fmt::format(
      "{} of {} rank-steps do not run their rank's usual jobs in its usual order (rank {}: {:.0f}% of its steps): "
      "the schedule or M changes inside the run, or steps lose jobs; the model is fitted over all of them",
      w.off_steps, w.rank_steps, w.worst_rank, w.worst_share * 100);
}

std::string text(const model_warning::OffPlan& w) {
  return fmt::format("{} of {} rank-steps do not run the {} plan the model replays ({})", w.off_plan, w.plan_steps,
                     shape_label(w.shape), plan_difference_text(w.example, w.shape));
}

std::string text(const model_warning::MemoryModelError& w) {
  return fmt::format(
      "the memory model's error is {:+.1f}% on stage {} (the measured plan replayed against the logged peak), "
      "above {:.0f}%: the stage holds more (or less) than its static part and the activations in flight, and "
      "every predicted peak is off by about as much",
      w.error * 100, w.stage, w.limit * 100);
}

std::string text(const model_warning::BalancingNoise& w) {
  return fmt::format(
      "balancing stage {} rests on it being the busiest stage, but stats finds no straggler on it: the difference "
      "may be the run's noise",
      w.stage);
}

// ---- assumptions: the fit ----------------------------------------------

std::string text(const assumption::JobCosts& a) {
  return fmt::format(
      "job costs: per stage, chunk and job type the mean of the middle 80% of the durations over {} step(s) and {} "
      "replica(s) of the measured run",
      a.steps, a.replicas);
}

std::string text(const assumption::Links& a) {
  std::string links = fmt::format(
      "links: per stage pair the median over steps of the smallest end-to-start lag where the consumer waited "
      "(median {})",
      us_text(a.median_ns));
  if (a.scale != 1) links += fmt::format(", scaled by {:g}", a.scale);
  return links + "; a pair never measured takes the median";
}

std::string text(const assumption::Modelled& a) {
  return fmt::format("modelled: run {} of {} ({} step(s))", a.run + 1, a.runs, a.steps);
}

std::string text(const assumption::Resolution& a) {
  return fmt::format("the input's times are whole {}: every fitted time is good to about that",
                     us_text(a.resolution_ns));
}

std::string text(const assumption::StepGap& a) {
  return a.steps > 1 ? fmt::format("between steps: {} (median of the measured gaps)", us_text(a.gap_ns))
                     : std::string("between steps: none measured (one step), 0 charged");
}

std::string text(const assumption::Ranges&) {
  return "ranges: the mean period less and plus twice its standard error over the replayed steps and the model's "
         "own error; targets whose ranges overlap are within each other's noise";
}

std::string text(const assumption::HostGap& a) {
  return fmt::format(
      "host gap: per stage and job kind the median time from a job's end to the next job's start where its input "
      "was already there, charged before each job and optimizer ({} pair(s); median {})",
      a.samples, us_text(a.median_ns));
}

// ---- assumptions: the targets and replays --------------------------------

std::string text(const assumption::WShare& a) {
  switch (a.source) {
    case assumption::WShare::Source::kAsked:
      return fmt::format("backward_w share of a backward: {:g} (--w-share)", a.share);
    case assumption::WShare::Source::kMeasured:
      return fmt::format("backward_w share of a backward: {:.2f}, measured from backward_b/backward_w", a.share);
    case assumption::WShare::Source::kDefault: break;
  }
  return "backward_w share of a backward: 0.5, not measured (the run has no split backward)";
}

std::string text(const assumption::ChunkCost& a) {
  return fmt::format("a chunk costs its stage's time / V (the run has V={})", a.measured_chunks);
}

std::string text(const assumption::PaddleRefuses& a) {
  const ScheduleRow* refuses = paddle_refuses(a.shape);
  if (!refuses) return fmt::format("{}: Paddle builds this shape", shape_label(a.shape));
  return fmt::format(
      "{}: {} ({}), so Paddle would refuse this shape; the prediction is the plan its schedule creator builds "
      "without that assertion",
      shape_label(a.shape), refuses->assertion, refuses->asserted_in);
}

std::string text(const assumption::Balanced&) { return "balanced: every stage at the median stage's costs"; }

std::string text(const assumption::StageScale& a) {
  return fmt::format("stage {}: every job's cost x {:g}", a.stage, a.factor);
}

std::string text(const assumption::OtherJobs& a) {
  return fmt::format("{} other timed job(s) (lr, communication) are counted with the optimizer", a.count);
}

std::string text(const assumption::ReplayedSteps& a) {
  return fmt::format(
      "each of the last {} measured step(s) replayed on each of the {} replica(s) with that step's jobs' own "
      "deviations from their costs; a step lasts as long as its slowest replica (steps replayed from the last "
      "back until the mean period's range is within 0.5%, at least 4; a target replays the same steps, and only "
      "the replicas within 3% of a step's slowest under the measured plan)",
      a.steps, a.replicas);
}

std::string text(const assumption::Pieces& a) {
  return fmt::format("{} piece(s) of overlapped jobs are not modelled", a.count);
}

// ---- assumptions: memory -------------------------------------------------

std::string text(const assumption::NoMemorySamples&) {
  return "memory: the run has no memory samples (Paddle's [Pipeline details] lines, logged with "
         "FLAGS_profile_pipeline_details_steps): no peak memory is measured or predicted";
}

std::string text(const assumption::MemoryModel&) {
  return "memory: a stage's peak is its static part (allocated before the step's first forward, the median) plus "
         "the activations it holds at once: a forward adds its micro-batch's activation (After_forward - "
         "Before_forward, the median per chunk), its backward frees it; another M holds the same activation per "
         "micro-batch; what a job allocates and frees within itself (workspaces, the first step's gradients) is not "
         "modelled";
}

std::string text(const assumption::MemorySplitBackward&) {
  return "memory: a split backward keeps the activation through its backward_b and frees it at its backward_w "
         "(assumed: the samples do not say when a split backward frees it)";
}

std::string text(const assumption::MemoryOtherV&) {
  return "memory: a chunk of another V holds the stage's activation per micro-batch / V (a VPP chunk holds its own "
         "activations)";
}

std::string text(const assumption::DeviceMemory& a) {
  return fmt::format(
      "device memory: {} (--device-memory): a target fits when every stage's predicted peak is at most that; one "
      "that does not is ranked after those that do and never recommended",
      format_gib(a.bytes));
}

// ---- suggestions ---------------------------------------------------------

// A suggestion's peak memory against the measured plan's, in words: in bytes
// where the memory model has both, else in micro-batch activations.
std::string memory_text(const WhatifSuggestion& s) {
  const int64_t base_bytes = s.measured_peak_memory_bytes;
  if (s.peak_memory_bytes >= 0 && base_bytes > 0) {
    std::string mem = fmt::format("peak memory {}", format_gib(s.peak_memory_bytes));
    if (s.peak_memory_bytes != base_bytes) {
      mem += fmt::format(" ({:+.0f}%)", (static_cast<double>(s.peak_memory_bytes) / base_bytes - 1) * 100);
    }
    return mem;
  }
  if (std::abs(s.peak_memory - s.measured_peak_memory) > 1e-9 && s.measured_peak_memory > 0) {
    return fmt::format("peak memory {:+.0f}%", (s.peak_memory / s.measured_peak_memory - 1) * 100);
  }
  return "same peak memory";
}

}  // namespace

std::string plan_difference_text(const PlanDifference& d, const PlanShape& shape) {
  auto job = [&](const std::optional<PlanJob>& j) {
    return j ? fmt::format("{}:{}", plan_job_type(shape, *j), j->micro_batch) : std::string("the step's end");
  };
  return fmt::format("rank {} step {}, job {}: {} where the plan has {}", d.rank, d.step, d.job, job(d.got),
                     job(d.want));
}

std::string warning_text(const ModelWarning& warning) {
  return std::visit([](const auto& w) { return text(w); }, warning);
}

std::vector<std::string> warning_texts(const std::vector<ModelWarning>& warnings) {
  std::vector<std::string> out;
  out.reserve(warnings.size());
  for (const ModelWarning& w : warnings) out.push_back(warning_text(w));
  return out;
}

std::string refusal_text(const model_warning::Refusal& r) {
  return fmt::format(
             "{:.0f}% of the modelled run's rank-steps do not run the {} plan the model replays ({}): the run is not "
             "the schedule recognised (another run's?), so no prediction from it means anything",
             r.share * 100, shape_label(r.shape), plan_difference_text(r.example, r.shape)) +
         " (--steps or --run can select a part that does)";
}

std::string assumption_text(const Assumption& assumption) {
  return std::visit([](const auto& a) { return text(a); }, assumption);
}

std::vector<std::string> assumption_texts(const std::vector<Assumption>& assumptions) {
  std::vector<std::string> out;
  out.reserve(assumptions.size());
  for (const Assumption& a : assumptions) out.push_back(assumption_text(a));
  return out;
}

std::string shape_label(const PlanShape& s) {
  std::string label = fmt::format("{} M={}", schedule_name(s.schedule), s.micro_batches);
  if (s.chunks > 1) label += fmt::format(" V={}", s.chunks);
  return label;
}

std::string outcome_label(const WhatifOutcome& o) {
  return o.named_by_schedule ? std::string(schedule_name(o.shape.schedule)) : shape_label(o.shape);
}

std::string outcome_error(const WhatifOutcome& o, const WhatifReport& r) {
  if (!o.error.empty()) return o.error;
  return o.refused && r.refusal ? refusal_text(*r.refusal) : std::string();
}

std::string change_text(const SuggestedChange& c) {
  switch (c.kind) {
    case SuggestedChange::Kind::kSchedule: {
      std::string name(schedule_name(c.shape.schedule));
      return c.shape.chunks > 1 ? fmt::format("{} V={}", name, c.shape.chunks) : name;
    }
    case SuggestedChange::Kind::kMicroBatches: return fmt::format("M={}", c.shape.micro_batches);
    case SuggestedChange::Kind::kBalance: break;
  }
  return c.stage >= 0 ? fmt::format("balancing stage {}", c.stage) : std::string("balancing the stages");
}

std::string suggestion_text(const WhatifSuggestion& s) {
  std::string text = fmt::format("{}: -{:.0f}% {} (-{:.1f}% to -{:.1f}%), {}", change_text(s.change),
                                 s.period_gain * 100, s.per_micro_batch ? "time per micro-batch" : "period",
                                 s.gain_lo * 100, s.gain_hi * 100, memory_text(s));
  if (const ScheduleRow* refuses = paddle_refuses(s.change.shape)) text += fmt::format(" ({})", refuses->assertion);
  return text;
}

}  // namespace ppt
