// Step numbers shared across ranks (steps.h, number_steps) when a rank lacks
// a step and the ranks' steps overlap in time, as pipeline stages' do.
#include <catch2/catch.hpp>

#include "input/timeline_builder.h"
#include "passes/steps.h"
#include "test_logs.h"

using namespace ppt;
using ppt::testing::job_line;

namespace {

const LineParser& parser() {
  static LineParser p;
  return p;
}

// One rank's log: steps `first`..`last` of period `period_us`, each made of
// forward/backward jobs of two micro-batches and an optimizer job, spanning
// [s * period + lead_us, s * period + lead_us + length_us]. Steps in `skip`
// are left out (a log cut or lost there).
std::string rank_log(int steps, int64_t period_us, int64_t lead_us, int64_t length_us, std::vector<int> skip) {
  const char* types[] = {"forward", "forward", "backward", "backward", "optimizer"};
  const int mbs[] = {0, 1, 0, 1, 0};
  std::string log;
  for (int s = 0; s < steps; ++s) {
    if (std::find(skip.begin(), skip.end(), s) != skip.end()) continue;
    int64_t t0 = s * period_us + lead_us;
    for (int i = 0; i < 5; ++i) {
      int64_t a = t0 + i * length_us / 5, b = t0 + (i + 1) * length_us / 5;
      log += job_line(types[i], mbs[i], a, b);
    }
  }
  return log;
}

}  // namespace

TEST_CASE("a rank lacking the first step keeps its steps' numbers when the stages' steps overlap", "[steps]") {
  // Rank 0's step k+1 begins (at k * 10 ms + 10 ms) before the later stages
  // have finished step k (their optimizer ends 0.4 ms later): the steps of
  // neighbouring stages overlap in time, as in a real pipeline. Rank 0 has
  // no line of step 0.
  const int steps = 4;
  std::vector<std::string> logs = {
      rank_log(steps, 10'000, 0, 9'500, {0}),
      rank_log(steps, 10'000, 200, 10'200, {}),
      rank_log(steps, 10'000, 300, 10'100, {}),
  };
  std::vector<SourceFile> files;
  std::vector<FileScan> scans;
  for (int r = 0; r < 3; ++r) {
    files.push_back({"w" + std::to_string(r), "", 0, r, r});
    scans.push_back(scan_buffer(logs[r], r, parser()));
  }
  Timeline tl = build_from_scans(files, {""}, std::move(scans));
  REQUIRE(tl.runs.size() == 1);
  const Run& run = tl.runs[0];
  REQUIRE(run.steps.size() == steps);
  CHECK(run.steps[0].ranks == 2);
  for (int s = 1; s < steps; ++s) CHECK(run.steps[s].ranks == 3);
  for (uint32_t ti : run.tracks) {
    const Track& t = tl.tracks[ti];
    for (const Job& j : t.jobs) {
      // A job's step is the period it starts in (every rank starts a step
      // within 0.3 ms of k * 10 ms).
      int32_t want = static_cast<int32_t>((j.start_ns - ppt::testing::kEpochNs) / 10'000'000);
      INFO("rank " << t.rank << " job at " << (j.start_ns - ppt::testing::kEpochNs) / 1000 << " us");
      CHECK(j.step == want);
    }
  }
  for (size_t i = 1; i < run.steps.size(); ++i) CHECK(run.steps[i].start_ns >= run.steps[i - 1].end_ns);
}
