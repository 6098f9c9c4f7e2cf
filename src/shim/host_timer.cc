// The timer for machines without a usable GPU: the steady clock at each mark,
// mapped to wall time on the line through the clock pairs of the flushes
// before and after the mark (clock_map.h), so that every process of a host
// maps a moment to the same wall time even while NTP slews the wall clock.
#include <vector>

#include "clock_map.h"
#include "timer.h"

namespace ppt::shim::detail {
namespace {

class HostTimer final : public Timer {
 public:
  // The first pair brackets the first step's marks from before.
  HostTimer() : earlier_(read_clock_pair()), later_(earlier_) {}

  Backend backend() const override { return Backend::kHostClock; }

  Status reserve(size_t n) override {
    if (n > marks_.size()) marks_.resize(n);
    return {};
  }
  size_t capacity() const override { return marks_.size(); }

  Status mark(size_t slot, void*) override {
    marks_[slot] = steady_now_ns();
    return {};
  }

  Status reached(size_t, bool* done) override {
    *done = true;
    return {};
  }
  Status wait(size_t, int64_t) override { return {}; }

  Status checkpoint() override {
    earlier_ = later_;
    later_ = read_clock_pair();
    return {};
  }

  Status resolve(const uint32_t* slots, size_t n, int64_t* wall_ns) override {
    for (size_t i = 0; i < n; ++i) wall_ns[i] = wall_between_pairs(earlier_, later_, marks_[slots[i]]);
    return {};
  }

 private:
  std::vector<int64_t> marks_;
  ClockPair earlier_;
  ClockPair later_;
};

}  // namespace

std::unique_ptr<Timer> make_host_timer() { return std::make_unique<HostTimer>(); }

}  // namespace ppt::shim::detail
