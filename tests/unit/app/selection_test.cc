// --run, --steps and --skip-warmup: what is kept, what is said, and the
// usage errors that name what exists.
#include <catch2/catch.hpp>

#include "app/selection.h"
#include "output/text/summary.h"
#include "support/test_support.h"

namespace ppt {
namespace {

std::vector<int32_t> steps_of(const Timeline& tl) {
  std::vector<int32_t> out;
  for (const Run& r : tl.runs) {
    for (const StepSpan& s : r.steps) out.push_back(s.number);
  }
  return out;
}

// Every job of the timeline is in one of its runs' steps.
void check_consistent(const Timeline& tl) {
  for (size_t r = 0; r < tl.runs.size(); ++r) {
    CHECK(tl.runs[r].index == r);
    for (uint32_t ti : tl.runs[r].tracks) {
      REQUIRE(ti < tl.tracks.size());
      CHECK(tl.tracks[ti].run == r);
      for (const Job& j : tl.tracks[ti].jobs) {
        bool found = false;
        for (const StepSpan& s : tl.runs[r].steps) found = found || s.number == j.step;
        CHECK(found);
      }
    }
  }
}

TEST_CASE("a step range keeps those steps and counts the jobs left out", "[selection]") {
  auto g = testing::generate_logs("--schedule 1f1b --stages 2 --micro-batches 4 --steps 4 --seed 2");
  Timeline& tl = g->timeline;
  const size_t before = tl.job_count();
  Selection sel;
  sel.steps = StepRange{1, 2};
  CHECK(apply_selection(tl, sel) == "");
  CHECK(steps_of(tl) == std::vector<int32_t>{1, 2});
  check_consistent(tl);
  CHECK(tl.job_count() + tl.unselected_jobs == before);
  CHECK(tl.job_count() == before / 2);
  CHECK(tl.selection == "steps 1-2 of 0-3 (--steps 1:2)");
  CHECK(tl.origin_ns == tl.runs[0].first_ns);
  CHECK(format_summary(tl).find(fmt::format("{} left out by the selection", tl.unselected_jobs)) != std::string::npos);
}

TEST_CASE("skipping the warm-up drops each run's first steps, then --steps picks", "[selection]") {
  auto g = testing::generate_logs("--schedule 1f1b --stages 2 --micro-batches 4 --steps 4 --seed 2");
  Selection sel;
  sel.skip_warmup = 1;
  sel.steps = StepRange{INT32_MIN, 2};
  CHECK(apply_selection(g->timeline, sel) == "");
  CHECK(steps_of(g->timeline) == std::vector<int32_t>{1, 2});
}

TEST_CASE("choosing a run keeps one appended run, renumbered as the only one", "[selection]") {
  auto g = testing::generate_logs("--schedule 1f1b --stages 2 --micro-batches 4 --steps 3 --rerun --seed 2");
  Timeline& tl = g->timeline;
  REQUIRE(tl.runs.size() == 2);
  const int64_t second = tl.runs[1].first_ns;
  Selection sel;
  sel.run = 2;
  CHECK(apply_selection(tl, sel) == "");
  REQUIRE(tl.runs.size() == 1);
  CHECK(tl.runs[0].first_ns == second);
  CHECK(tl.selection == "run 2 of 2 (--run 2)");
  check_consistent(tl);
}

TEST_CASE("a selection that keeps nothing is an error naming the steps there are", "[selection]") {
  using Case = std::tuple<std::string, Selection, std::string>;
  Selection steps;
  steps.steps = StepRange{7, 9};
  Selection run;
  run.run = 3;
  Selection skip;
  skip.skip_warmup = 5;
  for (const auto& [args, sel, want] : std::vector<Case>{
           {"--steps 4 --start-step 100 --seed 2", steps, "--steps 7:9: no step is left; the run has steps 100-103"},
           {"--steps 3 --rerun --seed 2", steps,
            "--steps 7:9: no step is left; run 1 has steps 0-2, run 2 has steps 0-2"},
           {"--steps 3 --rerun --seed 2", run, "--run 3: the logs hold 2 runs (1-2)"},
           {"--steps 4 --seed 2", skip, "--skip-warmup 5: no step is left; the run has steps 0-3"},
       }) {
    INFO(args);
    auto g = testing::generate_logs("--schedule 1f1b --stages 2 --micro-batches 2 " + args);
    const size_t jobs = g->timeline.job_count();
    CHECK(apply_selection(g->timeline, sel) == want);
    CHECK(g->timeline.job_count() == jobs);  // unchanged
    CHECK(g->timeline.unselected_jobs == 0);
  }
}

TEST_CASE("step lists join consecutive numbers", "[selection]") {
  CHECK(step_list({}) == "none");
  CHECK(step_list({4}) == "4");
  CHECK(step_list({0, 1, 2, 5, 7, 8}) == "0-2, 5, 7-8");
}

}  // namespace
TEST_CASE("step ranges are read as A:B with both ends included", "[selection]") {
  struct Row {
    const char* text;
    bool ok;
    int32_t first, last;
  };
  const Row rows[] = {
      {"3:5", true, 3, 5},          {"3", true, 3, 3},      {"3:", true, 3, INT32_MAX}, {":5", true, INT32_MIN, 5},
      {"-1:2", true, -1, 2},        {"5:3", false, 0, 0},   {"", false, 0, 0},          {":", false, 0, 0},
      {"a:b", false, 0, 0},         {"1:2:3", false, 0, 0}, {"1.5", false, 0, 0},       {" 1", false, 0, 0},
      {"99999999999", false, 0, 0},
  };
  for (const Row& row : rows) {
    DYNAMIC_SECTION("'" << row.text << "'") {
      std::string error;
      auto r = parse_step_range(row.text, &error);
      CHECK(r.has_value() == row.ok);
      if (r) {
        CHECK(r->first == row.first);
        CHECK(r->last == row.last);
      } else {
        CHECK_FALSE(error.empty());
      }
    }
  }
}

}  // namespace ppt

namespace ppt {
namespace {

TEST_CASE("a step range keeps the memory samples of those steps only", "[selection][details]") {
  auto g = testing::generate_logs("--details only --schedule 1f1b --stages 2 --micro-batches 4 --steps 4 --fwd-ms 3");
  Timeline& tl = g->timeline;
  size_t before = 0;
  for (const Track& t : tl.tracks) before += t.memory.size();
  REQUIRE(before > 0);
  Selection sel;
  sel.steps = StepRange{1, 2};
  CHECK(apply_selection(tl, sel) == "");
  size_t after = 0;
  for (const Track& t : tl.tracks) {
    for (const MemorySample& m : t.memory) CHECK((m.step == 1 || m.step == 2));
    after += t.memory.size();
  }
  CHECK(after == before / 2);
}

}  // namespace
}  // namespace ppt
