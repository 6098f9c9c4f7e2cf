// End to end on the CPU: pp-demo writes launch logs, the converter reads them
// back, and the timeline must hold the schedule's order and its dependencies.
#include <catch2/catch.hpp>
#include <chrono>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "demo_check.h"
#include "work.h"

using namespace ppt::demo_check;
using ppt::demo::PipelineShape;
using ppt::demo::ScheduleKind;

namespace {

struct Case {
  const char* schedule;
  ScheduleKind kind;
  int ranks;
  int micro_batches;
  int chunks;
};

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("Every schedule's logs convert to its job order and dependencies on every rank") {
  const Case c =
      GENERATE(Case{"fthenb", ScheduleKind::kFThenB, 4, 6, 1}, Case{"1f1b", ScheduleKind::k1F1B, 4, 6, 1},
               Case{"vpp", ScheduleKind::kVPP, 4, 8, 2}, Case{"vpp", ScheduleKind::kVPP, 2, 4, 3},
               Case{"zbh1", ScheduleKind::kZBH1, 4, 6, 1}, Case{"eager1f1b", ScheduleKind::kEager1F1B, 3, 5, 1});
  const int steps = 3;
  INFO(c.schedule << " P=" << c.ranks << " M=" << c.micro_batches << " V=" << c.chunks);
  TempDir dir;
  std::vector<std::string> args{"--log_dir",       dir.path(),
                                "--ranks",         std::to_string(c.ranks),
                                "--schedule",      c.schedule,
                                "--micro-batches", std::to_string(c.micro_batches),
                                "--steps",         std::to_string(steps),
                                "--work_us",       "150",
                                "--device",        "cpu"};
  if (c.kind == ScheduleKind::kVPP) {
    args.push_back("--chunks");
    args.push_back(std::to_string(c.chunks));
  }
  const Command run = run_demo(args);
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  for (int r = 0; r < c.ranks; ++r) {
    CHECK(std::filesystem::exists(dir.path() + "/workerlog." + std::to_string(r)));
  }

  const LoadedRun loaded = load(dir.path());
  REQUIRE(loaded.error == "");
  CHECK(loaded.runs == 1);
  CHECK(loaded.rejected_lines == 0);
  CHECK(loaded.has_marker);
  const PipelineShape shape{c.kind, c.ranks, c.chunks, c.micro_batches};
  const auto order = check_order(shape, steps, loaded);
  INFO(joined(order));
  CHECK(order.empty());
  const auto deps = check_dependencies(shape, loaded);
  INFO(joined(deps));
  CHECK(deps.empty());
}

TEST_CASE("Ranks spread over machines write machine<k>/workerlog.<local>, read back in rank order") {
  TempDir dir;
  const Command run = run_demo({"--log_dir", dir.path(), "--ranks", "4", "--machines", "2", "--schedule", "1f1b",
                                "--micro-batches", "4", "--steps", "2", "--work_us", "100", "--device", "cpu"});
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  for (const char* f :
       {"/machine0/workerlog.0", "/machine0/workerlog.1", "/machine1/workerlog.0", "/machine1/workerlog.1"}) {
    CHECK(std::filesystem::exists(dir.path() + f));
  }
  CHECK_FALSE(std::filesystem::exists(dir.path() + "/workerlog.0"));
  const LoadedRun loaded = load(dir.path());
  REQUIRE(loaded.error == "");
  const PipelineShape shape{ScheduleKind::k1F1B, 4, 1, 4};
  const auto order = check_order(shape, 2, loaded);
  INFO(joined(order));
  CHECK(order.empty());
  const auto deps = check_dependencies(shape, loaded);
  INFO(joined(deps));
  CHECK(deps.empty());
}

TEST_CASE("The logs are glog lines with the schedule marker before the first job") {
  TempDir dir;
  const Command run = run_demo({"--log_dir", dir.path(), "--ranks", "2", "--schedule", "fthenb", "--micro-batches", "2",
                                "--steps", "1", "--work_us", "50", "--device", "cpu"});
  REQUIRE(run.exit_code == 0);
  const std::string log = read_file(dir.path() + "/workerlog.1");
  const size_t marker = log.find("Schedule Profiler start at step 0 and end at step 1");
  const size_t first_job = log.find("Profiler Info: Job (");
  REQUIRE(marker != std::string::npos);
  REQUIRE(first_job != std::string::npos);
  CHECK(marker < first_job);
  // The glog prefix: severity, date, time, thread id, file:line.
  const size_t line_start = log.rfind('\n', first_job) + 1;
  const std::string prefix = log.substr(line_start, first_job - line_start);
  CHECK(prefix.front() == 'I');
  CHECK_THAT(prefix, Catch::Contains(".cc:") && Catch::EndsWith("] "));
}

TEST_CASE("Only the profiling window's steps are logged, numbered from its start") {
  TempDir dir;
  const Command run =
      run_demo({"--log_dir", dir.path(), "--ranks", "2", "--schedule", "1f1b", "--micro-batches", "3", "--steps", "5",
                "--work_us", "50", "--device", "cpu", "--profile_start", "1", "--profile_end", "3"});
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  const LoadedRun loaded = load(dir.path());
  REQUIRE(loaded.error == "");
  CHECK(loaded.marker_start_step == 1);
  const PipelineShape shape{ScheduleKind::k1F1B, 2, 1, 3};
  const auto order = check_order(shape, 2, loaded, 1);
  INFO(joined(order));
  CHECK(order.empty());
}

TEST_CASE("The window can come from PPT_SHIM_START_STEP and PPT_SHIM_END_STEP") {
  TempDir dir;
  ::setenv("PPT_SHIM_START_STEP", "2", 1);
  ::setenv("PPT_SHIM_END_STEP", "3", 1);
  const Command run = run_demo({"--log_dir", dir.path(), "--ranks", "2", "--schedule", "zbh1", "--micro-batches", "2",
                                "--steps", "4", "--work_us", "50", "--device", "cpu"});
  ::unsetenv("PPT_SHIM_START_STEP");
  ::unsetenv("PPT_SHIM_END_STEP");
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  const LoadedRun loaded = load(dir.path());
  REQUIRE(loaded.error == "");
  CHECK(loaded.marker_start_step == 2);
  const auto order = check_order(PipelineShape{ScheduleKind::kZBH1, 2, 1, 2}, 1, loaded, 2);
  INFO(joined(order));
  CHECK(order.empty());
}

TEST_CASE("A shape that cannot run is refused before any rank starts") {
  TempDir dir;
  const Command run = run_demo(
      {"--log_dir", dir.path() + "/logs", "--ranks", "4", "--schedule", "vpp", "--micro-batches", "6", "--steps", "1"});
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.output, Catch::Contains("multiple of the stages"));
  CHECK_FALSE(std::filesystem::exists(dir.path() + "/logs"));

  const Command machines = run_demo({"--log_dir", dir.path(), "--ranks", "3", "--machines", "2", "--schedule", "1f1b",
                                     "--micro-batches", "3", "--steps", "1"});
  CHECK(machines.exit_code == 2);
  CHECK_THAT(machines.output, Catch::Contains("multiple of --machines"));

  // GPipe is FThenB (passes/schedule.h reads every spelling); a name that is
  // none is refused with the nearest, and ZBVPP, which the demo does not run,
  // with the ones it does.
  const Command unknown =
      run_demo({"--log_dir", dir.path(), "--ranks", "2", "--schedule", "zbh2", "--micro-batches", "2", "--steps", "1"});
  CHECK(unknown.exit_code == 2);
  CHECK_THAT(unknown.output, Catch::Contains("zbh2: not a schedule"));
  CHECK_THAT(unknown.output, Catch::Contains("did you mean ZBH1?"));
  const Command zbvpp = run_demo(
      {"--log_dir", dir.path(), "--ranks", "2", "--schedule", "ZB-VPP", "--micro-batches", "2", "--steps", "1"});
  CHECK(zbvpp.exit_code == 2);
  CHECK_THAT(zbvpp.output, Catch::Contains("ZBVPP is not one of the schedules here"));
}

TEST_CASE("The checks themselves catch a broken order and a broken dependency") {
  const PipelineShape shape{ScheduleKind::kFThenB, 2, 1, 1};
  // Rank 0: forward 0, backward 0, optimizer; rank 1 the same. One step.
  auto job = [](const char* type, int64_t start, int64_t end) { return DemoJob{type, 0, start, end, 0, 0}; };
  LoadedRun good;
  good.ranks = {{job("forward", 0, 10), job("backward", 40, 50), job("optimizer", 50, 55)},
                {job("forward", 12, 20), job("backward", 20, 38), job("optimizer", 38, 40)}};
  CHECK(check_order(shape, 1, good).empty());
  CHECK(check_dependencies(shape, good).empty());

  LoadedRun early = good;
  early.ranks[1][0].start_ns = 9;  // rank 1's forward starts before rank 0's ended
  const auto deps = check_dependencies(shape, early);
  REQUIRE(deps.size() == 1);
  CHECK_THAT(deps[0], Catch::Contains("rank 1 step 0 forward micro-batch 0 starts"));

  LoadedRun late = good;
  late.ranks[0][1].start_ns = 37;  // rank 0's backward starts before rank 1's ended
  CHECK(check_dependencies(shape, late).size() == 1);

  LoadedRun swapped = good;
  std::swap(swapped.ranks[0][0], swapped.ranks[0][1]);
  const auto order = check_order(shape, 1, swapped);
  REQUIRE(order.size() == 1);
  CHECK_THAT(order[0], Catch::StartsWith("rank 0 job 0: read backward"));
}

namespace {

// The durations, in microseconds, of rank `rank`'s jobs of `type`, sorted.
std::vector<double> sorted_us(const LoadedRun& run, int rank, const std::string& type) {
  std::vector<double> d;
  for (const DemoJob& j : run.ranks.at(rank)) {
    if (j.type == type) d.push_back(static_cast<double>(j.end_ns - j.start_ns) / 1e3);
  }
  std::sort(d.begin(), d.end());
  return d;
}

// The shortest: a job's work takes at least its time, and a busy machine only
// adds to it (the process is preempted), so only a lower bound is asserted of
// every job, and an upper bound of the shortest of several.
double min_us(const LoadedRun& run, int rank, const std::string& type) {
  const std::vector<double> d = sorted_us(run, rank, type);
  return d.empty() ? 0 : d.front();
}

}  // namespace

TEST_CASE("The work of --work_us is a stage's: a VPP chunk job does 1/V of it") {
  // 20 ms a forward per stage: V=2 chunks of 10 ms each, not 20 ms each.
  TempDir dir;
  const Command run = run_demo({"--log_dir", dir.path(), "--ranks", "2", "--schedule", "VPP", "--chunks", "2",
                                "--micro-batches", "2", "--steps", "3", "--work_us", "20000", "--device", "cpu"});
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  const LoadedRun loaded = load(dir.path());
  REQUIRE(loaded.error == "");
  for (int r = 0; r < 2; ++r) {
    for (const char* type : {"forward0", "forward1"}) {
      INFO("rank " << r << " " << type);
      CHECK(min_us(loaded, r, type) >= 10000 * 0.99);  // jobs last at least their work
      CHECK(min_us(loaded, r, type) < 15000);          // and not a whole stage's (the shortest of three)
    }
  }
}

TEST_CASE("A CPU job lasts its work, not its work and a sleep's lateness") {
  // A sleep to the deadline wakes late by the timer slack and the wake-up
  // (50-100 us): the same for every job, so chunk jobs, shorter, would be
  // slower per unit of work than whole jobs. The work timed around run():
  // the least lateness of 30 jobs (a busy machine only adds to it; a
  // sanitizer build adds to the shim's code around the work, not timed here).
  const std::unique_ptr<ppt::demo::Work> work = ppt::demo::make_cpu_work(4096);
  const std::vector<uint8_t> input(4096, 7);
  double least_late_us = 1e9;
  for (int i = 0; i < 30; ++i) {
    std::string error;
    const auto start = std::chrono::steady_clock::now();
    REQUIRE(work->run(1000, input, false, &error));
    const double took_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    CHECK(took_us >= 1000);
    least_late_us = std::min(least_late_us, took_us - 1000);
  }
  CHECK(least_late_us < 20);
}

TEST_CASE("A stage scaled by --stage-scale is a real straggler: its every job is that much longer") {
  TempDir dir;
  const Command run = run_demo({"--log_dir", dir.path(), "--ranks", "2", "--schedule", "1f1b", "--micro-batches", "2",
                                "--steps", "3", "--work_us", "4000", "--device", "cpu", "--stage-scale", "1:3"});
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  const LoadedRun loaded = load(dir.path());
  REQUIRE(loaded.error == "");
  // Stage 0 is not scaled: the shortest of its six forwards is under twice
  // its work (the median was asserted, and a loaded machine stretched it to
  // 11.7 ms under a sanitizer).
  CHECK(min_us(loaded, 0, "forward") >= 4000 * 0.99);
  CHECK(min_us(loaded, 0, "forward") < 8000);
  CHECK(min_us(loaded, 1, "forward") >= 12000 * 0.99);
  CHECK(min_us(loaded, 1, "backward") >= 24000 * 0.99);
  // A stage the run does not have, a bad factor: usage errors.
  for (const char* bad : {"2:1.5", "1:-1", "1:x", "1", "1:2000"}) {
    INFO(bad);
    const Command refused = run_demo({"--log_dir", dir.path(), "--ranks", "2", "--schedule", "1f1b", "--micro-batches",
                                      "2", "--steps", "1", "--stage-scale", bad});
    CHECK(refused.exit_code == 2);
    CHECK(refused.output.find("--stage-scale") != std::string::npos);
  }
}
