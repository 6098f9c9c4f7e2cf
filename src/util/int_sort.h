// Sorts int64 values (job durations, times) by their bytes: a least
// significant digit radix sort over the bytes in which the values differ,
// with std::sort for short runs and for values spread over more than four
// bytes.
//
// Written by hand because it is hot: stats sorts every rank's durations of
// each job type (2.6 M values in runs of about 900 at 1024 ranks), which
// std::sort took a third of stats' own time on. Durations of one kind lie
// within a few milliseconds of each other, two or three bytes of
// difference: two or three linear passes instead of about ten compare
// rounds with unpredictable branches.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <vector>

namespace ppt {

// Sorts `v` ascending (as std::sort does); `scratch` is working room, reused
// between calls.
inline void sort_int64(std::vector<int64_t>& v, std::vector<int64_t>& scratch) {
  constexpr size_t kShort = 64;
  constexpr int kMostPasses = 4;
  const size_t n = v.size();
  if (n < kShort || n > UINT32_MAX) {
    std::sort(v.begin(), v.end());
    return;
  }
  const auto [lo_it, hi_it] = std::minmax_element(v.begin(), v.end());
  const int64_t lo = *lo_it;
  // Offsets from the smallest value, in [0, 2^64): unsigned arithmetic
  // wraps, so the order holds for negative values and any range.
  const uint64_t range = static_cast<uint64_t>(*hi_it) - static_cast<uint64_t>(lo);
  const int passes = (std::bit_width(range) + 7) / 8;
  if (passes == 0) return;  // all equal
  if (passes > kMostPasses) {
    std::sort(v.begin(), v.end());
    return;
  }
  std::array<std::array<uint32_t, 256>, kMostPasses> count{};
  for (int64_t x : v) {
    const uint64_t d = static_cast<uint64_t>(x) - static_cast<uint64_t>(lo);
    for (int p = 0; p < passes; ++p) ++count[p][(d >> (8 * p)) & 0xff];
  }
  scratch.resize(n);
  int64_t* from = v.data();
  int64_t* to = scratch.data();
  for (int p = 0; p < passes; ++p) {
    std::array<uint32_t, 256>& c = count[p];
    if (c[(static_cast<uint64_t>(from[0]) - static_cast<uint64_t>(lo)) >> (8 * p) & 0xff] == n) continue;  // one digit
    uint32_t at = 0;
    for (uint32_t& k : c) {
      const uint32_t here = k;
      k = at;
      at += here;
    }
    for (size_t i = 0; i < n; ++i) {
      const uint64_t d = static_cast<uint64_t>(from[i]) - static_cast<uint64_t>(lo);
      to[c[(d >> (8 * p)) & 0xff]++] = from[i];
    }
    std::swap(from, to);
  }
  if (from != v.data()) std::copy(from, from + n, v.data());
}

}  // namespace ppt
