// The timer for machines without a usable GPU: the steady clock at each mark,
// mapped to wall time with a clock pair read at each flush, so that the
// mapping follows the wall clock's adjustments as the CUDA anchors do.
#include <vector>

#include "clock_map.h"
#include "timer.h"

namespace ppt::shim::detail {
namespace {

class HostTimer final : public Timer {
 public:
  Backend backend() const override { return Backend::kHostClock; }

  Status reserve(size_t n) override {
    if (n > marks_.size()) marks_.resize(n);
    return {};
  }
  size_t capacity() const override { return marks_.size(); }

  Status mark(size_t i) override {
    marks_[i] = steady_now_ns();
    return {};
  }

  Status resolve(size_t n, int64_t* wall_ns) override {
    const ClockPair pair = read_clock_pair();
    for (size_t i = 0; i < n; ++i) wall_ns[i] = wall_from_steady(pair, marks_[i]);
    return {};
  }

 private:
  std::vector<int64_t> marks_;
};

}  // namespace

std::unique_ptr<Timer> make_host_timer() { return std::make_unique<HostTimer>(); }

}  // namespace ppt::shim::detail
