#include "util/rounding.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>

namespace ppt {
namespace {

TEST_CASE("round_to_int64 is std::llround") {
  const double edges[] = {0.0,
                          -0.0,
                          0.5,
                          -0.5,
                          1.5,
                          2.5,
                          -2.5,
                          0.49999999999999994,
                          -0.49999999999999994,
                          4503599627370495.5,
                          -4503599627370495.5,
                          4503599627370496.0,
                          9007199254740993.0,
                          1e18,
                          -1e18,
                          std::nextafter(0.5, 0.0),
                          std::nextafter(1.5, 2.0),
                          std::numeric_limits<double>::denorm_min()};
  for (double x : edges) {
    INFO(x);
    CHECK(round_to_int64(x) == std::llround(x));
  }
  std::mt19937_64 rng(52);
  for (int i = 0; i < 200000; ++i) {
    // Halves and near-halves at every scale, and plain random values.
    const double scale = std::ldexp(1.0, static_cast<int>(rng() % 60) - 4);
    const double half = (static_cast<double>(rng() % 1000000) + 0.5) * (rng() % 2 ? 1 : -1);
    const double x = i % 2 ? half : std::ldexp(static_cast<double>(static_cast<int64_t>(rng())), -12) * scale / 1e6;
    INFO(x);
    REQUIRE(round_to_int64(x) == std::llround(x));
    REQUIRE(round_to_int64(std::nextafter(x, 0.0)) == std::llround(std::nextafter(x, 0.0)));
  }
}

}  // namespace
}  // namespace ppt
