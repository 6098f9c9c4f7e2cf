// A fake CUDA runtime and fake clocks, so that the CUDA timer's real logic
// (anchors, deferred resolution, interpolation, device selection, capture,
// error paths, event reuse) runs and is checked on any machine.
//
// Time is virtual: the fake steady clock advances by `tick_ns` at every
// read (so that polling loops progress) and by advance(). The fake device's
// clock runs at (1 + device_drift) times the host's, and the fake wall clock
// is the steady clock plus an offset that moves at wall_drift (NTP slewing).
//
// A stream runs its work in order: work(stream, ns) adds device work after
// what is queued; an event recorded on it completes when the work before it
// is done. The anchor stream the timer creates has no work, so its events
// complete `latency_ns` after they are recorded (after the device's queued
// work too, with Config::shared_queue).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cuda_api.h"

namespace fake_cuda {

using ppt::shim::detail::cuda::Error;
using ppt::shim::detail::cuda::Event;
using ppt::shim::detail::cuda::Stream;

struct Config {
  int devices = 2;
  int64_t tick_ns = 50;
  int64_t latency_ns = 2'000;
  double device_drift = 50e-6;
  double wall_drift = 0;
  int64_t wall_offset_ns = 1'700'000'000'000'000'000 - 1'000'000'000'000;
  Error device_count_error = 0;  // e.g. cudaErrorInsufficientDriver
  // One hardware queue for every stream of a device (as with
  // CUDA_DEVICE_MAX_CONNECTIONS=1): an event on the anchor stream completes
  // only after the work already queued on the other streams.
  bool shared_queue = false;
  // CUDA's rule after fork(): in a child process every runtime call fails
  // (cudaErrorInitializationError), as the parent's context cannot be used.
  bool fork_rules = false;
};

// Installs the fake runtime and clocks for the scope (one at a time).
class Scope {
 public:
  explicit Scope(Config config = {});
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
};

// The fake steady and wall clocks, also usable without the runtime.
class ClockScope {
 public:
  explicit ClockScope(Config config = {});
  ~ClockScope();
  ClockScope(const ClockScope&) = delete;
  ClockScope& operator=(const ClockScope&) = delete;
};

int64_t steady_ns();              // reads (and ticks) the fake steady clock
int64_t wall_at(int64_t steady);  // the fake wall clock at a steady time
void advance(int64_t ns);         // the host spends ns

Stream make_stream(int device);
void work(Stream stream, int64_t ns);
// The device stops running `stream`'s work: nothing queued on it after this
// completes (a hung kernel).
void hang(Stream stream);
void set_capturing(Stream stream, bool capturing);
// The calling "thread"'s current device and whether it has a context.
void set_current_device(int device);
int current_device();
bool has_context();
bool context_created(int device);

// Makes the next n calls of `function` ("cudaEventRecord"...) fail with `e`.
void fail_next(const std::string& function, Error e, int n = 1);

// How often each function was called.
int64_t calls(const std::string& function);
// Calls that block the host until the device is done: every
// cudaEventSynchronize / cudaStreamSynchronize / cudaDeviceSynchronize, and
// every cudaEventQuery of an event that was already found not ready by the
// query just before it (a spin).
int64_t blocking_calls();
// Queries and synchronisations made while a stream was being captured
// (each would invalidate a real capture).
int64_t capture_violations();
// The steady times at which the events recorded on streams with work (not
// the timer's anchor stream) completed, in record order.
std::vector<int64_t> user_event_times();
int64_t events_alive();

}  // namespace fake_cuda
