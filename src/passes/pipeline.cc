#include "passes/pipeline.h"

namespace ppt {

PipelinePlan decide_pipeline(const Timeline& tl, int32_t pp_degree_option, unsigned threads, bool last_run_only) {
  PipelinePlan plan;
  plan.classes = classify_types(tl.types);
  // The schedule is the measured run's: stats, whatif and batch measure the
  // last run (or the one --run keeps), and a log with two runs (M=4, then a
  // rerun at M=8) must not pair the first run's schedule and ideal with the
  // second's times.
  plan.orders =
      rank_orders(tl, threads, last_run_only && tl.runs.size() > 1 ? static_cast<int32_t>(tl.runs.back().index) : -1);
  plan.shape = infer_pipeline_shape(tl, plan.orders, plan.classes, pp_degree_option);
  plan.schedule = recognize_schedule(plan.orders, plan.classes, plan.shape);
  return plan;
}

}  // namespace ppt
