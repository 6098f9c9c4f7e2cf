// How the profiler takes and resolves time marks. A mark lives in a slot of
// the timer's pool (slots [0, capacity())); the Profiler hands slots out and
// takes them back, so that a step's marks stay valid while the step waits to
// be resolved at a later flush.
//
// The Profiler keeps the rules (window, nesting, types, which steps are
// written when); a Timer only takes marks, so that the host and the CUDA
// timers are interchangeable and the rules are tested once, on the host timer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "pp_timeline/shim.h"

namespace ppt::shim::detail {

class Timer {
 public:
  virtual ~Timer() = default;
  virtual Backend backend() const = 0;
  // Room for slots [0, n) without allocating in mark(). May allocate; it is
  // called ahead of time and, during warm-up, from begin().
  virtual Status reserve(size_t n) = 0;
  virtual size_t capacity() const = 0;
  // The hot path: takes a mark in `slot` (< capacity()) on `stream` (a
  // cudaStream_t of the timer's device; the host timer ignores it). Never
  // blocks, allocates or calls back to the host.
  virtual Status mark(size_t slot, void* stream) = 0;
  // Never blocks: whether the mark in `slot` has been reached (on a stream,
  // every mark taken before it then has too).
  virtual Status reached(size_t slot, bool* done) = 0;
  // Blocks until the mark in `slot` is reached, for at most timeout_ns.
  virtual Status wait(size_t slot, int64_t timeout_ns) = 0;
  // Called once per flush, after reached() found which steps are complete:
  // takes what resolve() maps with (an anchor, a clock pair). Marks found
  // reached before it are resolved against it and the ones before.
  virtual Status checkpoint() = 0;
  // Writes the wall-clock times of the marks in slots[0..n), all reached
  // before the last checkpoint() and in the order they were taken.
  virtual Status resolve(const uint32_t* slots, size_t n, int64_t* wall_ns) = 0;
  // kCaptureActive when `stream` is being captured into a CUDA graph, in
  // which case the profiler must not query or wait (flush) nor record on it
  // (begin/end: the event would become a graph node, never timed).
  virtual Status check_capture(void* stream) {
    (void)stream;
    return {};
  }
  virtual void add_stats(Stats* stats) const { (void)stats; }
  // Whether resolve() has what it maps with (an anchor); false only while
  // every anchor so far queued behind other work and none came back yet.
  virtual bool can_resolve() const { return true; }
  // The largest uncertainty of the times the last resolve() wrote.
  virtual int64_t last_resolve_uncertainty_ns() const { return 0; }
};

std::unique_ptr<Timer> make_host_timer();

// A timer on CUDA events, or nullptr with *why_not saying why CUDA cannot be
// used (not built with CUDA, no runtime, no driver, no device...).
std::unique_ptr<Timer> make_cuda_timer(const Options& options, std::string* why_not, std::string* note);

}  // namespace ppt::shim::detail
