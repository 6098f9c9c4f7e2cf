#include "passes/reruns.h"

#include <algorithm>
#include <limits>

#include "passes/steps.h"

namespace ppt {

const char* run_start_reason(RunStart why) {
  switch (why) {
    case RunStart::kProcessStart: return "a new process's start-up line";
    case RunStart::kNewThread: return "a new thread id at a step boundary";
    case RunStart::kClockBack: return "times that go back by more than a second";
    case RunStart::kNewWindow: return "a schedule marker with another window";
    case RunStart::kNewStage: return "a profile record with another stage (tid) or category";
    case RunStart::kFirst: break;
  }
  return "the file's start";
}

namespace {

// What was printed since the previous job.
struct Printed {
  const MarkerAt* marker = nullptr;
  const ProcessStartAt* started = nullptr;
  bool thread_changed = false;
};

// Why a job begins a new run, and the line that shows it.
struct RunStartAt {
  RunStart why = RunStart::kFirst;
  uint32_t line = 0;
};

// Splits a file's jobs into runs, numbering each run's rank-local steps.
class RunSplitter {
 public:
  explicit RunSplitter(FileScan& scan)
      // Dynamic-graph records and `[Pipeline details]` jobs: every stage's step
      // begins with the forward of micro-batch 0 (of chunk 0), right after the
      // step's Start_forward_backward_pipeline line.
      : scan_(scan), splitter_(scan.types, scan.dygraph || scan.details_jobs) {}

  std::vector<RunSlice> split() {
    JobList& jobs = scan_.jobs;
    open_run(0);
    for (uint32_t i = 0; i < jobs.size(); ++i) {
      Job& job = jobs[i];
      const Printed printed = printed_before(i);
      const RunStartAt start = i > current_.begin ? run_start(job, printed) : RunStartAt{};
      if (start.why != RunStart::kFirst) {
        open_run(i);
        current_.why = start.why;
        current_.why_line = start.line;
      }
      add(i, job, printed.marker);
    }
    current_.end = static_cast<uint32_t>(jobs.size());
    if (current_.end > current_.begin) runs_.push_back(current_);
    return std::move(runs_);
  }

 private:
  void open_run(uint32_t at) {
    if (at > current_.begin) {
      current_.end = at;
      runs_.push_back(current_);
    }
    current_ = RunSlice{};
    current_.begin = at;
    current_.first_ns = std::numeric_limits<int64_t>::max();
    current_.last_ns = std::numeric_limits<int64_t>::min();
    splitter_.reset();
    run_threads_.clear();
    max_end_ = std::numeric_limits<int64_t>::min();
    step_ = -1;
  }

  bool new_thread() const { return std::find(run_threads_.begin(), run_threads_.end(), thread_) == run_threads_.end(); }

  // What was printed since the previous job: the last marker, the last
  // start-up line. A marker printed before that start-up line belongs to
  // the process that ended (Paddle logs one more as it exits).
  Printed printed_before(uint32_t i) {
    Printed out;
    while (next_marker_ < scan_.markers.size() && scan_.markers[next_marker_].job_index <= i) {
      out.marker = &scan_.markers[next_marker_++];
    }
    while (next_start_ < scan_.process_starts.size() && scan_.process_starts[next_start_].job_index <= i) {
      out.started = &scan_.process_starts[next_start_++];
    }
    if (out.marker != nullptr && out.started != nullptr && out.marker->line < out.started->line) out.marker = nullptr;
    if (next_thread_ < scan_.thread_changes.size() && scan_.thread_changes[next_thread_].job_index == i) {
      thread_ = scan_.thread_changes[next_thread_].thread_id;
      ++next_thread_;
      out.thread_changed = true;
    }
    return out;
  }

  // Whether `job`, inside the current run, begins a new one, and why.
  RunStartAt run_start(const Job& job, const Printed& printed) const {
    const MarkerAt* marker = printed.marker;
    if (printed.started != nullptr) {
      return {scan_.dygraph ? RunStart::kNewStage : RunStart::kProcessStart, printed.started->line};
    }
    if (job.start_ns < max_end_ - kBackJumpNs) return {RunStart::kClockBack, job.line};
    if (marker != nullptr && (!current_.has_marker || marker->start_step != current_.marker_start_step ||
                              marker->end_step != current_.marker_end_step)) {
      return {RunStart::kNewWindow, marker->line};
    }
    if (printed.thread_changed && new_thread()) {
      // A new thread only means a new process at a step boundary; ask a
      // copy of the splitter so that the real one is fed once, after the
      // run decision.
      StepSplitter probe = splitter_;
      if (probe.starts_new_step(job)) return {RunStart::kNewThread, job.line};
    }
    return {};
  }

  // Job i joins the current run: its marker, thread, step and times.
  void add(uint32_t i, Job& job, const MarkerAt* marker) {
    if (marker != nullptr && i == current_.begin) {
      current_.has_marker = true;
      current_.marker_start_step = marker->start_step;
      current_.marker_end_step = marker->end_step;
    }
    if (thread_ >= 0 && new_thread()) run_threads_.push_back(thread_);
    if (splitter_.starts_new_step(job)) ++step_;
    job.step = step_;
    max_end_ = std::max(max_end_, job.end_ns);
    current_.first_ns = std::min(current_.first_ns, job.start_ns);
    current_.last_ns = std::max(current_.last_ns, job.end_ns);
  }

  FileScan& scan_;
  StepSplitter splitter_;
  std::vector<RunSlice> runs_;
  size_t next_marker_ = 0;
  size_t next_start_ = 0;
  size_t next_thread_ = 0;
  int64_t thread_ = -1;
  std::vector<int64_t> run_threads_;
  int64_t max_end_ = std::numeric_limits<int64_t>::min();
  int32_t step_ = -1;
  RunSlice current_;
};

}  // namespace

std::vector<RunSlice> split_runs(FileScan& scan) { return RunSplitter(scan).split(); }

}  // namespace ppt
