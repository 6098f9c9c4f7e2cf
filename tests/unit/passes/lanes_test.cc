// Putting a rank's overlapping jobs on extra lanes.
#include "passes/lanes.h"

#include <catch2/catch.hpp>

#include <random>
#include <vector>

using namespace ppt;

TEST_CASE("overlapping jobs go on the fewest lanes and every lane nests", "[lanes]") {
  Track t;
  auto add = [&](int64_t s, int64_t e, uint32_t line) {
    Job j;
    j.start_ns = s;
    j.end_ns = e;
    j.line = line;
    t.jobs.push_back(j);
  };
  add(0, 10, 1);
  add(10, 20, 2);  // touches: same lane
  add(5, 15, 3);   // overlaps both
  add(12, 30, 4);  // overlaps 2 and 3
  add(30, 40, 5);
  assign_lanes(t);
  CHECK(t.lanes == 3);
  CHECK(t.overlapping_jobs == 2);
  for (uint32_t lane = 0; lane < t.lanes; ++lane) {
    int64_t end = INT64_MIN;
    for (const Job& j : t.jobs) {
      if (j.lane != lane) continue;
      CHECK(j.start_ns >= end);
      end = j.end_ns;
    }
  }
  CHECK(t.jobs.size() == 5);
}

TEST_CASE("lanes are the lowest free ones, also when every job overlaps every other", "[hardening][lanes]") {
  // Against the plain definition (scan the lanes in order) on random sets.
  std::mt19937_64 rng(42);
  for (int round = 0; round < 50; ++round) {
    Track t;
    int n = 1 + static_cast<int>(rng() % 300);
    for (int i = 0; i < n; ++i) {
      Job j;
      j.start_ns = static_cast<int64_t>(rng() % 1000);
      j.end_ns = j.start_ns + static_cast<int64_t>(rng() % (round % 2 ? 50 : 2000));
      j.line = static_cast<uint32_t>(i + 1);
      t.jobs.push_back(j);
    }
    assign_lanes(t);
    std::vector<int64_t> lane_end;
    uint32_t overlapping = 0;
    for (const Job& j : t.jobs) {
      size_t lane = 0;
      while (lane < lane_end.size() && lane_end[lane] > j.start_ns) ++lane;
      if (lane == lane_end.size())
        lane_end.push_back(j.end_ns);
      else
        lane_end[lane] = j.end_ns;
      INFO("round " << round << " line " << j.line);
      REQUIRE(j.lane == lane);
      overlapping += lane > 0;
    }
    CHECK(t.lanes == lane_end.size());
    CHECK(t.overlapping_jobs == overlapping);
  }
  // A stale timer: 200,000 jobs from one start; one lane each.
  Track stale;
  for (uint32_t i = 0; i < 200000; ++i) {
    Job j;
    j.start_ns = 1000;
    j.end_ns = 2000 + i;
    j.line = i + 1;
    stale.jobs.push_back(j);
  }
  assign_lanes(stale);
  CHECK(stale.lanes == 200000);
  CHECK(stale.jobs.back().lane == 199999);
}
