// End to end on the CPU: pp-demo with --act-mb and --pipeline-details holds
// real memory and logs Paddle's `[Pipeline details]` lines, whose sizes
// follow the schedule: a forward adds a micro-batch's activations, the job
// that frees them (backward, or backward_w) takes them away.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <regex>
#include <sstream>

#include "demo_check.h"
#include "schedule.h"

using namespace ppt::demo_check;
using ppt::PlanRole;
using ppt::demo::JobSpec;
using ppt::demo::PipelineShape;
using ppt::demo::ScheduleKind;

namespace {

constexpr double kGiB = 1073741824.0;
constexpr double kActMb = 20.48;     // 0.02 GiB: each micro-batch a step the logged sizes show
constexpr double kStaticMb = 10.24;  // 0.01 GiB

int64_t mib(double mb) { return std::llround(mb * 1048576.0); }

std::string gib(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(bytes) / kGiB);
  return buf;
}

struct Line {
  std::string message;
  std::string allocated, reserved;
  int64_t stamp_ms = 0;
};

struct RankLog {
  std::vector<Line> lines;
  std::vector<std::string> malformed;
  int64_t peak_allocated = -1, resident_peak = -1;
};

RankLog read_rank(const std::string& path) {
  static const std::regex kLine(
      R"(^\[(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d),(\d{3})\] \[    INFO\] pipeline_parallel\.py:1187 - )"
      R"(\[Pipeline details\] (\S+): memory_allocated_size=(\d+\.\d\d), memory_reserved_size=(\d+\.\d\d)$)");
  static const std::regex kSummary(R"(memory: peak allocated (\d+) bytes, .* resident peak \(VmHWM\) (-?\d+) bytes)");
  RankLog out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, kSummary)) {
      out.peak_allocated = std::stoll(m[1]);
      out.resident_peak = std::stoll(m[2]);
    }
    if (line.find("[Pipeline details]") == std::string::npos) continue;
    if (!std::regex_match(line, m, kLine)) {
      out.malformed.push_back(line);
      continue;
    }
    std::tm tm{};
    tm.tm_year = std::stoi(m[1]) - 1900;
    tm.tm_mon = std::stoi(m[2]) - 1;
    tm.tm_mday = std::stoi(m[3]);
    tm.tm_hour = std::stoi(m[4]);
    tm.tm_min = std::stoi(m[5]);
    tm.tm_sec = std::stoi(m[6]);
    const int64_t ms = static_cast<int64_t>(::timegm(&tm)) * 1000 + std::stoi(m[7]);
    out.lines.push_back({m[8], m[9], m[10], ms});
  }
  return out;
}

// What the lines of one stage must be, step after step, worked out here from
// the plan: the messages, and the sizes with a forward adding one job's
// activations and a backward or backward_w freeing them.
std::vector<Line> expected_lines(const PipelineShape& shape, int stage, int steps, int64_t* peak) {
  const bool vpp = shape.schedule == ScheduleKind::kVPP;
  const int64_t per_job = mib(kActMb) / shape.chunks;
  const int64_t granule = 2 << 20;
  const int64_t static_bytes = mib(kStaticMb);
  const auto up = [&](int64_t b) { return (b + granule - 1) / granule * granule; };
  int held = 0;
  int64_t reserved_peak = 0;
  *peak = 0;
  std::vector<Line> out;
  auto add = [&](const std::string& msg) {
    const int64_t allocated = static_bytes + held * per_job;
    reserved_peak = std::max(reserved_peak, up(static_bytes) + held * up(per_job));
    *peak = std::max(*peak, allocated);
    out.push_back({msg, gib(allocated), gib(reserved_peak), 0});
  };
  for (int step = 0; step < steps; ++step) {
    int forwards = 0, backwards = 0;
    add("Start_forward_backward_pipeline");
    for (const JobSpec& j : ppt::demo::stage_jobs(shape, stage)) {
      const bool fwd = j.is(PlanRole::kForward);
      const bool logged = fwd || j.is(PlanRole::kBackward);
      if (j.optimizer()) add("End_forward_backward_pipeline");
      const std::string name = std::string(fwd ? "forward" : "backward") + "_step_chunk_" +
                               (vpp ? std::to_string(j.chunk) : "None") + "_step_" +
                               std::to_string(vpp ? (fwd ? forwards : backwards) : j.micro_batch);
      if (logged) add("Before_" + name);
      if (fwd) ++held;
      if (j.is(PlanRole::kBackward) || j.is(PlanRole::kBackwardW)) --held;
      if (logged) add("After_" + name);
      forwards += fwd ? 1 : 0;
      backwards += j.is(PlanRole::kBackward) ? 1 : 0;
    }
  }
  return out;
}

struct Case {
  const char* schedule;
  ScheduleKind kind;
  int ranks, micro_batches, chunks;
};

}  // namespace

TEST_CASE("pp-demo --act-mb --pipeline-details logs Paddle's details lines, sized as its schedule holds memory") {
  const Case c = GENERATE(Case{"1f1b", ScheduleKind::k1F1B, 4, 6, 1}, Case{"fthenb", ScheduleKind::kFThenB, 3, 4, 1},
                          Case{"vpp", ScheduleKind::kVPP, 4, 8, 2}, Case{"zbh1", ScheduleKind::kZBH1, 4, 6, 1});
  const int steps = 2;
  INFO(c.schedule << " P=" << c.ranks << " M=" << c.micro_batches << " V=" << c.chunks);
  TempDir dir;
  std::vector<std::string> args{"--log_dir",   dir.path(), "--ranks",           std::to_string(c.ranks),
                                "--schedule",  c.schedule, "--micro-batches",   std::to_string(c.micro_batches),
                                "--steps",     "2",        "--work_us",         "100",
                                "--device",    "cpu",      "--act-mb",          "20.48",
                                "--static-mb", "10.24",    "--pipeline-details"};
  if (c.kind == ScheduleKind::kVPP) {
    args.push_back("--chunks");
    args.push_back(std::to_string(c.chunks));
  }
  const int64_t started_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  const Command run = run_demo(args);
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  const int64_t ended_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  const PipelineShape shape{c.kind, c.ranks, c.chunks, c.micro_batches};
  for (int s = 0; s < c.ranks; ++s) {
    INFO("stage " << s);
    const RankLog log = read_rank(dir.path() + "/workerlog." + std::to_string(s));
    CHECK(log.malformed.empty());
    int64_t peak = 0;
    const std::vector<Line> want = expected_lines(shape, s, steps, &peak);
    REQUIRE(log.lines.size() == want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      INFO("line " << i);
      CHECK(log.lines[i].message == want[i].message);
      CHECK(log.lines[i].allocated == want[i].allocated);
      CHECK(log.lines[i].reserved == want[i].reserved);
      // UTC stamps of this run, in order (a whole-ms stamp is floored).
      CHECK(log.lines[i].stamp_ms >= started_ms - 1);
      CHECK(log.lines[i].stamp_ms <= ended_ms);
      if (i > 0) CHECK(log.lines[i].stamp_ms >= log.lines[i - 1].stamp_ms);
    }
    // The schedules' own peaks: 1F1B holds P - s micro-batches, FThenB all
    // M; ZB-H1 P - s until their backward_b and its s deferred backward_w
    // hold s more: P on every stage; VPP its warm-up forwards + 1 chunks of
    // 1/V each.
    const int64_t act = mib(kActMb), stat = mib(kStaticMb);
    const int p = c.ranks, m = c.micro_batches, v = c.chunks;
    int64_t closed_form = 0;
    switch (c.kind) {
      case ScheduleKind::k1F1B: closed_form = stat + std::min(p - s, m) * act; break;
      case ScheduleKind::kZBH1: closed_form = stat + std::min(p, m) * act; break;
      case ScheduleKind::kFThenB: closed_form = stat + m * act; break;
      case ScheduleKind::kVPP:
        closed_form = stat + std::min((p - s - 1) * 2 + (v - 1) * p + 1, m * v) * (act / v);
        break;
      default: break;
    }
    CHECK(peak == closed_form);
    CHECK(log.peak_allocated == closed_form);
    // It was real: the rank's resident memory reached at least what it held.
    CHECK(log.resident_peak >= log.peak_allocated);
  }
  // The converter reads the logs, job lines and details lines together, as
  // the schedule's jobs, each once.
  const LoadedRun loaded = load(dir.path());
  REQUIRE(loaded.error == "");
  CHECK(loaded.rejected_lines == 0);
  const auto order = check_order(shape, steps, loaded);
  std::string problems;
  for (const auto& o : order) problems += o + "\n";
  INFO(problems);
  CHECK(order.empty());
}

TEST_CASE("pp-demo refuses a negative or non-finite --act-mb") {
  TempDir dir;
  for (const char* bad : {"-1", "nan", "inf"}) {
    const Command run = run_demo({"--log_dir", dir.path(), "--ranks", "2", "--schedule", "1f1b", "--micro-batches", "2",
                                  "--steps", "1", "--act-mb", bad});
    INFO(bad << ": " << run.output);
    CHECK(run.exit_code == 2);
  }
}
