#include "util/median.h"

#include <cstddef>

namespace ppt {

double median_of_sorted(const std::vector<int64_t>& sorted) {
  const size_t n = sorted.size();
  if (n == 0) return 0;
  if (n % 2 == 1) return static_cast<double>(sorted[n / 2]);
  return (static_cast<double>(sorted[n / 2 - 1]) + static_cast<double>(sorted[n / 2])) / 2;
}

}  // namespace ppt
