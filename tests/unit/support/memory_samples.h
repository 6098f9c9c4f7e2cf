// Memory samples made by hand for the writers' tests: what the reader of
// Paddle's `[Pipeline details]` lines would give a timeline's tracks.
#pragma once

#include <algorithm>
#include <climits>
#include <cmath>
#include <string>

#include "model/timeline.h"

namespace ppt::testing {

// Gives every track of `tl` memory samples as Paddle's `[Pipeline details]`
// lines would: a Start sample `lead_ns` before each step's first job, then a
// Before and an After sample around each forward and backward job of lane 0.
// Allocated grows by `activation` GiB a forward and falls back at its
// backward, from a static part of 2 + rank GiB; reserved is the highest
// allocated so far plus 0.5 GiB. Sizes are whole hundredths of a GiB in bytes
// (round(GiB * 2^30)), as the reader makes them.
inline void add_memory_samples(Timeline& tl, double activation = 0.25, int64_t lead_ns = 2'000'000) {
  auto bytes = [](int64_t hundredths) { return static_cast<int64_t>(std::llround(hundredths / 100.0 * 1073741824.0)); };
  const int64_t act = std::llround(activation * 100);
  for (Track& t : tl.tracks) {
    t.memory.clear();
    int64_t allocated = 200 + 100 * t.rank, high = allocated;
    int32_t last_step = INT32_MIN;
    auto sample = [&](int64_t ts, MemoryPoint point, const Job* j) {
      high = std::max(high, allocated);
      MemorySample s;
      s.ts_ns = ts;
      s.allocated_bytes = bytes(allocated);
      s.reserved_bytes = bytes(high + 50);
      s.point = point;
      s.line = j ? j->line : 0;
      s.micro_batch = j ? j->micro_batch : -1;
      s.step = j ? j->step : last_step;
      t.memory.push_back(s);
    };
    for (const Job& j : t.jobs) {
      if (j.lane != 0) continue;
      const std::string& type = tl.types[j.type];
      const bool forward = type.rfind("forward", 0) == 0;
      const bool backward = type.rfind("backward", 0) == 0 && type.find("_w") == std::string::npos;
      if (!forward && !backward) continue;
      if (j.step != last_step) {
        last_step = j.step;
        sample(j.start_ns - lead_ns, MemoryPoint::kStartPipeline, nullptr);
      }
      sample(j.start_ns, forward ? MemoryPoint::kBeforeForward : MemoryPoint::kBeforeBackward, &j);
      allocated += forward ? act : -act;
      sample(j.end_ns, forward ? MemoryPoint::kAfterForward : MemoryPoint::kAfterBackward, &j);
    }
    std::stable_sort(t.memory.begin(), t.memory.end(), [](const MemorySample& a, const MemorySample& b) {
      return a.ts_ns < b.ts_ns || (a.ts_ns == b.ts_ns && a.line < b.line);
    });
  }
  tl.memory_resolution_bytes = 10737418;
}

}  // namespace ppt::testing
