// Replaying a plan with given costs (schedule/replay.h), and the replay read
// back as a Timeline by the project's own passes and stats.
#include "schedule/replay.h"

#include <catch2/catch.hpp>

#include "analysis/stats.h"
#include "passes/dependencies.h"
#include "passes/pipeline.h"
#include "passes/schedule.h"
#include "util/checked.h"

namespace ppt {
namespace {

ReplayCosts equal_costs() {
  ReplayCosts c;
  c.duration_ns = [](int32_t, const PlanJob& j) -> int64_t { return j.role == PlanRole::kBackward ? 2 : 1; };
  return c;
}

TEST_CASE("a replay starts each job when its stage is free and its input has arrived", "[replay]") {
  // FThenB, P=2, M=1, forward 10, backward 20, link lag 3:
  //   stage 0 forward [0, 10); stage 1 forward [13, 23), backward [23, 43);
  //   stage 0 backward [46, 66); optimizers 5 and 7 after each stage's last job.
  ReplayCosts c;
  c.duration_ns = [](int32_t, const PlanJob& j) -> int64_t { return j.role == PlanRole::kForward ? 10 : 20; };
  c.link_ns = [](int32_t from, int32_t to, PlanRole) -> int64_t { return from != to ? 3 : 0; };
  c.optimizer_ns = {5, 7};
  c.step_gap_ns = 100;
  ReplayResult r = replay_plan({ScheduleKind::kFThenB, 2, 1, 1}, c, 2);
  REQUIRE(r.error.empty());
  REQUIRE(r.steps.size() == 2);
  const ReplayedStep& s = r.steps[0];
  REQUIRE(s.stages[0].size() == 2);
  CHECK(s.stages[0][0].start_ns == 0);
  CHECK(s.stages[0][0].end_ns == 10);
  CHECK(s.stages[1][0].start_ns == 13);
  CHECK(s.stages[1][1].start_ns == 23);
  CHECK(s.stages[1][1].end_ns == 43);
  CHECK(s.stages[0][1].start_ns == 46);
  CHECK(s.stages[0][1].end_ns == 66);
  CHECK(s.optimizer[0] == std::pair<int64_t, int64_t>{66, 71});
  CHECK(s.optimizer[1] == std::pair<int64_t, int64_t>{43, 50});
  CHECK(s.end_ns == 71);
  // The next step starts after the gap, on every stage, and repeats the first.
  CHECK(r.steps[1].start_ns == 171);
  CHECK(r.steps[1].stages[1][0].start_ns == 171 + 13);
  CHECK(r.steps[1].end_ns == 171 + 71);
  CHECK(replay_period_ns(r) == Approx(171));
  // Busy: stage 0 runs 10 + 20 + 5, stage 1 10 + 20 + 7, over a span of 71.
  CHECK(replay_busy_ns(s, 0) == 35);
  CHECK(replay_busy_ns(s, 1) == 37);
  CHECK(replay_bubble_ratio(s) == Approx((71.0 - 35 + 71 - 37) / (2 * 71)));
  CHECK(replay_bubble_ratio(r) == Approx(replay_bubble_ratio(s)));
}

TEST_CASE("equal stage costs give Paddle's plans their own bubbles", "[replay]") {
  // 1F1B, P=4, M=8: the span is (M + P - 1)(F + B) = 33, each stage busy 24.
  CHECK(replay_bubble_ratio(replay_plan({ScheduleKind::k1F1B, 4, 8, 1}, equal_costs())) == Approx(3.0 / 11));
  // ZB-H1, P=4, M=8: Paddle's plan leaves 5 of 29 idle per stage (the
  // textbook ZB-H1 promised (P-1)/(3M+P-1) = 1/9).
  ReplayResult zb = replay_plan({ScheduleKind::kZBH1, 4, 8, 1}, equal_costs());
  CHECK(zb.steps[0].end_ns == 29);
  CHECK(replay_bubble_ratio(zb) == Approx(5.0 / 29));
  // One stage never waits.
  CHECK(replay_bubble_ratio(replay_plan({ScheduleKind::k1F1B, 1, 8, 1}, equal_costs())) == 0);
}

TEST_CASE("peak in-flight micro-batches follow each plan's warm-up", "[replay]") {
  const int32_t p = 4, m = 8;
  ReplayResult one = replay_plan({ScheduleKind::k1F1B, p, m, 1}, equal_costs());
  ReplayResult eager = replay_plan({ScheduleKind::kEager1F1B, p, m, 1}, equal_costs());
  ReplayResult all = replay_plan({ScheduleKind::kFThenB, p, m, 1}, equal_costs());
  ReplayResult zb = replay_plan({ScheduleKind::kZBH1, p, m, 1}, equal_costs());
  for (int32_t s = 0; s < p; ++s) {
    CHECK(one.peak_in_flight[s] == p - s);
    CHECK(eager.peak_in_flight[s] == 2 * (p - s) - 1);
    CHECK(all.peak_in_flight[s] == m);
    // backward_b ends a micro-batch's activations: ZB-H1 holds what 1F1B does.
    CHECK(zb.peak_in_flight[s] == p - s);
  }
  // VPP counts chunks: stage 0 of P=4, V=2, M=8 warms up with 2(P-1) + P = 10
  // forwards and holds one more in its first steady pair.
  ReplayResult vpp = replay_plan({ScheduleKind::kVPP, p, m, 2}, equal_costs());
  CHECK(vpp.peak_in_flight[0] == 11);
}

TEST_CASE("a plan that waits for a job that never comes is a deadlock, named", "[replay]") {
  const PlanShape s{ScheduleKind::k1F1B, 2, 2, 1};
  // Stage 0 runs its backward of micro-batch 0 before stage 1 can have run
  // the forward it needs: stage 1 waits for forward 1, stage 0 for backward 0.
  std::vector<std::vector<PlanJob>> plans = {
      {{PlanRole::kForward, 0, 0},
       {PlanRole::kBackward, 0, 0},
       {PlanRole::kForward, 0, 1},
       {PlanRole::kBackward, 0, 1}},
      {{PlanRole::kForward, 0, 1},
       {PlanRole::kForward, 0, 0},
       {PlanRole::kBackward, 0, 0},
       {PlanRole::kBackward, 0, 1}},
  };
  ReplayResult r = replay_plans(s, plans, equal_costs());
  CHECK(r.steps.empty());
  CHECK_THAT(r.error, Catch::Contains("deadlock") && Catch::Contains("stage 0") &&
                          Catch::Contains("backward micro-batch 0") && Catch::Contains("on stage 1"));
  // Both waits are named: they wait on each other.
  CHECK_THAT(r.error, Catch::Contains("stage 0 waits at its job 2") && Catch::Contains("; stage 1 waits at its job 1"));
  // A job twice, or outside the shape, is refused before replaying.
  plans[1][1] = {PlanRole::kForward, 0, 1};
  CHECK_THAT(replay_plans(s, plans, equal_costs()).error, Catch::Contains("twice"));
  plans[1][1] = {PlanRole::kForward, 1, 0};
  CHECK_THAT(replay_plans(s, plans, equal_costs()).error, Catch::Contains("outside"));
  CHECK_THAT(replay_plan({ScheduleKind::kVPP, 4, 3, 2}, equal_costs()).error, Catch::Contains("M >= P"));
}

TEST_CASE("a plan prepared once replays as replay_plans does under every cost given", "[replay]") {
  const PlanShape shape{ScheduleKind::kZBH1, 4, 8, 1};
  const std::vector<std::vector<PlanJob>> plans = pipeline_plan(shape);
  const PreparedReplay prepared = prepare_replay(shape, plans);
  REQUIRE(prepared.error.empty());
  auto same = [](const ReplayResult& a, const ReplayResult& b) {
    REQUIRE(a.error == b.error);
    REQUIRE(a.steps.size() == b.steps.size());
    CHECK(a.peak_in_flight == b.peak_in_flight);
    for (size_t k = 0; k < a.steps.size(); ++k) {
      CHECK(a.steps[k].start_ns == b.steps[k].start_ns);
      CHECK(a.steps[k].end_ns == b.steps[k].end_ns);
      REQUIRE(a.steps[k].stages.size() == b.steps[k].stages.size());
      for (size_t s = 0; s < a.steps[k].stages.size(); ++s) {
        REQUIRE(a.steps[k].stages[s].size() == b.steps[k].stages[s].size());
        for (size_t j = 0; j < a.steps[k].stages[s].size(); ++j) {
          CHECK(a.steps[k].stages[s][j].start_ns == b.steps[k].stages[s][j].start_ns);
          CHECK(a.steps[k].stages[s][j].end_ns == b.steps[k].stages[s][j].end_ns);
        }
      }
    }
  };
  // Costs that differ by stage, role and micro-batch, with links and gaps.
  for (int64_t scale : {1, 3, 7}) {
    ReplayCosts c;
    c.duration_ns = [scale](int32_t stage, const PlanJob& j) -> int64_t {
      return scale * (10 + stage) + static_cast<int64_t>(j.role) * 5 + j.micro_batch % 3;
    };
    c.link_ns = [scale](int32_t from, int32_t to, PlanRole) -> int64_t { return from != to ? scale : 0; };
    c.host_gap_ns = [](int32_t stage, const PlanJob&) -> int64_t { return stage; };
    c.optimizer_ns = {4, 5, 6, 7};
    c.step_gap_ns = 50;
    const ReplayResult fresh = replay_plans(shape, plans, c, 2);
    REQUIRE(fresh.error.empty());
    same(replay_prepared(prepared, c, 2), fresh);
  }
  // A plan's own error and a missing cost are said as replay_plans says them.
  std::vector<std::vector<PlanJob>> twice = plans;
  twice[1][1] = twice[1][0];
  const PreparedReplay bad = prepare_replay(shape, twice);
  CHECK_THAT(bad.error, Catch::Contains("twice"));
  same(replay_prepared(bad, equal_costs()), replay_plans(shape, twice, equal_costs()));
  CHECK(replay_prepared(prepared, ReplayCosts{}).error == replay_plans(shape, plans, ReplayCosts{}).error);
}

TEST_CASE("a flattened plan replays one step to replay_prepared's length and busy times", "[replay]") {
  for (const PlanShape& shape :
       {PlanShape{ScheduleKind::k1F1B, 4, 8, 1}, PlanShape{ScheduleKind::kZBH1, 4, 8, 1},
        PlanShape{ScheduleKind::kVPP, 4, 8, 2}, PlanShape{ScheduleKind::kZBVPP, 4, 4, 2},
        PlanShape{ScheduleKind::kFThenB, 3, 5, 1}, PlanShape{ScheduleKind::kEager1F1B, 3, 6, 1}}) {
    INFO(schedule_name(shape.schedule));
    const std::vector<std::vector<PlanJob>> plans = pipeline_plan(shape);
    const PreparedReplay prepared = prepare_replay(shape, plans);
    REQUIRE(prepared.error.empty());
    // The last scale's times pass kMaxSumNs: replay_flat_step's clamped
    // additions, which must give replay_prepared's figures too.
    for (int64_t scale : {int64_t{1}, int64_t{3}, int64_t{7}, kMaxSumNs / 16}) {
      ReplayCosts c;
      // Lengths that differ by stage, role, chunk and micro-batch (one of
      // them negative, charged as 0), links, host gaps and optimizer gaps.
      c.duration_ns = [scale](int32_t stage, const PlanJob& j) -> int64_t {
        if (stage == 1 && j.micro_batch == 2 && j.role == PlanRole::kForward) return -5;
        return scale * (10 + stage) + static_cast<int64_t>(j.role) * 5 + j.chunk * 3 + (j.micro_batch * scale) % 7;
      };
      c.link_ns = [scale](int32_t from, int32_t to, PlanRole) -> int64_t {
        return from != to ? scale * (1 + from) : 0;
      };
      c.host_gap_ns = [scale](int32_t stage, const PlanJob& j) -> int64_t {
        return j.role == PlanRole::kForward ? stage * scale : -1;
      };
      c.optimizer_ns = {4 * scale, 5, 6};  // short: the last stage's is 0
      c.optimizer_gap_ns = {2, 0, scale, 1};
      const ReplayResult full = replay_prepared(prepared, c, 1);
      REQUIRE(full.error.empty());
      const FlatReplay flat = flatten_replay(prepared, c);
      REQUIRE(flat.error.empty());
      std::vector<int64_t> durations;
      for (const FlatReplay::Item& it : flat.items)
        durations.push_back(c.duration_ns(it.stage, plans[it.stage][it.index]));
      std::vector<int64_t> busy, free_at, ends;
      const int64_t len = replay_flat_step(flat, durations, c.optimizer_ns, busy, free_at, ends);
      CHECK(len == full.steps[0].end_ns - full.steps[0].start_ns);
      REQUIRE(busy.size() == static_cast<size_t>(shape.stages));
      for (int32_t s = 0; s < shape.stages; ++s) CHECK(busy[s] == replay_busy_ns(full.steps[0], s));
    }
  }
  // A plan that deadlocks, or is refused, has nothing to flatten.
  const PlanShape s{ScheduleKind::kFThenB, 2, 2, 1};
  std::vector<std::vector<PlanJob>> stuck = {
      {{PlanRole::kForward, 0, 0},
       {PlanRole::kBackward, 0, 0},
       {PlanRole::kForward, 0, 1},
       {PlanRole::kBackward, 0, 1}},
      {{PlanRole::kBackward, 0, 1},
       {PlanRole::kForward, 0, 0},
       {PlanRole::kForward, 0, 1},
       {PlanRole::kBackward, 0, 0}},
  };
  CHECK_FALSE(flatten_replay(prepare_replay(s, stuck), equal_costs()).error.empty());
  CHECK(flatten_replay(prepare_replay(s, stuck), equal_costs()).items.empty());
  stuck[1][0] = {PlanRole::kForward, 0, 0};
  CHECK_THAT(flatten_replay(prepare_replay(s, stuck), equal_costs()).error, Catch::Contains("twice"));
}

TEST_CASE("a replay read as a Timeline gives the stats the replay's own bubble and schedule", "[replay][stats]") {
  struct Case {
    PlanShape shape;
  };
  for (const PlanShape& shape : {PlanShape{ScheduleKind::k1F1B, 4, 8, 1}, PlanShape{ScheduleKind::kZBH1, 4, 8, 1},
                                 PlanShape{ScheduleKind::kVPP, 4, 8, 2}, PlanShape{ScheduleKind::kZBVPP, 4, 8, 2},
                                 PlanShape{ScheduleKind::kEager1F1B, 3, 6, 1}}) {
    INFO(schedule_name(shape.schedule));
    ReplayCosts c;
    c.duration_ns = [](int32_t stage, const PlanJob& j) -> int64_t {
      return (j.role == PlanRole::kForward ? 1000 : 1800) + 150 * stage;
    };
    c.link_ns = [](int32_t from, int32_t to, PlanRole) -> int64_t { return from != to ? 40 : 0; };
    c.optimizer_ns = {300, 300, 300, 300};
    c.step_gap_ns = 500;
    ReplayResult r = replay_plan(shape, c, 3);
    REQUIRE(r.error.empty());
    const int64_t origin = 1'700'000'000'000'000'000;
    Timeline tl = replay_timeline(r, origin, 5);
    REQUIRE(tl.tracks.size() == static_cast<size_t>(shape.stages));
    REQUIRE(tl.runs.size() == 1);
    CHECK(tl.runs[0].steps.front().number == 5);
    CHECK(tl.runs[0].steps.back().number == 7);
    CHECK(tl.runs[0].steps[1].start_ns == origin + r.steps[1].start_ns);
    // The optimizer belongs to no micro-batch (a trace names it "optimizer",
    // not "optimizer mb0"); every plan job keeps its own.
    size_t optimizers = 0;
    for (const Track& t : tl.tracks) {
      for (const Job& j : t.jobs) {
        if (tl.types[j.type] == "optimizer") {
          ++optimizers;
          CHECK(j.micro_batch == -1);
        } else {
          CHECK(j.micro_batch >= 0);
        }
      }
    }
    CHECK(optimizers == static_cast<size_t>(shape.stages) * 3);
    PipelinePlan plan = decide_pipeline(tl, 0, 1);
    Dependencies deps = find_dependencies(tl, plan, 1);
    // The replay honours every dependency the passes find.
    CHECK(deps.contradicted == 0);
    CHECK(deps.edges.size() > 0);
    Stats st = compute_stats(tl, plan, &deps);
    CHECK(st.schedule.kind == shape.schedule);
    CHECK(st.schedule.pp_degree == shape.stages);
    CHECK(st.schedule.micro_batches == shape.micro_batches);
    CHECK(st.bubble_ratio == Approx(replay_bubble_ratio(r)));
    REQUIRE(st.steps.size() == 3);
    CHECK(st.steps[0].bubble_ratio == Approx(replay_bubble_ratio(r.steps[0])));
    CHECK(static_cast<double>(st.step_period.median_ns) == Approx(replay_period_ns(r)));
  }
  CHECK(replay_timeline(replay_plan({ScheduleKind::kVPP, 4, 3, 2}, equal_costs())).tracks.empty());
}

TEST_CASE("the ideal bubble is the recognised schedule's plan replayed with equal stage costs", "[replay][schedule]") {
  std::string formula;
  CHECK(ideal_bubble_ratio(ScheduleKind::kZBH1, 4, 8, 1, &formula) == Approx(5.0 / 29));
  CHECK_THAT(formula, Catch::Contains("ZBH1 plan replayed"));
  CHECK(ideal_bubble_ratio(ScheduleKind::k1F1B, 4, 8, 1) == Approx(3.0 / 11));
  for (ScheduleKind k : {ScheduleKind::kFThenB, ScheduleKind::k1F1B, ScheduleKind::kEager1F1B, ScheduleKind::kVPP,
                         ScheduleKind::kZBH1, ScheduleKind::kZBVPP}) {
    const int32_t v = k == ScheduleKind::kVPP || k == ScheduleKind::kZBVPP ? 2 : 1;
    INFO(schedule_name(k));
    const double want = replay_bubble_ratio(replay_plan({k, 4, 8, v}, equal_costs()));
    CHECK(ideal_bubble_ratio(k, 4, 8, v) == Approx(want));
    // Asked again: the same figure (remembered).
    CHECK(ideal_bubble_ratio(k, 4, 8, v) == Approx(want));
  }
  // Shapes Paddle builds no plan for have no ideal, and say why.
  CHECK(ideal_bubble_ratio(ScheduleKind::k1F1B, 4, 2, 1, &formula) < 0);
  CHECK_THAT(formula, Catch::Contains("M >= P"));
  CHECK(ideal_bubble_ratio(ScheduleKind::kNoPipeline, 4, 8, 1) == 0);
  CHECK(ideal_bubble_ratio(ScheduleKind::kUnknown, 4, 8, 1, &formula) < 0);
  CHECK(formula.empty());
}

}  // namespace
}  // namespace ppt
