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

#include "analysis/batch_result.h"
#include "app/batch_out_dir.h"
#include "app/batch_search.h"
#include "app/driver.h"
#include "app/picture.h"
#include "input/archive_reader.h"
#include "output/picture/svg_writer.h"
#include "output/text/batch_index.h"

namespace ppt {

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

BatchResult run_batch(const std::vector<std::string>& artifacts, const BatchOptions& options);

// A folder name made of [A-Za-z0-9._-] from `text` (other bytes become '_').
std::string safe_run_name(std::string_view text);
// A run's name before safe_run_name: the artifact's stem ("ci1-logs") and
// the folders of the run inside it, all joined with '-' (one rule for folders
// and archives), a folder that repeats the part before it said once:
// ("main", "log") and ("main", "main/log") are both "main-log".
std::string run_name(std::string_view stem, std::string_view inside);

}  // namespace ppt
