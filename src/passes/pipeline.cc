#include "passes/pipeline.h"

namespace ppt {

PipelinePlan decide_pipeline(const Timeline& tl, int32_t pp_degree_option, unsigned threads) {
  PipelinePlan plan;
  plan.classes = classify_types(tl.types);
  plan.orders = rank_orders(tl, threads);
  plan.shape = infer_pipeline_shape(tl, plan.orders, plan.classes, pp_degree_option);
  plan.schedule = recognize_schedule(plan.orders, plan.classes, plan.shape);
  return plan;
}

}  // namespace ppt
