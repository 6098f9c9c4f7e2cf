// What `stats` and `diff` share: reading a run (logs, or a stats JSON for
// diff) into Stats, with the input's problems on stderr, and the report's
// colour decision.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "input/log_layout.h"
#include "analysis/stats.h"
#include "model/timeline.h"

namespace ppt::cli {

struct StatsInputOptions {
  std::vector<int> devices;
  unsigned threads = 0;
  int32_t pp_degree = 0;
  double straggler_margin = 0.10;
  bool strict = false;
  bool quiet = false;
  bool critical_paths = true;  // diff does not show them
  bool align_clocks = true;    // --align-clocks auto (clock_align.h), as convert does
  std::string label;  // "A: " / "B: " before messages about this input, or ""
};

struct StatsInput {
  std::optional<Timeline> timeline;  // empty when read from a stats JSON
  Stats stats;
};

// Loads `request` and computes its stats. Returns 0, or the exit code after
// printing why not (missing path: 2; nothing usable, --strict: 1).
int load_stats_input(const LayoutRequest& request, const StatsInputOptions& options, StatsInput* out);

// A directory or log file is read as logs; a file that starts with '{' as
// the output of `stats --json`.
int load_stats_or_json(const std::string& path, const StatsInputOptions& options, StatsInput* out);

// `--color auto|always|never` for a report written to stdout.
bool use_color(const std::string& when, bool to_stdout);

void print_error(const std::string& line);

}  // namespace ppt::cli
