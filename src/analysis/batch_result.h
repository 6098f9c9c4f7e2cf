// What a batch found and measured, run by run: the result batch's index
// files (output/text/batch_index.h) and its command's messages are made from.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/diff.h"

namespace ppt {

// How a run (or an artifact that yielded none) ended.
enum class BatchStatus {
  kOk,           // converted
  kNoJobs,       // logs found, but no job line in them
  kNoLogs,       // the artifact holds no log directory
  kBadArtifact,  // missing path, unreadable or unsafe archive, a file that is not an archive
  kOutputError,  // an output could not be written
};
std::string_view batch_status_name(BatchStatus s);  // "ok", "no_jobs", "no_logs", "bad_artifact", "output_error"

struct BatchRun {
  std::string name;    // folder under the output directory ("" when nothing was written)
  std::string source;  // the artifact, and the run's folder inside it: "ci/logs.tar.gz:job3/logs"
  BatchStatus status = BatchStatus::kOk;
  std::string error;                  // one line, when status is not ok
  std::vector<std::string> warnings;  // archive entries skipped, layout notes, input problem counts
  uint32_t ranks = 0;
  uint64_t jobs = 0;
  uint64_t rejected_lines = 0;
  uint32_t steps = 0;       // over all runs in the logs
  double step_time_us = 0;  // median busy span of a step (kept for index.json's readers)
  // The step figure batch shows and compares: the diff gate's metric, as
  // its mean. "period" (start of a step to the next one's start) when the
  // run has one, else "busy" (the step's busy span).
  std::string step_metric;
  double step_metric_us = 0;
  double bubble_ratio = 0;  // stats.h's bubble ratio
  std::string schedule;     // "1F1B P=4 M=8", or ""
  std::map<std::string, std::string>
      outputs;  // kind ("report", "svg", "chrome_json", "perfetto_trace", "stats_json") -> path relative to the output directory
  bool is_baseline = false;
  // Against the baseline run (when there is one, and both converted).
  struct Change {
    // How much slower the run is than the baseline, in percent, in the diff
    // gate's metric (`metric`: the step period unless a run has none; see
    // analysis/diff.h); negative when faster.
    double step_time_delta_pct = 0;
    double noise_pct = 0;
    std::string metric;
    double bubble_delta = 0;  // run - baseline, a ratio
    Verdict verdict = Verdict::kSame;
    bool gate_failed = false;  // slower by more than BatchOptions::fail_if_slower_pct
  };
  std::optional<Change> change;
};

// Where summary.md's links point (it is read elsewhere: a step summary, a PR
// comment).
struct BatchLinks {
  std::string base;      // --link-base: links are base + "/" + the path; "" when not given
  std::string run_page;  // a CI run page to name instead of links (GitHub Actions), when no base
  std::string artifact;  // the artifact the output directory is uploaded as, named beside run_page
};

struct BatchResult {
  std::vector<BatchRun> runs;  // the baseline first, then in artifact order, then natural order of the run folders
  std::string error;           // set when nothing could be done (the output directory cannot be made)
  bool has_baseline = false;   // runs[0] is the baseline run
  double fail_if_slower_pct = -1;
  // The steps every run was measured on, as the options say it
  // ("--skip-warmup 1"; "" for all): the gate compares those steps only.
  std::string selection;
  BatchLinks links;
  // What the search of the artifacts passed over (folders below --max-depth,
  // archives inside an artifact), one line each, for the command to print:
  // nothing an artifact holds is left out without a word.
  std::vector<std::string> search_warnings;
  bool any_failed() const;
  bool gate_failed() const;  // a run is slower than the baseline past fail_if_slower_pct
};

}  // namespace ppt
