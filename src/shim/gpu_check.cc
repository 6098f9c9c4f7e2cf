// ppt_gpu_check: measures the shim on a real device (scripts/gpu_check.sh).
//
//  1. Host cost of a begin()/end() pair, median and p99 over many jobs, each
//     job a small memset on the stream (goal: median at most 2 us).
//  2. CUDA calls made inside a step, counted by interposing the runtime API:
//     synchronisations, queries, host callbacks and allocations must be 0
//     between the first begin() and the flush(); so must C++ allocations.
//  3. Host time blocked per step, flush included: steps enqueued far ahead of
//     the device; flush() must return without waiting for it (goal 0 waits).
//  4. Fidelity: a job enqueued behind ~20 ms of device work must report a
//     start and an end within 5 us of the moments the device reached the
//     CUDA events recorded just before and just after it (the host polls
//     them), and a duration within 5 us of cudaEventElapsedTime between those
//     events. The enqueue time (what a host clock read in begin() would give)
//     and a host callback (Paddle's method) are printed beside it.
//  5. Drift: the same start error over a run of at least --drift_s seconds
//     (default 10), one job every half second: it must stay within 5 us.
//  6. Threads: 4 threads share one profiler, each timing 500 jobs on its own
//     stream: every job written once, none refused or dropped.
//  7. A device never idle: for --busy_s seconds (default 3) the host keeps
//     the device ~20 ms behind, so that (with CUDA_DEVICE_MAX_CONNECTIONS=1,
//     one hardware queue) no anchor is reached within its patience: no job
//     may be dropped; the anchors given up, the late anchors and the last
//     step's uncertainty are printed.
//
// Every wait has a deadline. stdout is line-buffered.
//
// Exit status: 0 when every goal is met, 1 when one is not (a driver too old
// for the runtime is a failure), 77 when there is no device or no driver
// (the check is skipped), 2 on a usage or setup error.
//
// The CUDA functions below are defined here and forward to the runtime with
// dlsym(RTLD_NEXT): the shim, linked statically into this program, reaches
// these definitions instead of libcudart's, so every call it makes is
// counted without any hook inside the shim itself. --self-test checks that
// this works, on any machine.
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "pp_timeline/log_line.h"
#include "pp_timeline/shim.h"

namespace {

enum Api {
  kStreamSynchronize,
  kDeviceSynchronize,
  kEventSynchronize,
  kEventQuery,
  kStreamQuery,
  kLaunchHostFunc,
  kStreamAddCallback,
  kMalloc,
  kMallocHost,
  kHostAlloc,
  kFree,
  kFreeHost,
  kEventCreate,
  kEventCreateWithFlags,
  kEventRecord,
  kStreamWaitEvent,
  kGetDeviceCount,
  kApiCount
};

const char* const kApiNames[kApiCount] = {"cudaStreamSynchronize",
                                          "cudaDeviceSynchronize",
                                          "cudaEventSynchronize",
                                          "cudaEventQuery",
                                          "cudaStreamQuery",
                                          "cudaLaunchHostFunc",
                                          "cudaStreamAddCallback",
                                          "cudaMalloc",
                                          "cudaMallocHost",
                                          "cudaHostAlloc",
                                          "cudaFree",
                                          "cudaFreeHost",
                                          "cudaEventCreate",
                                          "cudaEventCreateWithFlags",
                                          "cudaEventRecord",
                                          "cudaStreamWaitEvent",
                                          "cudaGetDeviceCount"};

// Calls that must not happen between begin() and flush(): they wait for the
// device, call back to the host, or allocate.
constexpr Api kForbiddenInStep[] = {kStreamSynchronize,
                                    kDeviceSynchronize,
                                    kEventSynchronize,
                                    kEventQuery,
                                    kStreamQuery,
                                    kLaunchHostFunc,
                                    kStreamAddCallback,
                                    kMalloc,
                                    kMallocHost,
                                    kHostAlloc,
                                    kFree,
                                    kFreeHost,
                                    kEventCreate,
                                    kEventCreateWithFlags};

std::atomic<int64_t> g_calls[kApiCount];
std::atomic<int64_t> g_news{0};

void* real_function(const char* name) {
  void* f = dlsym(RTLD_NEXT, name);
  if (f == nullptr) {
    std::fprintf(stderr, "gpu_check: cannot find the runtime's %s: %s\n", name, dlerror());
    std::abort();
  }
  return f;
}

struct Counts {
  int64_t calls[kApiCount];
  int64_t news;
};

Counts snapshot() {
  Counts c{};
  for (int i = 0; i < kApiCount; ++i) c.calls[i] = g_calls[i].load();
  c.news = g_news.load();
  return c;
}

}  // namespace

// Counting every C++ allocation of the process: begin() and end() must make
// none once warm. Every form that malloc backs is replaced, so that none is
// paired with another allocator's delete.
void* operator new(size_t size) {
  g_news.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t size) { return operator new(size); }
void* operator new(size_t size, const std::nothrow_t&) noexcept {
  g_news.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(size == 0 ? 1 : size);
}
void* operator new[](size_t size, const std::nothrow_t& tag) noexcept { return operator new(size, tag); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

#define PPT_FORWARD(api, name, params, args)                                    \
  extern "C" cudaError_t name params {                                          \
    g_calls[api].fetch_add(1, std::memory_order_relaxed);                       \
    static auto real = reinterpret_cast<decltype(&name)>(real_function(#name)); \
    return real args;                                                           \
  }

PPT_FORWARD(kStreamSynchronize, cudaStreamSynchronize, (cudaStream_t s), (s))
PPT_FORWARD(kDeviceSynchronize, cudaDeviceSynchronize, (void), ())
PPT_FORWARD(kEventSynchronize, cudaEventSynchronize, (cudaEvent_t e), (e))
PPT_FORWARD(kEventQuery, cudaEventQuery, (cudaEvent_t e), (e))
PPT_FORWARD(kStreamQuery, cudaStreamQuery, (cudaStream_t s), (s))
PPT_FORWARD(kLaunchHostFunc, cudaLaunchHostFunc, (cudaStream_t s, cudaHostFn_t fn, void* user), (s, fn, user))
PPT_FORWARD(kStreamAddCallback, cudaStreamAddCallback,
            (cudaStream_t s, cudaStreamCallback_t cb, void* user, unsigned int flags), (s, cb, user, flags))
PPT_FORWARD(kMalloc, cudaMalloc, (void** p, size_t n), (p, n))
PPT_FORWARD(kMallocHost, cudaMallocHost, (void** p, size_t n), (p, n))
PPT_FORWARD(kHostAlloc, cudaHostAlloc, (void** p, size_t n, unsigned int flags), (p, n, flags))
PPT_FORWARD(kFree, cudaFree, (void* p), (p))
PPT_FORWARD(kFreeHost, cudaFreeHost, (void* p), (p))
PPT_FORWARD(kEventCreate, cudaEventCreate, (cudaEvent_t * e), (e))
PPT_FORWARD(kEventCreateWithFlags, cudaEventCreateWithFlags, (cudaEvent_t * e, unsigned int f), (e, f))
PPT_FORWARD(kEventRecord, cudaEventRecord, (cudaEvent_t e, cudaStream_t s), (e, s))
PPT_FORWARD(kStreamWaitEvent, cudaStreamWaitEvent, (cudaStream_t s, cudaEvent_t e, unsigned int flags), (s, e, flags))
PPT_FORWARD(kGetDeviceCount, cudaGetDeviceCount, (int* n), (n))

namespace {

using ppt::shim::Profiler;

int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
int64_t wall_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "gpu_check: %s failed: %s (%s)\n", what, cudaGetErrorName(e), cudaGetErrorString(e));
  return false;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())));
  return v[i];
}

// The start and end a captured job line carries.
bool line_times(std::string_view line, int64_t* start, int64_t* end) {
  using namespace ppt::log_line;
  const size_t s = line.find(kStartKey);
  const size_t e = line.find(kEndKey);
  if (s == std::string_view::npos || e == std::string_view::npos || e < s) return false;
  const std::string_view start_text = line.substr(s + kStartKey.size(), e - s - kStartKey.size());
  const std::string_view end_text = line.substr(e + kEndKey.size());
  return parse_ms_to_ns(start_text, start) == TimeParse::kOk && parse_ms_to_ns(end_text, end) == TimeParse::kOk;
}

struct Args {
  int jobs_per_step = 2000;
  int steps = 4;
  int reps = 20;
  double long_ms = 20;
  double drift_s = 10;
  double busy_s = 3;
  bool self_test = false;
};

bool parse_args(int argc, char** argv, Args* a) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&](const char* name) -> const char* {
      if (arg != name || i + 1 >= argc) return nullptr;
      return argv[++i];
    };
    if (arg == "--self-test") {
      a->self_test = true;
    } else if (const char* v = value("--jobs")) {
      a->jobs_per_step = std::atoi(v);
    } else if (const char* v2 = value("--steps")) {
      a->steps = std::atoi(v2);
    } else if (const char* v3 = value("--reps")) {
      a->reps = std::atoi(v3);
    } else if (const char* v4 = value("--long_ms")) {
      a->long_ms = std::atof(v4);
    } else if (const char* v5 = value("--drift_s")) {
      a->drift_s = std::atof(v5);
    } else if (const char* v6 = value("--busy_s")) {
      a->busy_s = std::atof(v6);
    } else {
      std::fprintf(stderr,
                   "usage: ppt_gpu_check [--jobs N] [--steps S] [--reps R] [--long_ms MS] "
                   "[--drift_s S] [--busy_s S] [--self-test]\n");
      return false;
    }
  }
  return a->jobs_per_step > 0 && a->steps > 0 && a->reps > 0 && a->long_ms > 0 && a->drift_s >= 0 && a->busy_s >= 0;
}

// Without a device: the binary runs and the interposition sees the shim's
// calls. Exit 0 when it does.
int self_test() {
  const int64_t before = g_calls[kGetDeviceCount].load();
  ppt::shim::Options o;
  o.sink = [](std::string_view) {};
  Profiler p(o);
  const int64_t seen = g_calls[kGetDeviceCount].load() - before;
  std::printf("self-test: backend: %s\n", p.backend_note().c_str());
  std::printf("self-test: the shim's cudaGetDeviceCount calls seen by the interposer: %lld\n",
              static_cast<long long>(seen));
  if (seen < 1) {
    std::printf("self-test: FAIL: the interposer does not see the shim's CUDA calls\n");
    return 1;
  }
  std::printf("self-test: ok\n");
  return 0;
}

struct Device {
  cudaStream_t stream = nullptr;
  void* big = nullptr;  // the long work's buffer
  size_t big_bytes = 256u << 20;
  void* small = nullptr;  // each job's own work
  size_t small_bytes = 4096;
  int long_memsets = 1;
};

// How many memsets of the big buffer make `ms` of device work.
bool calibrate(Device& d, double ms) {
  cudaEvent_t a, b;
  if (!check(cudaEventCreate(&a), "cudaEventCreate") || !check(cudaEventCreate(&b), "cudaEventCreate")) return false;
  const int n = 10;
  cudaMemsetAsync(d.big, 1, d.big_bytes, d.stream);  // warm
  cudaEventRecord(a, d.stream);
  for (int i = 0; i < n; ++i) cudaMemsetAsync(d.big, i, d.big_bytes, d.stream);
  cudaEventRecord(b, d.stream);
  if (!check(cudaEventSynchronize(b), "calibration")) return false;
  float elapsed = 0;
  cudaEventElapsedTime(&elapsed, a, b);
  const double per = elapsed / n;
  d.long_memsets = std::max(1, static_cast<int>(ms / per + 0.5));
  std::printf("calibration: a %zu MiB memset takes %.1f us; %d of them make the long work\n", d.big_bytes >> 20,
              per * 1000, d.long_memsets);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return true;
}

void enqueue_long_work(const Device& d) {
  for (int i = 0; i < d.long_memsets; ++i) cudaMemsetAsync(d.big, i & 0xff, d.big_bytes, d.stream);
}

// The job types the steps cycle through.
const char* const kJobTypes[] = {"forward", "backward_b", "backward_w", "forward1"};

// Warm-up step: sizes the event pool and the job list.
bool warm_up(Profiler& p, const Device& d, const Args& a, int64_t* step) {
  for (int j = 0; j < a.jobs_per_step; ++j) {
    (void)p.begin(kJobTypes[j % 4], j);
    cudaMemsetAsync(d.small, j & 0xff, d.small_bytes, d.stream);
    (void)p.end();
  }
  if (auto s = p.flush((*step)++); !s.ok()) {
    std::printf("FAIL: warm-up flush: %s\n", s.message().c_str());
    return false;
  }
  if (auto s = p.finish(); !s.ok()) {
    std::printf("FAIL: warm-up finish: %s\n", s.message().c_str());
    return false;
  }
  return true;
}

// What the timed steps measured: each begin()/end() pair's host cost, the
// CUDA calls and allocations inside the steps, each flush's time.
struct StepCosts {
  std::vector<double> costs;
  Counts in_steps{};
  int64_t growths = 0;
  std::vector<double> flush_us;
};

// The host cost of each begin()/end() pair of one step.
bool time_jobs(Profiler& p, const Device& d, const Args& a, std::vector<double>& costs) {
  bool ok = true;
  for (int j = 0; j < a.jobs_per_step; ++j) {
    const int64_t t0 = steady_ns();
    ppt::shim::Status st = p.begin(kJobTypes[j % 4], j);
    const int64_t t1 = steady_ns();
    cudaMemsetAsync(d.small, j & 0xff, d.small_bytes, d.stream);
    const int64_t t2 = steady_ns();
    ppt::shim::Status st2 = p.end();
    const int64_t t3 = steady_ns();
    if (!st.ok() || !st2.ok()) ok = false;
    costs.push_back(static_cast<double>((t1 - t0) + (t3 - t2)) / 1000.0);
  }
  return ok;
}

bool time_steps(Profiler& p, std::vector<std::string>& lines, const Device& d, const Args& a, int64_t* step,
                StepCosts& m) {
  bool ok = true;
  m.costs.reserve(static_cast<size_t>(a.jobs_per_step) * a.steps);
  for (int s = 0; s < a.steps; ++s) {
    lines.clear();
    const int64_t growths_before = p.stats().hot_path_growths;
    const Counts c0 = snapshot();
    if (!time_jobs(p, d, a, m.costs)) ok = false;
    const Counts c1 = snapshot();
    m.growths += p.stats().hot_path_growths - growths_before;
    for (int i = 0; i < kApiCount; ++i) m.in_steps.calls[i] += c1.calls[i] - c0.calls[i];
    m.in_steps.news += c1.news - c0.news;
    const int64_t f0 = steady_ns();
    if (auto st = p.flush((*step)++); !st.ok()) {
      std::printf("FAIL: flush: %s\n", st.message().c_str());
      ok = false;
    }
    m.flush_us.push_back(static_cast<double>(steady_ns() - f0) / 1000.0);
  }
  return ok;
}

// The baseline: two bare cudaEventRecord calls per job, the floor of any
// CUDA-event timer, around the same work.
bool bare_costs(const Device& d, size_t jobs, std::vector<double>& bare) {
  cudaEvent_t e0, e1;
  if (!check(cudaEventCreateWithFlags(&e0, cudaEventDefault), "cudaEventCreate") ||
      !check(cudaEventCreateWithFlags(&e1, cudaEventDefault), "cudaEventCreate")) {
    return false;
  }
  bare.reserve(jobs);
  for (size_t j = 0; j < jobs; ++j) {
    const int64_t t0 = steady_ns();
    cudaEventRecord(e0, d.stream);
    const int64_t t1 = steady_ns();
    cudaMemsetAsync(d.small, static_cast<int>(j & 0xff), d.small_bytes, d.stream);
    const int64_t t2 = steady_ns();
    cudaEventRecord(e1, d.stream);
    const int64_t t3 = steady_ns();
    bare.push_back(static_cast<double>((t1 - t0) + (t3 - t2)) / 1000.0);
  }
  cudaStreamSynchronize(d.stream);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  return true;
}

// Section 1: the host cost against its goal and the baseline.
bool report_host_cost(const StepCosts& m, const std::vector<double>& bare, const Args& a) {
  const double median = percentile(m.costs, 0.5);
  const double p99 = percentile(m.costs, 0.99);
  const double bare_median = percentile(bare, 0.5);
  std::printf("\n== host cost of a begin()/end() pair (%zu jobs) ==\n", m.costs.size());
  std::printf("median %.3f us, p99 %.3f us, max %.3f us (goal: median <= 2 us)\n", median, p99,
              percentile(m.costs, 1.0));
  std::printf(
      "baseline, two bare cudaEventRecord: median %.3f us, p99 %.3f us; the shim adds "
      "%.3f us\n",
      bare_median, percentile(bare, 0.99), median - bare_median);
  std::printf("flush of %d jobs: median %.1f us\n", a.jobs_per_step, percentile(m.flush_us, 0.5));
  if (median > 2.0) {
    std::printf("FAIL: median host cost above 2 us\n");
    return false;
  }
  return true;
}

// Section 2: the CUDA calls and allocations inside the steps (goal 0).
bool report_calls_in_steps(const StepCosts& m, const Args& a) {
  std::printf("\n== CUDA calls inside %d steps of %d jobs (between begin() and flush()) ==\n", a.steps,
              a.jobs_per_step);
  int64_t forbidden = 0;
  for (Api api : kForbiddenInStep) forbidden += m.in_steps.calls[api];
  for (int i = 0; i < kApiCount; ++i) {
    if (m.in_steps.calls[i] != 0) {
      std::printf("  %-26s %lld\n", kApiNames[i], static_cast<long long>(m.in_steps.calls[i]));
    }
  }
  std::printf("synchronisations, queries, callbacks, allocations: %lld (goal 0)\n", static_cast<long long>(forbidden));
  std::printf("C++ allocations: %lld, storage growths: %lld (goal 0)\n", static_cast<long long>(m.in_steps.news),
              static_cast<long long>(m.growths));
  const int64_t records = m.in_steps.calls[kEventRecord];
  std::printf("cudaEventRecord per job: %.2f (expected 2)\n",
              static_cast<double>(records) / (static_cast<double>(a.jobs_per_step) * a.steps));
  if (forbidden != 0 || m.in_steps.news != 0 || m.growths != 0) {
    std::printf("FAIL: the hot path synchronised, called back or allocated\n");
    return false;
  }
  return true;
}

bool host_cost(Profiler& p, std::vector<std::string>& lines, const Device& d, const Args& a, int64_t* step) {
  if (!warm_up(p, d, a, step)) return false;
  StepCosts m;
  bool ok = time_steps(p, lines, d, a, step, m);
  std::vector<double> bare;
  if (!bare_costs(d, m.costs.size(), bare)) return false;
  if (!report_host_cost(m, bare, a)) ok = false;
  if (!report_calls_in_steps(m, a)) ok = false;
  const ppt::shim::Stats st = p.stats();
  std::printf(
      "in flush, over all steps so far: %lld waits, %lld queries, %lld anchors; last "
      "anchor +/- %lld ns\n",
      static_cast<long long>(st.flush_waits), static_cast<long long>(st.flush_polls),
      static_cast<long long>(st.anchors), static_cast<long long>(st.last_anchor_uncertainty_ns));
  return ok;
}

// Polls `e` until done, for at most 5 s; returns the wall time of the
// completion as the midpoint of the last poll that saw it pending and the
// poll that saw it done, or -1 after the deadline or on an error.
int64_t watch(cudaEvent_t e, int64_t* half_width) {
  int64_t low = wall_ns();
  const int64_t deadline = low + 5'000'000'000;
  for (;;) {
    const int64_t before = wall_ns();
    const cudaError_t r = cudaEventQuery(e);
    if (r == cudaSuccess) {
      const int64_t high = wall_ns();
      *half_width = (high - low) / 2;
      return low + (high - low) / 2;
    }
    if (r != cudaErrorNotReady || before > deadline) {
      std::printf("FAIL: waiting for a reference event: %s\n",
                  r != cudaErrorNotReady ? cudaGetErrorName(r) : "no completion within 5 s");
      return -1;
    }
    low = before;
  }
}

// The longest a flush() of 8 jobs may take on the host with the device far
// behind: a few queries, an anchor (or one given up after 200 us), the lines.
constexpr double kFlushBoundUs = 2000;

// Blocked host time per step: steps enqueued behind device work, so that the
// host is ahead of the device at every flush. flush() must not wait for it.
bool blocked_per_step(Profiler& p, std::vector<std::string>& lines, const Device& d, int64_t* step) {
  const int steps = 20;
  const ppt::shim::Stats before = p.stats();
  std::vector<double> flush_us, step_host_us;
  for (int s = 0; s < steps; ++s) {
    const int64_t t0 = steady_ns();
    for (int j = 0; j < 8; ++j) {
      (void)p.begin(j % 2 == 0 ? "forward" : "backward", j);
      for (int k = 0; k < std::max(1, d.long_memsets / 8); ++k) cudaMemsetAsync(d.big, k & 0xff, d.big_bytes, d.stream);
      (void)p.end();
    }
    const int64_t f0 = steady_ns();
    if (auto st = p.flush((*step)++); !st.ok()) {
      std::printf("FAIL: flush: %s\n", st.message().c_str());
      return false;
    }
    const int64_t f1 = steady_ns();
    flush_us.push_back(static_cast<double>(f1 - f0) / 1000.0);
    step_host_us.push_back(static_cast<double>(f1 - t0) / 1000.0);
  }
  const ppt::shim::Stats mid = p.stats();
  if (auto st = p.finish(); !st.ok()) {
    std::printf("FAIL: finish: %s\n", st.message().c_str());
    return false;
  }
  lines.clear();
  const int64_t waits = mid.flush_waits - before.flush_waits;
  std::printf("\n== host time per step, flush included (%d steps of 8 jobs, the device behind) ==\n", steps);
  std::printf("flush(): median %.1f us, max %.1f us; whole step on the host: median %.1f us\n",
              percentile(flush_us, 0.5), percentile(flush_us, 1.0), percentile(step_host_us, 0.5));
  std::printf(
      "waits for the device inside flush(): %lld (goal 0); steps still queued at the "
      "last flush: %lld\n",
      static_cast<long long>(waits), static_cast<long long>(mid.steps_pending));
  // The flush's own time, measured here rather than taken from the shim's
  // counter: an anchor queued behind the device's work (one hardware queue)
  // must be given up, not waited for.
  const double worst_flush = percentile(flush_us, 1.0);
  std::printf("flush() bound: max %.1f us (goal <= %.0f us); anchors given up: %lld\n", worst_flush, kFlushBoundUs,
              static_cast<long long>(mid.anchors_rejected - before.anchors_rejected));
  if (waits != 0) {
    std::printf("FAIL: flush() waited for the device\n");
    return false;
  }
  if (worst_flush > kFlushBoundUs) {
    std::printf("FAIL: a flush() took longer than %.0f us\n", kFlushBoundUs);
    return false;
  }
  return true;
}

void CUDART_CB record_wall(void* slot) { *static_cast<int64_t*>(slot) = wall_ns(); }

bool fidelity(Profiler& p, std::vector<std::string>& lines, const Device& d, const Args& a, int64_t* step) {
  cudaEvent_t e, after;
  if (!check(cudaEventCreate(&e), "cudaEventCreate") || !check(cudaEventCreate(&after), "cudaEventCreate"))
    return false;
  std::vector<double> shim_err, end_err, duration_err, enqueue_err, callback_err, ref_width;
  bool ok = true;
  for (int r = 0; r < a.reps; ++r) {
    enqueue_long_work(d);
    cudaEventRecord(e, d.stream);
    const int64_t enqueued = wall_ns();
    (void)p.begin("forward", r);
    // A job of ~1/20 of the long work, so that its end is apart from its start.
    for (int k = 0; k < std::max(1, d.long_memsets / 20); ++k) cudaMemsetAsync(d.big, k & 0xff, d.big_bytes, d.stream);
    (void)p.end();
    cudaEventRecord(after, d.stream);
    int64_t half = 0, half_after = 0;
    const int64_t reached = watch(e, &half);
    const int64_t reached_after = watch(after, &half_after);
    if (reached < 0 || reached_after < 0) return false;
    float truth_ms = 0;
    cudaEventElapsedTime(&truth_ms, e, after);
    lines.clear();
    if (auto s = p.flush((*step)++); !s.ok()) {
      std::printf("FAIL: flush: %s\n", s.message().c_str());
      return false;
    }
    int64_t start = 0, end = 0;
    if (lines.size() != 1 || !line_times(lines[0], &start, &end)) {
      std::printf("FAIL: the step did not write one readable job line (%zu lines)\n", lines.size());
      return false;
    }
    shim_err.push_back(static_cast<double>(start - reached) / 1000.0);
    end_err.push_back(static_cast<double>(end - reached_after) / 1000.0);
    duration_err.push_back(static_cast<double>(end - start) / 1000.0 - truth_ms * 1000.0);
    enqueue_err.push_back(static_cast<double>(enqueued - reached) / 1000.0);
    ref_width.push_back(static_cast<double>(half) / 1000.0);
    if (start < reached - half - 5'000) ok = false;
  }
  // Paddle's method, for comparison: a host callback reading the clock.
  for (int r = 0; r < a.reps; ++r) {
    int64_t called = 0;
    enqueue_long_work(d);
    cudaEventRecord(e, d.stream);
    cudaLaunchHostFunc(d.stream, record_wall, &called);
    int64_t half = 0;
    const int64_t reached = watch(e, &half);
    if (reached < 0) return false;
    cudaStreamSynchronize(d.stream);
    callback_err.push_back(static_cast<double>(called - reached) / 1000.0);
  }
  cudaEventDestroy(e);
  cudaEventDestroy(after);
  auto max_abs = [](const std::vector<double>& v) {
    double m = 0;
    for (double x : v) m = std::max(m, x < 0 ? -x : x);
    return m;
  };
  std::printf("\n== start-time fidelity behind %.0f ms of device work (%d reps) ==\n", a.long_ms, a.reps);
  std::printf("reference: the host polls an event placed just before the job (+/- %.2f us median)\n",
              percentile(ref_width, 0.5));
  std::printf("shim start - reference:       median %+9.2f us, max |.| %9.2f us (goal <= 5 us)\n",
              percentile(shim_err, 0.5), max_abs(shim_err));
  std::printf("shim end - reference:         median %+9.2f us, max |.| %9.2f us (goal <= 5 us)\n",
              percentile(end_err, 0.5), max_abs(end_err));
  std::printf("shim duration - elapsed time: median %+9.2f us, max |.| %9.2f us (goal <= 5 us)\n",
              percentile(duration_err, 0.5), max_abs(duration_err));
  std::printf("enqueue time - reference:     median %+9.2f us (a host clock read in begin())\n",
              percentile(enqueue_err, 0.5));
  std::printf("host callback - reference:    median %+9.2f us, max |.| %9.2f us (Paddle's timer)\n",
              percentile(callback_err, 0.5), max_abs(callback_err));
  if (max_abs(shim_err) > 5.0 || max_abs(end_err) > 5.0 || max_abs(duration_err) > 5.0) {
    std::printf("FAIL: a shim start, end or duration is more than 5 us away from the device's\n");
    ok = false;
  }
  if (!ok) std::printf("FAIL: start-time fidelity\n");
  return ok;
}

// The start error of a job every half second over drift_s seconds, all in
// one step: the flushes' anchors are drift_s apart and the jobs lie between
// them, so only the anchors the shim takes on its own (at a mark, when the
// last is stale) keep them from the drift over the distance to a flush.
bool drift(Profiler& p, std::vector<std::string>& lines, const Device& d, const Args& a, int64_t* step) {
  if (a.drift_s <= 0) return true;
  lines.clear();
  if (auto s = p.flush((*step)++); !s.ok() || !p.finish().ok()) {
    std::printf("FAIL: flush before the drift run: %s\n", s.message().c_str());
    return false;
  }
  lines.clear();
  std::vector<int64_t> reached;
  const int64_t anchors_before = p.stats().anchors;
  const int64_t t0 = steady_ns();
  cudaEvent_t e;
  if (!check(cudaEventCreate(&e), "cudaEventCreate")) return false;
  while (steady_ns() - t0 < static_cast<int64_t>(a.drift_s * 1e9)) {
    cudaEventRecord(e, d.stream);
    (void)p.begin("forward", static_cast<int64_t>(reached.size()));
    cudaMemsetAsync(d.small, 1, d.small_bytes, d.stream);
    (void)p.end();
    int64_t half = 0;
    const int64_t r = watch(e, &half);
    if (r < 0) return false;
    reached.push_back(r);
    const int64_t next = steady_ns() + 500'000'000;
    while (steady_ns() < next) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  cudaEventDestroy(e);
  if (auto s = p.flush((*step)++); !s.ok() || !p.finish().ok()) {
    std::printf("FAIL: flush: %s\n", s.message().c_str());
    return false;
  }
  if (lines.size() != reached.size()) {
    std::printf("FAIL: %zu job lines for %zu jobs\n", lines.size(), reached.size());
    return false;
  }
  std::vector<double> err;
  for (size_t i = 0; i < lines.size(); ++i) {
    int64_t start = 0, end = 0;
    if (!line_times(lines[i], &start, &end)) {
      std::printf("FAIL: unreadable job line: %s\n", lines[i].c_str());
      return false;
    }
    err.push_back(static_cast<double>(start - reached[i]) / 1000.0);
  }
  const double elapsed = static_cast<double>(steady_ns() - t0) / 1e9;
  const double first = err.front(), last = err.back();
  double worst = 0;
  for (double x : err) worst = std::max(worst, x < 0 ? -x : x);
  const ppt::shim::Stats st = p.stats();
  std::printf("\n== drift: one step of %.1f s, a job every 0.5 s between its flushes (%zu jobs) ==\n", elapsed,
              err.size());
  std::printf(
      "start error: first %+.2f us, last %+.2f us, max |.| %.2f us (goal <= 5 us); "
      "anchors taken inside the step: %lld; step uncertainty %lld ns\n",
      first, last, worst, static_cast<long long>(st.anchors - anchors_before - 1),
      static_cast<long long>(st.last_step_uncertainty_ns));
  if (worst > 5.0) {
    std::printf("FAIL: a job between far-apart flushes was off by more than 5 us\n");
    return false;
  }
  return true;
}

// 4 threads share one profiler, each with its own stream of the device.
bool threads_sharing(const Device& d) {
  constexpr int kThreads = 4;
  constexpr int kJobs = 500;
  std::vector<std::string> lines;
  ppt::shim::Options o;
  o.stream = d.stream;
  o.max_jobs_per_step = 2 * kThreads * kJobs;
  o.sink = [&lines](std::string_view line) { lines.emplace_back(line); };
  Profiler p(o);
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      cudaSetDevice(0);
      cudaStream_t s = nullptr;
      if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
        ++errors;
        return;
      }
      const std::string type = "forward" + std::to_string(t);
      for (int k = 0; k < kJobs; ++k) {
        if (!p.begin_on(s, type, k).ok()) ++errors;
        cudaMemsetAsync(d.small, k, d.small_bytes, s);
        if (!p.end().ok()) ++errors;
      }
      cudaStreamSynchronize(s);
      cudaStreamDestroy(s);
    });
  }
  for (auto& t : threads) t.join();
  const ppt::shim::Status f = p.flush(0);
  const ppt::shim::Status fin = p.finish();
  const ppt::shim::Stats st = p.stats();
  std::printf("\n== threads: %d threads share one profiler, %d jobs each on its own stream ==\n", kThreads, kJobs);
  std::printf("lines %zu of %d, errors %d, dropped %lld\n", lines.size(), kThreads * kJobs, errors.load(),
              static_cast<long long>(st.jobs_dropped));
  if (!f.ok() || !fin.ok() || errors != 0 || lines.size() != static_cast<size_t>(kThreads * kJobs)) {
    std::printf("FAIL: a shared profiler lost or refused jobs: %s %s\n", f.message().c_str(), fin.message().c_str());
    return false;
  }
  return true;
}

// The device kept busy for a.busy_s seconds: every flush finds it ~20 ms
// behind, so an anchor on one hardware queue never comes back in time.
bool never_idle(const Device& d, const Args& a) {
  std::vector<std::string> lines;
  ppt::shim::Options o;
  o.stream = d.stream;
  o.sink = [&lines](std::string_view line) { lines.emplace_back(line); };
  std::vector<std::string> warnings;
  o.warning_sink = [&warnings](std::string_view w) { warnings.emplace_back(w); };
  enqueue_long_work(d);  // busy before the profiler is made
  Profiler p(o);
  const int64_t t0 = steady_ns();
  int64_t step = 0, jobs = 0;
  bool ok = true;
  while (steady_ns() - t0 < static_cast<int64_t>(a.busy_s * 1e9)) {
    for (int k = 0; k < 4; ++k) {
      ok = p.begin("forward", k).ok() && ok;
      enqueue_long_work(d);
      ok = p.end().ok() && ok;
      ++jobs;
    }
    ok = p.flush(step++).ok() && ok;
    // Sleep a little less than the device's work, so that it stays behind.
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(a.long_ms * 3.5));
  }
  ok = p.finish(30'000).ok() && ok;
  const ppt::shim::Stats st = p.stats();
  std::printf("\n== a device never idle for %.1f s (%lld steps) ==\n", a.busy_s, static_cast<long long>(step));
  std::printf(
      "lines %zu of %lld, dropped %lld; anchors taken %lld, given up %lld, late %lld; last step's uncertainty %lld "
      "ns\n",
      lines.size(), static_cast<long long>(jobs), static_cast<long long>(st.jobs_dropped),
      static_cast<long long>(st.anchors), static_cast<long long>(st.anchors_rejected),
      static_cast<long long>(st.late_anchors), static_cast<long long>(st.last_step_uncertainty_ns));
  for (const auto& w : warnings) std::printf("warning: %s\n", w.c_str());
  if (!ok || st.jobs_dropped != 0 || lines.size() != static_cast<size_t>(jobs)) {
    std::printf("FAIL: jobs were refused or dropped on a device that is never idle\n");
    return false;
  }
  return true;
}

// Whether libcuda.so.1 (the driver) can be loaded: without it there is no
// device to check; with it, a runtime error is a failure.
bool driver_present() {
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) return false;
  dlclose(h);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  Args a;
  if (!parse_args(argc, argv, &a)) return 2;
  if (a.self_test) return self_test();

  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  if (!driver_present() || e == cudaErrorNoDevice || (e == cudaSuccess && count == 0)) {
    std::printf("gpu_check: skipped: no CUDA device or driver (%s)\n",
                e != cudaSuccess ? cudaGetErrorName(e) : "0 devices");
    return 77;
  }
  if (e != cudaSuccess) {
    // A driver is there but the runtime cannot use it: e.g. a driver too old
    // for this runtime (cudaErrorInsufficientDriver). That is a failure.
    std::printf("FAIL: the CUDA runtime %d.%d cannot use the driver (supports CUDA %d.%d): %s (%s)\n", runtime / 1000,
                runtime % 1000 / 10, driver / 1000, driver % 1000 / 10, cudaGetErrorName(e), cudaGetErrorString(e));
    return 1;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  std::printf("device 0: %s, %d devices\n", prop.name, count);

  Device d;
  if (!check(cudaSetDevice(0), "cudaSetDevice") ||
      !check(cudaStreamCreateWithFlags(&d.stream, cudaStreamNonBlocking), "cudaStreamCreate") ||
      !check(cudaMalloc(&d.big, d.big_bytes), "cudaMalloc") ||
      !check(cudaMalloc(&d.small, d.small_bytes), "cudaMalloc")) {
    return 2;
  }
  if (!calibrate(d, a.long_ms)) return 2;

  std::vector<std::string> lines;
  lines.reserve(static_cast<size_t>(a.jobs_per_step) + 4);
  ppt::shim::Options o;
  o.stream = d.stream;
  o.reserve_jobs = 64;  // let the warm-up step grow it
  o.max_jobs_per_step = static_cast<size_t>(a.jobs_per_step);
  o.sink = [&lines](std::string_view line) { lines.emplace_back(line); };
  Profiler p(o);
  std::printf("shim: %s\n", p.backend_note().c_str());
  if (p.backend() != ppt::shim::Backend::kCudaEvents) {
    std::printf("FAIL: the shim did not choose CUDA events\n");
    return 1;
  }
  int64_t step = 0;
  bool ok = host_cost(p, lines, d, a, &step);
  lines.clear();
  ok = blocked_per_step(p, lines, d, &step) && ok;
  lines.clear();
  // One step at a time from here: each flush is followed by finish(), which
  // writes the step (the device is done with it by then).
  ok = fidelity(p, lines, d, a, &step) && ok;
  lines.clear();
  ok = drift(p, lines, d, a, &step) && ok;
  ok = threads_sharing(d) && ok;
  ok = never_idle(d, a) && ok;
  std::printf("\n%s\n", ok ? "gpu_check: all goals met" : "gpu_check: some goals NOT met");
  return ok ? 0 : 1;
}
