// A schedule's plan: each pipeline stage's job order within one step, as
// Paddle builds it (the table's plan builders, schedules.h and
// plan_builders.h; docs/schedules.md describes every plan).
//
// Stages are 0..P-1, micro-batches 0..M-1 (ids restart per chunk), chunks
// 0..V-1. A plan leaves the optimizer out: it ends each step on every stage.
// The plans are pure functions of the shape; a shape Paddle would refuse
// (check_plan_shape) gets no plan.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "schedule/schedules.h"
#include "schedule/shape.h"

namespace ppt {

// "forward", "backward", "backward_b", "backward_w".
const char* plan_role_name(PlanRole role);

// "" when Paddle builds a plan for the shape, else why not ("VPP needs M a
// multiple of P: M=6, P=4"): the general limits, the row's shape rule, its
// chunks and its split_backward attribute.
std::string check_plan_shape(const PlanShape& shape, PlanCache* cache = nullptr);

// Stage `stage`'s jobs for one step, in order, without the optimizer; empty
// when check_plan_shape refuses the shape or the stage is out of range.
std::vector<PlanJob> stage_plan(const PlanShape& shape, int32_t stage, PlanCache* cache = nullptr);

// Every stage's plan (stage_plan for 0..P-1, sharing one cache).
std::vector<std::vector<PlanJob>> pipeline_plan(const PlanShape& shape, PlanCache* cache = nullptr);

// The job's type as Paddle names it for that schedule: forward, backward,
// backward_b, backward_w without chunks; forward0, backward1, backward_b0,
// backward_w1 for a chunked schedule (schedule_chunked).
std::string plan_job_type(const PlanShape& shape, const PlanJob& job);

// The virtual stage of the job's chunk on `stage` (virtual_stage(), virtual_stage.h).
int32_t plan_virtual_stage(const PlanShape& shape, int32_t stage, int32_t chunk);

}  // namespace ppt
