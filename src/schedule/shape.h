// The words every schedule is described in: which schedule, a job's role in
// it, a job of a plan and the shape a plan is built for. Types only; the
// schedules themselves are rows of one table (schedules.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace ppt {

// The schedules Paddle builds plans for (schedules.h has one row each), and
// what recognising a run's schedule may also find.
enum class ScheduleKind : uint8_t {
  kUnknown,
  kNoPipeline,  // only `default` jobs: no pipeline parallelism
  kFThenB,
  k1F1B,
  kEager1F1B,
  kVPP,
  kZBH1,
  kZBVPP,
};

// A job's role in a schedule, the one list (plans, their replay, the
// recognised runs and the demo's runs all use it): a whole backward, or its
// two halves (backward_b, the input gradient sent upstream; backward_w, the
// weight gradient, local).
enum class PlanRole : uint8_t { kForward, kBackward, kBackwardB, kBackwardW };

// A whole backward or its input-gradient half: what the dependency rule
// (virtual_stage.h) calls a backward, fed by the next virtual stage.
inline bool is_input_backward(PlanRole role) { return role == PlanRole::kBackward || role == PlanRole::kBackwardB; }

struct PlanJob {
  PlanRole role = PlanRole::kForward;
  int32_t chunk = 0;
  int32_t micro_batch = 0;
  bool operator==(const PlanJob&) const = default;
};

struct PlanShape {
  ScheduleKind schedule = ScheduleKind::k1F1B;
  int32_t stages = 1;         // P
  int32_t micro_batches = 1;  // M (per chunk)
  int32_t chunks = 1;         // V: above 1 for the chunked schedules only (schedule_chunked)
  // VPP with split_backward (Paddle's attribute of that name): when M == P,
  // every backward is a backward_b and the backward_w run at the step's end.
  bool split_backward = false;
  bool operator==(const PlanShape&) const = default;
};

// The plans one run asks for that are costly to build, by (P, M, V), each
// with why Paddle's schedule creator fails where it does (the greedy
// creator's plans, plan_builders.h). Building one is O(P * V * M) jobs times
// a few tries, and a run asks for the same shape again and again
// (check_plan_shape before every plan, whatif's targets and replays, stats'
// suggestions); the other schedules' plans are cheap and never kept. The
// caller owns it for one run, on one thread, and passes it to the plan
// functions (plan.h); without one (nullptr) each call builds the plan it
// needs afresh.
struct PlanCache {
  struct Built {
    std::vector<std::vector<PlanJob>> plans;  // by stage; empty when `error` is set
    std::string error;                        // why the creator fails, or ""
  };
  std::map<std::tuple<int32_t, int32_t, int32_t>, Built> greedy;  // by (P, M, V)
};

}  // namespace ppt
