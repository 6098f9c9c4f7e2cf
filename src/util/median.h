// The one median every figure uses (stats, memory, watch's running median).
#pragma once

#include <cstdint>
#include <vector>

namespace ppt {

// The median of sorted values: the middle value, or for an even count the
// mean of the two middle values; 0 for none.
double median_of_sorted(const std::vector<int64_t>& sorted);

}  // namespace ppt
