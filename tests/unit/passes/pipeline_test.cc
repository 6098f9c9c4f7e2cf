// The pipeline pass: P and the schedule decided once, from the job order or
// the option.
#include <catch2/catch.hpp>

#include "passes/dependencies.h"
#include "passes/pipeline.h"
#include "support/test_support.h"

namespace ppt::testing {

TEST_CASE("pipeline: P from the job order, or from --pp-degree") {
  auto g = generate_logs("--schedule 1f1b --stages 2 --dp 2 --micro-batches 4 --steps 2 --seed 3");
  PipelinePlan inferred = decide_pipeline(g->timeline, 0, 1);
  CHECK(inferred.shape.pp_degree == 2);
  CHECK(inferred.shape.replicas == 2);
  CHECK(inferred.shape.source == "job order");
  CHECK(inferred.schedule.kind == ScheduleKind::k1F1B);
  CHECK(inferred.schedule.pp_degree == 2);
  CHECK(inferred.orders.size() == 4);
  CHECK(inferred.classes.size() == g->timeline.types.size());

  PipelinePlan given = decide_pipeline(g->timeline, 4, 1);
  CHECK(given.shape.pp_degree == 4);
  CHECK(given.shape.source == "--pp-degree");
  CHECK(given.schedule.pp_degree == 4);
  // The dependencies follow the plan they are given, not one of their own.
  // P = 2: per replica, direction, step and micro-batch one stage boundary;
  // P = 4 takes the four ranks as one pipeline, three boundaries each.
  CHECK(find_dependencies(g->timeline, inferred, 1).edges.size() == 2u * 2 * 2 * 4 * 1);
  CHECK(find_dependencies(g->timeline, given, 1).edges.size() == 1u * 2 * 2 * 4 * 3);
}

TEST_CASE("pipeline: the plan does not depend on the thread count") {
  auto g = generate_logs("--schedule vpp --stages 2 --chunks 2 --micro-batches 4 --steps 2 --seed 4");
  PipelinePlan one = decide_pipeline(g->timeline, 0, 1);
  PipelinePlan four = decide_pipeline(g->timeline, 0, 4);
  CHECK(one.shape.pp_degree == four.shape.pp_degree);
  CHECK(one.schedule.kind == four.schedule.kind);
  REQUIRE(one.orders.size() == four.orders.size());
  for (size_t i = 0; i < one.orders.size(); ++i) CHECK(one.orders[i].order == four.orders[i].order);
}

}  // namespace ppt::testing
