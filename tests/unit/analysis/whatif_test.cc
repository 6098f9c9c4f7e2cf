// The what-if cost model against runs timed by hand and generated runs of
// known costs: the durations, links, optimizer and gap it fits, the replay of
// the measured plan, and what each change does to the costs; the memory
// model against measurements built by hand.
#include "analysis/whatif.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <optional>
#include <variant>

#include "output/text/whatif_writers.h"
#include "support/test_support.h"

namespace ppt {
namespace {

using testing::HandJob;
using testing::repeated_steps;

constexpr int64_t kUs = 1000;

// Two stages, two micro-batches, FThenB: forward 10 us, backward 20 us; the
// optimizer 5 us on stage 0 and 6 us on stage 1; every link 3 us; step 1 is
// step 0 moved by 200 us, so 99 us lie between the steps.
std::vector<HandJob> hand_run() {
  std::vector<HandJob> one = {
      {0, "forward", 0, 0, 10},     {0, "forward", 1, 10, 20},   {0, "backward", 0, 56, 76}, {0, "backward", 1, 76, 96},
      {0, "optimizer", 0, 96, 101}, {1, "forward", 0, 13, 23},   {1, "forward", 1, 23, 33},  {1, "backward", 0, 33, 53},
      {1, "backward", 1, 53, 73},   {1, "optimizer", 0, 73, 79},
  };
  return repeated_steps(one, 3, 200);
}

// The driver's passes and stats on a loaded timeline, kept together.
struct Measured {
  Timeline timeline;
  PipelinePlan plan;
  Dependencies deps;
  Stats stats;
  explicit Measured(Timeline tl) : timeline(std::move(tl)) {
    plan = decide_pipeline(timeline, 0, 1);
    deps = find_dependencies(timeline, plan, 1);
    stats = compute_stats(timeline, plan, &deps);
  }
  WhatifReport whatif(const WhatifChanges& changes = {}) const {
    return run_whatif(timeline, plan, deps, stats, changes);
  }
};

std::unique_ptr<Measured> generated(const std::string& args) {
  auto g = testing::generate_logs(args);
  return std::make_unique<Measured>(std::move(g->timeline));
}

int64_t job_length(const WhatifOutcome& o, int32_t stage, PlanRole role, int32_t chunk = 0) {
  for (const ReplayedJob& j : o.replay.steps.at(0).stages.at(stage)) {
    if (j.job.role == role && j.job.chunk == chunk) return j.end_ns - j.start_ns;
  }
  return -1;
}

TEST_CASE("the cost model of a hand-timed run is its jobs' durations, links, optimizers and gap", "[whatif]") {
  testing::TempDir dir;
  Measured m(testing::load_hand_run(dir, "run", hand_run()));
  REQUIRE(m.plan.schedule.kind == ScheduleKind::kFThenB);
  CostModel model = fit_cost_model(m.timeline, m.plan, m.deps, m.stats);
  REQUIRE(model.stages == 2);
  CHECK(model.micro_batches == 2);
  CHECK(model.steps == 3);
  for (int32_t s = 0; s < 2; ++s) {
    const auto& jobs = model.jobs.at(s).at(0);
    CHECK(jobs[static_cast<size_t>(PlanRole::kForward)].median_ns == 10 * kUs);
    CHECK(jobs[static_cast<size_t>(PlanRole::kForward)].count == 6);
    CHECK(jobs[static_cast<size_t>(PlanRole::kBackward)].median_ns == 20 * kUs);
    CHECK(jobs[static_cast<size_t>(PlanRole::kBackwardB)].count == 0);
  }
  CHECK(model.optimizer.at(0).median_ns == 5 * kUs);
  CHECK(model.optimizer.at(1).median_ns == 6 * kUs);
  REQUIRE(model.optimizer_by_rank.size() == 2);
  CHECK(model.optimizer_by_rank[1] == std::pair<int32_t, int64_t>{1, 6 * kUs});
  // Forward 0 -> 1 and backward 1 -> 0: the waiting consumers start 3 us after.
  CHECK(model.link_ns.at({0, 1}) == 3 * kUs);
  CHECK(model.link_ns.at({1, 0}) == 3 * kUs);
  CHECK(model.median_link_ns == 3 * kUs);
  CHECK(model.step_gap_ns == 99 * kUs);
  CHECK(model.w_share < 0);
}

TEST_CASE("replaying the measured plan of a hand-timed run gives its period exactly", "[whatif]") {
  testing::TempDir dir;
  Measured m(testing::load_hand_run(dir, "run", hand_run()));
  WhatifReport r = m.whatif();
  REQUIRE(r.replayed.error.empty());
  CHECK(r.measured.period_ns == Approx(200.0 * kUs));
  CHECK(r.replayed.period_ns == Approx(200.0 * kUs));
  CHECK(r.replayed.busy_ns == Approx(101.0 * kUs));
  CHECK(r.replayed.bubble_ratio == Approx(r.measured.bubble_ratio).margin(1e-9));
  // Both forwards in flight before the first backward ends, on both stages.
  CHECK(r.measured.peak_in_flight == std::vector<int32_t>{2, 2});
  CHECK(r.replayed.peak_in_flight == r.measured.peak_in_flight);
  // Without --schedule the target is the measured plan, predicted as replayed.
  REQUIRE(r.predicted.size() == 1);
  CHECK(r.predicted[0].period_ns == Approx(r.replayed.period_ns));
}

// hand_run with host time between jobs whose input was there: 5 us before
// stage 0's second forward, 4 us before each of stage 1's backwards and 2 us
// before each optimizer; the waiting jobs (stage 1's second forward, stage
// 0's backwards) start at their producer's end plus the 3 us link.
std::vector<HandJob> hand_run_with_host_gaps() {
  std::vector<HandJob> one = {
      {0, "forward", 0, 0, 10},    {0, "forward", 1, 15, 25},     {0, "backward", 0, 65, 85},
      {0, "backward", 1, 89, 109}, {0, "optimizer", 0, 111, 116}, {1, "forward", 0, 13, 23},
      {1, "forward", 1, 28, 38},   {1, "backward", 0, 42, 62},    {1, "backward", 1, 66, 86},
      {1, "optimizer", 0, 88, 94},
  };
  return repeated_steps(one, 3, 200);
}

TEST_CASE("the host gap between jobs whose input was there is fitted and replayed", "[whatif]") {
  testing::TempDir dir;
  Measured m(testing::load_hand_run(dir, "run", hand_run_with_host_gaps()));
  REQUIRE(m.plan.schedule.kind == ScheduleKind::kFThenB);
  CostModel model = fit_cost_model(m.timeline, m.plan, m.deps, m.stats);
  REQUIRE(model.host_gap_ns.size() == 2);
  const size_t f = static_cast<size_t>(PlanRole::kForward), b = static_cast<size_t>(PlanRole::kBackward);
  CHECK(model.host_gap_ns[0][f] == 5 * kUs);
  CHECK(model.host_gap_ns[1][b] == 4 * kUs);
  CHECK(model.host_gap_ns[0][kPlanRoles] == 2 * kUs);
  CHECK(model.host_gap_ns[1][kPlanRoles] == 2 * kUs);
  // Every pair where the next job waited is left out: no sample of them.
  CHECK(model.host_gap_ns[0][b] == -1);
  CHECK(model.host_gap_ns[1][f] == -1);
  WhatifReport r = m.whatif();
  REQUIRE(r.replayed.error.empty());
  CHECK(r.replayed.busy_ns == Approx(116.0 * kUs));
  CHECK(r.replayed.period_ns == Approx(r.measured.period_ns));
  // No jitter and no model error: the range is the period itself.
  CHECK(r.replayed.period_lo_ns == Approx(r.replayed.period_ns));
  CHECK(r.replayed.period_hi_ns == Approx(r.replayed.period_ns));
}

// The first of `items` (warnings or assumptions) of the kind T, or null.
template <typename T, typename V>
const T* first_of(const std::vector<V>& items) {
  for (const V& v : items) {
    if (const T* t = std::get_if<T>(&v)) return t;
  }
  return nullptr;
}

// Whether a suggestion is M=`m`, or balancing `stage`.
bool twice_m(const WhatifSuggestion& w, int32_t m) {
  return w.change.kind == SuggestedChange::Kind::kMicroBatches && w.change.shape.micro_batches == m;
}
bool balancing(const WhatifSuggestion& w, int32_t stage) {
  return w.change.kind == SuggestedChange::Kind::kBalance && w.change.stage == stage;
}

TEST_CASE("whatif warns where the model does not hold", "[whatif]") {
  testing::TempDir dir;
  SECTION("a run that follows its plan and has several steps: no warning") {
    Measured m(testing::load_hand_run(dir, "run", hand_run()));
    WhatifReport r = m.whatif();
    CHECK(r.warnings.empty());
    CHECK_FALSE(r.refusal);
    const auto* modelled = first_of<assumption::Modelled>(r.assumptions);
    REQUIRE(modelled);
    CHECK(modelled->run == 0);
    CHECK(modelled->runs == 1);
    CHECK(modelled->steps == 3);
  }
  SECTION("one step: no period, and nothing between steps") {
    std::vector<HandJob> one = hand_run();
    one.resize(10);
    Measured m(testing::load_hand_run(dir, "run", one));
    WhatifReport r = m.whatif();
    CHECK(first_of<model_warning::OneStep>(r.warnings));
    const auto* gap = first_of<assumption::StepGap>(r.assumptions);
    REQUIRE(gap);
    CHECK(gap->steps == 1);
  }
  SECTION("overlapping jobs") {
    std::vector<HandJob> jobs = hand_run();
    // Stage 0's second backward starts 6 us before its first one ends, in every step.
    for (HandJob& j : jobs) {
      if (j.rank == 0 && j.type == "backward" && j.mb == 1) j.start_us -= 6;
    }
    Measured m(testing::load_hand_run(dir, "run", jobs));
    WhatifReport r = m.whatif();
    const auto* overlap = first_of<model_warning::OverlappingJobs>(r.warnings);
    REQUIRE(overlap);
    CHECK(overlap->overlapping == 3);
    CHECK(overlap->jobs == 30);
  }
  SECTION("a model error above 2%") {
    Measured m(testing::load_hand_run(dir, "run", hand_run()));
    CostModel model = fit_cost_model(m.timeline, m.plan, m.deps, m.stats);
    std::optional<model_warning::Refusal> refusal;
    CHECK(whatif_warnings(m.timeline, m.plan, m.stats, model, 0.019, &refusal).empty());
    const std::vector<ModelWarning> w = whatif_warnings(m.timeline, m.plan, m.stats, model, -0.031, &refusal);
    REQUIRE(first_of<model_warning::ModelError>(w));
    CHECK(first_of<model_warning::ModelError>(w)->error == -0.031);
    CHECK_FALSE(refusal);
  }
  SECTION("a run of another plan than the one recognised (another run's schedule): refused") {
    Measured m(testing::load_hand_run(dir, "run", hand_run()));
    REQUIRE_FALSE(m.whatif().refusal);
    // As if the schedule had been read from another run: 1F1B, whose stage 1
    // runs forward 0, backward 0, forward 1 where this FThenB run has both forwards first.
    m.plan.schedule.kind = ScheduleKind::k1F1B;
    WhatifReport r = m.whatif();
    REQUIRE(r.refusal);
    CHECK(r.refusal->share == 0.5);
    CHECK(r.refusal->shape == PlanShape{ScheduleKind::k1F1B, 2, 2, 1});
    // Stage 1's second job: forward 1 where 1F1B has backward 0.
    const PlanDifference& d = r.refusal->example;
    CHECK(d.rank == 1);
    CHECK(d.step == 0);
    CHECK(d.job == 2);
    CHECK(d.got == PlanJob{PlanRole::kForward, 0, 1});
    CHECK(d.want == PlanJob{PlanRole::kBackward, 0, 0});
    for (const WhatifOutcome& o : r.predicted) CHECK(o.failed());
    // Steps that only lost jobs are no other plan: not refused.
    std::vector<HandJob> lost = hand_run();
    lost.erase(lost.begin() + 2);  // step 0's first backward on stage 0
    Measured short_step(testing::load_hand_run(dir, "lost", lost));
    CHECK_FALSE(short_step.whatif().refusal);
  }
  SECTION("a schedule that changes inside the run: refused") {
    // Two steps FThenB, then two in which stage 0 runs its backwards the other way round.
    std::vector<HandJob> jobs = repeated_steps(hand_run(), 1, 0);
    jobs.resize(20);
    std::vector<HandJob> swapped = {
        {0, "forward", 0, 400, 410},   {0, "forward", 1, 410, 420},   {0, "backward", 1, 456, 476},
        {0, "backward", 0, 476, 496},  {0, "optimizer", 0, 496, 501}, {1, "forward", 0, 413, 423},
        {1, "forward", 1, 423, 433},   {1, "backward", 1, 433, 453},  {1, "backward", 0, 453, 473},
        {1, "optimizer", 0, 473, 479},
    };
    for (HandJob j : repeated_steps(swapped, 2, 200)) jobs.push_back(j);
    Measured m(testing::load_hand_run(dir, "run", jobs));
    WhatifReport r = m.whatif();
    const auto* unusual = first_of<model_warning::UnusualSteps>(r.warnings);
    REQUIRE(unusual);
    CHECK(unusual->worst_rank == 0);
    CHECK(unusual->off_steps == 4);  // two steps on each of the two ranks
    CHECK(unusual->rank_steps == 8);
    CHECK(r.refusal);
    for (const WhatifOutcome& o : r.predicted) CHECK(o.refused);
  }
}

TEST_CASE("ranges: two outcomes are within each other's noise where their ranges overlap", "[whatif]") {
  WhatifOutcome a, b;
  a.shape.micro_batches = b.shape.micro_batches = 8;
  a.period_ns = 100, a.period_lo_ns = 95, a.period_hi_ns = 105;
  b.period_ns = 108, b.period_lo_ns = 104, b.period_hi_ns = 112;
  CHECK(within_noise(a, b));
  CHECK(within_noise(b, a));
  b.period_lo_ns = 106;
  CHECK_FALSE(within_noise(a, b));
  // Another M compares per micro-batch: 2x the period for 2x the micro-batches is the same.
  b.shape.micro_batches = 16;
  b.period_ns = 200, b.period_lo_ns = 198, b.period_hi_ns = 202;
  CHECK(within_noise(a, b));
  b.error = "refused";
  CHECK_FALSE(within_noise(a, b));
}

TEST_CASE("the changes act on the costs: link scale, stage scale, balance", "[whatif]") {
  testing::TempDir dir;
  Measured m(testing::load_hand_run(dir, "run", hand_run()));
  WhatifChanges links;
  links.link_scale = 0;
  // Without the 3 us lags: the two on the critical path (forward 0 up, backward 0 down) are gone.
  WhatifReport r = m.whatif(links);
  REQUIRE(r.predicted.at(0).error.empty());
  CHECK(r.predicted[0].period_ns < r.replayed.period_ns);
  CHECK(r.predicted[0].period_ns == Approx(200.0 * kUs - 6 * kUs));

  WhatifChanges slower;
  slower.stage_scale = {{1, 2.0}};
  r = m.whatif(slower);
  CHECK(job_length(r.predicted.at(0), 1, PlanRole::kForward) == 20 * kUs);
  CHECK(job_length(r.predicted[0], 0, PlanRole::kForward) == 10 * kUs);
  CHECK(r.predicted[0].period_ns > r.replayed.period_ns);

  // Balanced, each stage runs the median of the two optimizers (5.5 us).
  WhatifChanges balance;
  balance.balance = true;
  r = m.whatif(balance);
  REQUIRE(r.predicted.at(0).error.empty());
  CHECK(r.predicted[0].replay.steps.at(0).optimizer.at(1).second -
            r.predicted[0].replay.steps.at(0).optimizer.at(1).first ==
        5500);
  CHECK(first_of<assumption::Balanced>(r.assumptions));
}

TEST_CASE("an unknown schedule has no replay, and the model says why", "[whatif]") {
  testing::TempDir dir;
  // One stage's jobs in an order no schedule has.
  std::vector<HandJob> jobs = {{0, "backward", 0, 0, 10},   {0, "forward", 0, 10, 20},
                               {0, "optimizer", 0, 20, 25}, {0, "backward", 0, 100, 110},
                               {0, "forward", 0, 110, 120}, {0, "optimizer", 0, 120, 125}};
  Measured m(testing::load_hand_run(dir, "run", jobs));
  REQUIRE(m.plan.schedule.kind == ScheduleKind::kUnknown);
  WhatifReport r = m.whatif();
  CHECK(r.replayed.error.find("no plan to replay") != std::string::npos);
  REQUIRE(r.predicted.size() == 1);
  CHECK_FALSE(r.predicted[0].error.empty());
}

TEST_CASE("generated runs: links, the w share, chunk costs and in-flight micro-batches", "[whatif][gen]") {
  if (!testing::have_python()) {
    FAIL("python3 not found: gen_logs.py makes the logs (scripts/setup.sh installs python3)");
  }
  SECTION("1F1B: the link is the generator's latency; V=2 halves a chunk's cost; 1F1B holds P-s micro-batches") {
    auto m = generated("--schedule 1f1b --stages 4 --micro-batches 8 --steps 3 --jitter 0 --comm-us 50 --seed 3");
    CostModel model = fit_cost_model(m->timeline, m->plan, m->deps, m->stats);
    for (int32_t s = 0; s + 1 < 4; ++s) {
      CHECK(model.link_ns.at({s, s + 1}) == 50 * kUs);
      CHECK(model.link_ns.at({s + 1, s}) == 50 * kUs);
    }
    CHECK(model.link_ns.count({0, 2}) == 0);  // never measured: not kept
    CHECK(model.jobs.at(2).at(0)[static_cast<size_t>(PlanRole::kBackward)].median_ns == 2000 * kUs);
    CHECK(measured_peak_in_flight(m->timeline, m->plan, m->stats.run) == std::vector<int32_t>{4, 3, 2, 1});

    WhatifChanges vpp;
    vpp.schedules = {ScheduleKind::kVPP, ScheduleKind::kZBH1};
    WhatifReport r = m->whatif(vpp);
    REQUIRE(r.predicted.size() == 2);
    for (const WhatifOutcome& o : r.predicted) {
      REQUIRE(o.error.empty());
      if (o.shape.schedule == ScheduleKind::kVPP) {
        CHECK(o.shape.chunks == 2);
        CHECK(job_length(o, 1, PlanRole::kForward, 1) == 500 * kUs);
      } else {
        // Not measured: backward_w takes half of a backward.
        CHECK(job_length(o, 1, PlanRole::kBackwardW) == 1000 * kUs);
      }
    }
    CHECK(r.predicted[0].period_ns <= r.predicted[1].period_ns);
    const auto* w_share = first_of<assumption::WShare>(r.assumptions);
    REQUIRE(w_share);
    CHECK(w_share->source == assumption::WShare::Source::kDefault);
    CHECK(w_share->share == 0.5);
  }
  SECTION("ZBH1: the w share is measured from the split halves") {
    auto m = generated("--schedule zbh1 --stages 4 --micro-batches 8 --steps 3 --jitter 0 --seed 3");
    CostModel model = fit_cost_model(m->timeline, m->plan, m->deps, m->stats);
    CHECK(model.w_share == Approx(0.5));
    WhatifChanges w;
    w.schedules = {ScheduleKind::kZBH1};
    w.w_share = 0.25;
    WhatifReport r = m->whatif(w);
    REQUIRE(r.predicted.at(0).error.empty());
    // The whole backward (2 ms) split 3:1.
    CHECK(job_length(r.predicted[0], 3, PlanRole::kBackwardW) == 500 * kUs);
  }
  SECTION("another M: ranked by throughput, compared per micro-batch, suggested as such") {
    auto m = generated("--schedule fthenb --stages 4 --micro-batches 4 --steps 3 --jitter 0 --seed 3");
    WhatifChanges more;
    more.micro_batches = {4, 16};
    WhatifReport r = m->whatif(more);
    REQUIRE(r.predicted.size() == 2);
    REQUIRE(r.predicted[0].error.empty());
    // M=16 has the longer period but the smaller bubble: it ranks first.
    CHECK(r.predicted[0].shape.micro_batches == 16);
    CHECK(r.predicted[0].period_ns > r.predicted[1].period_ns);
    CHECK(r.predicted[0].micro_batches_per_second > r.predicted[1].micro_batches_per_second);
    bool per_mb = false;
    const double d = relative_time(r.predicted[0], r.measured, &per_mb);
    CHECK(per_mb);
    CHECK(d < 0);
    CHECK(d == Approx((r.predicted[0].period_ns / 16) / (r.measured.period_ns / 4) - 1));
    CHECK(relative_time(r.predicted[1], r.measured, &per_mb) ==
          Approx(r.predicted[1].period_ns / r.measured.period_ns - 1));
    CHECK_FALSE(per_mb);
    // FThenB at M=4 on 4 stages is mostly bubble: 2M is among the suggestions, per micro-batch.
    std::vector<WhatifSuggestion> s = suggest_changes(m->timeline, m->plan, m->deps, m->stats, 10);
    auto twice = std::find_if(s.begin(), s.end(), [](const WhatifSuggestion& w) { return twice_m(w, 8); });
    REQUIRE(twice != s.end());
    CHECK(twice->per_micro_batch);
    CHECK(twice->period_gain > 0);
    CHECK(twice->change.shape.schedule == ScheduleKind::kFThenB);
  }
  SECTION("replicas: each is replayed on its own, and the step waits for the slowest") {
    // Rank 6 is replica 1's stage 2, 50% slower; replica 0 is not.
    auto m =
        generated("--schedule 1f1b --stages 4 --dp 2 --micro-batches 8 --steps 3 --jitter 0 --slow 6:1.5 --seed 3");
    WhatifReport r = m->whatif();
    REQUIRE(r.replayed.error.empty());
    // Pooled over the replicas, stage 2 would cost 1.25x and the replay come out short.
    CHECK(r.replayed.period_ns == Approx(r.measured.period_ns).epsilon(0.005));
    WhatifChanges balance;
    balance.balance = true;
    WhatifReport b = m->whatif(balance);
    REQUIRE(b.predicted.at(0).error.empty());
    // Balanced, the slow rank is at its stage's median: both replicas as fast as replica 0 alone.
    CHECK(b.predicted[0].period_ns < 0.9 * r.replayed.period_ns);
  }
  SECTION("a slow stage: balancing it is suggested, and named") {
    auto m = generated("--schedule 1f1b --stages 4 --micro-batches 8 --steps 3 --jitter 0 --slow 2:1.5 --seed 3");
    std::vector<WhatifSuggestion> s = suggest_changes(m->timeline, m->plan, m->deps, m->stats);
    REQUIRE_FALSE(s.empty());
    CHECK(std::any_of(s.begin(), s.end(), [](const WhatifSuggestion& w) { return balancing(w, 2); }));
    for (size_t i = 1; i < s.size(); ++i) CHECK(s[i - 1].period_gain >= s[i].period_gain);
    for (const WhatifSuggestion& w : s) CHECK(w.period_gain > 0);
  }
  SECTION("balancing a stage stats finds no straggler on: suggested with a caveat") {
    // Stage 2 is 6% slower: under the 10% straggler margin, but the busiest stage.
    auto m = generated("--schedule 1f1b --stages 4 --micro-batches 8 --steps 3 --jitter 0 --slow 2:1.06 --seed 3");
    REQUIRE(m->stats.stragglers.empty());
    std::vector<ModelWarning> warnings;
    std::vector<WhatifSuggestion> s = suggest_changes(m->timeline, m->plan, m->deps, m->stats, 10, &warnings);
    REQUIRE(std::any_of(s.begin(), s.end(), [](const WhatifSuggestion& w) { return balancing(w, 2); }));
    REQUIRE(first_of<model_warning::BalancingNoise>(warnings));
    CHECK(first_of<model_warning::BalancingNoise>(warnings)->stage == 2);
    // With the straggler found (50% slower), no caveat.
    auto slow = generated("--schedule 1f1b --stages 4 --micro-batches 8 --steps 3 --jitter 0 --slow 2:1.5 --seed 3");
    warnings.clear();
    suggest_changes(slow->timeline, slow->plan, slow->deps, slow->stats, 10, &warnings);
    CHECK_FALSE(first_of<model_warning::BalancingNoise>(warnings));
  }
  SECTION("jitter: each prediction has a range around it, and a suggestion's range is above 0") {
    auto m = generated("--schedule 1f1b --stages 4 --micro-batches 8 --steps 8 --jitter 0.1 --seed 3");
    WhatifChanges all;
    all.schedules = {ScheduleKind::k1F1B, ScheduleKind::kZBH1, ScheduleKind::kEager1F1B};
    WhatifReport r = m->whatif(all);
    for (const WhatifOutcome& o : r.predicted) {
      REQUIRE(o.error.empty());
      // The steps the range needs, at least 4 of the 8; the same ones for every target.
      CHECK(o.step_periods_ns.size() >= 4);
      CHECK(o.step_periods_ns.size() <= 8);
      CHECK(o.step_periods_ns.size() == r.replayed.step_periods_ns.size());
      CHECK(o.replay.steps.size() == o.step_periods_ns.size());
      CHECK(o.period_lo_ns < o.period_ns);
      CHECK(o.period_hi_ns > o.period_ns);
    }
    std::vector<WhatifSuggestion> s = suggest_changes(m->timeline, m->plan, m->deps, m->stats, 10);
    for (const WhatifSuggestion& w : s) {
      CHECK(w.gain_lo > 0);
      CHECK(w.gain_lo < w.period_gain);
      CHECK(w.gain_hi > w.period_gain);
    }
  }
}

constexpr int64_t kGiB = int64_t{1} << 30;

// A measurement of memory by hand: stage s has (10 + s) GiB static and
// `chunk_acts` per chunk; each stage's logged peak is static + in_flight[s]
// activations per micro-batch (the sum of the chunks').
MemoryStats hand_memory(const std::vector<int64_t>& chunk_acts, const std::vector<int32_t>& in_flight) {
  MemoryStats mem;
  mem.resolution_bytes = 10737418;
  int64_t per_mb = 0;
  for (int64_t a : chunk_acts) per_mb += a;
  for (size_t s = 0; s < in_flight.size(); ++s) {
    StageMemory sm;
    sm.stage = static_cast<int32_t>(s);
    sm.ranks = 1;
    sm.static_bytes = (10 + static_cast<int64_t>(s)) * kGiB;
    sm.activation_bytes_per_chunk = chunk_acts;
    sm.activation_bytes_per_micro_batch = per_mb;
    sm.peak_allocated_bytes = sm.static_bytes + in_flight[s] * per_mb;
    sm.peak_reserved_bytes = sm.peak_allocated_bytes + kGiB;
    mem.stages.push_back(sm);
  }
  return mem;
}

PlanShape shape_of(ScheduleKind k, int32_t p, int32_t m, int32_t v = 1) { return PlanShape{k, p, m, v, false}; }

TEST_CASE("whatif's report is the same on any number of threads, and with the model fitted beforehand",
          "[whatif][gen]") {
  if (!testing::have_python()) {
    FAIL("python3 not found: gen_logs.py makes the logs (scripts/setup.sh installs python3)");
  }
  // Jittered, so the replays draw samples; an unknown schedule, so a target fails.
  auto m = generated("--schedule 1f1b --stages 4 --micro-batches 8 --steps 4 --jitter 0.1 --comm-us 40 --seed 11");
  WhatifChanges ch;
  ch.schedules = {ScheduleKind::kVPP, ScheduleKind::kZBH1, ScheduleKind::k1F1B, ScheduleKind::kFThenB,
                  ScheduleKind::kUnknown};
  ch.micro_batches = {4, 8, 16};
  const std::string one = format_whatif_json(run_whatif(m->timeline, m->plan, m->deps, m->stats, ch, 3, 1));
  REQUIRE(one.find("\"period_us\"") != std::string::npos);
  for (unsigned threads : {2u, 3u, 8u}) {
    INFO("threads " << threads);
    CHECK(format_whatif_json(run_whatif(m->timeline, m->plan, m->deps, m->stats, ch, 3, threads)) == one);
  }
  const CostModel fitted = fit_cost_model(m->timeline, m->plan, m->deps, m->stats.run);
  // The stages' host gaps are fitted side by side: the same medians, in the
  // same stages, over the same samples.
  const CostModel on_four = fit_cost_model(m->timeline, m->plan, m->deps, m->stats.run, 4);
  CHECK(fitted.host_gap_samples > 0);
  CHECK(on_four.host_gap_samples == fitted.host_gap_samples);
  CHECK(on_four.host_gap_ns == fitted.host_gap_ns);
  CHECK(format_whatif_json(run_whatif(m->timeline, m->plan, m->deps, m->stats, ch, 3, 3, fitted)) == one);
  // A model of other costs is used as given, not fitted again.
  CostModel slower = fitted;
  for (auto& stage : slower.jobs) {
    for (auto& chunk : stage) {
      for (auto& cost : chunk) cost.cost_ns *= 2;
    }
  }
  CHECK(format_whatif_json(run_whatif(m->timeline, m->plan, m->deps, m->stats, ch, 3, 3, slower)) != one);
}

TEST_CASE("the memory model: 1F1B holds P - s micro-batches on stage s, FThenB all M, whatever M", "[whatif][memory]") {
  const MemoryStats mem = hand_memory({2 * kGiB}, {4, 3, 2, 1});
  const std::vector<int64_t> one_f_one_b = predict_peak_memory(mem, shape_of(ScheduleKind::k1F1B, 4, 8));
  const std::vector<int64_t> fthenb = predict_peak_memory(mem, shape_of(ScheduleKind::kFThenB, 4, 8));
  REQUIRE(one_f_one_b.size() == 4);
  REQUIRE(fthenb.size() == 4);
  for (int32_t s = 0; s < 4; ++s) {
    CHECK(one_f_one_b[s] == (10 + s) * kGiB + (4 - s) * 2 * kGiB);
    CHECK(fthenb[s] == (10 + s) * kGiB + 8 * 2 * kGiB);
  }
  CHECK(highest_peak(fthenb) == 13 * kGiB + 16 * kGiB);
  // Another M: the same activation per micro-batch; 1F1B's peak does not grow with M.
  CHECK(predict_peak_memory(mem, shape_of(ScheduleKind::k1F1B, 4, 16)) == one_f_one_b);
  CHECK(predict_peak_memory(mem, shape_of(ScheduleKind::kFThenB, 4, 4))[0] == 10 * kGiB + 4 * 2 * kGiB);
  // A stage without samples has no peak; no samples at all, no peaks; no plan, no peaks.
  MemoryStats three = mem;
  three.stages.erase(three.stages.begin() + 2);
  CHECK(predict_peak_memory(three, shape_of(ScheduleKind::k1F1B, 4, 8))[2] == -1);
  CHECK(predict_peak_memory(MemoryStats{}, shape_of(ScheduleKind::k1F1B, 4, 8)).empty());
  CHECK(predict_peak_memory(mem, shape_of(ScheduleKind::k1F1B, 4, 2)).empty());  // 1F1B needs M >= P
}

TEST_CASE("the memory model: a VPP chunk holds its own activation, another V the stage's / V", "[whatif][memory]") {
  // Paddle's interleaved 1F1B: stage s runs (P - s - 1) * 2 + (V - 1) * P
  // warm-up forwards, then one more before its first backward.
  const PlanShape vpp = shape_of(ScheduleKind::kVPP, 4, 8, 2);
  auto warmup_chunks = [](int32_t s) { return (4 - s - 1) * 2 + (2 - 1) * 4 + 1; };
  // Measured with V=2, one GiB per chunk.
  const std::vector<int64_t> per_chunk = predict_peak_memory(hand_memory({kGiB, kGiB}, {0, 0, 0, 0}), vpp);
  // Measured without VPP, 2 GiB per micro-batch: a chunk of V=2 holds 1 GiB.
  const std::vector<int64_t> from_v1 = predict_peak_memory(hand_memory({2 * kGiB}, {4, 3, 2, 1}), vpp);
  REQUIRE(per_chunk.size() == 4);
  for (int32_t s = 0; s < 4; ++s) {
    CHECK(per_chunk[s] == (10 + s) * kGiB + warmup_chunks(s) * kGiB);
    CHECK(from_v1[s] == per_chunk[s]);
  }
  // Unequal chunks: each holds its own, so the peak lies between all-small and all-large.
  const std::vector<int64_t> unequal = predict_peak_memory(hand_memory({kGiB, 3 * kGiB}, {0, 0, 0, 0}), vpp);
  for (int32_t s = 0; s < 4; ++s) {
    CHECK(unequal[s] > (10 + s) * kGiB + warmup_chunks(s) * kGiB);
    CHECK(unequal[s] < (10 + s) * kGiB + warmup_chunks(s) * 3 * kGiB);
  }
}

TEST_CASE("the memory model: ZBH1's split backward holds the activation until its backward_w", "[whatif][memory]") {
  // Paddle's ZB-H1 splits the backward of stage s's first s micro-batches
  // after its warm-up (their backward_w run at the step's end): those keep
  // their activations, so every stage reaches P micro-batches where 1F1B
  // holds P - s.
  const PlanShape zb = shape_of(ScheduleKind::kZBH1, 4, 8);
  const std::vector<int64_t> peak = predict_peak_memory(hand_memory({2 * kGiB}, {4, 3, 2, 1}), zb);
  REQUIRE(peak.size() == 4);
  for (int32_t s = 0; s < 4; ++s) CHECK(peak[s] == (10 + s) * kGiB + 4 * 2 * kGiB);
  // Counted on the plan itself: freed at the backward_b, stage s would hold P - s.
  for (int32_t s = 0; s < 4; ++s) {
    int32_t held = 0, most = 0;
    for (const PlanJob& j : stage_plan(zb, s)) {
      held += j.role == PlanRole::kForward ? 1 : j.role == PlanRole::kBackwardW ? 0 : -1;
      most = std::max(most, held);
    }
    CHECK(most == 4 - s);
  }
}

TEST_CASE("whatif predicts each target's peak memory, its fit on the device, and its own memory error",
          "[whatif][memory][gen]") {
  if (!testing::have_python()) {
    FAIL("python3 not found: gen_logs.py makes the logs (scripts/setup.sh installs python3)");
  }
  auto m = generated("--schedule 1f1b --stages 4 --micro-batches 8 --steps 3 --jitter 0 --seed 3");
  WhatifChanges both;
  both.schedules = {ScheduleKind::kFThenB, ScheduleKind::k1F1B};
  SECTION("no memory samples: no peaks, said once") {
    WhatifReport r = m->whatif(both);
    CHECK(r.measured.peak_memory_bytes.empty());
    CHECK(r.replayed.peak_memory_bytes.empty());
    for (const WhatifOutcome& o : r.predicted) CHECK(o.peak_memory_bytes.empty());
    CHECK_FALSE(std::isfinite(r.memory_model_error));
    CHECK(first_of<assumption::NoMemorySamples>(r.assumptions));
    CHECK_FALSE(first_of<assumption::MemoryModel>(r.assumptions));
    CHECK_FALSE(first_of<assumption::MemorySplitBackward>(r.assumptions));
  }
  SECTION("the measured run's replay reproduces its logged peaks") {
    m->stats.memory = hand_memory({2 * kGiB}, {4, 3, 2, 1});
    WhatifReport r = m->whatif(both);
    REQUIRE(r.replayed.error.empty());
    CHECK(r.measured.peak_memory_bytes == std::vector<int64_t>{18 * kGiB, 17 * kGiB, 16 * kGiB, 15 * kGiB});
    CHECK(r.replayed.peak_memory_bytes == r.measured.peak_memory_bytes);
    CHECK(r.memory_model_error == 0);
    for (const WhatifOutcome& o : r.predicted) {
      const int32_t held = o.shape.schedule == ScheduleKind::kFThenB ? 8 : 4;
      CHECK(o.peak_memory_bytes.at(0) == 10 * kGiB + held * 2 * kGiB);
      CHECK(o.fits);  // no device size: nothing to miss
    }
    CHECK(first_of<assumption::MemoryModel>(r.assumptions));
    CHECK_FALSE(first_of<assumption::NoMemorySamples>(r.assumptions));
    CHECK_FALSE(first_of<model_warning::MemoryModelError>(r.warnings));
  }
  SECTION("a stage that held more than the model: the memory error, and a warning") {
    m->stats.memory = hand_memory({2 * kGiB}, {4, 3, 2, 1});
    m->stats.memory.stages[2].peak_allocated_bytes = 18 * kGiB;  // the model says 16
    WhatifReport r = m->whatif(both);
    CHECK(r.memory_error_stage == 2);
    CHECK(r.memory_model_error == Approx(16.0 / 18.0 - 1));
    const auto* error = first_of<model_warning::MemoryModelError>(r.warnings);
    REQUIRE(error);
    CHECK(error->stage == 2);
    CHECK(error->error == Approx(16.0 / 18.0 - 1));
    CHECK(error->limit == 0.03);
  }
  SECTION("a device between 1F1B's peak and FThenB's: FThenB does not fit and ranks last") {
    m->stats.memory = hand_memory({2 * kGiB}, {4, 3, 2, 1});
    m->stats.memory.device_memory_bytes = 20 * kGiB;  // 1F1B: 18 GiB at most; FThenB: 29 GiB on stage 3
    WhatifReport r = m->whatif(both);
    REQUIRE(r.predicted.size() == 2);
    CHECK(r.predicted[0].shape.schedule == ScheduleKind::k1F1B);
    CHECK(r.predicted[0].fits);
    CHECK(r.predicted[0].margin_bytes == 2 * kGiB);
    CHECK(r.predicted[1].shape.schedule == ScheduleKind::kFThenB);
    CHECK_FALSE(r.predicted[1].fits);
    CHECK(r.predicted[1].margin_bytes == 20 * kGiB - 29 * kGiB);
    CHECK(r.within_noise_of_best.empty());  // one that does not fit is never beside #1
    CHECK(r.measured.fits);
    REQUIRE(first_of<assumption::DeviceMemory>(r.assumptions));
    CHECK(first_of<assumption::DeviceMemory>(r.assumptions)->bytes == 20 * kGiB);
    // Even when it is faster: FThenB at M=16 against 1F1B at M=8 on a device that fits only the latter.
    WhatifChanges more;
    more.schedules = {ScheduleKind::kFThenB, ScheduleKind::k1F1B};
    more.micro_batches = {16};
    WhatifReport r16 = m->whatif(more);
    REQUIRE(r16.predicted.size() == 2);
    CHECK(r16.predicted.back().shape.schedule == ScheduleKind::kFThenB);
    CHECK_FALSE(r16.predicted.back().fits);
  }
  SECTION("the predicted timeline carries the replay's memory samples") {
    m->stats.memory = hand_memory({2 * kGiB}, {4, 3, 2, 1});
    WhatifReport r = m->whatif(both);
    const WhatifOutcome& o = r.predicted.at(0);
    Timeline tl = replay_timeline(o.replay, 1000, 5);
    add_predicted_memory(tl, o.replay, r.memory, 5);
    CHECK(tl.memory_resolution_bytes == r.memory.resolution_bytes);
    REQUIRE(tl.tracks.size() == 4);
    for (const Track& t : tl.tracks) {
      size_t work = 0;
      for (const Job& j : t.jobs) work += j.micro_batch >= 0 ? 1 : 0;
      REQUIRE(t.memory.size() == 2 * work);  // a Before and an After per forward and backward
      int64_t most = 0;
      for (size_t i = 0; i < t.memory.size(); ++i) {
        const MemorySample& x = t.memory[i];
        most = std::max(most, x.allocated_bytes);
        CHECK(x.reserved_bytes >= x.allocated_bytes);
        CHECK(x.step >= 5);
        if (i > 0) CHECK(x.ts_ns >= t.memory[i - 1].ts_ns);
      }
      CHECK(most == o.peak_memory_bytes.at(t.rank));
      // The first sample is the step's static part, before its first forward, at that forward's start.
      CHECK(t.memory.front().point == MemoryPoint::kBeforeForward);
      CHECK(t.memory.front().allocated_bytes == (10 + t.rank) * kGiB);
      CHECK(t.memory.front().ts_ns == t.jobs.front().start_ns);
    }
  }
}

TEST_CASE("stats' suggestions say the predicted peak and never a change that does not fit", "[whatif][memory][gen]") {
  if (!testing::have_python()) {
    FAIL("python3 not found: gen_logs.py makes the logs (scripts/setup.sh installs python3)");
  }
  // FThenB at M=4: M=8 is suggested, holding twice the activations.
  auto m = generated("--schedule fthenb --stages 4 --micro-batches 4 --steps 3 --jitter 0 --seed 3");
  m->stats.memory = hand_memory({2 * kGiB}, {4, 4, 4, 4});
  auto find = [](const std::vector<WhatifSuggestion>& s, int32_t m) {
    return std::find_if(s.begin(), s.end(), [&](const WhatifSuggestion& w) { return twice_m(w, m); });
  };
  std::vector<WhatifSuggestion> s = suggest_changes(m->timeline, m->plan, m->deps, m->stats, 10);
  auto twice = find(s, 8);
  REQUIRE(twice != s.end());
  CHECK(twice->peak_memory_bytes == 13 * kGiB + 8 * 2 * kGiB);
  // 29 GiB against the replayed 21 GiB.
  CHECK(twice->measured_peak_memory_bytes == 13 * kGiB + 4 * 2 * kGiB);
  // On a 24 GiB device M=8 does not fit: not suggested; what fits still is.
  m->stats.memory.device_memory_bytes = 24 * kGiB;
  std::vector<WhatifSuggestion> fit = suggest_changes(m->timeline, m->plan, m->deps, m->stats, 10);
  CHECK(find(fit, 8) == fit.end());
  for (const WhatifSuggestion& w : fit) CHECK(w.peak_memory_bytes <= 24 * kGiB);
  CHECK(fit.size() + 1 >= s.size());
}

}  // namespace
}  // namespace ppt
