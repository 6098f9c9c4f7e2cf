#include "util/int_sort.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>
#include <random>
#include <vector>

namespace ppt {
namespace {

void check_sorts(std::vector<int64_t> v, std::vector<int64_t>& scratch) {
  std::vector<int64_t> want = v;
  std::sort(want.begin(), want.end());
  sort_int64(v, scratch);
  REQUIRE(v == want);
}

TEST_CASE("sort_int64 sorts as std::sort does") {
  std::mt19937_64 rng(20261207);
  std::vector<int64_t> scratch;
  const int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
  // Ranges of one to eight bytes, around zero, around a job's length, and at
  // the type's ends; sizes below, at and above the std::sort cut-off.
  const std::vector<std::pair<int64_t, int64_t>> ranges = {
      {0, 0},
      {5, 5},
      {0, 255},
      {0, 256},
      {-128, 127},
      {1'000'000, 1'000'999},
      {900'000, 1'400'000},
      {-70'000, 70'000},
      {0, (int64_t{1} << 32) - 1},
      {0, int64_t{1} << 32},
      {-(int64_t{1} << 40), int64_t{1} << 40},
      {kMin, kMin + 1000},
      {kMax - 100'000, kMax},
      {kMin, kMax},
      {1'697'793'307'001'038'000, 1'697'793'307'001'038'000 + 50'000'000}};
  for (size_t n : {0, 1, 2, 63, 64, 65, 100, 257, 1000, 5000}) {
    for (auto [lo, hi] : ranges) {
      std::uniform_int_distribution<int64_t> value(lo, hi);
      std::vector<int64_t> v(n);
      for (int64_t& x : v) x = value(rng);
      check_sorts(v, scratch);
      // Already sorted, reversed, and with a few values repeated many times.
      std::sort(v.begin(), v.end());
      check_sorts(v, scratch);
      std::reverse(v.begin(), v.end());
      check_sorts(v, scratch);
      for (size_t i = 0; i < v.size(); ++i) v[i] = v[i % 3];
      check_sorts(v, scratch);
    }
  }
  // The extremes of the type side by side.
  std::vector<int64_t> ends(300);
  for (size_t i = 0; i < ends.size(); ++i) ends[i] = i % 3 == 0 ? kMin : i % 3 == 1 ? kMax : 0;
  check_sorts(ends, scratch);
}

TEST_CASE("radix_sort_by_key keeps the order of equal keys") {
  std::mt19937_64 rng(7);
  struct Item {
    uint64_t key;
    uint32_t at;
  };
  std::vector<Item> scratch;
  // Keys like the dependencies pass's (step << 40 | kind << 39 | chunk << 32
  // | micro-batch): a few bytes differ, many keys repeat. Then keys
  // differing in every byte (the comparison sort), and in five.
  const std::vector<uint64_t> masks = {0xff0000ff0000ffull, 0xffffffffffffffffull, 0xff00ff00ff00ff00ull, 0x3ull};
  for (size_t n : {0, 1, 63, 64, 65, 300, 2580}) {
    for (uint64_t mask : masks) {
      std::vector<Item> v(n);
      for (uint32_t i = 0; i < n; ++i) v[i] = {rng() & mask, i};
      std::vector<Item> want = v;
      std::stable_sort(want.begin(), want.end(), [](const Item& a, const Item& b) { return a.key < b.key; });
      radix_sort_by_key(v, scratch, [](const Item& x) { return x.key; });
      REQUIRE(v.size() == want.size());
      for (size_t i = 0; i < n; ++i) {
        REQUIRE(v[i].key == want[i].key);
        REQUIRE(v[i].at == want[i].at);
      }
    }
  }
}

}  // namespace
}  // namespace ppt
