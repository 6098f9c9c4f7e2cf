// Recognising the schedule, P, M and V from the ranks' job orders.
#include <catch2/catch.hpp>

#include "analysis/stats.h"
#include "passes/pipeline_stage.h"
#include "passes/schedule.h"
#include "support/test_support.h"

namespace ppt {
namespace {

using testing::rank_of;

TEST_CASE("every simulated schedule is recognised with its P, M and V", "[stats][schedule]") {
  struct Case {
    std::string args;
    ScheduleKind kind;
    std::string variant;
    int32_t p, m, v, replicas;
    std::string p_source;
  };
  const std::vector<Case> cases = {
      {"--schedule fthenb --stages 4 --micro-batches 6", ScheduleKind::kFThenB, "", 4, 6, 1, 1, "all ranks"},
      {"--schedule fthenb --stages 4 --dp 2 --micro-batches 6", ScheduleKind::kFThenB, "", 4, 6, 1, 2, "start times"},
      {"--schedule 1f1b --stages 4 --micro-batches 8", ScheduleKind::k1F1B, "", 4, 8, 1, 1, "job order"},
      {"--schedule 1f1b --stages 3 --dp 3 --micro-batches 5", ScheduleKind::k1F1B, "", 3, 5, 1, 3, "job order"},
      {"--schedule pir1f1b --stages 4 --micro-batches 8", ScheduleKind::k1F1B, "", 4, 8, 1, 1, "job order"},
      {"--schedule eager1f1b --stages 4 --micro-batches 8", ScheduleKind::kEager1F1B, "", 4, 8, 1, 1, "job order"},
      {"--schedule vpp --stages 4 --micro-batches 8 --chunks 2", ScheduleKind::kVPP, "", 4, 8, 2, 1, "job order"},
      {"--schedule vpp --stages 2 --dp 2 --micro-batches 4 --chunks 3", ScheduleKind::kVPP, "", 2, 4, 3, 2,
       "job order"},
      {"--schedule zbh1 --stages 4 --micro-batches 8", ScheduleKind::kZBH1, "", 4, 8, 1, 1, "job order"},
      {"--schedule zbvpp --stages 4 --micro-batches 8 --chunks 2", ScheduleKind::kZBVPP, "", 4, 8, 2, 1, "job order"},
      {"--schedule zbvpp --stages 3 --dp 2 --micro-batches 6 --chunks 2", ScheduleKind::kZBVPP, "", 3, 6, 2, 2,
       "job order"},
      {"--schedule overlap --stages 4 --micro-batches 8", ScheduleKind::k1F1B, "backward/forward overlap", 4, 8, 1, 1,
       "job order"},
      {"--schedule 1f1b --stages 4 --micro-batches 8 --no-mb", ScheduleKind::k1F1B, "", 4, 8, 1, 1, "job order"},
  };
  testing::TempDir dir;
  int n = 0;
  for (const Case& c : cases) {
    INFO(c.args);
    std::string logs = testing::generate_log_dir(dir, "s" + std::to_string(n++), c.args + " --steps 2 --seed 5");
    Stats st = testing::stats_of(testing::load_dir(logs));
    INFO(st.schedule.evidence);
    CHECK(st.schedule.kind == c.kind);
    CHECK(st.schedule.variant == c.variant);
    CHECK(st.schedule.pp_degree == c.p);
    CHECK(st.schedule.micro_batches == c.m);
    CHECK(st.schedule.chunks == c.v);
    CHECK(st.schedule.replicas == c.replicas);
    CHECK(st.schedule.pp_degree_source == c.p_source);
    CHECK(st.schedule.ideal_bubble_ratio >= 0);
    for (const RankStats& r : st.ranks) CHECK(r.stage == r.rank % c.p);
  }
}

TEST_CASE("a subset of the ranks (--devices) keeps the whole run's ranks, stages and P", "[stats][schedule]") {
  testing::TempDir dir;
  // 8 ranks: 4 stages x 2 replicas; --devices 1,2,3 on one machine of 8.
  std::string logs = testing::generate_log_dir(dir, "dp",
                                               "--schedule 1f1b --stages 4 --dp 2 --micro-batches 4 --steps 2 "
                                               "--seed 3 --slow 6:1.4");
  LayoutRequest request;
  request.log_dir = logs;
  request.devices = {1, 2, 3, 5, 6, 7};
  BuildOptions build;
  build.threads = 1;
  LoadResult loaded = load_timeline(request, build);
  REQUIRE(loaded.timeline);
  const Timeline& tl = *loaded.timeline;
  CHECK(tl.world_ranks == 8);
  CHECK(tl.partial == "ranks 1-3, 5-7 of 8 loaded (--devices)");
  Stats st = testing::stats_of(tl);
  CHECK(st.schedule.pp_degree == 4);
  CHECK(st.schedule.pp_degree_source == "job order");
  CHECK(st.schedule.replicas == 2);
  CHECK(st.schedule.kind == ScheduleKind::k1F1B);
  CHECK(rank_of(st, 6).stage == 2);
  CHECK(rank_of(st, 6).replica == 1);
  REQUIRE_FALSE(st.stragglers.empty());
  CHECK(st.stragglers[0].rank == 6);

  // One rank per stage loaded: nothing shows a period, so the run's 8 ranks are one pipeline.
  request.devices = {1, 2};
  LoadResult two = load_timeline(request, build);
  REQUIRE(two.timeline);
  Stats st2 = testing::stats_of(*two.timeline);
  CHECK(st2.schedule.pp_degree == 8);
  CHECK(rank_of(st2, 2).stage == 2);
}

TEST_CASE("a run without pipeline jobs has schedule none and no bubble promise above zero", "[stats][schedule]") {
  testing::TempDir dir;
  std::string logs = testing::generate_log_dir(dir, "d", "--schedule default --stages 3 --steps 2");
  Stats st = testing::stats_of(testing::load_dir(logs));
  CHECK(st.schedule.kind == ScheduleKind::kNoPipeline);
  CHECK(st.schedule.ideal_bubble_ratio == 0.0);
}

TEST_CASE("the pp-degree option overrides the inferred depth", "[stats][schedule]") {
  testing::TempDir dir;
  std::string logs = testing::generate_log_dir(dir, "f", "--schedule fthenb --stages 2 --dp 3 --micro-batches 4");
  Timeline tl = testing::load_dir(logs);
  Stats st = testing::stats_of(tl, {}, 2);
  CHECK(st.schedule.pp_degree == 2);
  CHECK(st.schedule.replicas == 3);
  CHECK(st.schedule.pp_degree_source == "--pp-degree");
  CHECK(rank_of(st, 5).stage == 1);
  CHECK(rank_of(st, 5).replica == 2);
}

TEST_CASE("warm-up counts that fit no known schedule are reported as unknown with the evidence", "[stats][schedule]") {
  testing::TempDir dir;
  // Three stages that all run two forwards before their first backward:
  // 1F1B would run 3, 2, 1 and Eager1F1B 5, 3, 1.
  std::vector<testing::HandJob> jobs;
  for (int r = 0; r < 3; ++r) {
    int64_t t = r * 5;  // overlapping in time: one run (disjoint ranks would be three runs)
    for (auto [type, mb] : std::vector<std::pair<std::string, int>>{
             {"forward", 0}, {"forward", 1}, {"backward", 0}, {"forward", 2}, {"backward", 1}, {"backward", 2}}) {
      jobs.push_back({r, type, mb, t, t + 10});
      t += 10;
    }
  }
  Stats st = testing::stats_of(testing::load_hand_run(dir, "odd", jobs));
  CHECK(st.schedule.kind == ScheduleKind::kUnknown);
  CHECK(st.schedule.ideal_bubble_ratio < 0);
  CHECK_THAT(st.schedule.evidence, Catch::Contains("2, 2, 2") && Catch::Contains("3, 2, 1"));
}

TEST_CASE("ideal bubble ratios are the plans' own with equal stage costs", "[stats][schedule]") {
  struct Case {
    ScheduleKind kind;
    int32_t p, m, v;
    double want;
  };
  // FThenB, 1F1B and Eager1F1B take (M + P - 1)(F + B) with F = 1, B = 2, as
  // the textbook has it; VPP (V M + P - 1) over V M chunk jobs; Paddle's ZB-H1
  // leaves 5 of 29 idle where the textbook ZB-H1 promised 3/27.
  const std::vector<Case> cases = {
      {ScheduleKind::kFThenB, 4, 8, 1, 3.0 / 11},    {ScheduleKind::k1F1B, 8, 64, 1, 7.0 / 71},
      {ScheduleKind::kEager1F1B, 4, 8, 1, 3.0 / 11}, {ScheduleKind::kVPP, 4, 8, 2, 3.0 / 19},
      {ScheduleKind::kZBH1, 4, 8, 1, 5.0 / 29},      {ScheduleKind::k1F1B, 1, 8, 1, 0.0},
      {ScheduleKind::kUnknown, 4, 8, 1, -1.0},       {ScheduleKind::k1F1B, 4, 0, 1, -1.0},
  };
  for (const Case& c : cases) {
    INFO(schedule_name(c.kind) << " P=" << c.p << " M=" << c.m << " V=" << c.v);
    std::string formula;
    CHECK(ideal_bubble_ratio(c.kind, c.p, c.m, c.v, &formula) == Approx(c.want));
    if (c.want > 0) CHECK_THAT(formula, Catch::Contains("plan replayed"));
  }
  // ZB-VPP's plan fills more of the bubble than ZB-H1's, never all of it.
  const double zbv = ideal_bubble_ratio(ScheduleKind::kZBVPP, 4, 8, 2);
  CHECK(zbv > 0);
  CHECK(zbv < ideal_bubble_ratio(ScheduleKind::kZBH1, 4, 8, 1));
}

TEST_CASE("pipeline stages and replicas of a rank", "[stats][schedule]") {
  CHECK(pipeline_stage(13, 4) == 1);
  CHECK(pipeline_replica(13, 4) == 3);
  CHECK(check_pp_degree(4, 12).empty());
  CHECK_FALSE(check_pp_degree(5, 12).empty());
  CHECK_FALSE(check_pp_degree(0, 12).empty());
}

TEST_CASE("each rank's plan is its most common job order, in printed order", "[stats][schedule]") {
  testing::TempDir dir;
  std::string logs = testing::generate_log_dir(dir, "o", "--schedule 1f1b --stages 2 --micro-batches 3 --steps 3");
  Timeline tl = testing::load_dir(logs);
  std::vector<RankOrder> orders = rank_orders(tl);
  REQUIRE(orders.size() == 2);
  std::vector<std::string> r1;
  for (const OrderItem& it : orders[1].order) r1.push_back(order_item_text(tl, it));
  CHECK(r1 == std::vector<std::string>{"forward:0", "backward:0", "forward:1", "backward:1", "forward:2", "backward:2",
                                       "optimizer:0"});
  CHECK(orders[1].steps == 3);
  CHECK(orders[1].steps_like_order == 3);
}

TEST_CASE("a rank's order is by printed line even where the lines are not in start order", "[stats][schedule]") {
  // forward 1 printed before forward 0, which started first: start order
  // and printed order differ within the step.
  Timeline tl = testing::timeline_from_lines(
      {{0,
        {testing::job_line("forward", 1, 100, 150), testing::job_line("forward", 0, 0, 50),
         testing::job_line("backward", 0, 200, 250), testing::job_line("backward", 1, 300, 350)}}});
  std::vector<RankOrder> orders = rank_orders(tl);
  REQUIRE(orders.size() == 1);
  std::vector<std::string> r0;
  for (const OrderItem& it : orders[0].order) r0.push_back(order_item_text(tl, it));
  CHECK(r0 == std::vector<std::string>{"forward:1", "forward:0", "backward:0", "backward:1"});
}

}  // namespace
}  // namespace ppt
