#include "util/median.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace ppt {

double median_of_sorted_span(std::span<const int64_t> sorted) {
  const size_t n = sorted.size();
  if (n == 0) return 0;
  if (n % 2 == 1) return static_cast<double>(sorted[n / 2]);
  return (static_cast<double>(sorted[n / 2 - 1]) + static_cast<double>(sorted[n / 2])) / 2;
}

size_t nearest_rank_index(size_t n, double q) {
  const auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(n)));
  return std::min(n - 1, rank > 0 ? rank - 1 : 0);
}

}  // namespace ppt
