// Fuzz target: one dynamic-graph profile file (input/dygraph_profile.h), read
// and built into a Timeline.
//
// Checked on every input, beyond "no crash, no undefined behaviour":
//  - nothing is lost: written + rejected = seen, in the scan and in the
//    built timeline's summary counts;
//  - line and byte counts match the input (counted here, independently);
//  - every job ends no earlier than it starts, at a whole ms, on a line of
//    the file; the model's invariants hold (tracks sorted, lanes disjoint).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "input/dygraph_profile.h"
#include "model/timeline.h"
#include "passes/timeline_builder.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  uint64_t lines = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t nl = text.find('\n', pos);
    ++lines;
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
  }
  ppt::FileScan scan = ppt::scan_dygraph_buffer(text, 0);
  FUZZ_CHECK(scan.counts.lines == lines, "lines %llu, counted %llu", (unsigned long long)scan.counts.lines,
             (unsigned long long)lines);
  FUZZ_CHECK(scan.counts.bytes == size, "bytes");
  FUZZ_CHECK(scan.counts.profile_records <= lines, "more records than lines");
  FUZZ_CHECK(scan.jobs.size() + scan.diagnostics.rejected_jobs() == scan.counts.profiler_lines,
             "written %zu + rejected %llu != seen %llu", scan.jobs.size(),
             (unsigned long long)scan.diagnostics.rejected_jobs(), (unsigned long long)scan.counts.profiler_lines);
  for (const ppt::Job& j : scan.jobs) {
    FUZZ_CHECK(j.end_ns >= j.start_ns, "end before start");
    FUZZ_CHECK(j.start_ns % ppt::kDygraphResolutionNs == 0 && j.end_ns % ppt::kDygraphResolutionNs == 0,
               "not a whole ms");
    FUZZ_CHECK(j.line >= 1 && j.line <= lines, "line %u of %llu", j.line, (unsigned long long)lines);
    FUZZ_CHECK(j.type < scan.types.size(), "type index");
  }
  const size_t jobs = scan.jobs.size();
  const uint64_t rejected = scan.diagnostics.rejected_jobs();
  std::vector<ppt::SourceFile> files(1);
  files[0].path = "profile_record_tmp_file_for_rank_0";
  files[0].dygraph_profile = true;
  std::vector<ppt::FileScan> scans;
  scans.push_back(std::move(scan));
  ppt::Timeline tl = ppt::build_from_scans(files, {""}, std::move(scans), 1);
  FUZZ_CHECK(tl.job_count() == jobs, "built %zu jobs of %zu", tl.job_count(), jobs);
  FUZZ_CHECK(tl.diagnostics.rejected_jobs() == rejected, "rejected changed");
  FUZZ_CHECK(tl.job_count() + tl.diagnostics.rejected_jobs() == tl.counts.profiler_lines, "summary account");
  for (const ppt::Track& t : tl.tracks) {
    for (size_t i = 1; i < t.jobs.size(); ++i) {
      const ppt::Job& a = t.jobs[i - 1];
      const ppt::Job& b = t.jobs[i];
      FUZZ_CHECK(a.start_ns < b.start_ns || (a.start_ns == b.start_ns && a.line <= b.line), "track not sorted");
    }
    std::vector<int64_t> lane_end(t.lanes, INT64_MIN);
    for (const ppt::Job& j : t.jobs) {
      FUZZ_CHECK(j.lane < t.lanes, "lane out of range");
      FUZZ_CHECK(j.start_ns >= lane_end[j.lane], "jobs overlap on a lane");
      lane_end[j.lane] = std::max(lane_end[j.lane], j.end_ns);
    }
  }
  return 0;
}
