// CPU work: one pass of arithmetic over the payload (the data really flows
// from stage to stage), then a sleep until the job's deadline on the steady
// clock. Sleeping rather than spinning to the deadline leaves the cores to
// the other ranks, so that with more ranks than cores a job still lasts its
// duration and the bubbles in the timeline are the schedule's, not the CPU
// contention's.
#include <chrono>
#include <thread>

#include "work.h"

namespace ppt::demo {
namespace {

class CpuWork final : public Work {
 public:
  explicit CpuWork(size_t payload) : state_(payload, 0) {}

  void* stream() const override { return nullptr; }
  std::string describe() const override { return "CPU"; }

  bool run(double micro_seconds, const std::vector<uint8_t>& input, bool, std::string*) override {
    for (size_t i = 0; i < input.size() && i < state_.size(); ++i) state_[i] ^= input[i];
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::nanoseconds(static_cast<int64_t>(micro_seconds * 1000));
    uint32_t h = 2166136261u;
    for (uint8_t& b : state_) {
      h = (h ^ b) * 16777619u;
      b = static_cast<uint8_t>(h >> 24);
    }
    std::this_thread::sleep_until(deadline);
    return true;
  }

  bool finish(std::vector<uint8_t>* output, std::string*) override {
    *output = state_;
    return true;
  }

 private:
  std::vector<uint8_t> state_;
};

}  // namespace

std::unique_ptr<Work> make_cpu_work(size_t payload_bytes) { return std::make_unique<CpuWork>(payload_bytes); }

}  // namespace ppt::demo
