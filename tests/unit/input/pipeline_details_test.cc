// The dynamic-graph pipeline's `[Pipeline details]` lines: each form read
// exactly, and a launch log of them turned into jobs and memory samples.
#include "input/pipeline_details.h"

#include <catch2/catch.hpp>

#include <ctime>
#include <string>
#include <vector>

#include "input/file_scanner.h"
#include "input/line_parser.h"
#include "passes/timeline_builder.h"
#include "support/test_support.h"

using namespace ppt;

namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kT0 = 1732106096789;  // 2024-11-20 12:34:56.789 UTC, in ms

// A details line as Paddle's logger prints it at `ms` (ms since 1970, UTC).
std::string dl(int64_t ms, const std::string& msg, const char* alloc = "12.34", const char* reserved = "20.00") {
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &tm);
  return fmt::format(
      "[{},{:03d}] [    INFO] pipeline_parallel.py:1187 - [Pipeline details] {}: "
      "memory_allocated_size={}, memory_reserved_size={}\n",
      stamp, ms % 1000, msg, alloc, reserved);
}

std::string step_msg(const char* when, const char* dir, const std::string& chunk, const std::string& step) {
  return fmt::format("{}_{}_step_chunk_{}_step_{}", when, dir, chunk, step);
}

// One 1F1B-like step of M micro-batches (F0 F1 ... B0 B1 ...), 2 ms per job.
std::string fthenb_step(int64_t t, int m, bool step_none = false) {
  std::string s = dl(t, "Start_forward_backward_pipeline", "8.00", "10.00");
  for (int dir = 0; dir < 2; ++dir) {
    for (int i = 0; i < m; ++i) {
      const char* d = dir == 0 ? "forward" : "backward";
      std::string step = step_none ? "None" : std::to_string(i);
      t += 1;
      s += dl(t, step_msg("Before", d, "None", step), "8.00");
      t += 2;
      s += dl(t, step_msg("After", d, "None", step), "9.50");
    }
  }
  return s + dl(t + 1, "End_forward_backward_pipeline", "8.00", "10.00");
}

std::string type_of(const FileScan& s, const Job& j) { return s.types.at(j.type); }

uint64_t seen_balance(const FileScan& s) { return s.counts.jobs + s.diagnostics.rejected_jobs(); }

}  // namespace

TEST_CASE("every details line form is read exactly", "[details]") {
  DetailsLine d;
  std::string why;
  REQUIRE(parse_details_line(dl(kT0, "Before_forward_step_chunk_0_step_3"), &d, &why));
  CHECK(d.point == MemoryPoint::kBeforeForward);
  CHECK(d.ts_ns == kT0 * kMs);
  CHECK(d.chunk == 0);
  CHECK(d.step_id == 3);
  CHECK(d.allocated_bytes == 13249974108);  // round(12.34 * 2^30)
  CHECK(d.reserved_bytes == int64_t{20} << 30);
  // The issue's own example, as text.
  REQUIRE(
      parse_details_line("[2024-11-20 12:34:56,789] [    INFO] pipeline_parallel.py:1187 - [Pipeline details] "
                         "Before_forward_step_chunk_0_step_3: memory_allocated_size=12.34, "
                         "memory_reserved_size=20.00\r\n",
                         &d, &why));
  CHECK(d.ts_ns == kT0 * kMs);

  REQUIRE(parse_details_line(dl(kT0, "After_backward_step_chunk_None_step_None", "0.00", "0.01"), &d, &why));
  CHECK(d.point == MemoryPoint::kAfterBackward);
  CHECK(d.chunk == -1);
  CHECK(d.step_id == -1);
  CHECK(d.allocated_bytes == 0);
  CHECK(d.reserved_bytes == kDetailsResolutionBytes);
  REQUIRE(parse_details_line(dl(kT0, "After_forward_step_chunk_2_step_None"), &d, &why));
  CHECK(d.point == MemoryPoint::kAfterForward);
  CHECK(d.chunk == 2);
  REQUIRE(parse_details_line(dl(kT0, "Before_backward_step_chunk_None_step_17"), &d, &why));
  CHECK(d.point == MemoryPoint::kBeforeBackward);
  CHECK(d.step_id == 17);
  REQUIRE(parse_details_line(dl(kT0, "Start_forward_backward_pipeline"), &d, &why));
  CHECK(d.point == MemoryPoint::kStartPipeline);
  REQUIRE(parse_details_line(dl(kT0, "End_forward_backward_pipeline"), &d, &why));
  CHECK(d.point == MemoryPoint::kEndPipeline);
  // A prefix before the stamp (a launcher's) is allowed.
  REQUIRE(parse_details_line("rank 3: " + dl(kT0 + 1, "End_forward_backward_pipeline"), &d, &why));
  CHECK(d.ts_ns == (kT0 + 1) * kMs);
}

TEST_CASE("every bad details line is refused with its reason", "[details]") {
  const std::vector<std::string> bad = {
      "[2024-11-20 12:34:56] [    INFO] x.py:1 - [Pipeline details] Start_forward_backward_pipeline: "
      "memory_allocated_size=1.00, memory_reserved_size=2.00",  // no milliseconds
      "[2024-13-20 12:34:56,789] [    INFO] x.py:1 - [Pipeline details] Start_forward_backward_pipeline: "
      "memory_allocated_size=1.00, memory_reserved_size=2.00",  // month 13
      dl(kT0, "Middle_forward_step_chunk_0_step_3"),
      dl(kT0, "Before_forward_step_chunk_x_step_3"),
      dl(kT0, "Before_forward_step_chunk_0_step_-1"),
      dl(kT0, "Before_forward_step_chunk_0"),
      dl(kT0, "Before_forward_step_chunk_0_step_3", "-1.00"),
      dl(kT0, "Before_forward_step_chunk_0_step_3", "1.2.3"),
      dl(kT0, "Before_forward_step_chunk_0_step_3", "12.34", "nan"),
      dl(kT0, "Before_forward_step_chunk_0_step_3", "12.34", "20.00, extra=1"),
      dl(kT0, "Before_forward_step_chunk_0_step_3").substr(0, 120),  // cut short
  };
  for (const std::string& line : bad) {
    DetailsLine d;
    std::string why;
    INFO(line);
    CHECK_FALSE(parse_details_line(line, &d, &why));
    CHECK_FALSE(why.empty());
  }
}

TEST_CASE("a details-only log: Before/After pairs are the jobs, every line a memory sample", "[details]") {
  LineParser parser;
  std::string log = "some other line\n" + fthenb_step(kT0, 3) + fthenb_step(kT0 + 100, 3);
  FileScan s = scan_buffer(log, 0, parser);
  CHECK(s.details_jobs);
  CHECK(s.counts.details_lines == 2 * (2 + 12));
  CHECK(s.counts.memory_samples == s.counts.details_lines);
  CHECK(s.memory.size() == s.counts.details_lines);
  REQUIRE(s.jobs.size() == 12);
  CHECK(s.counts.jobs == 12);
  CHECK(s.counts.profiler_lines == 12);
  CHECK(s.diagnostics.count_of(IssueKind::kNoProfilerLines) == 0);
  const Job& b1 = s.jobs[4];  // step 0's second backward
  CHECK(type_of(s, b1) == "backward");
  CHECK(b1.micro_batch == 1);
  CHECK(b1.job_id == 1);
  CHECK(b1.end_ns - b1.start_ns == 2 * kMs);
  CHECK(b1.line == 11);  // its Before line: after line 1, the Start line, 3 forwards and a backward
  // The samples keep the micro-batch, the point and the sizes.
  const MemorySample& after = s.memory[2];
  CHECK(after.point == MemoryPoint::kAfterForward);
  CHECK(after.micro_batch == 0);
  CHECK(after.chunk == -1);
  CHECK(after.allocated_bytes == llround(9.5 * (1 << 30)));
  CHECK(s.memory.front().point == MemoryPoint::kStartPipeline);
  CHECK(s.memory.front().micro_batch == -1);

  // step_None (older Paddle): the count since the Start line is the micro-batch.
  FileScan none = scan_buffer(fthenb_step(kT0, 3, true), 0, parser);
  REQUIRE(none.jobs.size() == 6);
  for (size_t i = 0; i < 6; ++i) CHECK(none.jobs[i].micro_batch == static_cast<int32_t>(i % 3));
}

TEST_CASE("interleaved details: the chunk names the type, the per-chunk count is the micro-batch", "[details]") {
  // Two chunks, P = 2 stages, M = 4: stage 0's forwards in virtual
  // micro-step order go to chunks 0 0 1 1 0 0 1 1 (_get_virtual_pp_rank).
  LineParser parser;
  std::string log = dl(kT0, "Start_forward_backward_pipeline");
  int64_t t = kT0;
  for (int k = 0; k < 8; ++k) {
    int chunk = (k % 4) / 2;
    log += dl(++t, step_msg("Before", "forward", std::to_string(chunk), std::to_string(k)));
    log += dl(++t, step_msg("After", "forward", std::to_string(chunk), std::to_string(k)));
  }
  for (int k = 0; k < 8; ++k) {
    int chunk = 1 - (k % 4) / 2;
    log += dl(++t, step_msg("Before", "backward", std::to_string(chunk), std::to_string(k)));
    log += dl(t, step_msg("After", "backward", std::to_string(chunk), std::to_string(k)));  // zero length
  }
  log += dl(++t, "End_forward_backward_pipeline");
  FileScan s = scan_buffer(log, 0, parser);
  REQUIRE(s.jobs.size() == 16);
  const std::vector<std::pair<std::string, int>> want = {
      {"forward0", 0},  {"forward0", 1},  {"forward1", 0},  {"forward1", 1},  {"forward0", 2},  {"forward0", 3},
      {"forward1", 2},  {"forward1", 3},  {"backward1", 0}, {"backward1", 1}, {"backward0", 0}, {"backward0", 1},
      {"backward1", 2}, {"backward1", 3}, {"backward0", 2}, {"backward0", 3}};
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("job " << i);
    CHECK(type_of(s, s.jobs[i]) == want[i].first);
    CHECK(s.jobs[i].micro_batch == want[i].second);
  }
  CHECK(s.jobs[8].start_ns == s.jobs[8].end_ns);  // a zero-length job is drawn
  CHECK(s.memory[2].chunk == 0);
  CHECK(s.memory[2].micro_batch == 0);
}

TEST_CASE("unmatched halves and bad details lines are counted as rejected jobs", "[details]") {
  LineParser parser;
  std::string log = dl(kT0, "Start_forward_backward_pipeline") +
                    dl(kT0 + 1, "Before_forward_step_chunk_None_step_0") +  // its After is lost
                    dl(kT0 + 3, "Before_forward_step_chunk_None_step_1") +
                    dl(kT0 + 4, "After_forward_step_chunk_None_step_1") +
                    dl(kT0 + 5, "After_backward_step_chunk_None_step_0") +  // no Before
                    dl(kT0 + 6, "Before_backward_step_chunk_None_step_1") +
                    "[2024-11-20 12:34:56,799] [    INFO] x.py:1 - [Pipeline details] garbled\n" +
                    dl(kT0 + 8, "Before_backward_step_chunk_None_step_2") +
                    dl(kT0 + 7, "After_backward_step_chunk_None_step_2") +  // before its Before
                    dl(kT0 + 9, "Before_forward_step_chunk_None_step_3");   // the file ends
  FileScan s = scan_buffer(log, 0, parser);
  REQUIRE(s.jobs.size() == 1);
  CHECK(s.jobs[0].micro_batch == 1);
  CHECK(s.diagnostics.count_of(IssueKind::kUnmatchedDetailsBefore) == 3);  // step 0, backward 1, forward 3
  CHECK(s.diagnostics.count_of(IssueKind::kUnmatchedDetailsAfter) == 1);
  CHECK(s.diagnostics.count_of(IssueKind::kBadDetailsLine) == 1);
  CHECK(s.diagnostics.count_of(IssueKind::kEndBeforeStart) == 1);
  CHECK(s.counts.profiler_lines == seen_balance(s));
  CHECK(s.counts.profiler_lines == 7);
  CHECK(s.counts.details_lines == 10);
  CHECK(s.counts.memory_samples == 9);
}

TEST_CASE("a log with job lines and details lines draws the job lines, and keeps the memory", "[details]") {
  LineParser parser;
  std::string log = fthenb_step(kT0, 2);
  for (int i = 0; i < 2; ++i) log += testing::job_line("forward", i, i * 3000, i * 3000 + 2000);
  for (int i = 0; i < 2; ++i) log += testing::job_line("backward", i, 7000 + i * 3000, 9000 + i * 3000);
  FileScan s = scan_buffer(log, 0, parser);
  CHECK_FALSE(s.details_jobs);
  CHECK(s.jobs.size() == 4);
  CHECK(s.counts.jobs == 4);
  CHECK(s.counts.profiler_lines == 4);  // the details pairs are not counted a second time
  CHECK(s.diagnostics.count_of(IssueKind::kDetailsMemoryOnly) == 1);
  CHECK(s.memory.size() == 10);
  CHECK(s.types.size() == 2);
}

TEST_CASE("details jobs carry 1 ms resolution and their samples into the timeline", "[details]") {
  LineParser parser;
  std::vector<SourceFile> files;
  std::vector<FileScan> scans;
  for (int r = 0; r < 2; ++r) {
    files.push_back({"logs/workerlog." + std::to_string(r), "", 0, r, r});
    scans.push_back(scan_buffer(fthenb_step(kT0 + r, 2) + fthenb_step(kT0 + 100 + r, 2), r, parser));
  }
  Timeline tl = build_from_scans(files, {""}, std::move(scans));
  CHECK(tl.resolution_ns == kMs);
  CHECK(tl.memory_resolution_bytes == kDetailsResolutionBytes);
  CHECK(tl.counts.details_lines == 2 * 2 * 10);
  CHECK(tl.counts.memory_samples == tl.counts.details_lines);
  REQUIRE(tl.tracks.size() == 2);
  REQUIRE(tl.runs.size() == 1);
  CHECK(tl.runs[0].steps.size() == 2);
  for (const Track& t : tl.tracks) {
    CHECK(t.resolution_ns == kMs);
    REQUIRE(t.memory.size() == 20);
    for (size_t i = 1; i < t.memory.size(); ++i) {
      const MemorySample &a = t.memory[i - 1], &b = t.memory[i];
      CHECK((a.ts_ns < b.ts_ns || (a.ts_ns == b.ts_ns && a.line < b.line)));
    }
    // Start, the pairs and End of step k all get step k; each pair its job's.
    for (size_t i = 0; i < t.memory.size(); ++i) CHECK(t.memory[i].step == static_cast<int32_t>(i / 10));
    for (const Job& j : t.jobs) {
      for (const MemorySample& m : t.memory) {
        if (m.line == j.line) CHECK(m.step == j.step);
      }
    }
  }
  CHECK(tl.counts.profiler_lines == tl.job_count() + tl.diagnostics.rejected_jobs());
}

TEST_CASE("a rerun's samples go with the rerun", "[details]") {
  LineParser parser;
  std::string startup =
      "W1120 12:00:00.000000 1 gpu_resources.cc:119] Please NOTE: device: 0, GPU Compute Capability: 9.0\n";
  std::string log = startup + fthenb_step(kT0, 2) + startup + fthenb_step(kT0 + 3'600'000, 2);
  std::vector<FileScan> scans;
  scans.push_back(scan_buffer(log, 0, parser));
  Timeline tl = build_from_scans({{"logs/workerlog.0", "", 0, 0, 0}}, {""}, std::move(scans));
  REQUIRE(tl.runs.size() == 2);
  REQUIRE(tl.tracks.size() == 2);
  for (const Track& t : tl.tracks) {
    REQUIRE(t.memory.size() == 10);
    CHECK(t.memory.front().ts_ns == t.jobs.front().start_ns - kMs);  // its own Start line
  }
}
