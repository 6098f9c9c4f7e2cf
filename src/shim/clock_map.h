// Clock arithmetic of the shim, kept free of CUDA so that it is tested on any
// machine: reading the steady and wall clocks as a pair, bracketing the moment
// a device reached an event, and placing an event between two anchors.
//
// Every time is integer nanoseconds. "Steady" is std::chrono::steady_clock
// (CLOCK_MONOTONIC), which every process on a machine shares; "wall" is
// std::chrono::system_clock, what the log lines print.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>
#include <thread>

namespace ppt::shim::detail {

inline int64_t real_steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

inline int64_t real_wall_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The clocks the shim reads. Tests replace them with a fake whose wall clock
// drifts (set_clocks_for_testing); everything else uses the real ones.
inline void real_pause_ns(int64_t ns) { std::this_thread::sleep_for(std::chrono::nanoseconds(ns)); }

struct Clocks {
  int64_t (*steady_ns)() = real_steady_now_ns;
  int64_t (*wall_ns)() = real_wall_now_ns;
  // Waits about `ns` while polling the device; a fake moves its own time
  // instead, so that waiting out a lag of virtual milliseconds costs no real
  // ones.
  void (*pause_ns)(int64_t ns) = real_pause_ns;
};
const Clocks& clocks();
// nullptr restores the real clocks.
void set_clocks_for_testing(const Clocks* fake);

inline int64_t steady_now_ns() { return clocks().steady_ns(); }
inline int64_t wall_now_ns() { return clocks().wall_ns(); }
inline void pause_ns(int64_t ns) { clocks().pause_ns(ns); }

// The two clocks read together: wall_ns was read between two steady readings
// whose midpoint is steady_ns, half_width_ns apart from either.
struct ClockPair {
  int64_t steady_ns = 0;
  int64_t wall_ns = 0;
  int64_t half_width_ns = 0;
};

// The narrowest of `tries` readings, so that a preemption between two reads
// does not skew the mapping.
ClockPair read_clock_pair(int tries = 5);

inline int64_t wall_from_steady(const ClockPair& pair, int64_t steady_ns) {
  return steady_ns - pair.steady_ns + pair.wall_ns;
}

// The wall time of `steady_ns` on the straight line through two pairs read
// at different moments (`earlier` before `later`). The wall clock's offset
// from the steady clock moves while NTP slews it (up to 500 ppm on Linux, and
// more while it catches up); a single pair maps a time `d` away from it off
// by the slew rate times `d`, which differs between processes that read their
// pairs at different moments. The line through two pairs follows a constant
// slew exactly, so every process of a host maps a moment to the same wall
// time (up to the pairs' reading widths). Outside [earlier, later] the
// nearest pair's offset is used, and so it is when the two pairs disagree
// by more than 1% of the time between them (the wall clock was stepped, not
// slewed).
int64_t wall_between_pairs(const ClockPair& earlier, const ClockPair& later, int64_t steady_ns);

// When a device reached an event, as the host can know it: after `low_ns`
// (the host was still before it) and no later than `high_ns` (the host saw
// it done).
struct Bracket {
  int64_t low_ns = 0;
  int64_t high_ns = 0;
  int64_t polls = 0;
  int64_t mid() const { return low_ns + (high_ns - low_ns) / 2; }
  int64_t half_width() const { return (high_ns - low_ns) / 2; }
};

enum class Poll { kDone, kNotYet, kError };

// Records an event with record() (false: failed) and polls it with poll()
// until done, reading now() around each poll. A poll that finds it not done
// moves the lower bound to the time before that poll; the poll that finds it
// done gives the upper bound. Returns nothing on a failure or after
// timeout_ns.
template <class Record, class PollFn, class Now>
std::optional<Bracket> bracket_completion(Record&& record, PollFn&& poll, Now&& now, int64_t timeout_ns) {
  Bracket b;
  b.low_ns = now();
  if (!record()) return std::nullopt;
  const int64_t deadline = b.low_ns + timeout_ns;
  for (;;) {
    const int64_t before = now();
    const Poll p = poll();
    ++b.polls;
    if (p == Poll::kDone) {
      b.high_ns = now();
      return b;
    }
    if (p == Poll::kError) return std::nullopt;
    b.low_ns = before;
    if (before > deadline) return std::nullopt;
  }
}

// Converts a device interval in milliseconds (cudaEventElapsedTime's float)
// to nanoseconds, rounded to the nearest.
inline int64_t ms_to_ns(double ms) { return std::llround(ms * 1e6); }

// The steady time of an event that lies `since_prev_ns` of device time after
// the previous anchor (at steady prev_ns) and `until_now_ns` before the latest
// anchor (at steady now_ns). Each anchor alone gives an estimate; they differ
// by the drift of the device clock against the host's over the interval. The
// estimates are blended linearly by the event's position, which is the
// mapping through the straight line joining the two anchors: drift at a
// constant rate is followed exactly.
int64_t steady_between_anchors(int64_t prev_ns, int64_t since_prev_ns, int64_t now_ns, int64_t until_now_ns);

}  // namespace ppt::shim::detail
