// The first pass: builds the Timeline from the input stage's scans. Scans
// every file in parallel (input/file_scanner.h), splits runs and steps,
// matches runs and steps across ranks, and puts overlapping jobs on lanes.
//
// The result never depends on the number of threads: each file's result is
// stored at the file's index and everything is merged in file order.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "input/file_scanner.h"
#include "input/log_layout.h"
#include "model/timeline.h"
#include "util/phase_time.h"

namespace ppt {

struct BuildOptions {
  unsigned threads = 0;  // 0: one per core
  ScanOptions scan;
  std::vector<PhaseTime>* timings = nullptr;  // when set, the phases' wall times are appended
};

// Reads the files of `layout` and builds the timeline.
Timeline build_timeline(const Layout& layout, const BuildOptions& options = {});

// Finds the files (log_layout.h) and builds the timeline, nothing more: for
// tests and tools. The commands go through app/driver.h, which runs every
// later pass too.
struct LoadResult {
  std::optional<Timeline> timeline;  // empty on a layout error
  std::string error;                 // one line for the user
  bool usage_error = false;          // the path given is wrong (exit 2), not the logs
  std::vector<std::string> notes;    // from the layout (ignored files)
};
LoadResult load_timeline(const LayoutRequest& request, const BuildOptions& options = {});

// The same from scans already made (tests and fuzzing). `scans[i]` belongs to
// `files[i]`.
Timeline build_from_scans(std::vector<SourceFile> files, std::vector<std::string> machines, std::vector<FileScan> scans,
                          unsigned threads = 1);

}  // namespace ppt
