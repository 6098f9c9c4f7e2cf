// The critical path of each step (critical_path.h), as compute_stats reports it.
#include <catch2/catch.hpp>

#include <map>

#include "analysis/stats.h"
#include "support/test_support.h"

namespace ppt {
namespace {

constexpr int64_t kUs = 1000;

// Two stages with a 1 us hop between them; rank 0's second forward is long,
// so rank 1 waits for it (see the expected path below).
std::vector<testing::HandJob> two_stage_with_latency() {
  return {
      {0, "forward", 0, 0, 10},     {0, "forward", 1, 10, 25},   {0, "backward", 0, 57, 77}, {0, "backward", 1, 77, 97},
      {0, "optimizer", 0, 97, 102}, {1, "forward", 0, 11, 21},   {1, "forward", 1, 26, 36},  {1, "backward", 0, 36, 56},
      {1, "backward", 1, 56, 76},   {1, "optimizer", 0, 76, 81},
  };
}

TEST_CASE("the critical path follows the binding dependency of each job back to the step's start", "[stats][path]") {
  testing::TempDir dir;
  Stats st = testing::stats_of(testing::load_hand_run(dir, "run", two_stage_with_latency()));
  REQUIRE(st.steps.size() == 1);
  const CriticalPath& cp = st.steps[0].critical_path;
  // Walking back from rank 0's optimizer: its backward 1 waited for its own
  // backward 0 (ends 77) rather than rank 1's backward 1 (ends 76); backward 0
  // for rank 1's backward 0 (56, one 1 us hop); that one for rank 1's forward
  // 1, which waited for rank 0's forward 1 (25, one hop), which followed
  // rank 0's forward 0.
  std::vector<std::string> hops;
  for (const CriticalHop& h : cp.hops)
    hops.push_back(std::to_string(h.rank) + " " + h.type + ":" + std::to_string(h.micro_batch));
  CHECK(hops == std::vector<std::string>{"0 forward:0", "0 forward:1", "1 forward:1", "1 backward:0", "0 backward:0",
                                         "0 backward:1", "0 optimizer:0"});
  CHECK(cp.job_ns == (10 + 15 + 10 + 20 + 20 + 20 + 5) * kUs);
  CHECK(cp.wait_ns == 2 * kUs);
  CHECK(cp.share == Approx(1.0));
  REQUIRE(cp.hops.size() == 7);
  CHECK(cp.hops[2].from_other_rank);
  CHECK(cp.hops[2].wait_ns == 1 * kUs);
  CHECK_FALSE(cp.hops[3].from_other_rank);
  CHECK(cp.hops[4].from_other_rank);
  CHECK(cp.hops.back().end_ns == st.steps[0].end_ns);
}

TEST_CASE("critical paths of simulated schedules end the step, never go back in time and stay in one replica",
          "[stats][path]") {
  testing::TempDir dir;
  int n = 0;
  for (std::string args :
       {"--schedule 1f1b --stages 4 --dp 2", "--schedule vpp --stages 4 --chunks 2",
        "--schedule zbvpp --stages 4 --chunks 2", "--schedule zbh1 --stages 4", "--schedule overlap --stages 3",
        "--schedule eager1f1b --stages 4 --machines 2 --skew 1:0.05"}) {
    INFO(args);
    std::string logs = testing::generate_log_dir(dir, "p" + std::to_string(n++), args + " --micro-batches 8 --steps 2");
    Stats st = testing::stats_of(testing::load_dir(logs));
    int32_t p = st.schedule.pp_degree;
    for (const StepStats& s : st.steps) {
      const CriticalPath& cp = s.critical_path;
      REQUIRE_FALSE(cp.hops.empty());
      CHECK(cp.hops.back().end_ns == s.end_ns);
      CHECK(cp.share > 0.9);
      CHECK(cp.share <= 1.0);
      int64_t jobs = 0, waits = 0;
      for (size_t i = 0; i < cp.hops.size(); ++i) {
        const CriticalHop& h = cp.hops[i];
        jobs += h.end_ns - h.start_ns;
        waits += h.wait_ns;
        if (i == 0) continue;
        CHECK(h.start_ns >= cp.hops[i - 1].end_ns);
        CHECK(h.wait_ns == h.start_ns - cp.hops[i - 1].end_ns);
        CHECK(h.rank / p == cp.hops[i - 1].rank / p);
      }
      CHECK(jobs == cp.job_ns);
      CHECK(waits == cp.wait_ns);
    }
  }
}

TEST_CASE("a slow rank holds most of the critical path", "[stats][path]") {
  testing::TempDir dir;
  std::string logs = testing::generate_log_dir(
      dir, "slow", "--schedule 1f1b --stages 4 --micro-batches 8 --steps 2 --slow 1:1.5 --seed 4");
  Stats st = testing::stats_of(testing::load_dir(logs));
  std::map<int32_t, int64_t> by_rank;
  for (const StepStats& s : st.steps) {
    for (const CriticalHop& h : s.critical_path.hops) by_rank[h.rank] += h.end_ns - h.start_ns;
  }
  int32_t top = -1;
  int64_t best = -1;
  for (auto [rank, ns] : by_rank) {
    if (ns > best) best = ns, top = rank;
  }
  CHECK(top == 1);
}

}  // namespace
}  // namespace ppt
