// What the user reads at the end of a conversion: the problems found (first
// few of each kind as `path:line: reason`, then counts) and a one-line
// summary in which written + rejected = profiler lines seen.
#pragma once

#include <string>
#include <vector>

#include "model/timeline.h"
#include "util/text.h"  // with_commas

namespace ppt {

// One entry of what the user reads about the input's problems: an example
// (`path:line: severity: reason`, and the offending text on a second line)
// or the count of one kind. Data, so that each reader (the terminal, the
// report page, the batch index) decides what to show.
struct DiagnosticLine {
  IssueKind kind;
  Severity severity;
  bool example = false;  // one kept example; false: the count of `kind`
  std::string text;      // without indentation: "3 x rerun: ..." for a count
};

// The kept examples in file order, then one count per kind, in kind order.
std::vector<DiagnosticLine> format_diagnostics(const Timeline& timeline);

// The entry as printed: a count is indented by two spaces under the examples.
std::string diagnostic_text(const DiagnosticLine& line);

// "pp-timeline: 64 files, 12,345,678 lines, 165,120 profiler lines: 165,120 jobs written, 0 rejected"
std::string format_summary(const Timeline& timeline);

// Files that could not be read, or not to their end (unreadable_file): the
// summary says "; 3 of 4 ranks read" and the commands exit 1 after writing
// what the others gave.
uint64_t unreadable_files(const Timeline& timeline);

// True when an issue of error severity was found (what --strict fails on).
bool has_input_errors(const Timeline& timeline);

// "1 ms", "1 us", "1 ns": the input's time resolution (Timeline::resolution_ns).
std::string format_resolution(int64_t resolution_ns);

}  // namespace ppt
