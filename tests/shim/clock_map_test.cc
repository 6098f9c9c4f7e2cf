// The clock arithmetic that turns device events into wall-clock times,
// checked against synthetic clocks.
#include <catch2/catch.hpp>

#include "clock_map.h"

using namespace ppt::shim::detail;

TEST_CASE("The clock pair is read tightly and maps the steady clock onto the wall clock") {
  const ClockPair p = read_clock_pair();
  CHECK(p.half_width_ns >= 0);
  CHECK(p.half_width_ns < 1'000'000);
  const int64_t s = steady_now_ns();
  const int64_t w = wall_now_ns();
  CHECK(std::llabs(wall_from_steady(p, s) - w) < 2'000'000);
}

TEST_CASE("Between two anchors, a drifting device clock is followed exactly") {
  // The host runs 50 ppm faster than the device: host = device * (1 + 50e-6) + offset.
  const double rate = 1.0 + 50e-6;
  const int64_t offset = 123'456'789'000;
  auto host_of = [&](int64_t device) {
    return offset + static_cast<int64_t>(std::llround(static_cast<double>(device) * rate));
  };
  const int64_t prev_dev = 1'000'000'000, now_dev = prev_dev + 2'000'000'000;  // 2 s apart
  const int64_t prev_host = host_of(prev_dev), now_host = host_of(now_dev);
  const int64_t event_dev = GENERATE(int64_t{1'000'000'000}, int64_t{1'400'000'000}, int64_t{2'000'000'000},
                                     int64_t{2'999'999'999}, int64_t{3'000'000'000});
  const int64_t got = steady_between_anchors(prev_host, event_dev - prev_dev, now_host, now_dev - event_dev);
  CHECK(std::llabs(got - host_of(event_dev)) <= 1);
  // The latest anchor alone is off by the drift over the distance to it.
  const int64_t alone = now_host - (now_dev - event_dev);
  CHECK(std::llabs(alone - host_of(event_dev)) == Approx(50e-6 * static_cast<double>(now_dev - event_dev)).margin(2));
}

TEST_CASE("An event outside the anchors' span falls back to the latest anchor") {
  CHECK(steady_between_anchors(100, -5, 1000, 10) == 990);
  CHECK(steady_between_anchors(100, 5, 1000, -10) == 1010);
  CHECK(steady_between_anchors(100, 0, 1000, 0) == 1000);
}

TEST_CASE("Device milliseconds become nanoseconds, rounded to the nearest") {
  CHECK(ms_to_ns(1.0) == 1'000'000);
  CHECK(ms_to_ns(0.0000004) == 0);
  CHECK(ms_to_ns(0.0000006) == 1);
  CHECK(ms_to_ns(-2.5) == -2'500'000);
  CHECK(ms_to_ns(static_cast<double>(0.5f)) == 500'000);
}

TEST_CASE("A completion is bracketed between the last pending poll and the poll that saw it") {
  // A fake clock that advances 100 ns per reading; the event completes at t=450.
  int64_t clock = 0;
  auto now = [&] { return clock += 100; };
  bool recorded = false;
  auto record = [&] {
    recorded = true;
    return true;
  };
  auto poll = [&] { return clock >= 450 ? Poll::kDone : Poll::kNotYet; };
  const auto b = bracket_completion(record, poll, now, 1'000'000);
  REQUIRE(b.has_value());
  CHECK(recorded);
  CHECK(b->low_ns <= 450);
  CHECK(b->high_ns >= 450);
  CHECK(b->high_ns - b->low_ns <= 200);
  CHECK(b->polls >= 2);
  CHECK(b->mid() == b->low_ns + (b->high_ns - b->low_ns) / 2);
}

TEST_CASE("An anchor that fails or never completes gives no bracket") {
  int64_t clock = 0;
  auto now = [&] { return clock += 1000; };
  CHECK_FALSE(bracket_completion([] { return false; }, [] { return Poll::kDone; }, now, 1'000'000).has_value());
  CHECK_FALSE(bracket_completion([] { return true; }, [] { return Poll::kError; }, now, 1'000'000).has_value());
  CHECK_FALSE(bracket_completion([] { return true; }, [] { return Poll::kNotYet; }, now, 50'000).has_value());
}
