#include "passes/lanes.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

namespace ppt {

void assign_lanes(Track& track) {
  JobList& jobs = track.jobs;
  auto by_start = [](const Job& a, const Job& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.line < b.line;
  };
  // A rank prints its jobs in start order: the sort is mostly a check.
  if (!std::is_sorted(jobs.begin(), jobs.end(), by_start)) std::stable_sort(jobs.begin(), jobs.end(), by_start);
  // Each job takes the lowest lane whose last job has ended. Jobs come in
  // order of start, so a lane that is free for one job stays free for every
  // later one: busy lanes wait in a heap by end time and move to a heap of
  // free lane numbers once passed. O(n log n) even when a stale timer makes
  // every job overlap every other (a scan over all lanes per job would be
  // quadratic: minutes for 10^5 jobs).
  using Busy = std::pair<int64_t, uint32_t>;  // (end, lane)
  std::priority_queue<Busy, std::vector<Busy>, std::greater<Busy>> busy;
  std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<uint32_t>> free_lanes;
  uint32_t lanes = 0;
  uint32_t overlapping = 0;
  // The usual track: each job starts once the one before has ended, and
  // all take lane 0. That prefix needs no heap; the heaps take over at the
  // first overlap, holding what they would hold by then (lane 0 busy until
  // the previous job's end).
  size_t k = 0;
  for (; k < jobs.size() && (k == 0 || jobs[k - 1].end_ns <= jobs[k].start_ns); ++k) jobs[k].lane = 0;
  if (k > 0) lanes = 1;
  if (k > 0 && k < jobs.size()) busy.push({jobs[k - 1].end_ns, 0});
  for (size_t i = k; i < jobs.size(); ++i) {
    Job& j = jobs[i];
    while (!busy.empty() && busy.top().first <= j.start_ns) {
      free_lanes.push(busy.top().second);
      busy.pop();
    }
    uint32_t lane = lanes;
    if (!free_lanes.empty()) {
      lane = free_lanes.top();
      free_lanes.pop();
    } else {
      ++lanes;
    }
    busy.push({j.end_ns, lane});
    j.lane = lane;
    if (lane > 0) ++overlapping;
  }
  track.lanes = std::max<uint32_t>(1, lanes);
  track.overlapping_jobs = overlapping;
}

}  // namespace ppt
