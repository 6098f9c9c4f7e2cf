#include "schedule/plan.h"

#include <fmt/format.h>

#include "schedule/virtual_stage.h"

namespace ppt {

const char* plan_role_name(PlanRole role) {
  switch (role) {
    case PlanRole::kForward: return "forward";
    case PlanRole::kBackward: return "backward";
    case PlanRole::kBackwardB: return "backward_b";
    case PlanRole::kBackwardW: return "backward_w";
  }
  return "?";
}

std::string check_plan_shape(const PlanShape& s, PlanCache* cache) {
  const int32_t p = s.stages, m = s.micro_batches, v = s.chunks;
  if (p < 1) return fmt::format("a pipeline needs at least one stage: P={}", p);
  if (m < 1) return fmt::format("a step needs at least one micro-batch: M={}", m);
  if (v < 1) return fmt::format("a stage needs at least one chunk: V={}", v);
  const ScheduleRow* row = schedule_row(s.schedule);
  if (!row) return fmt::format("no plan for the schedule {}", schedule_name(s.schedule));
  PlanCache once;  // without a cache: built for this check alone
  if (std::string why = row->shape_rule(row->name, s, cache ? *cache : once); !why.empty()) return why;
  if (!row->chunked && v != 1) return fmt::format("{} has one chunk: V={}", row->name, v);
  if (s.split_backward && !row->split_option) {
    for (const ScheduleRow& r : schedule_rows()) {
      if (r.split_option) return fmt::format("split_backward is {}'s only", r.name);
    }
  }
  return {};
}

std::vector<PlanJob> stage_plan(const PlanShape& s, int32_t stage, PlanCache* cache) {
  std::vector<PlanJob> out;
  PlanCache once;  // without a cache: the check and the plan share one build
  PlanCache& plans = cache ? *cache : once;
  if (!check_plan_shape(s, &plans).empty() || stage < 0 || stage >= s.stages) return out;
  schedule_row(s.schedule)->plan(s, stage, plans, out);
  return out;
}

std::vector<std::vector<PlanJob>> pipeline_plan(const PlanShape& s, PlanCache* cache) {
  std::vector<std::vector<PlanJob>> out;
  PlanCache once;  // without a cache: the check and the plan share one build
  PlanCache& plans = cache ? *cache : once;
  if (!check_plan_shape(s, &plans).empty()) return out;
  const PlanBuilder build = schedule_row(s.schedule)->plan;
  out.resize(s.stages);
  for (int32_t stage = 0; stage < s.stages; ++stage) build(s, stage, plans, out[stage]);
  return out;
}

std::string plan_job_type(const PlanShape& s, const PlanJob& j) {
  std::string t = plan_role_name(j.role);
  if (schedule_chunked(s.schedule)) t += std::to_string(j.chunk);
  return t;
}

int32_t plan_virtual_stage(const PlanShape& s, int32_t stage, int32_t chunk) {
  return virtual_stage(s.schedule, s.stages, stage, chunk);
}

}  // namespace ppt
