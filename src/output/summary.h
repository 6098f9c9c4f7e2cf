// What the user reads at the end of a conversion: the problems found (first
// few of each kind as `path:line: reason`, then counts) and a one-line
// summary in which written + rejected = profiler lines seen.
#pragma once

#include <string>
#include <vector>

#include "model/timeline.h"
#include "util/text.h"  // with_commas

namespace ppt {

// Lines for stderr, one problem each, then one count line per kind.
std::vector<std::string> format_diagnostics(const Timeline& timeline);

// "pp-timeline: 64 files, 12,345,678 lines, 165,120 profiler lines: 165,120 jobs written, 0 rejected"
std::string format_summary(const Timeline& timeline);

// True when an issue of error severity was found (what --strict fails on).
bool has_input_errors(const Timeline& timeline);

}  // namespace ppt
