// Splitting a log file that holds several runs appended to each other (a
// launch directory reused without --log_overwrite, or a launcher that
// restarted the trainer).
//
// A run is one process, plus one profiling window. A new run begins at a job
// when there is evidence of a new process since the previous job:
//  - a start-up line (log_line::kProcessStartMarker), which Paddle prints
//    once per process; a restarted container often gives the trainer the same
//    PID, so this is the evidence that does not depend on the thread id;
//  - the glog thread id changes at a step boundary to one not seen in the run;
//  - its start is more than kBackJumpNs before the latest end so far (the
//    clock jumped back: the jobs cannot belong to the same run);
//  - in dynamic-graph profile records, a record with another stage (tid) or
//    category than the file's earlier ones (FileScan::process_starts there);
// or when a schedule marker names a different window than the run's (or the
// run had none): its steps are numbered from the new window's start.
//
// A repeated marker with the run's own window never splits: Paddle's
// paddle.profiler.utils.switch_job_schedule_profiler() logs it at every
// training iteration. Within each run the jobs' local steps are assigned
// (Job::step = 0, 1, ...).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "input/file_scanner.h"

namespace ppt {

inline constexpr int64_t kBackJumpNs = 1'000'000'000;

// Why a run (other than a file's first) begins.
enum class RunStart : uint8_t { kFirst, kProcessStart, kNewThread, kClockBack, kNewWindow, kNewStage };

struct RunSlice {
  uint32_t begin = 0;  // job index range [begin, end) in the file's jobs
  uint32_t end = 0;
  bool has_marker = false;
  int32_t marker_start_step = 0;
  int32_t marker_end_step = 0;
  int64_t first_ns = 0;  // earliest start in the slice
  int64_t last_ns = 0;   // latest end
  RunStart why = RunStart::kFirst;
  uint32_t why_line = 0;  // the line that shows it (start-up line, marker, job)
};

// Splits `scan.jobs` into runs and assigns rank-local steps in place.
std::vector<RunSlice> split_runs(FileScan& scan);

// "a new process's start-up line", ... for messages.
const char* run_start_reason(RunStart why);

}  // namespace ppt
