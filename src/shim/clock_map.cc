#include "clock_map.h"

namespace ppt::shim::detail {

ClockPair read_clock_pair(int tries) {
  ClockPair best;
  bool have = false;
  for (int i = 0; i < tries; ++i) {
    const int64_t s0 = steady_now_ns();
    const int64_t w = wall_now_ns();
    const int64_t s1 = steady_now_ns();
    const int64_t half = (s1 - s0) / 2;
    if (!have || half < best.half_width_ns) {
      best = ClockPair{s0 + half, w, half};
      have = true;
    }
  }
  return best;
}

int64_t steady_between_anchors(int64_t prev_ns, int64_t since_prev_ns, int64_t now_ns,
                               int64_t until_now_ns) {
  const int64_t from_prev = prev_ns + since_prev_ns;
  const int64_t from_now = now_ns - until_now_ns;
  const int64_t span = since_prev_ns + until_now_ns;
  if (span <= 0 || since_prev_ns < 0 || until_now_ns < 0) return from_now;
  // Weight of the latest anchor grows from 0 at the previous anchor to 1 at
  // the latest one. long double keeps the product exact for spans of hours.
  const long double w = static_cast<long double>(since_prev_ns) / static_cast<long double>(span);
  const long double blended =
      static_cast<long double>(from_prev) + w * static_cast<long double>(from_now - from_prev);
  return static_cast<int64_t>(std::llround(blended));
}

}  // namespace ppt::shim::detail
