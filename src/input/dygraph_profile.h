// Reads one dynamic-graph pipeline profile file into jobs, the same FileScan
// the launch-log scanner makes (file_scanner.h), so that everything
// downstream works unchanged.
//
// Paddle's dynamic-graph pipeline (fleet's PipelineParallel, with
// hybrid_configs["pp_configs"].profiling = True) appends to
// ./profile_record_tmp_file_for_rank_<global rank> one record per line, the
// Chrome trace event without its enclosing array:
//   {"name": "F3", "cat": "pipeline timeline", "ph": "B", "pid": 0, "tid": 2, "ts": 1697793307213, "cname": "..."}
// and the matching "ph": "E"; the interleaved class writes "F3_VP1" and the
// category "virtual pipeline timeline". tid is the stage + 1, ts whole
// milliseconds (int(time.time() * 1000)); the records of one step are written
// together at its end (docs/log-format.md has the sources).
//
// What becomes of a record:
//  - a "B" and the next "E" of the same name make one job: type `forward` or
//    `backward` (F, B), with the chunk when there is a _VP<v> (`forward1`),
//    micro-batch and job id the name's number, start and end the two ts in ns,
//    line the B's line. Another name keeps its letters as the type;
//  - every job the records describe is counted as a profiler line (seen): a
//    pair, a "B" without "E" (unmatched_begin), an "E" without "B"
//    (unmatched_end), a line that is not such a record (bad_profile_record;
//    truncated_profile_record when it is the last line, cut short): so jobs
//    written + rejected = seen, as for launch logs;
//  - blank lines are lines, not records.
// A record whose tid or category differs from the file's earlier records
// starts a new run (a new process with another place in the pipeline); the
// file's stage is its first record's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "input/file_scanner.h"

namespace ppt {

// The highest rank index a file name may give (the i of workerlog.<i>, the N
// of profile_record_tmp_file_for_rank_<N>): a million ranks, beyond any run.
// Here, below log_layout.h, which reads both names.
inline constexpr int kMaxRankIndex = 999'999;

// The file-name prefix Paddle writes; the rank follows it.
inline constexpr std::string_view kDygraphProfilePrefix = "profile_record_tmp_file_for_rank_";
// Dynamic-graph timestamps are whole milliseconds.
inline constexpr int64_t kDygraphResolutionNs = 1'000'000;

// The N of "profile_record_tmp_file_for_rank_<N>" (also with .gz), -1 for any
// other name and for an N past kMaxRankIndex (log_layout.h names such a
// file).
int dygraph_profile_rank(std::string_view file_name);

// Whether `head` (a file's first bytes) looks like profile records: its first
// non-blank byte is '{' and the first line has a "ph" key.
bool looks_like_dygraph_profile(std::string_view head);

// Reads `path` (plain or gzip). `file_index` labels the diagnostics. Never
// throws for bad input.
FileScan scan_dygraph_profile(const std::string& path, uint32_t file_index);

// The same for an in-memory file (tests and fuzzing).
FileScan scan_dygraph_buffer(std::string_view data, uint32_t file_index);

}  // namespace ppt
