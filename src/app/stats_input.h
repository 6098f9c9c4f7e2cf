// What `stats` and `diff` measure: a run read through the driver with its
// stats, or (one of diff's runs) a stored `stats --json`; and which of the two
// a path given to diff is, decided here once.
#pragma once

#include <optional>
#include <string>

#include "analysis/stats.h"
#include "app/driver.h"

namespace ppt {

struct StatsInput {
  std::optional<DriverResult> run;  // empty when read from a stats JSON
  Stats stats;
  const Timeline* timeline() const { return run && run->timeline ? &*run->timeline : nullptr; }
};

// What a path given as a run is: logs (standard input, a directory, a log
// file), a stats JSON (a file that starts with '{'), or nothing there.
enum class RunPathKind { kStdin, kLogDir, kLogFile, kStatsJson, kMissing };
RunPathKind classify_run_path(const std::string& path);

// `request` for the logs at `path` (kStdin, kLogDir, kLogFile): its input
// replaced by that path, the devices kept.
DriverRequest request_for_path(DriverRequest request, const std::string& path, RunPathKind kind);

// Reads the stats JSON at `path` into `out` (its source "path (stats of
// ...)"). On failure returns false with `error` ("path: why") and `usage`
// set when the file is not a baseline this version can use (a value its
// schema does not allow), not a file that cannot be read.
bool read_stats_file(const std::string& path, StatsInput* out, std::string* error, bool* usage);

}  // namespace ppt
