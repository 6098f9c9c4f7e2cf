// What `pp-timeline diff` does once its runs are read (app/stats_input.h):
// each of B, C... compared with the baseline A, and each output written from
// those comparisons. Prints nothing: the command reports what each returns.
#pragma once

#include <string>
#include <vector>

#include "analysis/diff.h"
#include "app/stats_input.h"
#include "output/outputs.h"
#include "output/text/stats_writers.h"
#include "output/trace/diff_trace.h"

namespace ppt {

struct DiffRuns {
  std::vector<std::string> paths;  // as given: A, then B, C...
  std::vector<StatsInput> sides;   // read, in the same order
  std::vector<Diff> diffs;         // B against A, C against A...
};

// "A", "B", ...: the letter of run `i` (Z from the 26th on).
std::string run_letter(size_t i);

// Each run after the first compared with the first (compare_runs fills
// `runs.diffs`), each with its letter as its label.
void compare_runs(DiffRuns& runs, DiffOptions options);

// Whether `out` holds both runs (a trace or a page): A and one B, read from
// their logs.
bool holds_two_runs(const OutputSpec& out);

// The log files read for any of the runs (no output may be one of them).
std::vector<std::string> diff_inputs(const DiffRuns& runs);

// Writes one output of the comparison in its format (the text in `style`);
// "" or the error. `info` says how a trace aligned the two runs.
std::string write_diff_output(const OutputSpec& out, const DiffRuns& runs, const TextStyle& style, DiffTraceInfo* info);

}  // namespace ppt
