// The one median: the middle value, or the mean of the middle two.
#include "util/median.h"

#include <catch2/catch.hpp>

namespace ppt {
namespace {

TEST_CASE("the median of an even count is the mean of the two middle values, of an odd count the middle one",
          "[median]") {
  CHECK(median_of_sorted({}) == 0);
  CHECK(median_of_sorted({7}) == 7);
  CHECK(median_of_sorted({1, 2, 10}) == 2);
  CHECK(median_of_sorted({1, 2, 3, 10}) == 2.5);
  // Two values whose sum is odd: the half is kept, not truncated.
  CHECK(median_of_sorted({-3, 4}) == 0.5);
}

}  // namespace
}  // namespace ppt
