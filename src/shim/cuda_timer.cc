// The timer on CUDA events, through the runtime bound at run time
// (cuda_api.h): no CUDA header or library is needed to build it, and tests
// drive it with a fake runtime.
//
// mark() is one cudaEventRecord on the caller's stream. Nothing waits for
// the device: at each flush the Profiler asks reached() (one cudaEventQuery)
// whether a finished step's last mark is done, and resolves the steps that
// are; the others wait for a later flush. checkpoint() takes an anchor at
// every flush, and at a mark when the last one is older than
// kAnchorPeriodNs: an event on a private, idle, highest-priority stream
// whose completion the host brackets by polling (a few microseconds). Each
// mark is placed on the line through the anchors before and after it, which
// follows the drift of the device clock against the host's (clock_map.h).
// An anchor the device does not reach within kAnchorPatienceNs queued behind
// other work (one hardware queue, CUDA_DEVICE_MAX_CONNECTIONS=1, or a busy
// time slice): it is given up rather than waited for, and counted. A late
// anchor is recorded in its place and left in flight: each later checkpoint
// polls it once, and the first that finds it done makes it an anchor whose
// bracket runs from the last poll that found it not done (a step wide, at
// most). So a device that is never idle still has anchors, however wide, and
// each mark is mapped through whichever of its anchors (the narrow one
// before and the drift since, the wide one after, or the line through both)
// bounds its error best; that bound is the step's uncertainty.
#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "clock_map.h"
#include "cuda_api.h"
#include "timer.h"

namespace ppt::shim::detail {
namespace {

using cuda::Api;
using cuda::Error;
using cuda::Event;
using cuda::Stream;

// Makes `device` current for a scope and restores what the caller had. A
// thread with no context (nothing chosen yet) gets none back rather than a
// new one on device 0, which cudaSetDevice(0) would create.
class DeviceScope {
 public:
  DeviceScope(const Api& api, int device) : api_(api) {
    if (api_.GetDevice(&saved_) != cuda::kSuccess) {
      saved_ = -1;
      (void)api_.GetLastError();
    }
    if (api_.CtxGetCurrent != nullptr) {
      void* ctx = nullptr;
      had_context_ = api_.CtxGetCurrent(&ctx) == 0 && ctx != nullptr;
    }
    if (saved_ != device || !had_context_) {
      changed_ = true;
      (void)api_.SetDevice(device);
    }
  }
  ~DeviceScope() {
    if (!changed_) return;
    if (!had_context_ && api_.CtxSetCurrent != nullptr) {
      (void)api_.CtxSetCurrent(nullptr);
    } else if (saved_ >= 0) {
      (void)api_.SetDevice(saved_);
    }
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  const Api& api_;
  int saved_ = -1;
  bool had_context_ = true;  // unknown without the driver: assume the caller chose
  bool changed_ = false;
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
// An anchor not reached in this long waits behind other work: its bracket
// would be as wide as the wait, and waiting would block the host for the
// device's whole lag. It is given up (Stats::anchors_rejected).
constexpr int64_t kAnchorPatienceNs = 200'000;
// Anchors are also taken at a mark when the last one is older than this, so
// that a mark is never far from an anchor even when flushes are minutes
// apart: its time then needs no extrapolation over the drift (50 ppm over
// 30 s is 1.5 ms) and cudaEventElapsedTime's float stays fine-grained.
constexpr int64_t kAnchorPeriodNs = 5'000'000'000;
// The drift assumed where a mark has an anchor on one side only, for its
// uncertainty (device clocks drift by tens of ppm against the host's).
constexpr double kDriftBound = 100e-6;
// The previous anchor is used to follow drift only when it is this recent
// (cudaEventElapsedTime is a float of milliseconds: 60 s still resolves a few
// microseconds) and when the two anchors disagree by less than this fraction
// of the time between them (more means a clock was reset, not drift).
constexpr int64_t kMaxAnchorSpanNs = 60'000'000'000;
constexpr double kMaxDrift = 1e-3;
// Anchors kept: a step waits at most Profiler's kMaxPendingSteps flushes, so
// the anchors around its marks are among the last kAnchorRing.
// The periodic anchors add one per kAnchorPeriodNs of a long step.
constexpr int kAnchorRing = 64;
// Late anchors' events: one more than the ring holds, so that an event is
// recorded again only after its anchor has left the ring.
constexpr int kLateEvents = kAnchorRing + 1;
// A late anchor in flight is queried at a mark when its last query is older
// than this (one cudaEventQuery per millisecond at most on the hot path).
constexpr int64_t kLatePollNs = 1'000'000;
// A late anchor's bracket is narrowed by the anchors before it, each moved
// to it by the device's elapsed time and widened by the drift bound: the
// intersection over the last kRefineAnchors.
constexpr int kRefineAnchors = 16;
// An anchor wider than this makes resolve() also try the one before it.
constexpr int64_t kWideAnchorNs = 10'000;

struct Anchor {
  bool valid = false;
  bool follows_prev = false;  // the line from the anchor before to this one is usable
  Event event = nullptr;
  int64_t steady_ns = 0;
  int64_t half_width_ns = 0;
  ClockPair pair;  // read right after the anchor, for steady to wall
};

class CudaTimer final : public Timer {
 public:
  CudaTimer(const Api& api, int device, Stream stream, FlushWait wait)
      : api_(api), device_(device), stream_(stream), wait_(wait) {}

  ~CudaTimer() override {
    DeviceScope scope(api_, device_);
    for (Event e : events_) api_.EventDestroy(e);
    for (auto& slot : anchor_events_)
      for (Event e : slot)
        if (e != nullptr) api_.EventDestroy(e);
    for (Event e : late_events_)
      if (e != nullptr) api_.EventDestroy(e);
    if (anchor_stream_ != nullptr) api_.StreamDestroy(anchor_stream_);
    (void)api_.GetLastError();
  }

  // Creates the private stream, the anchor events and a first anchor; ""
  // on success.
  std::string init() {
    DeviceScope scope(api_, device_);
    int least = 0, greatest = 0;
    Error e = api_.DeviceGetStreamPriorityRange(&least, &greatest);
    if (e != cuda::kSuccess) return cuda::failure(api_, "cudaDeviceGetStreamPriorityRange", e);
    e = api_.StreamCreateWithPriority(&anchor_stream_, cuda::kStreamNonBlocking, greatest);
    if (e != cuda::kSuccess) return cuda::failure(api_, "cudaStreamCreateWithPriority", e);
    for (auto& slot : anchor_events_) {
      for (Event& ev : slot) {
        e = api_.EventCreateWithFlags(&ev, cuda::kEventDefault);
        if (e != cuda::kSuccess) return cuda::failure(api_, "cudaEventCreateWithFlags", e);
      }
    }
    for (Event& ev : late_events_) {
      e = api_.EventCreateWithFlags(&ev, cuda::kEventDefault);
      if (e != cuda::kSuccess) return cuda::failure(api_, "cudaEventCreateWithFlags", e);
    }
    if (Status s = take_first_anchor(); !s.ok()) return s.message();
    return {};
  }

  Backend backend() const override { return Backend::kCudaEvents; }

  Status reserve(size_t n) override {
    if (n <= events_.size()) return {};
    DeviceScope scope(api_, device_);
    events_.reserve(n);
    while (events_.size() < n) {
      Event ev = nullptr;
      const Error e = api_.EventCreateWithFlags(&ev, cuda::kEventDefault);
      if (e != cuda::kSuccess) {
        return {Code::kCudaError, cuda::failure(api_, "cudaEventCreateWithFlags", e)};
      }
      events_.push_back(ev);
    }
    return {};
  }
  size_t capacity() const override { return events_.size(); }

  Status mark(size_t slot, void* stream) override {
    const auto on = static_cast<Stream>(stream);
    // The caller's current device may be another one (a thread driving two
    // devices); an event can only be recorded with its own device current.
    const int64_t now = steady_now_ns();
    if (now - last_anchor_try_ns_ > kAnchorPeriodNs) {
      // A stale anchor: take one before this mark (a few microseconds, once
      // per period). Its failure is not the mark's.
      (void)checkpoint();
    } else if (late_in_flight_ && now - late_low_ns_ > kLatePollNs) {
      // A late anchor is in flight: one query now and then narrows its
      // bracket to the marks' spacing rather than the flushes'.
      DeviceScope scope(api_, device_);
      (void)poll_late_anchor();
    }
    int current = -1;
    Error e = api_.GetDevice(&current);
    if (e == cuda::kSuccess && current == device_) {
      e = api_.EventRecord(events_[slot], on);
    } else {
      ++device_switches_;
      DeviceScope scope(api_, device_);
      e = api_.EventRecord(events_[slot], on);
    }
    if (e != cuda::kSuccess) {
      (void)api_.GetLastError();
      return {Code::kCudaError, cuda::failure(api_,
                                              on == stream_ ? "cudaEventRecord on the profiler's stream"
                                                            : "cudaEventRecord on the job's stream",
                                              e) +
                                    " (the stream must be one of device " + std::to_string(device_) + ")"};
    }
    return {};
  }

  Status reached(size_t slot, bool* done) override {
    ++queries_;
    const Error e = api_.EventQuery(events_[slot]);
    if (e == cuda::kSuccess) {
      *done = true;
      return {};
    }
    if (e == cuda::kErrorNotReady) {
      *done = false;
      return {};
    }
    (void)api_.GetLastError();
    return {Code::kCudaError, cuda::failure(api_, "cudaEventQuery on a step's last event", e)};
  }

  Status wait(size_t slot, int64_t timeout_ns) override {
    ++waits_;
    const int64_t deadline = steady_now_ns() + timeout_ns;
    for (;;) {
      bool done = false;
      if (Status s = reached(slot, &done); !s.ok()) return s;
      if (done) return {};
      if (steady_now_ns() > deadline) {
        return {Code::kCudaError, "the device did not reach the step's last event within " +
                                      std::to_string(timeout_ns / 1'000'000) + " ms"};
      }
      if (wait_ == FlushWait::kPoll) {
        std::this_thread::yield();
      } else {
        pause_ns(50'000);
      }
    }
  }

  Status checkpoint() override {
    DeviceScope scope(api_, device_);
    if (Status s = poll_late_anchor(); !s.ok()) return s;
    Anchor a;
    // The slot's events are recorded again: the oldest anchor, there, is gone.
    anchors_[next_slot_].valid = false;
    if (Status s = take_anchor(next_slot_, &a); !s.ok()) return s;
    if (!a.valid) {
      // Queued behind other work: the anchors before serve, and a late one
      // is sent after the work, to be found done at a later checkpoint.
      return start_late_anchor();
    }
    push_anchor(a);
    return {};
  }

  Status resolve(const uint32_t* slots, size_t n, int64_t* wall_ns) override {
    if (n == 0) return {};
    // The valid anchors, oldest first; the newest was taken after every mark
    // here was reached.
    const Anchor* ordered[kAnchorRing];
    size_t count = 0;
    for (int k = 0; k < kAnchorRing; ++k) {
      const Anchor& a = anchors_[(next_slot_ + k) % kAnchorRing];
      if (a.valid) ordered[count++] = &a;
    }
    if (count == 0) {
      return {Code::kCudaError,
              "no clock anchor was taken (every one queued behind other work "
              "on the device)"};
    }
    resolve_uncertainty_ = 0;
    size_t j = 0;  // the latest anchor known to precede the current mark
    for (size_t i = 0; i < n; ++i) {
      Event ev = events_[slots[i]];
      float ms = 0;
      // Move j forward while the next anchor precedes the mark too (marks
      // are in order, so j only moves forward).
      while (j + 1 < count) {
        Error e = api_.EventElapsedTime(&ms, ordered[j + 1]->event, ev);
        if (e != cuda::kSuccess) return elapsed_failure(e);
        if (ms < 0) break;
        ++j;
      }
      const Anchor& before = *ordered[j];
      Error e = api_.EventElapsedTime(&ms, before.event, ev);
      if (e != cuda::kSuccess) return elapsed_failure(e);
      const int64_t since = ms_to_ns(ms);
      // Each way of placing the mark has a bound on its error; the smallest
      // wins. From one anchor: its bracket, and the drift over the distance
      // to it.
      int64_t steady = before.steady_ns + since;
      ClockPair pair_before = before.pair;
      ClockPair pair_after = before.pair;
      int64_t uncertainty = before.half_width_ns + drift_over(since);
      if (before.half_width_ns > kWideAnchorNs && j > 0) {
        // A wide (late) anchor: the narrow one before it, with the drift
        // since, may bound the mark better.
        const Anchor& earlier = *ordered[j - 1];
        e = api_.EventElapsedTime(&ms, earlier.event, ev);
        if (e != cuda::kSuccess) return elapsed_failure(e);
        const int64_t far = ms_to_ns(ms);
        const int64_t bound = earlier.half_width_ns + drift_over(far);
        if (far >= 0 && bound < uncertainty) {
          steady = earlier.steady_ns + far;
          pair_before = earlier.pair;
          pair_after = earlier.pair;
          uncertainty = bound;
        }
      }
      if (j + 1 < count && since >= 0) {
        const Anchor& after = *ordered[j + 1];
        e = api_.EventElapsedTime(&ms, ev, after.event);
        if (e != cuda::kSuccess) return elapsed_failure(e);
        const int64_t until = ms_to_ns(ms);
        const int64_t from_after = after.half_width_ns + drift_over(until);
        // On the line through both anchors: their brackets, interpolated.
        const int64_t between = std::max(before.half_width_ns, after.half_width_ns);
        if (after.follows_prev && between <= from_after && between <= uncertainty) {
          steady = steady_between_anchors(before.steady_ns, since, after.steady_ns, until);
          pair_after = after.pair;
          uncertainty = between;
        } else if (from_after < uncertainty) {
          steady = after.steady_ns - until;
          pair_before = after.pair;
          pair_after = after.pair;
          uncertainty = from_after;
        }
      }
      resolve_uncertainty_ = std::max(resolve_uncertainty_, uncertainty);
      wall_ns[i] = wall_between_pairs(pair_before, pair_after, steady);
    }
    return {};
  }

  Status check_capture(void* stream) override {
    int status = cuda::kCaptureStatusNone;
    const Error e = api_.StreamIsCapturing(static_cast<Stream>(stream), &status);
    if (e != cuda::kSuccess) {
      (void)api_.GetLastError();
      return {Code::kCaptureActive, cuda::failure(api_, "cudaStreamIsCapturing", e) + "; a capture may be under way"};
    }
    if (status != cuda::kCaptureStatusNone) {
      return {Code::kCaptureActive, "the stream is being captured into a CUDA graph"};
    }
    return {};
  }

  void add_stats(Stats* stats) const override {
    stats->flush_waits += waits_;
    stats->flush_polls += queries_ + anchor_polls_;
    stats->anchors += anchors_taken_;
    stats->last_anchor_uncertainty_ns = last_half_width_;
    stats->device_switches += device_switches_;
    stats->anchors_rejected += anchors_rejected_;
    stats->late_anchors += late_anchors_;
  }

  int64_t last_resolve_uncertainty_ns() const override { return resolve_uncertainty_; }

  bool can_resolve() const override {
    for (const Anchor& a : anchors_)
      if (a.valid) return true;
    return false;
  }

 private:
  Status take_first_anchor() {
    Anchor a;
    if (Status s = take_anchor(0, &a); !s.ok()) return s;
    if (!a.valid) return start_late_anchor();  // the device is busy: a late one, found later
    anchors_[0] = a;
    next_slot_ = 1;
    return {};
  }

  static int64_t drift_over(int64_t ns) {
    return static_cast<int64_t>(kDriftBound * static_cast<double>(ns < 0 ? -ns : ns));
  }

  void push_anchor(Anchor a) {
    const int slot = next_slot_;
    const Anchor& prev = anchors_[(slot + kAnchorRing - 1) % kAnchorRing];
    a.follows_prev = prev.valid && a.steady_ns - prev.steady_ns > 0 &&
                     a.steady_ns - prev.steady_ns < kMaxAnchorSpanNs && drift_is_plausible(prev, a);
    anchors_[slot] = a;
    next_slot_ = (slot + 1) % kAnchorRing;
  }

  // Records a late anchor after the work the anchor queued behind, unless
  // one is already in flight.
  Status start_late_anchor() {
    if (late_in_flight_) return {};
    Event ev = late_events_[late_next_];
    const int64_t before = steady_now_ns();
    const Error e = api_.EventRecord(ev, anchor_stream_);
    if (e != cuda::kSuccess) {
      (void)api_.GetLastError();
      return {Code::kCudaError, cuda::failure(api_, "recording a late clock anchor", e)};
    }
    late_in_flight_ = true;
    late_low_ns_ = before;
    return {};
  }

  // One query of the late anchor in flight: done, it becomes an anchor
  // bracketed by the last query that found it not done; not yet, that query
  // moves its lower bound.
  Status poll_late_anchor() {
    if (!late_in_flight_) return {};
    Event ev = late_events_[late_next_];
    const int64_t before = steady_now_ns();
    ++anchor_polls_;
    const Error e = api_.EventQuery(ev);
    if (e == cuda::kErrorNotReady) {
      late_low_ns_ = before;
      return {};
    }
    if (e != cuda::kSuccess) {
      (void)api_.GetLastError();
      late_in_flight_ = false;
      return {Code::kCudaError, cuda::failure(api_, "cudaEventQuery on a late clock anchor", e)};
    }
    const int64_t after = steady_now_ns();
    late_in_flight_ = false;
    late_next_ = (late_next_ + 1) % kLateEvents;
    Anchor a;
    a.valid = true;
    a.event = ev;
    a.steady_ns = late_low_ns_ + (after - late_low_ns_) / 2;
    a.half_width_ns = (after - late_low_ns_) / 2;
    a.pair = read_clock_pair();
    // Kept only in order after the newest anchor (the ring is in time order).
    const Anchor& prev = anchors_[(next_slot_ + kAnchorRing - 1) % kAnchorRing];
    if (prev.valid) {
      float ms = 0;
      if (api_.EventElapsedTime(&ms, prev.event, ev) != cuda::kSuccess) {
        (void)api_.GetLastError();
        return {};
      }
      if (ms < 0) return {};
    }
    refine(&a);
    ++late_anchors_;
    push_anchor(a);
    return {};
  }

  // Narrows a's bracket by the anchors before it: anchor i says the host
  // reached a's event in [low_i, high_i] moved by the device time between
  // them, give or take the drift over it. The intersection holds the truth
  // whenever each bracket does; a fit over many slow anchors, whose
  // completions were seen at different moments.
  void refine(Anchor* a) {
    int64_t low = a->steady_ns - a->half_width_ns;
    int64_t high = a->steady_ns + a->half_width_ns;
    for (int k = 1; k <= kRefineAnchors; ++k) {
      const Anchor& b = anchors_[(next_slot_ + kAnchorRing - k) % kAnchorRing];
      if (!b.valid) break;
      float ms = 0;
      if (api_.EventElapsedTime(&ms, b.event, a->event) != cuda::kSuccess) {
        (void)api_.GetLastError();
        break;
      }
      const int64_t d = ms_to_ns(ms);
      if (d < 0 || d > kMaxAnchorSpanNs) break;
      low = std::max(low, b.steady_ns - b.half_width_ns + d - drift_over(d));
      high = std::min(high, b.steady_ns + b.half_width_ns + d + drift_over(d));
    }
    if (low > high) return;  // disagreeing brackets (a stepped clock): keep a's own
    a->steady_ns = low + (high - low) / 2;
    a->half_width_ns = (high - low) / 2;
  }

  Status elapsed_failure(Error e) {
    (void)api_.GetLastError();
    return {Code::kCudaError, cuda::failure(api_, "cudaEventElapsedTime", e)};
  }

  // *out is left invalid (and counted) when the anchor queued behind other
  // work; an error only for a failed call.
  Status take_anchor(int slot, Anchor* out) {
    last_anchor_try_ns_ = steady_now_ns();
    Anchor best;
    for (int t = 0; t < kAnchorTries; ++t) {
      Event ev = anchor_events_[slot][t];
      Error failure = cuda::kSuccess;
      auto bracket = bracket_completion(
          [&] {
            failure = api_.EventRecord(ev, anchor_stream_);
            return failure == cuda::kSuccess;
          },
          [&] {
            ++anchor_polls_;
            const Error e = api_.EventQuery(ev);
            if (e == cuda::kSuccess) return Poll::kDone;
            if (e == cuda::kErrorNotReady) return Poll::kNotYet;
            failure = e;
            return Poll::kError;
          },
          steady_now_ns, kAnchorPatienceNs);
      if (!bracket) {
        (void)api_.GetLastError();
        if (failure != cuda::kSuccess) {
          return {Code::kCudaError, cuda::failure(api_, "recording the clock anchor", failure)};
        }
        // Queued behind other work: more tries would queue too.
        break;
      }
      if (!best.valid || bracket->half_width() < best.half_width_ns) {
        best.valid = true;
        best.event = ev;
        best.steady_ns = bracket->mid();
        best.half_width_ns = bracket->half_width();
      }
      if (best.half_width_ns <= kGoodHalfWidthNs) break;
      if (t + 1 >= kFairTries && best.half_width_ns <= kFairHalfWidthNs) break;
    }
    if (!best.valid) {
      ++anchors_rejected_;
      *out = best;
      return {};
    }
    best.pair = read_clock_pair();
    ++anchors_taken_;
    last_half_width_ = best.half_width_ns;
    *out = best;
    return {};
  }

  bool drift_is_plausible(const Anchor& prev, const Anchor& now) const {
    float ms = 0;
    if (api_.EventElapsedTime(&ms, prev.event, now.event) != cuda::kSuccess) {
      (void)api_.GetLastError();
      return false;
    }
    const double device_span = static_cast<double>(ms_to_ns(ms));
    const double host_span = static_cast<double>(now.steady_ns - prev.steady_ns);
    if (device_span <= 0) return false;
    const double diff = host_span > device_span ? host_span - device_span : device_span - host_span;
    return diff <= kMaxDrift * host_span + 4.0 * static_cast<double>(prev.half_width_ns + now.half_width_ns);
  }

  const Api& api_;
  int device_;
  Stream stream_;
  FlushWait wait_;
  Stream anchor_stream_ = nullptr;
  std::vector<Event> events_;
  Event anchor_events_[kAnchorRing][kAnchorTries] = {};
  Event late_events_[kLateEvents] = {};
  int late_next_ = 0;
  bool late_in_flight_ = false;
  int64_t late_low_ns_ = 0;
  int64_t late_anchors_ = 0;
  Anchor anchors_[kAnchorRing];
  int next_slot_ = 0;
  int64_t waits_ = 0;
  int64_t queries_ = 0;
  int64_t anchor_polls_ = 0;
  int64_t anchors_taken_ = 0;
  int64_t last_half_width_ = 0;
  int64_t device_switches_ = 0;
  int64_t anchors_rejected_ = 0;
  int64_t last_anchor_try_ns_ = 0;
  int64_t resolve_uncertainty_ = 0;
};

}  // namespace

std::unique_ptr<Timer> make_cuda_timer(const Options& options, std::string* why_not, std::string* note) {
  std::string load_failure;
  const Api* api = cuda::api(&load_failure);
  if (api == nullptr) {
    *why_not = load_failure;
    return nullptr;
  }
  int count = 0;
  Error e = api->GetDeviceCount(&count);
  if (e != cuda::kSuccess) {
    int driver = 0, runtime = 0;
    (void)api->DriverGetVersion(&driver);
    (void)api->RuntimeGetVersion(&runtime);
    auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
    if (driver == 0) {
      *why_not = "no CUDA driver: " + cuda::failure(*api, "cudaGetDeviceCount", e);
    } else {
      // With a driver present, cudaErrorInsufficientDriver means it is too old
      // for this runtime: both versions say by how much.
      *why_not = "no usable CUDA driver or device: " + cuda::failure(*api, "cudaGetDeviceCount", e) +
                 " (driver supports CUDA " + version(driver) + ", runtime is " + version(runtime) + ")";
    }
    (void)api->GetLastError();  // the failure was ours; do not leave it to the caller
    return nullptr;
  }
  if (count == 0) {
    *why_not = "no CUDA device";
    return nullptr;
  }
  int device = options.device;
  if (device < 0 && options.stream != nullptr && api->StreamGetDevice != nullptr) {
    // The stream says its device: the one current now may be another (a
    // profiler made before set_device, or for another device's stream).
    if (api->StreamGetDevice(static_cast<Stream>(options.stream), &device) != cuda::kSuccess) {
      device = -1;
      (void)api->GetLastError();
    }
  }
  if (device < 0) {
    e = api->GetDevice(&device);
    if (e != cuda::kSuccess) {
      *why_not = cuda::failure(*api, "cudaGetDevice", e);
      (void)api->GetLastError();
      return nullptr;
    }
  }
  if (device >= count) {
    *why_not = "device " + std::to_string(device) + " was asked for but only " + std::to_string(count) + " are present";
    return nullptr;
  }
  auto timer = std::make_unique<CudaTimer>(*api, device, static_cast<Stream>(options.stream), options.wait);
  if (std::string failure = timer->init(); !failure.empty()) {
    *why_not = failure;
    (void)api->GetLastError();
    return nullptr;
  }
  if (Status s = timer->reserve(2 * options.reserve_jobs); !s.ok()) {
    *why_not = s.message();
    (void)api->GetLastError();
    return nullptr;
  }
  *note = "CUDA events on device " + std::to_string(device) + " (runtime: " + api->source + ")";
  return timer;
}

}  // namespace ppt::shim::detail
