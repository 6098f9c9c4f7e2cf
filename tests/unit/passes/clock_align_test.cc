#include "passes/clock_align.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <map>

#include "passes/pipeline.h"
#include "support/test_support.h"

using namespace ppt;
using ppt::testing::generate_logs;
using ppt::testing::job_line;
using ppt::testing::RankLines;
using ppt::testing::timeline_from_lines;

namespace {

// Every job's (start, end), track by track, for comparing two timelines.
std::vector<std::pair<int64_t, int64_t>> all_times(const Timeline& tl) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const Track& t : tl.tracks) {
    for (const Job& j : t.jobs) out.push_back({j.start_ns, j.end_ns});
  }
  return out;
}

// The skew the generator added to each machine's printed times.
std::map<int32_t, int64_t> skews(const nlohmann::json& truth) {
  std::map<int32_t, int64_t> out;
  for (const auto& r : truth["ranks"]) out[r["machine"].get<int32_t>()] = r["skew_ns"].get<int64_t>();
  return out;
}

int64_t offset_of(const Timeline& tl, int32_t machine, uint32_t run = 0) {
  for (const Track& t : tl.tracks) {
    if (t.machine == machine && t.run == run) return t.clock_offset_ns;
  }
  return 0;
}

// Every step span covers its jobs, and origin_ns is the earliest job.
void check_spans(const Timeline& tl) {
  int64_t earliest = INT64_MAX;
  for (const Run& run : tl.runs) {
    for (uint32_t ti : run.tracks) {
      for (const Job& j : tl.tracks[ti].jobs) {
        earliest = std::min(earliest, j.start_ns);
        CHECK(j.start_ns >= run.first_ns);
        CHECK(j.end_ns <= run.last_ns);
        for (const StepSpan& s : run.steps) {
          if (s.number == j.step) CHECK(j.end_ns <= s.end_ns);
        }
      }
    }
    for (size_t i = 1; i < run.steps.size(); ++i) CHECK(run.steps[i].start_ns >= run.steps[i - 1].end_ns);
  }
  CHECK(tl.origin_ns == earliest);
}

}  // namespace

TEST_CASE("Machines whose clocks are skewed by known amounts are aligned to well under a millisecond",
          "[clock_align]") {
  if (!ppt::testing::have_python()) {
    FAIL("python3 not found: gen_logs.py makes the logs (scripts/setup.sh installs python3)");
  }
  struct Case {
    const char* args;
  };
  const Case cases[] = {
      {"--stages 6 --machines 3 --schedule 1f1b --skew 1:4 --skew 2:8"},
      {"--stages 6 --machines 3 --schedule 1f1b --skew 1:-3 --skew 2:5.5"},
      {"--stages 6 --machines 3 --schedule fthenb --skew 0:2 --skew 1:0.3"},
      {"--stages 3 --machines 3 --schedule vpp --chunks 2 --micro-batches 6 --skew 1:4 --skew 2:8"},
      {"--stages 6 --dp 2 --machines 3 --schedule zbh1 --skew 1:4 --skew 2:-8"},
  };
  for (const Case& c : cases) {
    SECTION(c.args) {
      auto g = generate_logs(std::string("--micro-batches 8 --steps 3 ") + c.args);
      Timeline& tl = g->timeline;
      const auto logged = all_times(tl);
      Dependencies deps = find_dependencies(tl, decide_pipeline(tl, 0, 1), 1);
      REQUIRE(deps.contradicted > 0);  // the skew shows
      ClockAlignment a = align_clocks(tl, deps);
      CHECK(a.consistent);
      CHECK(a.broken_before > 0);
      CHECK(a.broken_after == 0);
      CHECK(deps.contradicted == 0);
      // The residual: what is left of each machine's skew, relative to machine 0.
      auto skew = skews(g->truth);
      const int64_t base = skew[0] + offset_of(tl, 0);
      for (const auto& [machine, s] : skew) {
        int64_t residual = s + offset_of(tl, machine) - base;
        INFO("machine " << machine << " skew " << s << " ns, offset " << offset_of(tl, machine) << " ns");
        CHECK(std::llabs(residual) < 100000);  // 0.1 ms
      }
      CHECK(offset_of(tl, 0) == 0);  // the machine of rank 0 is the reference
      // The logged times are kept: shown - offset is what the log said.
      size_t k = 0;
      for (const Track& t : tl.tracks) {
        for (const Job& j : t.jobs) {
          CHECK(j.start_ns - t.clock_offset_ns == logged[k].first);
          CHECK(j.end_ns - t.clock_offset_ns == logged[k].second);
          ++k;
        }
      }
      check_spans(tl);
    }
  }
}

TEST_CASE("Logs without skew come out of the alignment untouched", "[clock_align]") {
  if (!ppt::testing::have_python()) {
    FAIL("python3 not found (scripts/setup.sh installs it)");
  }
  for (const char* args : {"--stages 6 --machines 3 --schedule 1f1b", "--stages 4 --dp 2 --machines 4 --schedule vpp",
                           "--stages 4 --machines 2 --schedule zbvpp --rerun"}) {
    SECTION(args) {
      auto g = generate_logs(std::string("--micro-batches 8 --steps 2 ") + args);
      Timeline& tl = g->timeline;
      const auto before = all_times(tl);
      const int64_t origin = tl.origin_ns;
      Dependencies deps = find_dependencies(tl, decide_pipeline(tl, 0, 1), 1);
      CHECK(deps.contradicted == 0);
      ClockAlignment a = align_clocks(tl, deps);
      CHECK(a.crossing > 0);
      CHECK(a.broken_before == 0);
      CHECK_FALSE(a.shifts());
      CHECK(a.machines.empty());
      CHECK(all_times(tl) == before);
      CHECK(tl.origin_ns == origin);
      for (const Track& t : tl.tracks) CHECK(t.clock_offset_ns == 0);
      CHECK(tl.diagnostics.count_of(IssueKind::kClockOffset) == 0);
      CHECK(format_clock_alignment(tl, a).empty());
    }
  }
}

TEST_CASE("Each run of a log directory reused without --log_overwrite is aligned on its own", "[clock_align]") {
  if (!ppt::testing::have_python()) {
    FAIL("python3 not found (scripts/setup.sh installs it)");
  }
  auto g = generate_logs("--stages 4 --machines 2 --micro-batches 8 --steps 2 --rerun --skew 1:6");
  Timeline& tl = g->timeline;
  REQUIRE(tl.runs.size() == 2);
  Dependencies deps = find_dependencies(tl, decide_pipeline(tl, 0, 1), 1);
  ClockAlignment a = align_clocks(tl, deps);
  CHECK(deps.contradicted == 0);
  for (uint32_t run = 0; run < 2; ++run) {
    CHECK(std::llabs(offset_of(tl, 1, run) + 6000000) < 100000);
    CHECK(offset_of(tl, 0, run) == 0);
  }
  CHECK(tl.diagnostics.count_of(IssueKind::kClockOffset) == 2);
  CHECK_THAT(format_clock_alignment(tl, a), Catch::StartsWith("clocks aligned: run 1 machine1 -"));
  check_spans(tl);
}

TEST_CASE("A pair of machines with contradicting dependencies keeps the offset that breaks the fewest",
          "[clock_align]") {
  // o = offset of machine1 (rank 1, the last stage) against machine0. A
  // forward 0 -> 1 with slack s needs o >= -s; a backward 1 -> 0 needs o <= s.
  // Forward slacks (us): +500, +500, -4000  ->  o >= -500, -500, +4000
  // Backward slacks (us): +2000, +2000      ->  o <= 2000, 2000
  // No o satisfies all five. Any o in [-500, 2000] breaks only the third
  // forward, by 4000 - o: least at o = +2000 us.
  std::vector<RankLines> ranks(2);
  ranks[1].machine = 1;
  ranks[0].lines = {job_line("forward", 0, 0, 1000, 0), job_line("forward", 1, 1000, 2000, 1),
                    job_line("forward", 2, 2000, 8000, 2), job_line("backward", 0, 13000, 14000, 0),
                    job_line("backward", 1, 14000, 15000, 1)};
  ranks[1].lines = {job_line("forward", 0, 1500, 2500, 0),    job_line("forward", 1, 2500, 3500, 1),
                    job_line("forward", 2, 4000, 5000, 2),    job_line("forward", 3, 5000, 5100, 0),
                    job_line("backward", 3, 5100, 5200, 0),   job_line("backward", 0, 10000, 11000, 0),
                    job_line("backward", 1, 11000, 12000, 1), job_line("backward", 2, 12000, 13000, 2)};
  // Rank 0 has no backward 2: only two backward dependencies.
  Timeline tl = timeline_from_lines(ranks);
  Dependencies deps = find_dependencies(tl, decide_pipeline(tl, 2, 1), 1);
  REQUIRE(deps.count(DependencyKind::kForward) == 3);
  REQUIRE(deps.count(DependencyKind::kBackward) == 2);
  ClockAlignment a = align_clocks(tl, deps);
  CHECK_FALSE(a.consistent);
  CHECK(a.broken_after == 1);
  REQUIRE(a.machines.size() == 2);
  const MachineOffset& m1 = a.machines[1];
  CHECK(m1.machine == 1);
  CHECK(m1.offset_ns == 2000000);
  CHECK(a.machines[0].offset_ns == 0);
  CHECK(m1.lo_ns > m1.hi_ns);  // reported as having no consistent offset
  CHECK(deps.contradicted == 1);
  CHECK(tl.diagnostics.count_of(IssueKind::kClockOffset) == 1);
  CHECK(format_clock_alignment(tl, a) == "clocks aligned: machine1 +2.000 ms");
}

namespace {

// Each drawn job's step must be the generator's: jobs found by (rank, line).
void check_steps_against_truth(const Timeline& tl, const nlohmann::json& truth) {
  std::map<std::pair<int32_t, uint32_t>, std::pair<int32_t, uint32_t>> want;  // -> (step, run)
  for (const auto& j : truth["jobs"]) {
    if (j["start_ns"].get<int64_t>() == 0 && j["end_ns"].get<int64_t>() == 0) continue;
    want[{j["rank"].get<int32_t>(), j["line"].get<uint32_t>()}] = {j["step"].get<int32_t>(), j["run"].get<uint32_t>()};
  }
  size_t seen = 0, wrong = 0;
  for (const Track& t : tl.tracks) {
    for (const Job& j : t.jobs) {
      auto it = want.find({t.rank, j.line});
      REQUIRE(it != want.end());
      ++seen;
      if (it->second.first != j.step || it->second.second != t.run) {
        if (++wrong <= 3) {
          UNSCOPED_INFO("rank " << t.rank << " line " << j.line << ": step " << j.step << " run " << t.run
                                << ", truth step " << it->second.first << " run " << it->second.second);
        }
      }
    }
  }
  CHECK(seen == want.size());
  CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("Machines whose clocks are seconds apart share runs and steps and are aligned to within 0.5 ms",
          "[clock_align]") {
  if (!ppt::testing::have_python()) {
    FAIL("python3 not found (scripts/setup.sh installs it)");
  }
  // Offsets in ms, handed out to the machines in turn (machine 0 too).
  const char* offsets[] = {"10000", "-10000", "500", "-3000", "5000"};
  struct Shape {
    int machines, stages;
  };
  const Shape shapes[] = {{2, 4}, {3, 6}, {8, 8}};
  const char* schedules[] = {"1f1b", "vpp", "zbh1", "fthenb"};
  int n = 0;
  for (const Shape& shape : shapes) {
    for (const char* schedule : schedules) {
      std::string args = fmt::format("--stages {} --machines {} --schedule {} --micro-batches {} --steps 3",
                                     shape.stages, shape.machines, schedule, 2 * shape.stages);
      for (int m = 0; m < shape.machines; ++m) {
        // Machine 0 keeps its clock in every other case.
        if (m == 0 && n % 2 == 0) continue;
        args += fmt::format(" --skew {}:{}", m, offsets[(n + m) % 5]);
      }
      ++n;
      SECTION(args) {
        auto g = generate_logs(args);
        Timeline& tl = g->timeline;
        REQUIRE(tl.runs.size() == 1);             // one run although the machines' times do not overlap
        check_steps_against_truth(tl, g->truth);  // as logged: steps matched by structure
        Dependencies deps = find_dependencies(tl, decide_pipeline(tl, 0, 1), 1);
        REQUIRE(deps.contradicted > 0);
        ClockAlignment a = align_clocks(tl, deps);
        CHECK(a.consistent);
        CHECK(a.broken_after == 0);
        CHECK(deps.contradicted == 0);
        auto skew = skews(g->truth);
        CHECK(offset_of(tl, 0) == 0);
        for (const auto& [machine, s] : skew) {
          int64_t residual = s + offset_of(tl, machine) - skew[0];
          INFO("machine " << machine << " skew " << s << " ns, offset " << offset_of(tl, machine) << " ns");
          CHECK(std::llabs(residual) <= 500000);  // 0.5 ms
        }
        check_steps_against_truth(tl, g->truth);
        check_spans(tl);
      }
    }
  }
}

TEST_CASE("A run longer than the offset between machines has its steps matched by structure", "[clock_align]") {
  if (!ppt::testing::have_python()) {
    FAIL("python3 not found (scripts/setup.sh installs it)");
  }
  // 30 steps of about 35 ms: machine 1's steps overlap machine 0's steps
  // 14 later, so matching by time alone pairs the wrong steps.
  auto g = generate_logs("--stages 4 --machines 2 --micro-batches 8 --steps 30 --skew 1:500");
  Timeline& tl = g->timeline;
  REQUIRE(tl.runs.size() == 1);
  CHECK(tl.runs[0].steps.size() == 30);
  check_steps_against_truth(tl, g->truth);
  Dependencies deps = find_dependencies(tl, decide_pipeline(tl, 0, 1), 1);
  align_clocks(tl, deps);
  CHECK(deps.contradicted == 0);
  CHECK(std::llabs(offset_of(tl, 1) + 500000000) <= 500000);
  check_spans(tl);
}

TEST_CASE("Runs appended to a log directory are told apart and aligned when machines are seconds apart",
          "[clock_align]") {
  if (!ppt::testing::have_python()) {
    FAIL("python3 not found (scripts/setup.sh installs it)");
  }
  auto g = generate_logs("--stages 4 --machines 2 --micro-batches 8 --steps 2 --rerun --skew 1:-5000");
  Timeline& tl = g->timeline;
  REQUIRE(tl.runs.size() == 2);
  check_steps_against_truth(tl, g->truth);
  Dependencies deps = find_dependencies(tl, decide_pipeline(tl, 0, 1), 1);
  align_clocks(tl, deps);
  CHECK(deps.contradicted == 0);
  for (uint32_t run = 0; run < 2; ++run) CHECK(std::llabs(offset_of(tl, 1, run) - 5000000000) <= 500000);
  check_spans(tl);
}

TEST_CASE("Clocks that are all off by the same seconds, or one machine alone, are left as logged", "[clock_align]") {
  if (!ppt::testing::have_python()) {
    FAIL("python3 not found (scripts/setup.sh installs it)");
  }
  for (const char* args : {"--stages 6 --machines 3 --schedule 1f1b --skew 0:5000 --skew 1:5000 --skew 2:5000",
                           "--stages 4 --machines 1 --schedule vpp --skew 0:-10000",
                           "--stages 4 --machines 2 --schedule zbh1 --missing-step 3:0 --missing-step 0:2"}) {
    SECTION(args) {
      auto g = generate_logs(std::string("--micro-batches 8 --steps 3 ") + args);
      Timeline& tl = g->timeline;
      REQUIRE(tl.runs.size() == 1);
      check_steps_against_truth(tl, g->truth);
      const auto before = all_times(tl);
      Dependencies deps = find_dependencies(tl, decide_pipeline(tl, 0, 1), 1);
      CHECK(deps.contradicted == 0);
      ClockAlignment a = align_clocks(tl, deps);
      CHECK_FALSE(a.shifts());
      CHECK(all_times(tl) == before);
      check_spans(tl);
    }
  }
}

TEST_CASE("A step that only one shifted rank has stays between its neighbours on the steps track", "[clock_align]") {
  // Machine 1's clock is 2 ms ahead. Rank 0 lacks step 1; rank 1 ran its step
  // 1 right after its step 0, before rank 0's optimizer of step 0 ended. Once
  // aligned, step 1's jobs end inside step 0: step 1 must become an instant
  // where step 0 ends, not start before step 0 ended.
  std::vector<RankLines> ranks(2);
  ranks[1].machine = 1;
  ranks[0].lines = {job_line("forward", 0, 0, 1000, 0),       job_line("backward", 0, 4200, 6200, 0),
                    job_line("optimizer", -1, 6200, 6700, 0), job_line("forward", 0, 20000, 21000, 0),
                    job_line("backward", 0, 24200, 26200, 0), job_line("optimizer", -1, 26200, 26700, 0)};
  ranks[1].lines = {job_line("forward", 0, 3100, 4100, 0),    job_line("backward", 0, 4100, 6100, 0),
                    job_line("optimizer", -1, 6100, 6600, 0), job_line("forward", 0, 6700, 7000, 0),
                    job_line("optimizer", -1, 7000, 7100, 0), job_line("forward", 0, 23100, 24100, 0),
                    job_line("backward", 0, 24100, 26100, 0), job_line("optimizer", -1, 26100, 26600, 0)};
  Timeline tl = timeline_from_lines(ranks);
  REQUIRE(tl.runs.size() == 1);
  REQUIRE(tl.runs[0].steps.size() == 3);
  CHECK(tl.runs[0].steps[1].ranks == 1);
  Dependencies deps = find_dependencies(tl, decide_pipeline(tl, 2, 1), 1);
  REQUIRE(deps.contradicted > 0);
  align_clocks(tl, deps);
  CHECK(offset_of(tl, 1) == -2000000);
  CHECK(deps.contradicted == 0);
  const auto& steps = tl.runs[0].steps;
  REQUIRE(steps.size() == 3);
  for (size_t i = 1; i < steps.size(); ++i) {
    INFO("step " << steps[i].number << " " << steps[i].start_ns << ".." << steps[i].end_ns << ", previous ends "
                 << steps[i - 1].end_ns);
    CHECK(steps[i].start_ns >= steps[i - 1].end_ns);
    CHECK(steps[i].end_ns >= steps[i].start_ns);
  }
  CHECK(steps[1].start_ns == steps[0].end_ns);
}

TEST_CASE("Step matching across machines copes with times at both ends of the range", "[clock_align]") {
  // Machine 1 has a step near the epoch and one near 2262; shifting its steps
  // onto machine 0's must neither overflow nor lose a job.
  const int64_t far_us = (INT64_MAX - ppt::testing::kEpochNs) / 1000 - 100000;
  std::vector<RankLines> ranks(2);
  ranks[1].machine = 1;
  ranks[0].lines = {job_line("forward", 0, far_us - 50000, far_us - 49000, 0),
                    job_line("optimizer", -1, far_us - 49000, far_us - 48000, 0),
                    job_line("forward", 0, far_us, far_us + 1000, 0)};
  ranks[1].lines = {
      job_line("forward", 0, -ppt::testing::kEpochNs / 1000 + 10, -ppt::testing::kEpochNs / 1000 + 20, 0),
      job_line("optimizer", -1, -ppt::testing::kEpochNs / 1000 + 20, -ppt::testing::kEpochNs / 1000 + 30, 0),
      job_line("forward", 0, far_us + 2000, far_us + 3000, 0)};
  Timeline tl = timeline_from_lines(ranks);
  CHECK(tl.job_count() == 6);
  Dependencies deps = find_dependencies(tl, decide_pipeline(tl, 2, 1), 1);
  align_clocks(tl, deps);
  CHECK(tl.job_count() == 6);
  for (const Run& run : tl.runs) {
    for (size_t i = 1; i < run.steps.size(); ++i) CHECK(run.steps[i].start_ns >= run.steps[i - 1].end_ns);
  }
}

TEST_CASE("After alignment every step span starts after the previous one ended when a rank lacks a step",
          "[clock_align]") {
  if (!ppt::testing::have_python()) {
    FAIL("python3 not found: gen_logs.py makes the logs (scripts/setup.sh installs python3)");
  }
  for (const char* args :
       {"--stages 4 --machines 2 --skew 1:4 --missing-step 2:1",
        "--stages 4 --machines 2 --skew 1:-4 --missing-step 0:1",
        "--stages 6 --machines 3 --skew 1:3 --skew 2:-2 --missing-step 3:1 --missing-step 5:2 --micro-batches 6",
        "--stages 4 --machines 2 --skew 1:2500 --missing-step 1:1",
        "--stages 4 --machines 2 --skew 1:6 --missing-step 2:1 --rerun"}) {
    SECTION(args) {
      auto g = generate_logs(std::string("--schedule 1f1b --micro-batches 4 --steps 4 --seed 5 ") + args);
      Timeline& tl = g->timeline;
      Dependencies deps = find_dependencies(tl, decide_pipeline(tl, 0, 1), 1);
      ClockAlignment a = align_clocks(tl, deps);
      CHECK(a.shifts());
      for (const Run& run : tl.runs) {
        const auto& steps = run.steps;
        REQUIRE(steps.size() == 4);
        // Each span is its jobs' extent in the shifted times, settled after
        // the previous span, and counts the ranks that have it.
        for (size_t i = 0; i < steps.size(); ++i) {
          int64_t lo = INT64_MAX, hi = INT64_MIN;
          uint32_t ranks = 0;
          for (uint32_t ti : run.tracks) {
            bool has = false;
            for (const Job& j : tl.tracks[ti].jobs) {
              if (j.step != steps[i].number) continue;
              lo = std::min(lo, j.start_ns);
              hi = std::max(hi, j.end_ns);
              has = true;
            }
            ranks += has;
          }
          int64_t start = i == 0 ? lo : std::max(lo, steps[i - 1].end_ns);
          INFO("run " << run.index << " step " << steps[i].number);
          CHECK(steps[i].start_ns == start);
          CHECK(steps[i].end_ns == std::max(hi, start));
          CHECK(steps[i].ranks == ranks);
        }
        for (size_t i = 0; i < steps.size(); ++i) {
          INFO("run " << run.index << " step " << steps[i].number << " " << steps[i].start_ns << ".."
                      << steps[i].end_ns);
          CHECK(steps[i].start_ns <= steps[i].end_ns);
          if (i == 0) continue;
          INFO("previous ends " << steps[i - 1].end_ns);
          CHECK(steps[i].number > steps[i - 1].number);
          CHECK(steps[i].start_ns >= steps[i - 1].end_ns);
        }
      }
      check_spans(tl);
    }
  }
}

TEST_CASE("Memory samples move with their machine's clock offset", "[clock_align][details]") {
  if (!ppt::testing::have_python()) {
    FAIL("python3 not found: gen_logs.py makes the logs (scripts/setup.sh installs python3)");
  }
  auto g = generate_logs(
      "--details only --schedule 1f1b --stages 4 --machines 2 --micro-batches 8 --steps 2 --fwd-ms 5 --skew 1:9");
  Timeline& tl = g->timeline;
  Dependencies deps = find_dependencies(tl, decide_pipeline(tl, 0, 1), 1);
  REQUIRE(deps.contradicted > 0);
  align_clocks(tl, deps);
  REQUIRE(offset_of(tl, 1) != 0);
  size_t checked = 0;
  for (const Track& t : tl.tracks) {
    REQUIRE(!t.memory.empty());
    for (const Job& j : t.jobs) {
      for (const MemorySample& m : t.memory) {
        // A job's Before sample is at its line and its start, in shown times.
        if (m.line != j.line) continue;
        CHECK(m.ts_ns == j.start_ns);
        ++checked;
      }
    }
  }
  CHECK(checked == tl.job_count());
}
