// Stats as the driver computes them (app/driver.h): the pipeline decided once,
// the dependencies found with it, then the stats with both.
#pragma once

#include "analysis/stats.h"
#include "passes/dependencies.h"
#include "passes/pipeline.h"

namespace ppt::testing {

inline Stats stats_of(const Timeline& tl, const StatsOptions& options = {}, int32_t pp_degree = 0) {
  PipelinePlan plan = decide_pipeline(tl, pp_degree, 1);
  Dependencies deps = find_dependencies(tl, plan, 1);
  return compute_stats(tl, plan, &deps, options);
}

}  // namespace ppt::testing
