// CPU work: one pass of arithmetic over the payload (the data really flows
// from stage to stage), then a sleep until the job's deadline on the steady
// clock. Sleeping rather than spinning to the deadline leaves the cores to
// the other ranks, so that with more ranks than cores a job still lasts its
// duration and the bubbles in the timeline are the schedule's, not the CPU
// contention's.
//
// A sleep wakes late: by the kernel's timer slack (50 us by default) and the
// wake-up itself, about 80 us on a 2-core VM. That lateness is the same for
// every job, so a VPP chunk job (1/V of a stage's work) would last more than
// 1/V of the stage's job, and the demo would not be the run whatif's model
// describes (a chunk costs its stage's time / V, docs/whatif.md). So the
// thread that runs the jobs lowers its timer slack to 1 ns, sleeps to a
// little before the deadline and waits the rest on the clock: a job lasts
// its duration within a few microseconds, for a few tens of microseconds of
// one core a job.
#include <chrono>
#include <thread>

#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "work.h"

namespace ppt::demo {
namespace {

class CpuWork final : public Work {
 public:
  explicit CpuWork(size_t payload) : state_(payload, 0) {}

  void* stream() const override { return nullptr; }
  std::string describe() const override { return "CPU"; }

  bool run(double micro_seconds, const std::vector<uint8_t>& input, bool, std::string*) override {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::nanoseconds(static_cast<int64_t>(micro_seconds * 1000));
    lower_timer_slack();
    for (size_t i = 0; i < input.size() && i < state_.size(); ++i) state_[i] ^= input[i];
    uint32_t h = 2166136261u;
    for (uint8_t& b : state_) {
      h = (h ^ b) * 16777619u;
      b = static_cast<uint8_t>(h >> 24);
    }
    std::this_thread::sleep_until(deadline - kWaitOnClock);
    while (std::chrono::steady_clock::now() < deadline) {
    }
    return true;
  }

  bool finish(std::vector<uint8_t>* output, std::string*) override {
    *output = state_;
    return true;
  }

 private:
  // How long before the deadline the sleep ends: a little more than the
  // median lateness of a sleep with 1 ns of timer slack (about 30 us).
  static constexpr std::chrono::microseconds kWaitOnClock{60};

  // The timer slack is a thread's own; the jobs run on one thread, which
  // sets it at its first job.
  void lower_timer_slack() {
#ifdef __linux__
    if (slack_lowered_) return;
    slack_lowered_ = true;
    ::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
#endif
  }

  std::vector<uint8_t> state_;
  bool slack_lowered_ = false;
};

}  // namespace

std::unique_ptr<Work> make_cpu_work(size_t payload_bytes) { return std::make_unique<CpuWork>(payload_bytes); }

}  // namespace ppt::demo
