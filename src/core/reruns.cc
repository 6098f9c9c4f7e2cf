#include "pp_timeline/reruns.h"

#include <algorithm>
#include <limits>

#include "pp_timeline/steps.h"

namespace ppt {

std::vector<RunSlice> split_runs(FileScan& scan) {
  std::vector<RunSlice> runs;
  std::vector<Job>& jobs = scan.jobs;
  StepSplitter splitter(scan.types);
  size_t next_marker = 0;
  size_t next_thread = 0;
  int64_t thread = -1;
  std::vector<int64_t> run_threads;
  int64_t max_end = std::numeric_limits<int64_t>::min();
  int32_t step = -1;
  RunSlice current;
  bool pending_marker = false;
  int32_t pending_start = 0;
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
    bool marker_here = false;
    while (next_marker < scan.markers.size() && scan.markers[next_marker].job_index <= i) {
      marker_here = true;
      pending_marker = true;
      pending_start = scan.markers[next_marker].start_step;
      ++next_marker;
    }
    bool thread_changed = false;
    if (next_thread < scan.thread_changes.size() && scan.thread_changes[next_thread].job_index == i) {
      thread = scan.thread_changes[next_thread].thread_id;
      ++next_thread;
      thread_changed = true;
    }
    bool in_run = i > current.begin;
    bool new_run = false;
    if (in_run) {
      if (marker_here) new_run = true;
      if (job.start_ns < max_end - kBackJumpNs) new_run = true;
    }
    // A new thread only means a new process at a step boundary; ask a copy of
    // the splitter so that the real one is fed once, after the run decision.
    if (!new_run && in_run && thread_changed &&
        std::find(run_threads.begin(), run_threads.end(), thread) == run_threads.end()) {
      StepSplitter probe = splitter;
      if (probe.starts_new_step(job)) new_run = true;
    }
    if (new_run) open_run(i);
    if (pending_marker && i == current.begin) {
      current.has_marker = true;
      current.marker_start_step = pending_start;
    }
    pending_marker = false;
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
