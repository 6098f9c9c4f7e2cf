// A schedule's plan: each pipeline stage's job order within one step, as
// Paddle builds it (python/paddle/distributed/passes/pipeline_scheduler_pass/,
// each pass's _create_job_list; docs/schedules.md describes every plan).
//
// Stages are 0..P-1, micro-batches 0..M-1 (ids restart per chunk), chunks
// 0..V-1. A plan leaves the optimizer out: it ends each step on every stage.
// The plans are pure functions of the shape; a shape Paddle would refuse
// (check_plan_shape) gets no plan.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "passes/schedule.h"

namespace ppt {

// A job as the plan has it: a whole backward, or its two halves (backward_b,
// the input gradient sent upstream; backward_w, the weight gradient, local).
enum class PlanRole : uint8_t { kForward, kBackward, kBackwardB, kBackwardW };

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
  int32_t chunks = 1;         // V: above 1 for VPP and ZBVPP only
  // VPP with split_backward (Paddle's attribute of that name): when M == P,
  // every backward is a backward_b and the backward_w run at the step's end.
  bool split_backward = false;
  bool operator==(const PlanShape&) const = default;
};

// The ZB-VPP plans one run asks for, by (P, M, V), each with why Paddle's
// schedule creator fails where it does. Building one is O(P * V * M) jobs
// times a few tries, and a run asks for the same shape again and again
// (check_plan_shape before every plan, whatif's targets and replays, stats'
// suggestions); the other schedules' plans are cheap and never kept. The
// caller owns it for one run, on one thread, and passes it to the functions
// below; without one (nullptr) each call builds the plan it needs afresh.
struct PlanCache {
  struct Built {
    std::vector<std::vector<PlanJob>> plans;  // by stage; empty when `error` is set
    std::string error;                        // why the creator fails, or ""
  };
  std::map<std::tuple<int32_t, int32_t, int32_t>, Built> zbvpp;
};

// "forward", "backward", "backward_b", "backward_w".
const char* plan_role_name(PlanRole role);

// "" when Paddle builds a plan for the shape, else why not ("VPP needs M a
// multiple of P: M=6, P=4").
std::string check_plan_shape(const PlanShape& shape, PlanCache* cache = nullptr);

// Stage `stage`'s jobs for one step, in order, without the optimizer; empty
// when check_plan_shape refuses the shape or the stage is out of range.
std::vector<PlanJob> stage_plan(const PlanShape& shape, int32_t stage, PlanCache* cache = nullptr);

// Every stage's plan (stage_plan for 0..P-1; ZBVPP's are built together).
std::vector<std::vector<PlanJob>> pipeline_plan(const PlanShape& shape, PlanCache* cache = nullptr);

// The job's type as Paddle names it for that schedule: forward, backward,
// backward_b, backward_w without chunks; forward0, backward1, backward_b0,
// backward_w1 with chunks (VPP, ZBVPP).
std::string plan_job_type(const PlanShape& shape, const PlanJob& job);

// The virtual stage of the job's chunk on `stage` (virtual_stage(), schedule.h).
int32_t plan_virtual_stage(const PlanShape& shape, int32_t stage, int32_t chunk);

}  // namespace ppt
