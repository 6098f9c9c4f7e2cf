// How the profiler takes and resolves time marks. A step's marks are numbered
// 0, 1, 2...: job i begins at mark 2i and ends at mark 2i + 1.
//
// The Profiler keeps the rules (window, nesting, types); a Timer only takes
// marks, so that the host and the CUDA timers are interchangeable and the
// rules are tested once, on the host timer.
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
  // Room for marks [0, n) without allocating in mark(). May allocate; it is
  // called ahead of time and, during warm-up, from begin().
  virtual Status reserve(size_t n) = 0;
  virtual size_t capacity() const = 0;
  // The hot path: takes mark i (i < capacity()). Never blocks, allocates or
  // calls back to the host.
  virtual Status mark(size_t i) = 0;
  // Waits until marks [0, n) are taken and writes their wall-clock times.
  virtual Status resolve(size_t n, int64_t* wall_ns) = 0;
  virtual void add_stats(Stats* stats) const { (void)stats; }
};

std::unique_ptr<Timer> make_host_timer();

// A timer on CUDA events, or nullptr with *why_not saying why CUDA cannot be
// used (not built with CUDA, no driver, no device...).
std::unique_ptr<Timer> make_cuda_timer(const Options& options, std::string* why_not,
                                       std::string* note);

}  // namespace ppt::shim::detail
