// The one median every figure uses (stats, memory, watch's running median).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace ppt {

// The median of sorted values: the middle value, or for an even count the
// mean of the two middle values; 0 for none.
double median_of_sorted_span(std::span<const int64_t> sorted);
inline double median_of_sorted(const std::vector<int64_t>& sorted) { return median_of_sorted_span(sorted); }
// The same for a vector with another allocator (stats' bulk-memory rows).
template <typename Alloc>
double median_of_sorted(const std::vector<int64_t, Alloc>& sorted) {
  return median_of_sorted_span(sorted);
}

// The nearest-rank percentile's place among n values (q in [0, 1]): the
// ceil(q * n)-th smallest, the first for q = 0; n must be above 0.
size_t nearest_rank_index(size_t n, double q);

// The nearest-rank percentile of sorted values (none: must not be empty).
inline int64_t percentile_of_sorted(const std::vector<int64_t>& sorted, double q) {
  return sorted[nearest_rank_index(sorted.size(), q)];
}

}  // namespace ppt
