// The incremental state of `pp-timeline watch`: the followed logs' job lines
// of the last steps, and the figures of each step once it is complete.
//
// Nothing here is a second implementation of a pass: a Watcher keeps, per
// file, the job lines (and the start-up and schedule-marker lines) of a
// window of recent steps, and on every update it scans that window with the
// batch scanner (scan_buffer), builds it with the batch passes
// (build_from_scans: runs, steps, lanes), decides the pipeline, the
// dependencies and the clocks, and computes the stats (compute_stats), all
// exactly as `stats` does on the finished logs. What is incremental is which
// text is kept and how the window's step numbers map to the whole run's:
//
//  - a step is complete when every rank of its run has a job of a later step
//    (logs are appended in order, so nothing more can come for it), or its
//    file moved on to a later run, or wrote nothing for the idle timeout, or
//    the watch is ending;
//  - once more than keep_steps steps have been reported, each file's text is
//    cut at its first line of the step keep_steps back (so the window always
//    holds the steps before the open ones: a step's span starts no earlier
//    than the previous one ended, as in the batch); the start-up line and the
//    schedule marker of the run the cut falls in are kept before the text, so
//    runs are split and steps numbered as before the cut; the window's step
//    numbers are mapped back by the step the cut was made at;
//  - memory is O(ranks x window) for the figures; keep_all (for the whole-run
//    outputs at the end) also keeps every job line of the run (about 200
//    bytes per job) and one byte per other line, so line numbers stay the
//    file's (a rotated file's lines continue the old file's numbers).
#pragma once

#include <array>
#include <chrono>
#include <memory>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/stats.h"
#include "input/log_layout.h"
#include "model/timeline.h"
#include "passes/dependencies.h"
#include "passes/pipeline.h"

namespace ppt {

class LineParser;

using WatchClock = std::chrono::steady_clock;

struct WatchOptions {
  unsigned threads = 1;
  int32_t pp_degree = 0;            // 0: inferred, as every command
  bool align_clocks = true;
  size_t keep_steps = 20;           // reported steps kept in the window (at least 2)
  std::chrono::milliseconds idle_timeout{10000};  // a file silent this long has finished its step
  bool keep_all = false;            // keep every job line for whole_run()
  StatsOptions stats;
};

// One rank's share of a step.
struct RankInStep {
  int32_t rank = 0;
  double busy_ratio = 0;            // busy / the step's span
};

// A completed step, numbered as in the whole run.
struct WatchStep {
  StepStats stats;                  // run and step as `stats` numbers them
  int64_t period_ns = 0;            // to the next step's start (the step's time when it is the last)
  std::string schedule;             // the window's schedule name
  double ideal_bubble_ratio = -1;   // -1: unknown
  int32_t slowest_rank = -1;        // the rank busiest in the step
  std::string slowest_type;         // that rank's type with the most time in the step
  std::vector<RankInStep> ranks;    // by rank
  std::vector<std::string> stragglers;  // "rank 3 forward +12%", over the window
  uint64_t problems = 0;            // job lines rejected since the watch began
};

// A timeline with what the passes decided about it.
struct WatchAnalysis {
  Timeline timeline;
  PipelinePlan plan;
  Dependencies dependencies;
  std::optional<Stats> stats;
};

class Watcher {
 public:
  explicit Watcher(WatchOptions options);
  ~Watcher();

  // The files as the layout finder sees them now (ranks, machines); files
  // are keyed by path, so a layout that grows keeps what was read.
  void set_layout(const Layout& layout);
  // Whole lines appended to `path` (each ending in '\n'); `unterminated` is
  // the file's last line without its '\n', given once at the end.
  void add_lines(const std::string& path, std::string_view lines, WatchClock::time_point now);
  void add_unterminated(const std::string& path, std::string_view line);

  // The steps completed since the last call, in order. `finishing`: the
  // watch ends, so every step is complete.
  std::vector<WatchStep> update(WatchClock::time_point now, bool finishing);

  // The window (the last keep_steps steps and the open ones), with stats.
  std::optional<WatchAnalysis> window() const;
  // Every job line since the start (keep_all), built like the batch does.
  std::optional<WatchAnalysis> whole_run() const;

  int64_t origin_ns() const { return origin_ns_; }
  uint64_t bytes_kept() const;
  uint64_t jobs_seen() const { return jobs_seen_; }
  // Job lines rejected since the start (each judged once, as it arrives).
  uint64_t rejected_seen() const { return rejected_seen_; }
  // Of those, the ones of `kind` (the same account as convert's summary).
  uint64_t rejected_of(IssueKind kind) const { return rejected_by_kind_[static_cast<size_t>(kind)]; }

 private:
  struct StepMark {
    uint32_t run = 0;
    int32_t step = 0;
    uint32_t line = 0;              // index into FileState::line_starts
  };
  struct FileState {
    SourceFile source;
    std::string text;               // kept lines, from the cut on
    std::vector<uint32_t> line_starts;
    std::string context_start;      // the start-up line of the run the cut falls in
    std::string context_marker;     // that run's first schedule marker
    std::string all;                // keep_all: every kept line since the start, others as empty lines
    std::vector<StepMark> marks;    // each step's first job line, from the last update
    bool cut_at_anchor = false;     // the text begins with the anchor step's first job
    WatchClock::time_point last_data{};
  };

  FileState& file(const std::string& path);
  std::optional<WatchAnalysis> analyze(bool whole, bool with_stats) const;
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
  uint64_t rejected_seen_ = 0;
  std::array<uint64_t, kIssueKindCount> rejected_by_kind_{};
  std::unique_ptr<LineParser> parser_;  // judges each job line once, for rejected_seen_
  size_t reported_since_cut_ = 0;
};

}  // namespace ppt
