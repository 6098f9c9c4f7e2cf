// Sums of nanoseconds that cannot overflow. Each job's times fit 64-bit
// nanoseconds (the reader refuses the rest), but a sum over jobs, ranks or
// steps need not: two jobs of 5e18 ns each summed past 2^63, which is
// undefined behaviour and printed busy_us = -1.6 (hostile case
// huge_job_durations). A sum saturates at kMaxSumNs, the 9e15 microseconds a
// stats file read back may hold (docs/hardening.md, promise 8), so what
// stats writes, diff reads.
#pragma once

#include <algorithm>
#include <cstdint>

namespace ppt {

inline constexpr int64_t kMaxSumNs = 9'000'000'000'000'000'000;

// a + b, held within [-kMaxSumNs, kMaxSumNs].
inline int64_t add_ns(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? kMaxSumNs : -kMaxSumNs;
  return std::clamp(r, -kMaxSumNs, kMaxSumNs);
}

// a += b, as add_ns.
inline void accumulate_ns(int64_t& a, int64_t b) { a = add_ns(a, b); }

}  // namespace ppt
