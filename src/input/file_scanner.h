// Reads one launch log (plain or gzip) and turns its profiler lines into jobs.
// Its `[Pipeline details]` lines (input/pipeline_details.h) become memory
// samples, and jobs when the file has no job line (Before/After pairs of one
// forward or backward step).
//
// Reading streams through a fixed buffer, so memory does not grow with the
// file; the buffer is scanned for the literals "Profiler " (job lines and the
// schedule marker), "Please NOTE: device: " (a process's start-up line) and
// "Pipeline details] " in one pass, and only those lines go further. Line numbers are exact (every
// '\n' is counted). A line that holds the start of another (a job line cut
// short, then the next line's text) is taken apart where the parser says.
//
// A file that is not a regular file (a directory, a FIFO, a device) is
// refused without blocking; a file that grows or shrinks while being read is
// read up to what was there, with no hang and no crash.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <vector>

#include "input/line_parser.h"
#include "model/diagnostics.h"
#include "model/timeline.h"

namespace ppt {

// A schedule marker, and where it falls in the file's job stream.
struct MarkerAt {
  uint32_t job_index = 0;  // number of jobs before it
  uint32_t line = 0;
  int32_t start_step = 0;
  int32_t end_step = 0;
};

// A process's start-up line (log_line::kProcessStartMarker): a new process
// begins writing the file here.
struct ProcessStartAt {
  uint32_t job_index = 0;  // number of jobs before it
  uint32_t line = 0;
};

// A change of the glog thread id between consecutive job lines.
struct ThreadChange {
  uint32_t job_index = 0;  // the first job printed by the new thread
  int64_t thread_id = 0;
};

struct FileScan {
  JobList jobs;                    // in file order; Job::type indexes `types`
  std::vector<std::string> types;  // this file's job types (valid UTF-8)
  std::vector<MarkerAt> markers;
  std::vector<ProcessStartAt> process_starts;
  std::vector<ThreadChange> thread_changes;  // the first job's thread is the first entry
  InputCounts counts;                        // files = 1
  Diagnostics diagnostics;
  bool readable = true;  // false: the file could not be read at all
  // Dynamic-graph profile records (dygraph_profile.h): process_starts mark a
  // record with another stage or category, times are whole milliseconds.
  bool dygraph = false;
  int32_t stage = -1;  // dygraph: the first record's tid - 1; -1 unknown
  // The file's `[Pipeline details]` samples, in file order (steps unset).
  std::vector<MemorySample> memory;
  // The jobs are made of `[Pipeline details]` Before/After pairs (the file
  // has no job line): their times are whole milliseconds.
  bool details_jobs = false;
};

struct ScanOptions {
  size_t buffer_bytes = 1 << 20;  // read size; a longer line is skipped and reported
};

// What every reader of an input file does first (the launch-log scanner and
// dygraph_profile.h alike). open_input_file opens `path` without waiting on
// a FIFO and refuses anything but a regular file: it returns the descriptor
// and fills `st` (the size at open), or returns -1 with the reason in `why`
// (`what` names the kind of file: "log file", "profile file").
int open_input_file(const std::string& path, const char* what, struct stat* st, std::string* why);
// True when the file starts with gzip's magic bytes.
bool has_gzip_magic(int fd);
// The scan of a file that could not be read at all: counted as a file, one
// unreadable_file diagnostic with `why`.
FileScan unreadable_file_scan(uint32_t file_index, const std::string& why);

// `file_index` labels the diagnostics. Never throws for bad input.
FileScan scan_file(const std::string& path, uint32_t file_index, const LineParser& parser,
                   const ScanOptions& options = {});

// Scans an in-memory log (for tests and fuzzing), exactly as a file.
FileScan scan_buffer(std::string_view data, uint32_t file_index, const LineParser& parser,
                     const ScanOptions& options = {});

}  // namespace ppt
