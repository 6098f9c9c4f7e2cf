// Comparing two runs: did a change make the schedule worse, and where?
//
// Works on two Stats (computed from logs, or read back from `stats --json`),
// so a stored baseline can be compared with a new run:
//  - the metric (GateMetric): the step period by default (start of a step to
//    the start of the next: what an iteration costs, time between steps
//    included), the busy span (first job start to last job end of a step),
//    or the throughput (steps per second, 1 / mean period). The verdict is
//    `slower` / `faster` when B's change in it is beyond the noise, `same`
//    otherwise. The noise is the larger of `noise_floor_pct` and twice the
//    standard error of the difference of the means, as a percentage of A's.
//    When a side has no period (one step, or a baseline written before
//    periods were measured) and the metric was not chosen, the busy span is
//    used and `metric_note` says why; when it was chosen, `gate_error` says
//    it cannot be measured;
//  - per step (matched by number, else by position): period and busy span;
//  - per rank (matched by rank number): busy and idle time per step and the
//    bubble ratio, A against B; the ranks whose busy time per step changed by
//    more than `rank_change_pct` are named, largest change first;
//  - per job type, over all ranks and on each rank: mean duration A against B;
//  - schedule changes: for each rank, the first position where B's plan
//    (job order, schedule.h) differs from A's;
//  - the gate: `fail_if_slower_pct` >= 0 trips when B is more than that many
//    percent slower than A in the metric (for throughput: B's steps per
//    second that many percent below A's).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/stats.h"

namespace ppt {

enum class GateMetric { kPeriod, kBusy, kThroughput };
std::string_view gate_metric_name(GateMetric m);  // "period", "busy", "throughput"
std::optional<GateMetric> gate_metric_from_name(std::string_view name);

struct DiffOptions {
  double noise_floor_pct = 1.0;
  double rank_change_pct = 5.0;
  double fail_if_slower_pct = -1;  // < 0: no gate
  GateMetric metric = GateMetric::kPeriod;
  bool metric_chosen = false;  // the user named it (--gate): no fallback
  std::string b_label = "B";   // what the judged run is called (Diff::b_label)
};

enum class Verdict { kSame, kSlower, kFaster };
std::string_view verdict_name(Verdict v);  // "same", "slower", "faster"

struct TypeDelta {
  std::string type;
  uint64_t count_a = 0, count_b = 0;
  double mean_a_ns = 0, mean_b_ns = 0;
  int64_t p50_a_ns = 0, p50_b_ns = 0;
  int64_t p95_a_ns = 0, p95_b_ns = 0;
  double delta_pct = 0;  // of the mean; 0 when the type is missing on one side
};

struct RankDelta {
  int32_t rank = 0;
  int32_t stage = 0;
  bool in_a = true, in_b = true;        // a rank missing on one side has zeros there
  double busy_a_ns = 0, busy_b_ns = 0;  // per step
  double idle_a_ns = 0, idle_b_ns = 0;  // per step
  double busy_delta_pct = 0;
  double idle_delta_pct = 0;
  double bubble_a = 0, bubble_b = 0;
  double bubble_delta = 0;       // b - a, a ratio (0.05 = 5 points)
  std::vector<TypeDelta> types;  // the rank's job types
};

struct ScheduleChange {
  int32_t rank = 0;
  size_t index = 0;  // first position (0-based) where the plans differ
  std::string a, b;  // the jobs there ("" past the end of a plan)
  size_t a_jobs = 0, b_jobs = 0;
};

// Means of the steps' spans, or of their periods, A against B.
struct StepTimeDelta {
  double a_ns = 0, b_ns = 0;  // means
  double a_median_ns = 0, b_median_ns = 0;
  uint32_t a_steps = 0, b_steps = 0;  // steps measured (for periods: steps with a next one)
  double delta_pct = 0;               // (b - a) / a
  double noise_pct = 0;
};

struct ThroughputDelta {
  Throughput a, b;
  double delta_pct = 0;  // of steps per second, (b - a) / a: negative is slower
};

// One step of each side.
struct StepDelta {
  int32_t step_a = 0, step_b = 0;
  bool in_a = true, in_b = true;
  int64_t period_a_ns = -1, period_b_ns = -1;  // -1: none (a run's last step)
  int64_t span_a_ns = 0, span_b_ns = 0;
  double period_delta_pct = 0;  // 0 when a side has no period
  double span_delta_pct = 0;
};

struct Diff {
  std::string a_source, b_source;
  std::string b_label = "B";  // what the reports call the judged run: B, or C, D... for the later ones of a diff
  std::string a_schedule, b_schedule;  // names, with P, M, V
  double bubble_a = 0, bubble_b = 0;
  double bubble_a_error = 0, bubble_b_error = 0;  // ± from a coarse time resolution (Stats), 0 for ns input
  StepTimeDelta step_time;                        // busy spans
  StepTimeDelta period;                           // start to next start
  ThroughputDelta throughput;
  GateMetric metric = GateMetric::kPeriod;  // what the verdict and the gate use
  std::string metric_note;                  // why it is not the one asked for; "" when it is
  std::string gate_error;                   // the chosen metric cannot be measured (a usage error)
  double slower_pct = 0;                    // how much slower B is in the metric (negative: faster)
  double noise_pct = 0;                     // the metric's noise
  Verdict verdict = Verdict::kSame;
  double fail_if_slower_pct = -1;
  bool gate_failed = false;
  std::vector<StepDelta> steps;                  // matched by number, else by position
  std::vector<RankDelta> ranks;                  // by rank
  std::vector<int32_t> changed_ranks;            // busy changed beyond rank_change_pct, largest first
  std::vector<TypeDelta> types;                  // by type name
  std::vector<ScheduleChange> schedule_changes;  // by rank
  std::vector<Straggler> new_stragglers;         // in B and not (for that rank and type) in A
  std::vector<std::string> notes;                // things that make the comparison weaker
};

// The comparison of B against A; pure (batch --baseline calls it too).
Diff diff_stats(const Stats& a, const Stats& b, const DiffOptions& options = {});

// "period +23.0%" / "throughput -18.7%": the metric and B's change in it.
std::string metric_change(const Diff& diff);

}  // namespace ppt
