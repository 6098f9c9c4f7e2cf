// Splitting a file that holds several runs appended to each other.
#include "passes/reruns.h"

#include <catch2/catch.hpp>

#include "passes/timeline_builder.h"
#include "support/test_support.h"

using namespace ppt;
using ppt::testing::job_line;
using ppt::testing::plan;
using ppt::testing::plan_log;
// A plan as the tests write it (ppt::PlanJob is the schedule layer's).
using PlanLine = ppt::testing::PlanJob;
using ppt::testing::startup_lines;

namespace {

// `steps` steps of plan `p` by thread `tid`, each preceded by the marker as
// Paddle's switch_job_schedule_profiler() logs it (root logger, every
// iteration), starting at `offset_us`.
std::string every_iteration_log(const std::vector<PlanLine>& p, int steps, int64_t offset_us, int tid,
                                const std::string& marker = "Schedule Profiler start at step 10 and end at step 15") {
  std::string log;
  for (int s = 0; s < steps; ++s) {
    log += "INFO:root:" + marker + "\n";
    int64_t t = offset_us + s * 1000;
    for (const PlanLine& j : p) {
      log += job_line(j.type, j.mb, t, t + 10, -1, tid);
      t += 10;
    }
  }
  return log;
}

// One rank's file through the whole builder: each run's step numbers.
std::vector<std::vector<int32_t>> run_step_numbers(const std::string& log) {
  std::vector<SourceFile> files{{"w0", "", 0, 0, 0}};
  std::vector<FileScan> scans;
  scans.push_back(scan_buffer(log, 0, testing::parser()));
  Timeline tl = build_from_scans(files, {""}, std::move(scans));
  std::vector<std::vector<int32_t>> out;
  for (const Run& r : tl.runs) {
    out.emplace_back();
    for (const StepSpan& s : r.steps) out.back().push_back(s.number);
  }
  return out;
}

}  // namespace

TEST_CASE("appended runs are split by start-up lines, thread id or a clock jump back", "[reruns]") {
  auto p = plan("forward:0 backward:0 optimizer:0");
  SECTION("a new process's start-up lines, each run with its marker") {
    std::string log = startup_lines(4242) + "Schedule Profiler start at step 5 and end at step 9\n" + plan_log(p, 2) +
                      startup_lines(4242) + "Schedule Profiler start at step 5 and end at step 9\n" +
                      plan_log(p, 2, 1000, 60'000'000);
    FileScan s = scan_buffer(log, 0, testing::parser());
    auto runs = split_runs(s);
    REQUIRE(runs.size() == 2);
    CHECK(runs[0].end == 6);
    CHECK(runs[1].has_marker);
    CHECK(runs[1].marker_start_step == 5);
    CHECK(s.jobs[6].step == 0);
  }
  SECTION("a new process's thread id at a step boundary") {
    std::string log = plan_log(p, 2);
    for (const PlanLine& j : p) log += job_line(j.type, j.mb, 90'000'000, 90'000'010, -1, 999);
    FileScan s = scan_buffer(log, 0, testing::parser());
    auto runs = split_runs(s);
    REQUIRE(runs.size() == 2);
    CHECK(runs[1].begin == 6);
  }
  SECTION("times that jump back by more than a second") {
    std::string log = plan_log(p, 2, 1000, 5'000'000) + plan_log(p, 1, 1000, 0);
    FileScan s = scan_buffer(log, 0, testing::parser());
    CHECK(split_runs(s).size() == 2);
  }
  SECTION("a small jump back stays in the run") {
    std::string log = plan_log(p, 2, 1000, 5000) + plan_log(p, 1, 1000, 4000);
    FileScan s = scan_buffer(log, 0, testing::parser());
    CHECK(split_runs(s).size() == 1);
  }
}

TEST_CASE("a schedule marker logged at every iteration is one run, numbered from its start", "[reruns]") {
  auto p = plan("forward:0 backward:0 optimizer:0");
  // Iterations 0..9 log the marker before the window; 10..12 are profiled;
  // iteration 14 (end-1) logs it once more and exits.
  std::string log = startup_lines(4242);
  for (int i = 0; i < 10; ++i) log += "INFO:root:Schedule Profiler start at step 10 and end at step 15\n";
  log += every_iteration_log(p, 3, 0, 4242) + "INFO:root:Schedule Profiler start at step 10 and end at step 15\n";
  FileScan s = scan_buffer(log, 0, testing::parser());
  auto runs = split_runs(s);
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].has_marker);
  CHECK(runs[0].marker_start_step == 10);
  CHECK(run_step_numbers(log) == std::vector<std::vector<int32_t>>{{10, 11, 12}});
}

TEST_CASE("PaddleNLP's once-at-start-up marker still numbers the steps", "[reruns]") {
  auto p = plan("forward:0 backward:0 optimizer:0");
  std::string log = startup_lines(4242) +
                    "[2023-10-20 09:15:01,000] [    INFO] - Schedule Profiler start at step 10 and end at step 20\n" +
                    plan_log(p, 3);
  CHECK(run_step_numbers(log) == std::vector<std::vector<int32_t>>{{10, 11, 12}});
}

TEST_CASE("a rerun with the same thread id is split at the new process's start-up lines", "[reruns]") {
  auto p = plan("forward:0 backward:0 optimizer:0");
  SECTION("every-iteration markers, the same window") {
    std::string log = startup_lines(4242) + every_iteration_log(p, 3, 0, 4242) + startup_lines(4242) +
                      every_iteration_log(p, 2, 60'000'000, 4242);
    FileScan s = scan_buffer(log, 0, testing::parser());
    auto runs = split_runs(s);
    REQUIRE(runs.size() == 2);
    CHECK(runs[1].begin == 9);
    CHECK(runs[1].has_marker);
    CHECK(s.jobs[9].step == 0);
    CHECK(run_step_numbers(log) == std::vector<std::vector<int32_t>>{{10, 11, 12}, {10, 11}});
  }
  SECTION("no marker at all") {
    std::string log = startup_lines(4242) + plan_log(p, 2) + startup_lines(4242) + plan_log(p, 2, 1000, 60'000'000);
    FileScan s = scan_buffer(log, 0, testing::parser());
    auto runs = split_runs(s);
    REQUIRE(runs.size() == 2);
    CHECK(runs[1].begin == 6);
    CHECK(run_step_numbers(log) == std::vector<std::vector<int32_t>>{{0, 1}, {0, 1}});
  }
  SECTION("the old device_context.cc wording, without a glog prefix") {
    std::string old =
        "Please NOTE: device: 0, CUDA Capability: 70, Driver API Version: 10.2, Runtime API Version: 9.2\n";
    std::string log = old + plan_log(p, 2) + old + plan_log(p, 2, 1000, 60'000'000);
    FileScan s = scan_buffer(log, 0, testing::parser());
    CHECK(split_runs(s).size() == 2);
  }
}

TEST_CASE("a repeated marker alone never splits a run", "[reruns]") {
  auto p = plan("forward:0 backward:0 optimizer:0");
  SECTION("the same window, even after a long pause") {
    std::string log = every_iteration_log(p, 2, 0, 4242) + every_iteration_log(p, 2, 30'000'000, 4242);
    FileScan s = scan_buffer(log, 0, testing::parser());
    CHECK(split_runs(s).size() == 1);
    CHECK(run_step_numbers(log) == std::vector<std::vector<int32_t>>{{10, 11, 12, 13}});
  }
  SECTION("a different window in the same process begins a run numbered from it") {
    std::string log =
        every_iteration_log(p, 2, 0, 4242) +
        every_iteration_log(p, 2, 30'000'000, 4242, "Schedule Profiler start at step 50 and end at step 55");
    FileScan s = scan_buffer(log, 0, testing::parser());
    auto runs = split_runs(s);
    REQUIRE(runs.size() == 2);
    CHECK(runs[1].begin == 6);
    CHECK(runs[1].marker_start_step == 50);
    CHECK(run_step_numbers(log) == std::vector<std::vector<int32_t>>{{10, 11}, {50, 51}});
  }
}
