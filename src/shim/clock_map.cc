#include "clock_map.h"

#include <atomic>

namespace ppt::shim::detail {

namespace {
const Clocks kRealClocks{};
std::atomic<const Clocks*> g_clocks{&kRealClocks};
}  // namespace

const Clocks& clocks() { return *g_clocks.load(std::memory_order_relaxed); }
void set_clocks_for_testing(const Clocks* fake) {
  g_clocks.store(fake != nullptr ? fake : &kRealClocks, std::memory_order_relaxed);
}

int64_t wall_between_pairs(const ClockPair& earlier, const ClockPair& later, int64_t steady_ns) {
  const int64_t span = later.steady_ns - earlier.steady_ns;
  if (span <= 0 || steady_ns >= later.steady_ns) return wall_from_steady(later, steady_ns);
  if (steady_ns <= earlier.steady_ns) return wall_from_steady(earlier, steady_ns);
  const int64_t wall_span = later.wall_ns - earlier.wall_ns;
  const int64_t off = wall_span - span;
  if (off > span / 100 || -off > span / 100) {
    return wall_from_steady(steady_ns - earlier.steady_ns < later.steady_ns - steady_ns ? earlier : later, steady_ns);
  }
  const long double w = static_cast<long double>(steady_ns - earlier.steady_ns) / static_cast<long double>(span);
  return earlier.wall_ns + static_cast<int64_t>(std::llround(w * static_cast<long double>(wall_span)));
}

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

int64_t steady_between_anchors(int64_t prev_ns, int64_t since_prev_ns, int64_t now_ns, int64_t until_now_ns) {
  const int64_t from_prev = prev_ns + since_prev_ns;
  const int64_t from_now = now_ns - until_now_ns;
  const int64_t span = since_prev_ns + until_now_ns;
  if (span <= 0 || since_prev_ns < 0 || until_now_ns < 0) return from_now;
  // Weight of the latest anchor grows from 0 at the previous anchor to 1 at
  // the latest one. long double keeps the product exact for spans of hours.
  const long double w = static_cast<long double>(since_prev_ns) / static_cast<long double>(span);
  const long double blended = static_cast<long double>(from_prev) + w * static_cast<long double>(from_now - from_prev);
  return static_cast<int64_t>(std::llround(blended));
}

}  // namespace ppt::shim::detail
