// Converting many CI artifacts at once.
//
// An artifact is a log directory, an archive of one (.zip, .tar, .tar.gz,
// .tar.zst: extracted safely by archive_reader.h into a temporary directory
// under the output directory), or
// a folder holding many runs: every directory below it that holds
// workerlog.<i> files (or machine folders of them: machine*/, or named by an
// IPv4 address) is one run. Each run gets
// its own folder under the output directory with the outputs asked for
// (BatchOutputs); the batch as a whole gets index.html, index.json (its
// schema: docs/schemas/batch-index.v1.json) and summary.md. With a baseline,
// the baseline is converted too and every other run is compared with it
// (diff.h).
//
// The output directory is the user's: batch removes only what it wrote.
// It keeps there a manifest (.pp-timeline-batch.json) of the files and
// folders it wrote; the next batch into the same directory removes those
// files, and those folders once they are empty, and nothing else (a user's
// file in a run folder stays). One batch at a time: a batch holds an flock
// on .pp-timeline-batch.lock there, and a second one is refused (error, no
// run). Archives are extracted into .extract-XXXXXX folders there, marked
// as batch's own; SIGINT, SIGTERM and SIGHUP remove them, and a batch
// removes the ones a killed batch left.
//
// One bad artifact never stops the others: it is listed with a status other
// than "ok" and its error. Artifacts are resolved in parallel and runs are
// converted in parallel; every result is stored at its index, so the index
// files never depend on timing or on the number of threads.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/diff.h"
#include "app/driver.h"
#include "app/picture.h"
#include "input/archive_reader.h"
#include "output/picture/svg_writer.h"

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

// The marker file older versions wrote in every run folder: a later batch
// removes from such a folder the files batch writes, and nothing else.
inline constexpr const char* kRunMarker = ".pp-timeline-batch";

// Which files each run gets (--outputs).
struct BatchOutputs {
  bool report = true;          // report.html
  bool svg = true;             // timeline.svg
  bool perfetto_trace = true;  // trace.pftrace
  bool stats_json = true;      // stats.json (as stats --json writes it)
  bool chrome_json = false;    // trace.json: the largest by far (tens of MB for a 64-rank run), so only when asked
};
// "html,svg,pftrace,json,stats-json" (any of them, comma-separated) into
// `out`; an error naming the unknown word otherwise.
std::string parse_batch_outputs(std::string_view list, BatchOutputs* out);

// Where summary.md's links point (it is read elsewhere: a step summary, a PR
// comment).
struct BatchLinks {
  std::string base;      // --link-base: links are base + "/" + the path; "" when not given
  std::string run_page;  // a CI run page to name instead of links (GitHub Actions), when no base
  std::string artifact;  // the artifact the output directory is uploaded as, named beside run_page
};

struct BatchProgress {
  size_t done = 0;
  size_t total = 0;
  const BatchRun* run = nullptr;  // the one that just finished
};

struct BatchOptions {
  std::string out_dir;
  // The passes as every command runs them (the run options' driver request):
  // threads (0: one per core), P of every run (0: inferred per run), the
  // clocks, and the selection (--run, --steps, --skip-warmup: the jobs every
  // output, figure and the gate look at, as in stats and diff, the baseline's
  // too); each run sets its own input, the stats and the picture.
  DriverRequest passes;
  PictureRequest picture;  // size cap of the pictures and reports (their steps: the selection's)
  ArchiveLimits limits;
  size_t max_depth = 8;         // how deep to look for log directories in a folder
  bool keep_extracted = false;  // leave the extracted archives (under out_dir/.extract-*) for inspection
  BatchOutputs outputs;
  BatchLinks links;
  std::string baseline;            // an artifact holding one run, converted and compared with; "" for none
  double fail_if_slower_pct = -1;  // < 0: no gate
  // Called once per finished run, from worker threads but never two at once.
  std::function<void(const BatchProgress&)> progress;
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

BatchResult run_batch(const std::vector<std::string>& artifacts, const BatchOptions& options);

// The index files, written into options.out_dir by run_batch; exposed for
// tests.
std::string batch_index_json(const BatchResult& result);
std::string batch_summary_markdown(const BatchResult& result);
std::string batch_index_html(const BatchResult& result);

// Directories at or below `root` that hold logs (workerlog.<i>[.gz] files or
// machine folders of them, by log_layout's is_machine_folder_name: machine*/,
// 10.0.0.2/), in natural order, as paths relative to `root`
// ("." for root itself). Does not follow symbolic links; stops at a log
// directory and at `max_depth`.
std::vector<std::string> find_log_dirs(const std::string& root, size_t max_depth = 8);

// A folder name made of [A-Za-z0-9._-] from `text` (other bytes become '_').
std::string safe_run_name(std::string_view text);
// A run's name before safe_run_name: the artifact's stem ("ci1-logs") and
// the folders of the run inside it, all joined with '-' (one rule for folders
// and archives), a folder that repeats the part before it said once:
// ("main", "log") and ("main", "main/log") are both "main-log".
std::string run_name(std::string_view stem, std::string_view inside);

}  // namespace ppt
