// Steps, reruns and lanes: the passes that decide what the user sees.
#include <catch2/catch.hpp>

#include "passes/lanes.h"
#include "passes/reruns.h"
#include "passes/steps.h"
#include "input/timeline_builder.h"
#include "test_logs.h"

using namespace ppt;
using ppt::testing::job_line;

namespace {

const LineParser& parser() {
  static LineParser p;
  return p;
}

// A rank's plan, as "F0 B0 F1 ... O" tokens: type letter(s) + micro-batch.
struct PlanJob {
  std::string type;
  int mb;
};

std::vector<PlanJob> plan(const std::string& spec) {
  std::vector<PlanJob> out;
  size_t i = 0;
  while (i < spec.size()) {
    size_t j = spec.find(' ', i);
    if (j == std::string::npos) j = spec.size();
    std::string tok = spec.substr(i, j - i);
    size_t colon = tok.find(':');
    out.push_back({tok.substr(0, colon), colon == std::string::npos ? 0 : std::stoi(tok.substr(colon + 1))});
    i = j + 1;
  }
  return out;
}

// `steps` repetitions of a plan, back to back in time; returns the log.
std::string log_of(const std::vector<PlanJob>& p, int steps, int64_t step_us = 1000, int64_t offset_us = 0) {
  std::string log;
  for (int s = 0; s < steps; ++s) {
    int64_t t = offset_us + s * step_us;
    for (const PlanJob& j : p) {
      log += job_line(j.type, j.mb, t, t + 10);
      t += 10;
    }
  }
  return log;
}

std::vector<int32_t> local_steps(const std::string& log) {
  FileScan s = scan_buffer(log, 0, parser());
  split_runs(s);
  std::vector<int32_t> out;
  for (const Job& j : s.jobs) out.push_back(j.step);
  return out;
}

}  // namespace

TEST_CASE("every schedule's job stream splits into its steps", "[steps]") {
  struct Row {
    const char* name;
    const char* plan;
  };
  const Row rows[] = {
      {"FThenB", "forward:0 forward:1 forward:2 backward:0 backward:1 backward:2 optimizer:0"},
      {"1F1B", "forward:0 forward:1 backward:0 forward:2 backward:1 backward:2 optimizer:0"},
      {"1F1B without optimizer", "forward:0 forward:1 backward:0 forward:2 backward:1 backward:2"},
      {"VPP: micro-batch 0 once per chunk", "forward0:0 forward0:1 forward1:0 forward1:1 backward1:0 backward1:1 backward0:0 backward0:1 optimizer:0"},
      {"VPP without optimizer", "forward0:0 forward1:0 forward0:1 forward1:1 backward1:0 backward0:0 backward1:1 backward0:1"},
      {"ZBH1", "forward:0 forward:1 backward_b:0 forward:2 backward_w:0 backward_b:1 backward_b:2 backward_w:1 backward_w:2 optimizer:0"},
      {"ZBVPP", "forward0:0 forward1:0 backward_b1:0 backward_b0:0 backward_w1:0 backward_w0:0 optimizer:0"},
      {"overlap types", "forward:0 backward(chunk0):0 forward(chunk0):1 backward(chunk1):0 forward(chunk1):1 backward:1 optimizer:0"},
      {"2023 plan with lr first", "lr:0 forward:0 forward:1 backward:0 backward:1 optimizer:0"},
      {"two optimizer jobs end one step", "forward:0 backward:0 optimizer:0 optimizer:1"},
      {"no pipeline", "default:0"},
  };
  for (const Row& r : rows) {
    INFO(r.name);
    auto p = plan(r.plan);
    std::vector<int32_t> got = local_steps(log_of(p, 3));
    std::vector<int32_t> want;
    for (int s = 0; s < 3; ++s) want.insert(want.end(), p.size(), s);
    CHECK(got == want);
  }
}

TEST_CASE("without micro-batch ids the job id separates the jobs of a step", "[steps]") {
  std::string log;
  for (int s = 0; s < 2; ++s) {
    for (int i = 0; i < 4; ++i) {
      std::string line = job_line(i < 2 ? "forward" : "backward", -1, s * 100 + i * 10, s * 100 + i * 10 + 5, i);
      log += line;
    }
  }
  CHECK(local_steps(log) == std::vector<int32_t>{0, 0, 0, 0, 1, 1, 1, 1});
}

namespace {

// Paddle's start-up lines, printed once per process (gpu_resources.cc).
std::string startup_lines(int tid) {
  return "W1020 09:15:00.197323 " + std::to_string(tid) +
         " gpu_resources.cc:119] Please NOTE: device: 0, GPU Compute Capability: 9.0, Driver API Version: 12.4, "
         "Runtime API Version: 12.3\n"
         "W1020 09:15:00.197400 " + std::to_string(tid) + " gpu_resources.cc:164] device: 0, cuDNN Version: 8.9.\n";
}

// `steps` steps of plan `p` by thread `tid`, each preceded by the marker as
// Paddle's switch_job_schedule_profiler() logs it (root logger, every
// iteration), starting at `offset_us`.
std::string every_iteration_log(const std::vector<PlanJob>& p, int steps, int64_t offset_us, int tid,
                                const std::string& marker = "Schedule Profiler start at step 10 and end at step 15") {
  std::string log;
  for (int s = 0; s < steps; ++s) {
    log += "INFO:root:" + marker + "\n";
    int64_t t = offset_us + s * 1000;
    for (const PlanJob& j : p) {
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
  scans.push_back(scan_buffer(log, 0, parser()));
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
    std::string log = startup_lines(4242) + "Schedule Profiler start at step 5 and end at step 9\n" + log_of(p, 2) +
                      startup_lines(4242) + "Schedule Profiler start at step 5 and end at step 9\n" +
                      log_of(p, 2, 1000, 60'000'000);
    FileScan s = scan_buffer(log, 0, parser());
    auto runs = split_runs(s);
    REQUIRE(runs.size() == 2);
    CHECK(runs[0].end == 6);
    CHECK(runs[1].has_marker);
    CHECK(runs[1].marker_start_step == 5);
    CHECK(s.jobs[6].step == 0);
  }
  SECTION("a new process's thread id at a step boundary") {
    std::string log = log_of(p, 2);
    for (const PlanJob& j : p) log += job_line(j.type, j.mb, 90'000'000, 90'000'010, -1, 999);
    FileScan s = scan_buffer(log, 0, parser());
    auto runs = split_runs(s);
    REQUIRE(runs.size() == 2);
    CHECK(runs[1].begin == 6);
  }
  SECTION("times that jump back by more than a second") {
    std::string log = log_of(p, 2, 1000, 5'000'000) + log_of(p, 1, 1000, 0);
    FileScan s = scan_buffer(log, 0, parser());
    CHECK(split_runs(s).size() == 2);
  }
  SECTION("a small jump back stays in the run") {
    std::string log = log_of(p, 2, 1000, 5000) + log_of(p, 1, 1000, 4000);
    FileScan s = scan_buffer(log, 0, parser());
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
  FileScan s = scan_buffer(log, 0, parser());
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
                    log_of(p, 3);
  CHECK(run_step_numbers(log) == std::vector<std::vector<int32_t>>{{10, 11, 12}});
}

TEST_CASE("a rerun with the same thread id is split at the new process's start-up lines", "[reruns]") {
  auto p = plan("forward:0 backward:0 optimizer:0");
  SECTION("every-iteration markers, the same window") {
    std::string log = startup_lines(4242) + every_iteration_log(p, 3, 0, 4242) + startup_lines(4242) +
                      every_iteration_log(p, 2, 60'000'000, 4242);
    FileScan s = scan_buffer(log, 0, parser());
    auto runs = split_runs(s);
    REQUIRE(runs.size() == 2);
    CHECK(runs[1].begin == 9);
    CHECK(runs[1].has_marker);
    CHECK(s.jobs[9].step == 0);
    CHECK(run_step_numbers(log) == std::vector<std::vector<int32_t>>{{10, 11, 12}, {10, 11}});
  }
  SECTION("no marker at all") {
    std::string log = startup_lines(4242) + log_of(p, 2) + startup_lines(4242) + log_of(p, 2, 1000, 60'000'000);
    FileScan s = scan_buffer(log, 0, parser());
    auto runs = split_runs(s);
    REQUIRE(runs.size() == 2);
    CHECK(runs[1].begin == 6);
    CHECK(run_step_numbers(log) == std::vector<std::vector<int32_t>>{{0, 1}, {0, 1}});
  }
  SECTION("the old device_context.cc wording, without a glog prefix") {
    std::string old = "Please NOTE: device: 0, CUDA Capability: 70, Driver API Version: 10.2, Runtime API Version: 9.2\n";
    std::string log = old + log_of(p, 2) + old + log_of(p, 2, 1000, 60'000'000);
    FileScan s = scan_buffer(log, 0, parser());
    CHECK(split_runs(s).size() == 2);
  }
}

TEST_CASE("a repeated marker alone never splits a run", "[reruns]") {
  auto p = plan("forward:0 backward:0 optimizer:0");
  SECTION("the same window, even after a long pause") {
    std::string log = every_iteration_log(p, 2, 0, 4242) + every_iteration_log(p, 2, 30'000'000, 4242);
    FileScan s = scan_buffer(log, 0, parser());
    CHECK(split_runs(s).size() == 1);
    CHECK(run_step_numbers(log) == std::vector<std::vector<int32_t>>{{10, 11, 12, 13}});
  }
  SECTION("a different window in the same process begins a run numbered from it") {
    std::string log = every_iteration_log(p, 2, 0, 4242) +
                      every_iteration_log(p, 2, 30'000'000, 4242, "Schedule Profiler start at step 50 and end at step 55");
    FileScan s = scan_buffer(log, 0, parser());
    auto runs = split_runs(s);
    REQUIRE(runs.size() == 2);
    CHECK(runs[1].begin == 6);
    CHECK(runs[1].marker_start_step == 50);
    CHECK(run_step_numbers(log) == std::vector<std::vector<int32_t>>{{10, 11}, {50, 51}});
  }
}

TEST_CASE("overlapping jobs go on the fewest lanes and every lane nests", "[lanes]") {
  Track t;
  auto add = [&](int64_t s, int64_t e, uint32_t line) {
    Job j;
    j.start_ns = s;
    j.end_ns = e;
    j.line = line;
    t.jobs.push_back(j);
  };
  add(0, 10, 1);
  add(10, 20, 2);  // touches: same lane
  add(5, 15, 3);   // overlaps both
  add(12, 30, 4);  // overlaps 2 and 3
  add(30, 40, 5);
  assign_lanes(t);
  CHECK(t.lanes == 3);
  CHECK(t.overlapping_jobs == 2);
  for (uint32_t lane = 0; lane < t.lanes; ++lane) {
    int64_t end = INT64_MIN;
    for (const Job& j : t.jobs) {
      if (j.lane != lane) continue;
      CHECK(j.start_ns >= end);
      end = j.end_ns;
    }
  }
  CHECK(t.jobs.size() == 5);
}

TEST_CASE("a rank missing a step does not shift the others", "[steps]") {
  auto p = plan("forward:0 forward:1 backward:0 backward:1 optimizer:0");
  std::vector<SourceFile> files;
  std::vector<FileScan> scans;
  for (int r = 0; r < 3; ++r) {
    std::string log = "Schedule Profiler start at step 10 and end at step 20\n";
    for (int s = 0; s < 4; ++s) {
      if (r == 1 && s == 1) continue;  // rank 1 lacks step 11
      int64_t t = s * 10'000 + r * 5;
      for (const PlanJob& j : p) {
        log += job_line(j.type, j.mb, t, t + 10);
        t += 10;
      }
    }
    files.push_back({"w" + std::to_string(r), "", 0, r, r});
    scans.push_back(scan_buffer(log, r, parser()));
  }
  Timeline tl = build_from_scans(files, {""}, std::move(scans));
  REQUIRE(tl.runs.size() == 1);
  const Run& run = tl.runs[0];
  REQUIRE(run.steps.size() == 4);
  CHECK(run.steps[0].number == 10);
  CHECK(run.steps[1].ranks == 2);
  CHECK(run.steps[2].ranks == 3);
  for (uint32_t ti : run.tracks) {
    const Track& t = tl.tracks[ti];
    for (const Job& j : t.jobs) {
      int32_t want = 10 + static_cast<int32_t>((j.start_ns - ppt::testing::kEpochNs) / 10'000'000);
      CHECK(j.step == want);
    }
  }
  for (size_t i = 1; i < run.steps.size(); ++i) CHECK(run.steps[i].start_ns >= run.steps[i - 1].end_ns);
}
