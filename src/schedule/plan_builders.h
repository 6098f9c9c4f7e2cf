// Each schedule's plan as Paddle builds it
// (python/paddle/distributed/passes/pipeline_scheduler_pass/, each pass's
// _create_job_list; docs/schedules.md describes every plan), and the rule of
// the shapes Paddle builds it for. The table of schedules (schedules.h) names
// one builder and one rule per row; everything else asks the table (plan.h).
//
// Stages are 0..P-1, micro-batches 0..M-1 (ids restart per chunk), chunks
// 0..V-1. A plan leaves the optimizer out: it ends each step on every stage.
// The plans are pure functions of the shape.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "schedule/shape.h"

namespace ppt::plan_builders {

// A builder appends stage `stage`'s jobs (0 <= stage < P) for a shape its
// rule accepts; the builders that build every stage at once keep them in
// `cache`.
void fthenb(const PlanShape& shape, int32_t stage, PlanCache& cache, std::vector<PlanJob>& out);
void one_f_one_b(const PlanShape& shape, int32_t stage, PlanCache& cache, std::vector<PlanJob>& out);
void eager_one_f_one_b(const PlanShape& shape, int32_t stage, PlanCache& cache, std::vector<PlanJob>& out);
void vpp(const PlanShape& shape, int32_t stage, PlanCache& cache, std::vector<PlanJob>& out);
void zbh1(const PlanShape& shape, int32_t stage, PlanCache& cache, std::vector<PlanJob>& out);
void zbvpp(const PlanShape& shape, int32_t stage, PlanCache& cache, std::vector<PlanJob>& out);

// A rule says "" when Paddle builds the plan for the shape (P, M, V >= 1
// checked before), else why not, naming the schedule `name` ("1F1B needs
// M >= P: M=2, P=4").
std::string any_shape(std::string_view name, const PlanShape& shape, PlanCache& cache);
std::string m_at_least_p(std::string_view name, const PlanShape& shape, PlanCache& cache);
std::string m_at_least_2p_minus_1(std::string_view name, const PlanShape& shape, PlanCache& cache);
std::string zbvpp_shape(std::string_view name, const PlanShape& shape, PlanCache& cache);

}  // namespace ppt::plan_builders
