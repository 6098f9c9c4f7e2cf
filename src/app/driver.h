// One driver for every command: what happens to a run's logs after the
// options are parsed, as a list of named phases, each timed for --timings.
//
//   load      layout      find the files (log_layout.h); outputs that are
//                         inputs are refused here, before any work
//             scan        read and parse every file (file_scanner.h)
//             build       runs, steps, lanes (timeline_builder.h)
//             select      --run, --steps, --skip-warmup (selection.h): the
//                         rest of the driver sees only what is kept
//   passes    pipeline    P, replicas and the schedule, decided once
//                         (pipeline.h)
//             dependencies  which job feeds which (dependencies.h)
//             clocks      machines' clocks aligned (clock_align.h), then the
//                         contradicted dependencies reported as diagnostics
//   analysis  stats       bubbles and critical paths (stats.h), only when
//                         asked for (stats, report, diff, batch, an .html
//                         output of convert)
//             picture     which steps the run's pictures show, and why
//                         (picture.h), only when a command draws
//   writers   write       the outputs (write_outputs below, or the command's
//                         own report)
//
// Writers and analyses receive what the passes decided (the plan, the
// dependencies, the stats) and never decide it again. The driver prints
// nothing: problems are data in the result, and the command reports them.
#pragma once

#include <chrono>
#include <cstdint>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include "analysis/stats.h"
#include "analysis/whatif.h"
#include "app/picture.h"
#include "app/selection.h"
#include "input/log_layout.h"
#include "model/timeline.h"
#include "output/outputs.h"
#include "passes/clock_align.h"
#include "passes/dependencies.h"
#include "passes/pipeline.h"
#include "passes/timeline_builder.h"

namespace ppt {

struct DriverRequest {
  LayoutRequest input;
  unsigned threads = 0;      // 0: one per core
  int32_t pp_degree = 0;     // the user's P; 0: inferred (pipeline.h)
  bool align_clocks = true;  // --align-clocks auto
  bool strict = false;       // input problems are a failure
  bool stats = false;        // run the analysis phase
  Selection selection;       // --run, --steps, --skip-warmup; empty: everything
  StatsOptions stats_options;
  // With `stats`: the what-if suggestions (analysis/whatif.h, suggest_changes)
  // go into Stats::suggestions (stats and the report page ask for them).
  bool suggest = false;
  // With `suggest`: only the suggestions' first part runs beside the stats
  // (begin_suggestion_replays, into DriverResult::suggestion_replays), and
  // Stats::suggestions stays empty until a LaterSuggestions finishes them
  // beside the command's own writing (stats --json).
  bool suggest_later = false;
  // With `stats`: the what-if cost model of the measured run
  // (analysis/whatif.h, fit_cost_model) is fitted beside the stats, into
  // DriverResult::model (whatif asks for it).
  bool fit_model = false;
  // With `stats`: --device-memory's size in bytes (0: not given), set as
  // Stats::memory.device_memory_bytes before the suggestions are made.
  int64_t device_memory_bytes = 0;
  // P and the schedule from the last run's job orders (false: every run's,
  // pooled; watch's windows, where the last run may have just begun).
  bool pipeline_of_last_run = true;
  // Set when the command draws (.svg, .png, .html): the picture phase runs,
  // its steps are `selection.steps`.
  std::optional<PictureRequest> picture;
  // Paths the command will write; one that is an input is refused before
  // anything is read. "-" and /dev/stdout are standard output, never refused.
  std::vector<std::string> outputs;
  // Extra input paths that are not logs (diff's stats JSON): refused as outputs too.
  std::vector<std::string> other_inputs;
};

// Why a run of the driver stopped, if it did.
enum class DriverFailure {
  kNone,
  kUsage,   // a bad path or option (exit status 2): `error` says which
  kLayout,  // no logs where the request says (exit 2 when usage_error, else 1)
  kOutput,  // an output cannot be created (exit 1), found before reading: `error` says why
  kNoJobs,  // logs read, no job in them
  kStrict,  // input problems and `strict`
};

struct DriverResult {
  DriverFailure failure = DriverFailure::kNone;
  std::string error;         // one line for kUsage and kLayout
  bool usage_error = false;  // kLayout: the request is wrong, not the logs
  unsigned threads = 0;      // the request's: the writers phase runs on as many
  std::string source;        // what was read, for titles: the directory, or the files
  std::optional<Layout> layout;
  std::optional<Timeline> timeline;  // set once the load phase ran
  PipelinePlan pipeline;             // the shape and schedule, decided once
  Dependencies dependencies;
  ClockAlignment clocks;
  std::optional<Stats> stats;                           // when the request asked for them
  std::optional<CostModel> model;                       // when the request asked for it (fit_model)
  std::optional<SuggestionReplays> suggestion_replays;  // begun, with suggest_later: LaterSuggestions finishes them
  std::optional<PictureSelection> picture;              // when the request draws: every picture's steps and why
  std::vector<PhaseTime> timings;                       // every phase that ran, in order

  bool ok() const { return failure == DriverFailure::kNone; }
};

// load -> passes -> analysis. Never throws for bad input.
DriverResult run_driver(const DriverRequest& request);

// The layout phase's checks of a request against the files found: an
// output that is an input (or one of `other_inputs`), a --pp-degree that does
// not divide the run's ranks. "" or the one-line usage error.
std::string check_request(const DriverRequest& request, const Layout& layout);

// The passes and analysis phases on `result.timeline` (set, built): the
// selection, the pipeline, the dependencies, the clocks, the no-job and
// --strict checks, the stats when asked for; the failure, if any, in
// `result`. run_driver runs it after the build, watch on each window of
// steps it builds: one copy of the pipeline tail for every command.
void run_passes(const DriverRequest& request, DriverResult& result);

// The writers phase: each output through a temporary file (outputs.h), side
// by side on up to the request's `threads` threads (one output gets them
// all; `options.threads` is set from the result, never by the caller); the .html
// report carries `result.stats` (computed when the request had `stats`),
// the pictures `result.picture`, the traces `result.dependencies` unless `options.dependencies` is set to
// none by the caller (`no_flows`). Appends the "write" timing. Returns one
// error ("" when written) and the size written per output.
struct WrittenOutput {
  std::string error;
  size_t bytes = 0;
};
std::vector<WrittenOutput> write_outputs(DriverResult& result, const std::vector<OutputSpec>& outputs,
                                         WriteOptions options, bool no_flows = false);

// The suggestions of a driver result whose request had `suggest_later`,
// finished on a thread of their own (replays on the request's threads) while
// the command writes what does not need them. start() takes the result where
// it stays: it must not move, nor its stats or timeline change, until
// finish() has returned (the destructor waits too).
class LaterSuggestions {
 public:
  LaterSuggestions() = default;
  LaterSuggestions(const LaterSuggestions&) = delete;
  LaterSuggestions& operator=(const LaterSuggestions&) = delete;
  ~LaterSuggestions();

  // Nothing to do when `result` has no begun suggestions.
  void start(DriverResult& result);
  // Waits for them and puts them, and their warnings, into the result's
  // stats and into `copy` (a copy of those stats, made meanwhile) when not
  // null. Once: later calls do nothing. An exception of the work is thrown here.
  void finish(Stats* copy = nullptr);

 private:
  struct Made {
    std::vector<WhatifSuggestion> suggestions;
    std::vector<ModelWarning> warnings;
  };
  DriverResult* result_ = nullptr;
  std::future<Made> made_;
};

// Runs `fn` and appends its wall time to `result.timings` under `name` (a
// command's own writer).
template <typename Fn>
auto timed(DriverResult& result, const char* name, Fn&& fn) {
  auto start = std::chrono::steady_clock::now();
  auto value = fn();
  result.timings.push_back({name, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()});
  return value;
}

// Whether any of `outputs` is drawn (.svg, .png, .html). Every drawn output
// needs the stats (the page's tables; a picture's title, stages and critical
// paths) and no other does, so the two questions have one answer.
bool draws(const std::vector<OutputSpec>& outputs);
inline bool needs_stats(const std::vector<OutputSpec>& outputs) { return draws(outputs); }

// For the summary line: ", 2 stages x 2 replicas (--pp-degree)", the clocks
// moved and the contradicted dependencies; "" when there is nothing to say.
std::string format_pipeline_summary(const DriverResult& result);

}  // namespace ppt
