// Splitting a log file that holds several runs appended to each other (a
// launch directory reused without --log_overwrite).
//
// A new run begins at a job when
//  - a schedule marker was printed since the previous job (each run prints its
//    own), or
//  - the glog thread id changes at a step boundary to one not seen in the run
//    (a new process printed it), or
//  - its start is more than kBackJumpNs before the latest end so far (the
//    clock jumped back: the jobs cannot belong to the same run).
// Within each run the jobs' local steps are assigned (Job::step = 0, 1, ...).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pp_timeline/file_scanner.h"

namespace ppt {

inline constexpr int64_t kBackJumpNs = 1'000'000'000;

struct RunSlice {
  uint32_t begin = 0;  // job index range [begin, end) in the file's jobs
  uint32_t end = 0;
  bool has_marker = false;
  int32_t marker_start_step = 0;
  int64_t first_ns = 0;  // earliest start in the slice
  int64_t last_ns = 0;   // latest end
};

// Splits `scan.jobs` into runs and assigns rank-local steps in place.
std::vector<RunSlice> split_runs(FileScan& scan);

}  // namespace ppt
