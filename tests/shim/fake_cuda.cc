#include "fake_cuda.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <set>
#include <stdexcept>

#include "clock_map.h"

namespace fake_cuda {
namespace cuda = ppt::shim::detail::cuda;

namespace {

struct EventRec {
  int device = 0;
  bool alive = true;
  bool recorded = false;
  bool captured = false;  // recorded during a capture: a graph node, never timed
  bool user = false;      // on a stream with work (not an anchor stream)
  int64_t done_at = 0;    // steady time of completion
};

struct StreamRec {
  int device = 0;
  bool user = false;
  bool capturing = false;
  int64_t tail = 0;  // steady time at which its queued work ends
};

struct State {
  Config config;
  int64_t now = 1'000'000'000'000;  // steady, ns
  int64_t origin = 1'000'000'000'000;
  int current = 0;
  bool context = false;
  std::set<int> contexts;
  std::vector<EventRec> events;
  std::vector<StreamRec> streams;  // index + 1 is the handle; 0 is the legacy stream
  std::map<std::string, int64_t> calls;
  std::map<std::string, std::pair<Error, int>> failures;
  int64_t blocking = 0;
  int64_t capture_violations = 0;
  size_t last_not_ready = SIZE_MAX;  // the user event the last query found not ready
  std::vector<int64_t> user_times;
  pid_t pid = ::getpid();  // the process the scope was made in
};

State* g = nullptr;
ppt::shim::detail::Clocks g_clocks;
cuda::Api g_api;

State& st() {
  if (g == nullptr) throw std::logic_error("fake_cuda used outside a Scope");
  return *g;
}

int64_t device_clock(int64_t steady) {
  const State& s = st();
  return s.origin + static_cast<int64_t>(static_cast<double>(steady - s.origin) * (1.0 + s.config.device_drift));
}

bool count(const char* name, Error* failure) {
  State& s = st();
  ++s.calls[name];
  if (s.config.fork_rules && ::getpid() != s.pid) {
    *failure = 3;  // cudaErrorInitializationError
    return false;
  }
  auto it = s.failures.find(name);
  if (it != s.failures.end() && it->second.second > 0) {
    --it->second.second;
    *failure = it->second.first;
    return false;
  }
  return true;
}

EventRec* event_of(Event e) {
  const auto i = reinterpret_cast<uintptr_t>(e);
  State& s = st();
  if (i == 0 || i > s.events.size() || !s.events[i - 1].alive) return nullptr;
  return &s.events[i - 1];
}
StreamRec* stream_of(Stream h) {
  const auto i = reinterpret_cast<uintptr_t>(h);
  State& s = st();
  if (i == 0 || i > s.streams.size()) return nullptr;
  return &s.streams[i - 1];
}
bool any_capturing() {
  for (const StreamRec& r : st().streams)
    if (r.capturing) return true;
  return false;
}
void use_context() {
  State& s = st();
  s.context = true;
  s.contexts.insert(s.current);
}

#define FAKE_COUNT(name)            \
  do {                              \
    Error f = 0;                    \
    if (!count(name, &f)) return f; \
  } while (false)

Error GetDeviceCount(int* n) {
  FAKE_COUNT("cudaGetDeviceCount");
  if (st().config.device_count_error != 0) return st().config.device_count_error;
  *n = st().config.devices;
  return cuda::kSuccess;
}
Error GetDevice(int* d) {
  FAKE_COUNT("cudaGetDevice");
  *d = st().current;
  return cuda::kSuccess;
}
Error SetDevice(int d) {
  FAKE_COUNT("cudaSetDevice");
  if (d < 0 || d >= st().config.devices) return cuda::kErrorInvalidDevice;
  st().current = d;
  use_context();
  return cuda::kSuccess;
}
Error DriverGetVersion(int* v) {
  *v = 12020;
  return cuda::kSuccess;
}
Error RuntimeGetVersion(int* v) {
  *v = 13000;
  return cuda::kSuccess;
}
Error PriorityRange(int* least, int* greatest) {
  FAKE_COUNT("cudaDeviceGetStreamPriorityRange");
  *least = 0;
  *greatest = -5;
  return cuda::kSuccess;
}
Error StreamCreate(Stream* out, unsigned, int) {
  FAKE_COUNT("cudaStreamCreateWithPriority");
  use_context();
  st().streams.push_back(StreamRec{st().current, false, false, 0});
  *out = reinterpret_cast<Stream>(static_cast<uintptr_t>(st().streams.size()));
  return cuda::kSuccess;
}
Error StreamDestroy(Stream) {
  FAKE_COUNT("cudaStreamDestroy");
  return cuda::kSuccess;
}
Error StreamIsCapturing(Stream h, int* status) {
  FAKE_COUNT("cudaStreamIsCapturing");
  const StreamRec* r = stream_of(h);
  *status = r != nullptr && r->capturing ? 1 : 0;
  return cuda::kSuccess;
}
Error StreamGetDevice(Stream h, int* device) {
  FAKE_COUNT("cudaStreamGetDevice");
  const StreamRec* r = stream_of(h);
  if (r == nullptr) return cuda::kErrorInvalidResourceHandle;
  *device = r->device;
  return cuda::kSuccess;
}
Error EventCreate(Event* out, unsigned) {
  FAKE_COUNT("cudaEventCreateWithFlags");
  use_context();
  EventRec r;
  r.device = st().current;
  st().events.push_back(r);
  *out = reinterpret_cast<Event>(static_cast<uintptr_t>(st().events.size()));
  return cuda::kSuccess;
}
Error EventDestroy(Event e) {
  FAKE_COUNT("cudaEventDestroy");
  EventRec* r = event_of(e);
  if (r == nullptr) return cuda::kErrorInvalidResourceHandle;
  r->alive = false;
  return cuda::kSuccess;
}
Error EventRecord(Event e, Stream h) {
  FAKE_COUNT("cudaEventRecord");
  State& s = st();
  EventRec* r = event_of(e);
  if (r == nullptr) return cuda::kErrorInvalidResourceHandle;
  // An event can only be recorded with its device current.
  if (r->device != s.current) return cuda::kErrorInvalidResourceHandle;
  use_context();
  StreamRec* sr = stream_of(h);
  const bool user = sr == nullptr || sr->user;
  if (sr != nullptr && sr->capturing) {
    r->recorded = false;
    r->captured = true;
    return cuda::kSuccess;
  }
  r->captured = false;
  r->recorded = true;
  r->user = user;
  if (user) {
    const int64_t tail = sr != nullptr ? sr->tail : s.now;
    r->done_at = std::max(tail, s.now);
    s.user_times.push_back(r->done_at);
    s.last_not_ready = SIZE_MAX;
  } else {
    r->done_at = s.now + s.config.latency_ns;
    if (s.config.shared_queue) {
      for (const StreamRec& other : s.streams)
        if (other.user && other.device == r->device) r->done_at = std::max(r->done_at, other.tail);
    }
  }
  return cuda::kSuccess;
}
Error EventQuery(Event e) {
  FAKE_COUNT("cudaEventQuery");
  State& s = st();
  if (any_capturing()) {
    ++s.capture_violations;
    return cuda::kErrorStreamCaptureUnsupported;
  }
  EventRec* r = event_of(e);
  if (r == nullptr) return cuda::kErrorInvalidResourceHandle;
  if (!r->recorded) return cuda::kSuccess;  // as CUDA: nothing to wait for
  const size_t index = static_cast<size_t>(r - s.events.data());
  if (s.now >= r->done_at) {
    if (r->user && s.last_not_ready == index) s.last_not_ready = SIZE_MAX;
    return cuda::kSuccess;
  }
  if (r->user) {
    if (s.last_not_ready == index) ++s.blocking;  // asked again with nothing new: a spin
    s.last_not_ready = index;
  }
  return cuda::kErrorNotReady;
}
Error EventSynchronize(Event e) {
  FAKE_COUNT("cudaEventSynchronize");
  State& s = st();
  ++s.blocking;
  EventRec* r = event_of(e);
  if (r == nullptr) return cuda::kErrorInvalidResourceHandle;
  if (r->recorded) s.now = std::max(s.now, r->done_at);
  return cuda::kSuccess;
}
Error ElapsedTime(float* ms, Event a, Event b) {
  FAKE_COUNT("cudaEventElapsedTime");
  State& s = st();
  if (any_capturing()) {
    ++s.capture_violations;
    return cuda::kErrorStreamCaptureUnsupported;
  }
  EventRec* ra = event_of(a);
  EventRec* rb = event_of(b);
  if (ra == nullptr || rb == nullptr || !ra->recorded || !rb->recorded) {
    return cuda::kErrorInvalidResourceHandle;
  }
  if (s.now < ra->done_at || s.now < rb->done_at) return cuda::kErrorNotReady;
  *ms = static_cast<float>(static_cast<double>(device_clock(rb->done_at) - device_clock(ra->done_at)) / 1e6);
  return cuda::kSuccess;
}
const char* ErrorName(Error e) {
  switch (e) {
    case cuda::kSuccess: return "cudaSuccess";
    case 3: return "cudaErrorInitializationError";
    case cuda::kErrorInsufficientDriver: return "cudaErrorInsufficientDriver";
    case cuda::kErrorNoDevice: return "cudaErrorNoDevice";
    case cuda::kErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cuda::kErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cuda::kErrorNotReady: return "cudaErrorNotReady";
    case cuda::kErrorStreamCaptureUnsupported: return "cudaErrorStreamCaptureUnsupported";
    default: return "cudaErrorUnknown";
  }
}
const char* ErrorString(Error) { return "fake"; }
Error GetLastError() { return cuda::kSuccess; }
int CtxGetCurrent(void** ctx) {
  *ctx = st().context ? reinterpret_cast<void*>(static_cast<uintptr_t>(st().current + 1)) : nullptr;
  return 0;
}
int CtxSetCurrent(void* ctx) {
  st().context = ctx != nullptr;
  return 0;
}

int64_t fake_steady() {
  State& s = st();
  s.now += s.config.tick_ns;
  return s.now;
}
int64_t fake_wall() {
  State& s = st();
  return wall_at(s.now);
}

void install_clocks(const Config& c) {
  if (g != nullptr) throw std::logic_error("one fake_cuda scope at a time");
  g = new State;
  g->config = c;
  g_clocks.steady_ns = fake_steady;
  g_clocks.wall_ns = fake_wall;
  g_clocks.pause_ns = [](int64_t ns) { st().now += ns; };
  ppt::shim::detail::set_clocks_for_testing(&g_clocks);
}
void remove_clocks() {
  ppt::shim::detail::set_clocks_for_testing(nullptr);
  delete g;
  g = nullptr;
}

}  // namespace

Scope::Scope(Config config) {
  install_clocks(config);
  g_api = cuda::Api{};
  g_api.GetDeviceCount = GetDeviceCount;
  g_api.GetDevice = GetDevice;
  g_api.SetDevice = SetDevice;
  g_api.DriverGetVersion = DriverGetVersion;
  g_api.RuntimeGetVersion = RuntimeGetVersion;
  g_api.DeviceGetStreamPriorityRange = PriorityRange;
  g_api.StreamCreateWithPriority = StreamCreate;
  g_api.StreamDestroy = StreamDestroy;
  g_api.StreamIsCapturing = StreamIsCapturing;
  g_api.EventCreateWithFlags = EventCreate;
  g_api.EventDestroy = EventDestroy;
  g_api.EventRecord = EventRecord;
  g_api.EventQuery = EventQuery;
  g_api.EventSynchronize = EventSynchronize;
  g_api.EventElapsedTime = ElapsedTime;
  g_api.GetErrorName = ErrorName;
  g_api.GetErrorString = ErrorString;
  g_api.GetLastError = GetLastError;
  g_api.StreamGetDevice = StreamGetDevice;
  g_api.CtxGetCurrent = CtxGetCurrent;
  g_api.CtxSetCurrent = CtxSetCurrent;
  g_api.source = "fake CUDA runtime";
  cuda::set_cuda_api_for_testing(&g_api);
}
Scope::~Scope() {
  cuda::set_cuda_api_for_testing(nullptr);
  remove_clocks();
}

ClockScope::ClockScope(Config config) { install_clocks(config); }
ClockScope::~ClockScope() { remove_clocks(); }

int64_t steady_ns() { return fake_steady(); }
int64_t wall_at(int64_t steady) {
  const State& s = st();
  return steady + s.config.wall_offset_ns +
         static_cast<int64_t>(static_cast<double>(steady - s.origin) * s.config.wall_drift);
}
void advance(int64_t ns) { st().now += ns; }

Stream make_stream(int device) {
  st().streams.push_back(StreamRec{device, true, false, 0});
  return reinterpret_cast<Stream>(static_cast<uintptr_t>(st().streams.size()));
}
void work(Stream h, int64_t ns) {
  StreamRec* r = stream_of(h);
  if (r == nullptr) throw std::logic_error("fake_cuda::work needs a stream of make_stream");
  r->tail = std::max(r->tail, st().now) + ns;
}
void hang(Stream h) {
  StreamRec* r = stream_of(h);
  if (r == nullptr) throw std::logic_error("fake_cuda::hang needs a stream of make_stream");
  r->tail = std::numeric_limits<int64_t>::max() / 2;
}
void set_capturing(Stream h, bool capturing) {
  StreamRec* r = stream_of(h);
  if (r != nullptr) r->capturing = capturing;
}
void set_current_device(int device) {
  st().current = device;
  use_context();
}
int current_device() { return st().current; }
bool has_context() { return st().context; }
bool context_created(int device) { return st().contexts.count(device) > 0; }
void fail_next(const std::string& function, Error e, int n) { st().failures[function] = {e, n}; }
int64_t calls(const std::string& function) {
  auto it = st().calls.find(function);
  return it == st().calls.end() ? 0 : it->second;
}
int64_t blocking_calls() { return st().blocking; }
int64_t capture_violations() { return st().capture_violations; }
std::vector<int64_t> user_event_times() { return st().user_times; }
int64_t events_alive() {
  int64_t n = 0;
  for (const EventRec& r : st().events) n += r.alive ? 1 : 0;
  return n;
}

}  // namespace fake_cuda
