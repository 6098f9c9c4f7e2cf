// Splitting a rank's job stream into steps, and numbering steps across ranks.
#include "passes/steps.h"

#include <catch2/catch.hpp>

#include <algorithm>

#include "passes/reruns.h"
#include "passes/timeline_builder.h"
#include "support/test_support.h"

using namespace ppt;
using ppt::testing::job_line;
using ppt::testing::plan;
using ppt::testing::plan_log;
// A plan as the tests write it (ppt::PlanJob is the schedule layer's).
using PlanLine = ppt::testing::PlanJob;

namespace {

// The rank-local step of each job of one file.
std::vector<int32_t> local_steps(const std::string& log) {
  FileScan s = scan_buffer(log, 0, testing::parser());
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
      {"VPP: micro-batch 0 once per chunk",
       "forward0:0 forward0:1 forward1:0 forward1:1 backward1:0 backward1:1 backward0:0 backward0:1 optimizer:0"},
      {"VPP without optimizer",
       "forward0:0 forward1:0 forward0:1 forward1:1 backward1:0 backward0:0 backward1:1 backward0:1"},
      {"ZBH1",
       "forward:0 forward:1 backward_b:0 forward:2 backward_w:0 backward_b:1 backward_b:2 backward_w:1 backward_w:2 "
       "optimizer:0"},
      {"ZBVPP", "forward0:0 forward1:0 backward_b1:0 backward_b0:0 backward_w1:0 backward_w0:0 optimizer:0"},
      {"overlap types",
       "forward:0 backward(chunk0):0 forward(chunk0):1 backward(chunk1):0 forward(chunk1):1 backward:1 optimizer:0"},
      {"2023 plan with lr first", "lr:0 forward:0 forward:1 backward:0 backward:1 optimizer:0"},
      {"two optimizer jobs end one step", "forward:0 backward:0 optimizer:0 optimizer:1"},
      {"no pipeline", "default:0"},
  };
  for (const Row& r : rows) {
    INFO(r.name);
    auto p = plan(r.plan);
    std::vector<int32_t> got = local_steps(plan_log(p, 3));
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

TEST_CASE("a rank missing a step does not shift the others", "[steps]") {
  auto p = plan("forward:0 forward:1 backward:0 backward:1 optimizer:0");
  std::vector<SourceFile> files;
  std::vector<FileScan> scans;
  for (int r = 0; r < 3; ++r) {
    std::string log = "Schedule Profiler start at step 10 and end at step 20\n";
    for (int s = 0; s < 4; ++s) {
      if (r == 1 && s == 1) continue;  // rank 1 lacks step 11
      int64_t t = s * 10'000 + r * 5;
      for (const PlanLine& j : p) {
        log += job_line(j.type, j.mb, t, t + 10);
        t += 10;
      }
    }
    files.push_back({"w" + std::to_string(r), "", 0, r, r});
    scans.push_back(scan_buffer(log, r, testing::parser()));
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

TEST_CASE("steps are numbered the same on any number of threads", "[steps]") {
  // Twelve ranks, some missing steps (their messages in rank order), with
  // uneven leads, on 1, 2, 3 and 7 threads.
  auto p = plan("forward:0 forward:1 backward:0 backward:1 optimizer:0");
  auto build = [&](unsigned threads) {
    std::vector<SourceFile> files;
    std::vector<FileScan> scans;
    for (int r = 0; r < 12; ++r) {
      std::string log;
      for (int s = 0; s < 9; ++s) {
        if ((r % 5 == 1 && s == 3) || (r == 7 && s % 4 == 0)) continue;
        int64_t t = s * 10'000 + r * 37;
        for (const PlanLine& j : p) {
          log += job_line(j.type, j.mb, t, t + 10 + r);
          t += 11 + r;
        }
      }
      files.push_back({"w" + std::to_string(r), "", 0, r, r});
      scans.push_back(scan_buffer(log, r, testing::parser()));
    }
    return build_from_scans(files, {""}, std::move(scans), threads);
  };
  const Timeline one = build(1);
  REQUIRE(one.runs.size() == 1);
  REQUIRE(one.runs[0].steps.size() >= 9);
  for (unsigned threads : {2u, 3u, 7u}) {
    INFO(threads << " threads");
    const Timeline many = build(threads);
    REQUIRE(many.runs.size() == 1);
    const auto& a = one.runs[0].steps;
    const auto& b = many.runs[0].steps;
    REQUIRE(a.size() == b.size());
    for (size_t k = 0; k < a.size(); ++k) {
      CHECK(a[k].number == b[k].number);
      CHECK(a[k].start_ns == b[k].start_ns);
      CHECK(a[k].end_ns == b[k].end_ns);
      CHECK(a[k].ranks == b[k].ranks);
    }
    REQUIRE(one.tracks.size() == many.tracks.size());
    for (size_t t = 0; t < one.tracks.size(); ++t) {
      for (size_t j = 0; j < one.tracks[t].jobs.size(); ++j)
        CHECK(one.tracks[t].jobs[j].step == many.tracks[t].jobs[j].step);
    }
    const auto& da = one.diagnostics.examples();
    const auto& db = many.diagnostics.examples();
    REQUIRE(da.size() == db.size());
    for (size_t i = 0; i < da.size(); ++i) {
      CHECK(da[i].file == db[i].file);
      CHECK(da[i].detail == db[i].detail);
    }
    CHECK(one.diagnostics.count_of(IssueKind::kMissingStep) > 0);
  }
}

namespace {

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
    scans.push_back(scan_buffer(logs[r], r, testing::parser()));
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

TEST_CASE("memory samples take the step of the jobs within their pipeline call, wherever the job lines are printed",
          "[steps][details]") {
  // Two steps of one forward and one backward each; the job lines of a step
  // are printed only after the next step's Start line, as a profiler that
  // flushes at the next step does. By line, step 1's Start and first Before
  // sample would fall to step 0's jobs printed after them.
  const int64_t ms = 1'000'000;
  Track t;
  auto job = [&](int64_t start_ms, int64_t end_ms, uint32_t line, int32_t step) {
    Job j;
    j.start_ns = start_ms * ms + 300'000;  // jobs are exact, stamps whole ms
    j.end_ns = end_ms * ms + 300'000;
    j.line = line;
    j.step = step;
    t.jobs.push_back(j);
  };
  auto sample = [&](int64_t at_ms, uint32_t line, MemoryPoint point) {
    MemorySample m;
    m.ts_ns = at_ms * ms;
    m.line = line;
    m.point = point;
    t.memory.push_back(m);
  };
  // Step 0: samples on lines 1-6, its jobs printed on lines 9-10.
  sample(100, 1, MemoryPoint::kStartPipeline);
  sample(100, 2, MemoryPoint::kBeforeForward);
  sample(110, 3, MemoryPoint::kAfterForward);
  sample(110, 4, MemoryPoint::kBeforeBackward);
  sample(130, 5, MemoryPoint::kAfterBackward);
  sample(130, 6, MemoryPoint::kEndPipeline);
  // Step 1: its Start and first Before on lines 7-8, before step 0's jobs.
  sample(131, 7, MemoryPoint::kStartPipeline);
  sample(131, 8, MemoryPoint::kBeforeForward);
  job(100, 110, 9, 0);
  job(110, 130, 10, 0);
  sample(141, 11, MemoryPoint::kAfterForward);
  sample(141, 12, MemoryPoint::kBeforeBackward);
  sample(160, 13, MemoryPoint::kAfterBackward);
  sample(160, 14, MemoryPoint::kEndPipeline);
  job(131, 141, 15, 1);
  job(141, 160, 16, 1);

  assign_memory_steps(t);
  std::vector<int32_t> steps;
  for (const MemorySample& m : t.memory) steps.push_back(m.step);
  CHECK(steps == std::vector<int32_t>{0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1});

  // Without Start lines the samples go by line: a Before sample takes the
  // step of the next job line.
  Track by_line = t;
  by_line.memory.erase(std::remove_if(by_line.memory.begin(), by_line.memory.end(),
                                      [](const MemorySample& m) { return m.point == MemoryPoint::kStartPipeline; }),
                       by_line.memory.end());
  assign_memory_steps(by_line);
  CHECK(by_line.memory[0].step == 0);  // Before_forward, line 2: the job on line 9
  CHECK(by_line.memory[5].step == 0);  // step 1's Before_forward, line 8: the job on line 9 (by line)
}
