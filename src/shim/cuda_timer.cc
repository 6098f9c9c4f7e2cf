// The timer on CUDA events. Only the runtime API is used (no kernels), so the
// shim is compiled by the host compiler and needs no nvcc.
//
// mark() is one cudaEventRecord on the caller's stream. resolve() waits once
// for the step's last mark (every earlier mark on the same stream is then
// done), takes a fresh anchor, and places each mark between the previous
// anchor and the fresh one (clock_map.h). Anchors are recorded on a private
// non-blocking stream of the highest priority, which is idle, so the device
// reaches an anchor as soon as it is enqueued even when the caller's stream
// (or the legacy default stream) already holds the next step's work.
#include <cuda_runtime_api.h>

#include <thread>
#include <vector>

#include "clock_map.h"
#include "timer.h"

namespace ppt::shim::detail {
namespace {

std::string cuda_failure(const char* what, cudaError_t e) {
  std::string s(what);
  s += " failed: ";
  s += cudaGetErrorName(e);
  s += " (";
  s += cudaGetErrorString(e);
  s += ")";
  return s;
}

// Makes `device` current for a scope and restores the caller's device.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    if (cudaGetDevice(&saved_) != cudaSuccess) saved_ = -1;
    if (saved_ != device) cudaSetDevice(device);
  }
  ~DeviceScope() {
    int now = -1;
    if (saved_ >= 0 && cudaGetDevice(&now) == cudaSuccess && now != saved_) cudaSetDevice(saved_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int saved_ = -1;
};

// An anchor is taken up to kAnchorTries times per flush and the narrowest
// bracket wins; a try costs a few microseconds. Trying stops at a bracket of
// kGoodHalfWidthNs, or of kFairHalfWidthNs after kFairTries tries. More tries
// matter when other processes share the device: without MPS their contexts
// are time-sliced with ours, and an anchor can wait for a slice.
constexpr int kAnchorTries = 16;
constexpr int kFairTries = 3;
constexpr int64_t kGoodHalfWidthNs = 1'000;
constexpr int64_t kFairHalfWidthNs = 10'000;
// The device reaches an event on an idle stream within microseconds; waiting
// this long means something is wrong.
constexpr int64_t kAnchorTimeoutNs = 1'000'000'000;
// The previous anchor is used to follow drift only when it is this recent
// (cudaEventElapsedTime is a float of milliseconds: 60 s still resolves a few
// microseconds) and when the two anchors disagree by less than this fraction
// of the time between them (more means a clock was reset, not drift).
constexpr int64_t kMaxAnchorSpanNs = 60'000'000'000;
constexpr double kMaxDrift = 1e-3;

struct Anchor {
  bool valid = false;
  cudaEvent_t event = nullptr;
  int64_t steady_ns = 0;
  int64_t half_width_ns = 0;
};

class CudaTimer final : public Timer {
 public:
  CudaTimer(int device, cudaStream_t stream, FlushWait wait)
      : device_(device), stream_(stream), wait_(wait) {}

  ~CudaTimer() override {
    DeviceScope scope(device_);
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
    for (auto& slot : anchor_events_)
      for (cudaEvent_t e : slot)
        if (e != nullptr) cudaEventDestroy(e);
    if (anchor_stream_ != nullptr) cudaStreamDestroy(anchor_stream_);
  }

  // Creates the private stream and the anchor events; "" on success.
  std::string init() {
    DeviceScope scope(device_);
    int least = 0, greatest = 0;
    cudaError_t e = cudaDeviceGetStreamPriorityRange(&least, &greatest);
    if (e != cudaSuccess) return cuda_failure("cudaDeviceGetStreamPriorityRange", e);
    e = cudaStreamCreateWithPriority(&anchor_stream_, cudaStreamNonBlocking, greatest);
    if (e != cudaSuccess) return cuda_failure("cudaStreamCreateWithPriority", e);
    for (auto& slot : anchor_events_) {
      for (cudaEvent_t& ev : slot) {
        e = cudaEventCreate(&ev);
        if (e != cudaSuccess) return cuda_failure("cudaEventCreate", e);
      }
    }
    return {};
  }

  Backend backend() const override { return Backend::kCudaEvents; }

  Status reserve(size_t n) override {
    if (n <= events_.size()) return {};
    DeviceScope scope(device_);
    events_.reserve(n);
    marks_steady_.reserve(n);
    while (events_.size() < n) {
      cudaEvent_t ev = nullptr;
      const cudaError_t e = cudaEventCreate(&ev);
      if (e != cudaSuccess) return {Code::kCudaError, cuda_failure("cudaEventCreate", e)};
      events_.push_back(ev);
      marks_steady_.push_back(0);
    }
    return {};
  }
  size_t capacity() const override { return events_.size(); }

  Status mark(size_t i) override {
    const cudaError_t e = cudaEventRecord(events_[i], stream_);
    if (e != cudaSuccess) {
      return {Code::kCudaError, cuda_failure("cudaEventRecord on the profiler's stream", e)};
    }
    return {};
  }

  Status resolve(size_t n, int64_t* wall_ns) override {
    if (n == 0) return {};
    if (Status s = wait_for(events_[n - 1]); !s.ok()) return s;
    Anchor& now = anchors_[next_slot_];
    Anchor& prev = anchors_[1 - next_slot_];
    if (Status s = take_anchor(next_slot_, &now); !s.ok()) return s;

    const bool use_prev = prev.valid && now.steady_ns - prev.steady_ns > 0 &&
                          now.steady_ns - prev.steady_ns < kMaxAnchorSpanNs &&
                          drift_is_plausible(prev, now);
    for (size_t i = 0; i < n; ++i) {
      float ms = 0;
      cudaError_t e = cudaEventElapsedTime(&ms, events_[i], now.event);
      if (e != cudaSuccess) return {Code::kCudaError, cuda_failure("cudaEventElapsedTime", e)};
      const int64_t until_now = ms_to_ns(ms);
      int64_t steady = now.steady_ns - until_now;
      if (use_prev) {
        e = cudaEventElapsedTime(&ms, prev.event, events_[i]);
        if (e == cudaSuccess) {
          steady = steady_between_anchors(prev.steady_ns, ms_to_ns(ms), now.steady_ns, until_now);
        }
      }
      marks_steady_[i] = steady;
    }
    const ClockPair pair = read_clock_pair();
    for (size_t i = 0; i < n; ++i) wall_ns[i] = wall_from_steady(pair, marks_steady_[i]);
    next_slot_ = 1 - next_slot_;
    return {};
  }

  void add_stats(Stats* stats) const override {
    stats->flush_waits += waits_;
    stats->flush_polls += polls_;
    stats->anchors += anchors_taken_;
    stats->last_anchor_uncertainty_ns = last_half_width_;
  }

 private:
  Status wait_for(cudaEvent_t last) {
    if (wait_ == FlushWait::kSynchronize) {
      ++waits_;
      const cudaError_t e = cudaEventSynchronize(last);
      if (e != cudaSuccess) {
        return {Code::kCudaError, cuda_failure("cudaEventSynchronize on the step's last event", e)};
      }
      return {};
    }
    for (;;) {
      ++polls_;
      const cudaError_t e = cudaEventQuery(last);
      if (e == cudaSuccess) return {};
      if (e != cudaErrorNotReady) {
        return {Code::kCudaError, cuda_failure("cudaEventQuery on the step's last event", e)};
      }
      std::this_thread::yield();
    }
  }

  Status take_anchor(int slot, Anchor* out) {
    Anchor best;
    for (int t = 0; t < kAnchorTries; ++t) {
      cudaEvent_t ev = anchor_events_[slot][t];
      cudaError_t failure = cudaSuccess;
      auto bracket = bracket_completion(
          [&] {
            failure = cudaEventRecord(ev, anchor_stream_);
            return failure == cudaSuccess;
          },
          [&] {
            ++polls_;
            const cudaError_t e = cudaEventQuery(ev);
            if (e == cudaSuccess) return Poll::kDone;
            if (e == cudaErrorNotReady) return Poll::kNotYet;
            failure = e;
            return Poll::kError;
          },
          steady_now_ns, kAnchorTimeoutNs);
      if (!bracket) {
        if (failure != cudaSuccess) {
          return {Code::kCudaError, cuda_failure("recording the clock anchor", failure)};
        }
        return {Code::kCudaError, "the clock anchor was not reached within a second"};
      }
      if (!best.valid || bracket->half_width() < best.half_width_ns) {
        best = Anchor{true, ev, bracket->mid(), bracket->half_width()};
      }
      if (best.half_width_ns <= kGoodHalfWidthNs) break;
      if (t + 1 >= kFairTries && best.half_width_ns <= kFairHalfWidthNs) break;
    }
    ++anchors_taken_;
    last_half_width_ = best.half_width_ns;
    *out = best;
    return {};
  }

  static bool drift_is_plausible(const Anchor& prev, const Anchor& now) {
    float ms = 0;
    if (cudaEventElapsedTime(&ms, prev.event, now.event) != cudaSuccess) return false;
    const double device_span = static_cast<double>(ms_to_ns(ms));
    const double host_span = static_cast<double>(now.steady_ns - prev.steady_ns);
    if (device_span <= 0) return false;
    const double diff = host_span > device_span ? host_span - device_span : device_span - host_span;
    return diff <= kMaxDrift * host_span + 4.0 * (prev.half_width_ns + now.half_width_ns);
  }

  int device_;
  cudaStream_t stream_;
  FlushWait wait_;
  cudaStream_t anchor_stream_ = nullptr;
  std::vector<cudaEvent_t> events_;
  std::vector<int64_t> marks_steady_;  // resolve()'s scratch, sized with events_
  cudaEvent_t anchor_events_[2][kAnchorTries] = {};
  Anchor anchors_[2];
  int next_slot_ = 0;
  int64_t waits_ = 0;
  int64_t polls_ = 0;
  int64_t anchors_taken_ = 0;
  int64_t last_half_width_ = 0;
};

}  // namespace

std::unique_ptr<Timer> make_cuda_timer(const Options& options, std::string* why_not,
                                       std::string* note) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    *why_not = std::string("no usable CUDA driver or device: ") + cudaGetErrorName(e) + " (" +
               cudaGetErrorString(e) + ")";
    cudaGetLastError();  // the failure was ours; do not leave it to the caller
    return nullptr;
  }
  if (count == 0) {
    *why_not = "no CUDA device";
    return nullptr;
  }
  int device = options.device;
  if (device < 0) {
    e = cudaGetDevice(&device);
    if (e != cudaSuccess) {
      *why_not = cuda_failure("cudaGetDevice", e);
      cudaGetLastError();
      return nullptr;
    }
  }
  if (device >= count) {
    *why_not = "device " + std::to_string(device) + " was asked for but only " +
               std::to_string(count) + " are present";
    return nullptr;
  }
  auto timer = std::make_unique<CudaTimer>(device, static_cast<cudaStream_t>(options.stream),
                                           options.wait);
  if (std::string failure = timer->init(); !failure.empty()) {
    *why_not = failure;
    cudaGetLastError();
    return nullptr;
  }
  if (Status s = timer->reserve(2 * options.reserve_jobs); !s.ok()) {
    *why_not = s.message();
    cudaGetLastError();
    return nullptr;
  }
  *note = "CUDA events on device " + std::to_string(device);
  return timer;
}

}  // namespace ppt::shim::detail
