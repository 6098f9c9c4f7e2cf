#include "pp_timeline/lanes.h"

#include <algorithm>

namespace ppt {

void assign_lanes(Track& track) {
  std::vector<Job>& jobs = track.jobs;
  std::stable_sort(jobs.begin(), jobs.end(), [](const Job& a, const Job& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.line < b.line;
  });
  std::vector<int64_t> lane_end;  // the end of the last job on each lane
  uint32_t overlapping = 0;
  for (Job& j : jobs) {
    size_t lane = 0;
    while (lane < lane_end.size() && lane_end[lane] > j.start_ns) ++lane;
    if (lane == lane_end.size()) lane_end.push_back(j.end_ns);
    else lane_end[lane] = j.end_ns;
    j.lane = static_cast<uint32_t>(lane);
    if (lane > 0) ++overlapping;
  }
  track.lanes = static_cast<uint32_t>(std::max<size_t>(1, lane_end.size()));
  track.overlapping_jobs = overlapping;
}

}  // namespace ppt
