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

std::vector<RunSlice> split_runs(FileScan& scan) {
  std::vector<RunSlice> runs;
  std::vector<Job>& jobs = scan.jobs;
  // Dynamic-graph records and `[Pipeline details]` jobs: every stage's step
  // begins with the forward of micro-batch 0 (of chunk 0), right after the
  // step's Start_forward_backward_pipeline line.
  StepSplitter splitter(scan.types, scan.dygraph || scan.details_jobs);
  size_t next_marker = 0;
  size_t next_start = 0;
  size_t next_thread = 0;
  int64_t thread = -1;
  std::vector<int64_t> run_threads;
  int64_t max_end = std::numeric_limits<int64_t>::min();
  int32_t step = -1;
  RunSlice current;
  auto open_run = [&](uint32_t at) {
    if (at > current.begin) {
      current.end = at;
      runs.push_back(current);
    }
    current = RunSlice{};
    current.begin = at;
    current.first_ns = std::numeric_limits<int64_t>::max();
    current.last_ns = std::numeric_limits<int64_t>::min();
    splitter.reset();
    run_threads.clear();
    max_end = std::numeric_limits<int64_t>::min();
    step = -1;
  };
  open_run(0);
  for (uint32_t i = 0; i < jobs.size(); ++i) {
    Job& job = jobs[i];
    // What was printed since the previous job: the last marker, the last
    // start-up line. A marker printed before that start-up line belongs to
    // the process that ended (Paddle logs one more as it exits).
    const MarkerAt* marker = nullptr;
    while (next_marker < scan.markers.size() && scan.markers[next_marker].job_index <= i) {
      marker = &scan.markers[next_marker++];
    }
    const ProcessStartAt* started = nullptr;
    while (next_start < scan.process_starts.size() && scan.process_starts[next_start].job_index <= i) {
      started = &scan.process_starts[next_start++];
    }
    if (marker != nullptr && started != nullptr && marker->line < started->line) marker = nullptr;
    bool thread_changed = false;
    if (next_thread < scan.thread_changes.size() && scan.thread_changes[next_thread].job_index == i) {
      thread = scan.thread_changes[next_thread].thread_id;
      ++next_thread;
      thread_changed = true;
    }
    bool in_run = i > current.begin;
    RunStart why = RunStart::kFirst;
    uint32_t why_line = 0;
    if (in_run) {
      if (started != nullptr) {
        why = scan.dygraph ? RunStart::kNewStage : RunStart::kProcessStart;
        why_line = started->line;
      } else if (job.start_ns < max_end - kBackJumpNs) {
        why = RunStart::kClockBack;
        why_line = job.line;
      } else if (marker != nullptr && (!current.has_marker || marker->start_step != current.marker_start_step ||
                                       marker->end_step != current.marker_end_step)) {
        why = RunStart::kNewWindow;
        why_line = marker->line;
      } else if (thread_changed && std::find(run_threads.begin(), run_threads.end(), thread) == run_threads.end()) {
        // A new thread only means a new process at a step boundary; ask a
        // copy of the splitter so that the real one is fed once, after the
        // run decision.
        StepSplitter probe = splitter;
        if (probe.starts_new_step(job)) {
          why = RunStart::kNewThread;
          why_line = job.line;
        }
      }
    }
    if (why != RunStart::kFirst) {
      open_run(i);
      current.why = why;
      current.why_line = why_line;
    }
    if (marker != nullptr && i == current.begin) {
      current.has_marker = true;
      current.marker_start_step = marker->start_step;
      current.marker_end_step = marker->end_step;
    }
    if (thread >= 0 && std::find(run_threads.begin(), run_threads.end(), thread) == run_threads.end()) {
      run_threads.push_back(thread);
    }
    if (splitter.starts_new_step(job)) ++step;
    job.step = step;
    max_end = std::max(max_end, job.end_ns);
    current.first_ns = std::min(current.first_ns, job.start_ns);
    current.last_ns = std::max(current.last_ns, job.end_ns);
  }
  current.end = static_cast<uint32_t>(jobs.size());
  if (current.end > current.begin) runs.push_back(current);
  return runs;
}

}  // namespace ppt
