// Busy, idle and bubble ratios against answers computed by hand, and stragglers.
#include <catch2/catch.hpp>

#include <set>

#include "analysis/stats.h"
#include "support/test_support.h"

namespace ppt {
namespace {

using testing::HandJob;
using testing::rank_of;
using testing::repeated_steps;

constexpr int64_t kUs = 1000;

// Two stages, two micro-batches, forward 10 us and backward 20 us, FThenB,
// each rank ending with a 5 us optimizer; step 1 is step 0 moved by 200 us.
std::vector<HandJob> two_stage_fthenb() {
  std::vector<HandJob> one = {
      {0, "forward", 0, 0, 10},    {0, "forward", 1, 10, 20},   {0, "backward", 0, 50, 70}, {0, "backward", 1, 70, 90},
      {0, "optimizer", 0, 90, 95}, {1, "forward", 0, 10, 20},   {1, "forward", 1, 20, 30},  {1, "backward", 0, 30, 50},
      {1, "backward", 1, 50, 70},  {1, "optimizer", 0, 70, 75},
  };
  return repeated_steps(one, 2, 200);
}

TEST_CASE("bubble ratios of a hand-timed two-stage FThenB run match the hand computation", "[stats]") {
  testing::TempDir dir;
  Timeline tl = testing::load_hand_run(dir, "run", two_stage_fthenb());
  Stats st = testing::stats_of(tl);

  // Each step spans from rank 0's first forward (0) to its optimizer's end (95).
  REQUIRE(st.steps.size() == 2);
  CHECK(st.steps[0].time_ns() == 95 * kUs);
  CHECK(st.steps[1].time_ns() == 95 * kUs);
  CHECK(st.steps[1].start_ns - st.steps[0].start_ns == 200 * kUs);
  CHECK(st.step_time.mean_ns == Approx(95.0 * kUs));

  // Rank 0: 20 us of forwards, 40 of backwards, 5 of optimizer; the 30 us
  // between its last forward (20) and first backward (50) are a gap.
  const RankStats& r0 = rank_of(st, 0);
  CHECK(r0.steps == 2);
  CHECK(r0.span_ns == 2 * 95 * kUs);
  CHECK(r0.busy_ns == 2 * 65 * kUs);
  CHECK(r0.idle_ns == 2 * 30 * kUs);
  CHECK(r0.warmup_ns == 0);
  CHECK(r0.gaps_ns == 2 * 30 * kUs);
  CHECK(r0.cooldown_ns == 0);
  CHECK(r0.bubble_ratio == Approx(30.0 / 95.0));

  // Rank 1 waits 10 us for its first forward and 20 us after its optimizer
  // (75) for rank 0 to finish (95), and never in between.
  const RankStats& r1 = rank_of(st, 1);
  CHECK(r1.busy_ns == 2 * 65 * kUs);
  CHECK(r1.warmup_ns == 2 * 10 * kUs);
  CHECK(r1.cooldown_ns == 2 * 20 * kUs);
  CHECK(r1.gaps_ns == 0);
  CHECK(r1.bubble_ratio == Approx(30.0 / 95.0));

  CHECK(st.bubble_ratio == Approx(30.0 / 95.0));
  CHECK(st.steps[0].bubble_ratio == Approx(60.0 / 190.0));

  // The same plan on both ranks: FThenB over all ranks, with its ideal
  // (P-1)/(M+P-1) = 1/3.
  CHECK(st.schedule.kind == ScheduleKind::kFThenB);
  CHECK(st.schedule.pp_degree == 2);
  CHECK(st.schedule.micro_batches == 2);
  CHECK(st.schedule.ideal_bubble_ratio == Approx(1.0 / 3.0));

  // Job types over both ranks and steps.
  REQUIRE(st.types.size() == 3);
  CHECK(st.types[0].type == "backward");
  CHECK(st.types[0].count == 8);
  CHECK(st.types[0].mean_ns == Approx(20.0 * kUs));
  CHECK(st.types[1].type == "forward");
  CHECK(st.types[1].p95_ns == 10 * kUs);
  CHECK(st.types[2].type == "optimizer");
  CHECK(st.types[2].max_ns == 5 * kUs);
}

TEST_CASE("overlapping jobs count once in busy time", "[stats]") {
  testing::TempDir dir;
  // One rank: two forwards that overlap by 5 us, a backward after a 5 us gap.
  Timeline tl = testing::load_hand_run(
      dir, "run", {{0, "forward", 0, 0, 10}, {0, "forward", 1, 5, 15}, {0, "backward", 0, 20, 30}});
  REQUIRE(tl.tracks.size() == 1);
  REQUIRE(tl.tracks[0].lanes == 2);  // the overlap is really there
  Stats st = testing::stats_of(tl);
  const RankStats& r = rank_of(st, 0);
  CHECK(r.span_ns == 30 * kUs);
  CHECK(r.busy_ns == 25 * kUs);  // [0, 15) and [20, 30), not 10 + 10 + 10
  CHECK(r.idle_ns == 5 * kUs);
  CHECK(r.gaps_ns == 5 * kUs);
  CHECK(r.bubble_ratio == Approx(5.0 / 30.0));
}

TEST_CASE("a job inside another adds nothing to busy time", "[stats]") {
  testing::TempDir dir;
  Timeline tl = testing::load_hand_run(
      dir, "run", {{0, "forward", 0, 0, 20}, {0, "forward", 1, 5, 10}, {0, "backward", 0, 30, 40}});
  Stats st = testing::stats_of(tl);
  const RankStats& r = rank_of(st, 0);
  CHECK(r.busy_ns == 30 * kUs);
  CHECK(r.idle_ns == 10 * kUs);
}

TEST_CASE("union_length merges, clips and skips empty intervals", "[stats]") {
  using V = std::vector<std::pair<int64_t, int64_t>>;
  struct Case {
    V intervals;
    int64_t lo, hi, want;
  };
  const std::vector<Case> cases = {
      {{}, 0, 10, 0},
      {{{0, 10}}, 0, 10, 10},
      {{{0, 10}, {5, 15}}, 0, 100, 15},
      {{{0, 10}, {5, 15}}, 3, 12, 9},
      {{{0, 5}, {5, 10}}, 0, 100, 10},           // touching
      {{{0, 10}, {2, 3}, {4, 12}}, 0, 100, 12},  // nested, then extended
      {{{0, 2}, {4, 6}}, 1, 5, 2},               // clipped at both ends
      {{{0, 2}, {4, 6}}, 2, 4, 0},               // only the hole
      {{{5, 5}, {7, 6}}, 0, 10, 0},              // empty and reversed
      {{{-10, -5}, {0, 3}}, -8, 1, 4},
  };
  for (const Case& c : cases) {
    INFO("lo " << c.lo << " hi " << c.hi << " n " << c.intervals.size());
    CHECK(union_length(c.intervals, c.lo, c.hi) == c.want);
  }
}

TEST_CASE("percentiles are nearest-rank", "[stats]") {
  std::vector<int64_t> v;
  for (int i = 20; i >= 1; --i) v.push_back(i);
  CHECK(percentile(v, 0.5) == 10);
  CHECK(percentile(v, 0.95) == 19);
  CHECK(percentile(v, 1.0) == 20);
  CHECK(percentile(v, 0.01) == 1);
  std::vector<int64_t> one = {7};
  CHECK(percentile(one, 0.95) == 7);
  std::vector<int64_t> none;
  CHECK(percentile(none, 0.5) == 0);
}

TEST_CASE("the step summary's median lies between the middle two of an even count", "[stats][median]") {
  // Six step spans: the summary's median lies between the third and fourth.
  StepTimeSummary six = summarize_times({867895000, 867081000, 869000000, 866000000, 867488000, 868302000});
  CHECK(six.median_ns == 867691500.0);
  StepTimeSummary two = summarize_times({10, 21});
  CHECK(two.median_ns == 15.5);
}

TEST_CASE("a simulated 1F1B run with equal stage times has the textbook bubble plus the optimizer", "[stats]") {
  testing::TempDir dir;
  // P=4, M=8, forward 1 ms, backward 2 ms, optimizer 0.5 ms, no jitter or latency.
  std::string logs = testing::generate_log_dir(
      dir, "eq", "--schedule 1f1b --stages 4 --micro-batches 8 --steps 2 --jitter 0 --comm-us 0 --seed 3");
  Stats st = testing::stats_of(testing::load_dir(logs));
  const int p = 4, m = 8;
  const double f = 1.0, b = 2.0, opt = 0.5;
  // Stage 0's last backward ends after (M+P-1)(F+B); its optimizer follows.
  double step_ms = (m + p - 1) * (f + b) + opt;
  double busy_ms = m * (f + b) + opt;
  REQUIRE(st.steps.size() == 2);
  for (const StepStats& s : st.steps) CHECK(s.time_ns() == static_cast<int64_t>(step_ms * 1e6));
  for (const RankStats& r : st.ranks) {
    INFO("rank " << r.rank);
    CHECK(r.busy_ns == static_cast<int64_t>(2 * busy_ms * 1e6));
    CHECK(r.bubble_ratio == Approx((step_ms - busy_ms) / step_ms));
    // Stage s waits s forwards before it starts and 2s ms of backwards at the end.
    CHECK(r.warmup_ns == static_cast<int64_t>(2 * r.stage * f * 1e6));
    CHECK(r.cooldown_ns == static_cast<int64_t>(2 * r.stage * b * 1e6));
    CHECK(r.warmup_ns + r.gaps_ns + r.cooldown_ns == r.idle_ns);
  }
  CHECK(st.schedule.kind == ScheduleKind::k1F1B);
  CHECK(st.schedule.ideal_bubble_ratio == Approx(double(p - 1) / (m + p - 1)));
  CHECK(st.bubble_ratio == Approx((p - 1) * (f + b) / step_ms));
}

TEST_CASE("idle time splits exactly into warm-up, gaps and cool-down on a noisy run", "[stats]") {
  testing::TempDir dir;
  std::string logs = testing::generate_log_dir(
      dir, "noisy", "--schedule vpp --stages 4 --dp 2 --micro-batches 8 --steps 3 --jitter 0.2 --seed 7");
  Stats st = testing::stats_of(testing::load_dir(logs));
  REQUIRE(st.ranks.size() == 8);
  int64_t idle = 0, span = 0;
  for (const RankStats& r : st.ranks) {
    INFO("rank " << r.rank);
    CHECK(r.busy_ns + r.idle_ns == r.span_ns);
    CHECK(r.warmup_ns + r.gaps_ns + r.cooldown_ns == r.idle_ns);
    CHECK(r.warmup_ns >= 0);
    CHECK(r.gaps_ns >= 0);
    CHECK(r.cooldown_ns >= 0);
    CHECK(r.steps == 3);
    idle += r.idle_ns;
    span += r.span_ns;
  }
  CHECK(st.bubble_ratio == Approx(static_cast<double>(idle) / span));
  for (const StepStats& s : st.steps) CHECK(s.busy_ns + s.idle_ns == s.time_ns() * s.ranks);
}

TEST_CASE("a log with thousands of job types is measured per type and rank", "[stats]") {
  testing::TempDir dir;
  std::vector<HandJob> jobs;
  for (int r = 0; r < 3; ++r) {
    for (int k = 0; k < 3000; ++k) jobs.push_back({r, "job" + std::to_string(k * 3 + r) + "x", 0, k * 10, k * 10 + 5});
  }
  Stats st = testing::stats_of(testing::load_hand_run(dir, "many", jobs));
  CHECK(st.types.size() == 9000);
  for (const RankStats& r : st.ranks) {
    CHECK(r.types.size() == 3000);
    CHECK(r.busy_ns == 3000 * 5 * kUs);
  }
  CHECK(st.stragglers.empty());
}

TEST_CASE("a rank whose jobs are 20% slower is named a straggler with its margin", "[stats][stragglers]") {
  testing::TempDir dir;
  std::string logs = testing::generate_log_dir(
      dir, "slow", "--schedule 1f1b --stages 4 --micro-batches 8 --steps 3 --slow 2:1.2 --seed 11");
  Stats st = testing::stats_of(testing::load_dir(logs));
  REQUIRE_FALSE(st.stragglers.empty());
  std::set<std::string> types;
  for (const Straggler& s : st.stragglers) {
    INFO(s.type << " on rank " << s.rank);
    CHECK(s.rank == 2);
    CHECK(s.stage == 2);
    CHECK(s.margin == Approx(0.2).margin(0.05));
    CHECK(s.consistency >= 0.75);
    CHECK(s.median_ns > s.others_median_ns);
    types.insert(s.type);
  }
  CHECK(types.count("forward") == 1);
  CHECK(types.count("backward") == 1);
}

TEST_CASE("a rank's type row and its straggler median come from its durations in any order", "[stats][stragglers]") {
  // Ranks 0 and 1 run four 10 us forwards; rank 2 runs forwards of 40, 10,
  // 30 and 20 us, in that order. Its median is the mean of the two middle
  // values (25 us), its p50 the nearest rank (20 us), its p95 and max 40 us.
  testing::TempDir dir;
  std::vector<HandJob> jobs;
  for (int r = 0; r < 2; ++r) {
    for (int mb = 0; mb < 4; ++mb) jobs.push_back({r, "forward", mb, mb * 50, mb * 50 + 10});
  }
  const int64_t lengths[] = {40, 10, 30, 20};
  for (int mb = 0; mb < 4; ++mb) jobs.push_back({2, "forward", mb, mb * 50, mb * 50 + lengths[mb]});
  Stats st = testing::stats_of(testing::load_hand_run(dir, "uneven", jobs));

  const RankStats& r2 = rank_of(st, 2);
  REQUIRE(r2.types.size() == 1);
  const TypeDurations& fwd = r2.types[0];
  CHECK(fwd.count == 4);
  CHECK(fwd.p50_ns == 20 * kUs);
  CHECK(fwd.p95_ns == 40 * kUs);
  CHECK(fwd.max_ns == 40 * kUs);
  CHECK(fwd.mean_ns == Approx(25.0 * kUs));
  CHECK(fwd.total_ns == 100 * kUs);

  REQUIRE(st.stragglers.size() == 1);
  const Straggler& s = st.stragglers[0];
  CHECK(s.rank == 2);
  CHECK(s.type == "forward");
  CHECK(s.median_ns == Approx(25.0 * kUs));
  CHECK(s.others_median_ns == Approx(10.0 * kUs));
  CHECK(s.margin == Approx(1.5));
  CHECK(s.consistency == Approx(0.75));  // 20, 30 and 40 us are above 11 us
  CHECK(s.jobs == 4);
}

TEST_CASE("a run with only jitter has no straggler, and a wide margin hides a slow rank", "[stats][stragglers]") {
  testing::TempDir dir;
  std::string even =
      testing::generate_log_dir(dir, "even", "--schedule 1f1b --stages 4 --steps 3 --jitter 0.05 --seed 2");
  CHECK(testing::stats_of(testing::load_dir(even)).stragglers.empty());
  std::string slow =
      testing::generate_log_dir(dir, "slow", "--schedule 1f1b --stages 4 --steps 3 --slow 1:1.2 --seed 2");
  StatsOptions wide;
  wide.straggler_margin = 0.30;
  CHECK(testing::stats_of(testing::load_dir(slow), wide).stragglers.empty());
}

}  // namespace
}  // namespace ppt

namespace ppt {
namespace {

TEST_CASE("a step's period runs to the next step's start; the last step has none", "[stats][period]") {
  testing::TempDir dir;
  Stats st = testing::stats_of(testing::load_hand_run(dir, "run", two_stage_fthenb()));
  REQUIRE(st.steps.size() == 2);
  CHECK(st.steps[0].period_ns == 200 * kUs);  // span 95 us, then 105 us of nothing
  CHECK(st.steps[1].period_ns == -1);
  CHECK(st.step_period.count == 1);
  CHECK(st.step_period.mean_ns == Approx(200.0 * kUs));
  CHECK(st.throughput.steps_per_second == Approx(5000.0));           // 1 / 200 us
  CHECK(st.throughput.micro_batches_per_second == Approx(10000.0));  // M = 2
  CHECK(st.throughput.samples_per_second == 0);                      // no micro-batch size
  StatsOptions opt;
  opt.micro_batch_size = 4;
  Stats with = testing::stats_of(testing::load_hand_run(dir, "run2", two_stage_fthenb()), opt);
  CHECK(with.throughput.samples_per_second == Approx(40000.0));
}

TEST_CASE("appended runs are measured one at a time, the last by default, the others named", "[stats][runs]") {
  auto g = testing::generate_logs("--schedule 1f1b --stages 2 --micro-batches 4 --steps 3 --rerun --seed 2");
  REQUIRE(g->timeline.runs.size() == 2);
  Stats last = testing::stats_of(g->timeline);
  CHECK(last.run == 1);
  CHECK(last.steps.size() == 3);  // not 6 pooled
  for (const StepStats& s : last.steps) CHECK(s.run == 1);
  REQUIRE_FALSE(last.notes.empty());
  CHECK(last.notes[0].find("2 runs") != std::string::npos);
  CHECK(last.notes[0].find("run 1 (3 steps") != std::string::npos);
  // No period spans the minute between the runs.
  CHECK(last.step_period.count == 2);
  CHECK(last.step_period.max_ns < 1'000'000'000);
  StatsOptions first;
  first.run = 0;
  Stats one = testing::stats_of(g->timeline, first);
  CHECK(one.run == 0);
  CHECK(one.steps.size() == 3);
  CHECK(one.jobs + last.jobs == g->timeline.job_count());
}

TEST_CASE("a rank cut short is flagged and the run's bubble counts complete rank-steps", "[stats][short]") {
  auto g = testing::generate_logs("--schedule 1f1b --stages 4 --micro-batches 8 --steps 4 --seed 6");
  Stats whole = testing::stats_of(g->timeline);
  CHECK(whole.short_ranks.empty());
  CHECK(whole.complete_rank_steps == whole.rank_steps);
  // Rank 3's log ends after its first five jobs.
  std::ifstream in(g->logs + "/workerlog.3");
  std::string line, kept;
  int jobs = 0;
  while (std::getline(in, line)) {
    if (line.find("Profiler Info: Job") != std::string::npos && ++jobs > 5) break;
    kept += line + "\n";
  }
  in.close();
  std::ofstream(g->logs + "/workerlog.3") << kept;
  Stats cut = testing::stats_of(testing::load_dir(g->logs));
  REQUIRE(cut.short_ranks == std::vector<int32_t>{3});
  const RankStats& r3 = testing::rank_of(cut, 3);
  CHECK(r3.missing_steps == 3);
  CHECK(r3.incomplete_steps == 1);
  CHECK(r3.bubble_ratio > 0.6);  // its own row: what it ran
  CHECK(cut.rank_steps == 13);
  CHECK(cut.complete_rank_steps == 12);
  CHECK(cut.bubble_ratio == Approx(whole.bubble_ratio).margin(0.03));
  CHECK(cut.steps[0].incomplete_ranks == 1);
  bool noted = false;
  for (const std::string& n : cut.notes) noted = noted || n.find("short rank: rank 3 misses 3 of 4 steps") == 0;
  CHECK(noted);
}

}  // namespace
}  // namespace ppt
