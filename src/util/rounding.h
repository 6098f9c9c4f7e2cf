// std::llround, inlined for hot loops: glibc's is a call of about 25
// instructions (the suggestions' replays round every replayed job's cost,
// 394 k calls and 10.6 M instructions in a 64-rank stats run). Below 2^52
// the conversion to an integer is exact and so is x less its integer part,
// so rounding half away from zero by hand gives llround's value; beyond
// that (where every double is already an integer), and for NaN and the
// infinities, it is llround itself.
#pragma once

#include <cmath>
#include <cstdint>

namespace ppt {

inline int64_t round_to_int64(double x) {
  if (!(std::fabs(x) < 4503599627370496.0)) return std::llround(x);  // 2^52
  const auto i = static_cast<int64_t>(x);                            // toward zero
  const double fraction = x - static_cast<double>(i);
  // Without branches: whether a fraction is past a half is a coin toss for
  // jittered costs, so a branch on it was mispredicted about every other job.
  return i + static_cast<int64_t>(fraction >= 0.5) - static_cast<int64_t>(fraction <= -0.5);
}

}  // namespace ppt
