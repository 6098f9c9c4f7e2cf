// The incremental state of `pp-timeline watch`: the followed logs' job lines
// of the last steps, and the figures of each step once it is complete.
//
// Nothing here is a second implementation of a pass: a Watcher keeps, per
// file, the job lines (and the start-up and schedule-marker lines) of a
// window of recent steps, and on every update it scans that window with the
// batch scanner (scan_buffer), builds it with the batch passes
// (build_from_scans: runs, steps, lanes), and runs the driver's passes and
// analysis on it (driver.h, run_passes: the pipeline, the dependencies, the
// clocks, --strict, the stats), the one copy every command runs. What is incremental is which
// text is kept and how the window's step numbers map to the whole run's:
//
//  - a step is complete when every rank of its run has a job of a later step
//    (logs are appended in order, so nothing more can come for it), or its
//    file moved on to a later run, or wrote nothing for the idle timeout, or
//    the watch is ending;
//  - once more than keep_steps steps have been reported, each file's text is
//    cut, on every update that reports a step, at its first line of the step
//    keep_steps back (so the window always
//    holds the steps before the open ones: a step's span starts no earlier
//    than the previous one ended, as in the batch); the start-up line and the
//    schedule marker of the run the cut falls in are kept before the text, so
//    runs are split and steps numbered as before the cut; the window's
//    timeline is renumbered by the step the cut was made at before the
//    passes run, so its steps, stats and page carry the logs' own numbers;
//  - memory is O(ranks x window) for the figures; keep_all (for the whole-run
//    outputs at the end) also keeps every job line of the run (about 200
//    bytes per job) and one byte per other line, so line numbers stay the
//    file's (a rotated file's lines continue the old file's numbers).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/stats.h"
#include "app/driver.h"
#include "input/log_layout.h"
#include "input/pipeline_details.h"
#include "model/timeline.h"

namespace ppt {

class LineParser;

using WatchClock = std::chrono::steady_clock;

// The threads of a watch unless --threads says otherwise: it runs beside a
// training run, so it takes one core.
inline constexpr unsigned kWatchThreads = 1;

struct WatchOptions {
  // The passes as every command runs them (run_passes): threads, P, the
  // clocks, --strict, the stats options; its input, outputs and selection
  // are not used here.
  DriverRequest passes = one_thread();
  size_t keep_steps = 20;                         // reported steps kept in the window (at least 2)
  std::chrono::milliseconds idle_timeout{10000};  // a file silent this long has finished its step
  bool keep_all = false;                          // keep every job line for whole_run()

  static DriverRequest one_thread() {
    DriverRequest r;
    r.threads = kWatchThreads;
    return r;
  }
};

// One rank's share of a step.
struct RankInStep {
  int32_t rank = 0;
  double busy_ratio = 0;  // busy / the step's span
};

// A completed step, numbered as in the whole run.
struct WatchStep {
  StepStats stats;                    // run and step as `stats` numbers them; its period_ns as stats'
  std::string schedule;               // the window's schedule label (schedule_label)
  double ideal_bubble_ratio = -1;     // -1: unknown
  int32_t slowest_rank = -1;          // the rank busiest in the step
  std::string slowest_type;           // that rank's type with the most time in the step
  std::vector<RankInStep> ranks;      // by rank
  std::vector<Straggler> stragglers;  // the window's, as stats finds them
  uint64_t problems = 0;              // job lines rejected since the watch began
};

class Watcher {
 public:
  explicit Watcher(WatchOptions options);
  ~Watcher();

  // The files as the layout finder sees them now (ranks, machines); files
  // are keyed by path, so a layout that grows keeps what was read.
  // Returns "" or the usage error of the request against it
  // (check_request: a --pp-degree that does not divide the run's ranks).
  std::string set_layout(const Layout& layout);
  // Whole lines appended to `path` (each ending in '\n'); `unterminated` is
  // the file's last line without its '\n', given once at the end.
  void add_lines(const std::string& path, std::string_view lines, WatchClock::time_point now);
  void add_unterminated(const std::string& path, std::string_view line);
  // A line the follower skipped for its length (log_follower.h): one with the
  // job marker is a job line seen and rejected (line_too_long), as the
  // scanner counts it; a line number is kept for it either way.
  void add_skipped_line(bool has_marker);

  // The steps completed since the last call, in order. `finishing`: the
  // watch ends, so every step is complete.
  std::vector<WatchStep> update(WatchClock::time_point now, bool finishing);

  // The page's window: the current run's last keep_steps reported steps,
  // numbered as the logs number them, through the passes with stats. Empty
  // before the first step is reported; otherwise check failure (--strict).
  std::optional<DriverResult> window() const;
  // Every job line since the start (keep_all), built like the batch does,
  // through the passes (stats when the request asks for them).
  std::optional<DriverResult> whole_run(bool stats) const;

  int64_t origin_ns() const { return origin_ns_; }
  // Profiler lines seen since the start: job lines, and the jobs of the
  // `[Pipeline details]` lines (pairs in files without job lines, unmatched
  // halves and bad lines everywhere), as the reader counts them.
  uint64_t jobs_seen() const;
  // Set when the passes failed on the window (--strict and a rejected line):
  // the watch has nothing more to report.
  DriverFailure failure() const { return failure_; }
  // Job lines rejected since the start (each judged once, as it arrives).
  uint64_t rejected_seen() const { return rejected_seen_; }
  // Of those, the ones of `kind` (the same account as convert's summary).
  uint64_t rejected_of(IssueKind kind) const { return rejected_by_kind_[static_cast<size_t>(kind)]; }

 private:
  struct StepMark {
    uint32_t run = 0;
    int32_t step = 0;
    uint32_t line = 0;  // index into FileState::line_starts
  };
  struct FileState {
    SourceFile source;
    std::string text;  // kept lines, from the cut on
    std::vector<uint32_t> line_starts;
    std::string context_start;    // the start-up line of the run the cut falls in
    std::string context_marker;   // that run's first schedule marker
    std::string all;              // keep_all: every kept line since the start, others as empty lines
    std::vector<StepMark> marks;  // each step's first job line, from the last update
    bool cut_at_anchor = false;   // the text begins with the anchor step's first job
    WatchClock::time_point last_data{};
    // The running account of its `[Pipeline details]` lines.
    DetailsPairing details;
    uint64_t details_pairs = 0;  // jobs, unless the file has job lines
    bool job_lines = false;
  };
  void account_details(FileState& f, std::string_view line);
  void reject_details(IssueKind kind);

  FileState& file(const std::string& path);
  std::optional<DriverResult> analyze(bool whole, bool with_stats, const Selection& selection) const;
  // The window's step number of the anchor's first jobs (the step the cut
  // was made at), found from the first kept line of a file cut there.
  int32_t window_anchor(const Timeline& window) const;
  void renumber(Timeline& window) const;
  // The whole run's number of the window's run `run`.
  uint32_t global_run(uint32_t run) const;
  // Each file's StepMarks: the first job line of each of its steps in `window`.
  void mark_steps(const Timeline& window);
  // After a report: each file cut at the step keep_steps back.
  void bound_window();
  void cut(uint32_t run, int32_t step);

  WatchOptions options_;
  std::vector<FileState> files_;
  std::vector<std::string> machines_;
  int32_t world_ranks_ = 0;
  // The cut: window run 0 is the whole run's run `anchor_run_`; the window's
  // step with the anchor's first jobs is step `anchor_step_`.
  bool cut_ = false;
  uint32_t anchor_run_ = 0;
  int32_t anchor_step_ = 0;
  bool emitted_any_ = false;
  uint32_t last_run_ = 0;
  int32_t last_step_ = 0;
  int64_t origin_ns_ = 0;
  bool origin_set_ = false;
  uint64_t jobs_seen_ = 0;
  uint64_t rejected_seen_ = 0;  // job lines rejected since the start (each judged once)
  std::array<uint64_t, kIssueKindCount> rejected_by_kind_{};
  std::unique_ptr<LineParser> parser_;  // judges each job line once, for rejected_seen_
  DriverFailure failure_ = DriverFailure::kNone;
  size_t reported_since_cut_ = 0;
};

}  // namespace ppt
