#include "util/ordered_parallel.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace ppt {
namespace {

struct Slot {
  std::string text;
  size_t index = 0;
};

// Items take uneven times, so that later ones are often done first.
void uneven_work(size_t i) {
  if (i % 7 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200 + 50 * (i % 5)));
}

TEST_CASE("produce_in_parallel_consume_in_order consumes every item once, in order") {
  for (unsigned threads : {1u, 2u, 3u, 8u}) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{5}, size_t{257}}) {
      std::vector<size_t> seen;
      produce_in_parallel_consume_in_order<Slot>(
          n, threads, 4,
          [&](size_t i, Slot& s) {
            uneven_work(i);
            s.index = i;
            s.text = "item " + std::to_string(i);
          },
          [&](size_t i, Slot& s) {
            CHECK(s.index == i);
            CHECK(s.text == "item " + std::to_string(i));
            seen.push_back(i);
          });
      REQUIRE(seen.size() == n);
      for (size_t i = 0; i < n; ++i) CHECK(seen[i] == i);
    }
  }
}

TEST_CASE("produce_in_parallel_consume_in_order holds at most in_flight items") {
  const size_t in_flight = 3;
  std::atomic<size_t> produced{0};
  std::atomic<size_t> consumed{0};
  std::atomic<size_t> most{0};
  produce_in_parallel_consume_in_order<Slot>(
      200, 4, in_flight,
      [&](size_t i, Slot&) {
        uneven_work(i);
        // Produced and not consumed, this one included. The slot reuse rule
        // (index i waits for i - in_flight to be consumed) bounds it. With 4
        // threads, in_flight is raised to 4.
        size_t held = ++produced - consumed.load();
        size_t m = most.load();
        while (held > m && !most.compare_exchange_weak(m, held)) {
        }
      },
      [&](size_t, Slot&) {
        std::this_thread::sleep_for(std::chrono::microseconds(30));
        ++consumed;
      });
  CHECK(consumed.load() == 200);
  CHECK(most.load() <= 4);
}

TEST_CASE("produce_in_parallel_consume_in_order rethrows the first error and stops") {
  for (unsigned threads : {1u, 2u, 4u}) {
    std::vector<size_t> seen;
    auto run = [&] {
      produce_in_parallel_consume_in_order<Slot>(
          100, threads, 4,
          [&](size_t i, Slot&) {
            uneven_work(i);
            if (i == 37) throw std::runtime_error("item 37 failed");
          },
          [&](size_t i, Slot&) { seen.push_back(i); });
    };
    CHECK_THROWS_WITH(run(), "item 37 failed");
    // Nothing at or after the failed item is consumed; what came before it
    // is, in order.
    REQUIRE(seen.size() <= 37);
    for (size_t i = 0; i < seen.size(); ++i) CHECK(seen[i] == i);
  }
  std::vector<size_t> seen;
  auto consume_fails = [&] {
    produce_in_parallel_consume_in_order<Slot>(
        100, 3, 4, [&](size_t i, Slot&) { uneven_work(i); },
        [&](size_t i, Slot&) {
          if (i == 10) throw std::runtime_error("write failed");
          seen.push_back(i);
        });
  };
  CHECK_THROWS_WITH(consume_fails(), "write failed");
  CHECK(seen.size() == 10);
}

}  // namespace
}  // namespace ppt
