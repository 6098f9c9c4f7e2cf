// Sorts by integer keys: a least significant digit radix sort over the bytes
// in which the keys differ (stable), with a comparison sort for short runs
// and for keys that differ in more than four bytes.
//
// Written by hand because it is hot: stats sorts every rank's durations of
// each job type (2.6 M values in runs of about 900 at 1024 ranks), and the
// dependencies pass the (step, kind, micro-batch) keys of a track whose
// keys are too scattered for its table (dependencies.cc), which
// std::sort took a third of stats' own time and a fifth of the pass on.
// Durations of one kind lie within a few milliseconds of each other, and a
// track's keys differ in their step and micro-batch bytes: two or three
// linear passes instead of about ten compare rounds with unpredictable
// branches.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

namespace ppt {

// Sorts `v` by key(item) (a uint64_t) ascending, keeping the order of equal
// keys (as std::stable_sort); `scratch` is working room, reused between
// calls.
template <typename T, typename Alloc, typename KeyFn>
void radix_sort_by_key(std::vector<T, Alloc>& v, std::vector<T>& scratch, KeyFn key) {
  constexpr size_t kShort = 64;
  constexpr int kMostPasses = 4;
  const size_t n = v.size();
  auto by_key = [&](const T& a, const T& b) { return key(a) < key(b); };
  if (n < kShort || n > UINT32_MAX) {
    std::stable_sort(v.begin(), v.end(), by_key);
    return;
  }
  // The bytes in which some key differs from the first: a byte that is the
  // same in every key needs no pass. Only those are counted (counting all
  // eight bytes of every key was most of a short sort's time).
  const uint64_t first = key(v[0]);
  uint64_t differ = 0;
  for (const T& x : v) differ |= key(x) ^ first;
  int bytes[8];
  int passes = 0;
  for (int b = 0; b < 8; ++b) {
    if ((differ >> (8 * b)) & 0xff) bytes[passes++] = b;
  }
  if (passes > kMostPasses) {
    std::stable_sort(v.begin(), v.end(), by_key);
    return;
  }
  std::array<std::array<uint32_t, 256>, kMostPasses> count;
  for (int p = 0; p < passes; ++p) count[p].fill(0);
  for (const T& x : v) {
    const uint64_t k = key(x);
    for (int p = 0; p < passes; ++p) ++count[p][(k >> (8 * bytes[p])) & 0xff];
  }
  scratch.resize(n);
  T* from = v.data();
  T* to = scratch.data();
  for (int p = 0; p < passes; ++p) {
    const int b = bytes[p];
    std::array<uint32_t, 256>& c = count[p];
    uint32_t at = 0;
    for (uint32_t& k : c) {
      const uint32_t here = k;
      k = at;
      at += here;
    }
    for (size_t i = 0; i < n; ++i) to[c[(key(from[i]) >> (8 * b)) & 0xff]++] = from[i];
    std::swap(from, to);
  }
  if (from != v.data()) std::copy(from, from + n, v.data());
}

// Sorts int64 values ascending (as std::sort does).
template <typename Alloc>
void sort_int64(std::vector<int64_t, Alloc>& v, std::vector<int64_t>& scratch) {
  // Flipping the sign bit orders int64 values as unsigned keys.
  radix_sort_by_key(v, scratch, [](int64_t x) { return static_cast<uint64_t>(x) ^ (uint64_t{1} << 63); });
}

}  // namespace ppt
