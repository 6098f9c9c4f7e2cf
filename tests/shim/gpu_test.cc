// The shim and the demo on a CUDA device. Exits 77 (skipped, with a message)
// when the shim was built without CUDA or no device is present, so that
// ctest reports it as skipped on machines without a GPU.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdio>

#ifdef PPT_SHIM_HAVE_CUDA
#include <cuda_runtime_api.h>

#include <chrono>
#include <string>
#include <vector>

#include "demo_check.h"
#include "pp_timeline/shim.h"

using namespace ppt;

namespace {

int64_t wall_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct DeviceFixture {
  cudaStream_t stream = nullptr;
  void* buffer = nullptr;
  static constexpr size_t kBytes = 256u << 20;
  DeviceFixture() {
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
    REQUIRE(cudaMalloc(&buffer, kBytes) == cudaSuccess);
  }
  ~DeviceFixture() {
    cudaStreamSynchronize(stream);
    cudaFree(buffer);
    cudaStreamDestroy(stream);
  }
  void long_work(int memsets) {
    for (int i = 0; i < memsets; ++i) cudaMemsetAsync(buffer, i & 0xff, kBytes, stream);
  }
};

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

}  // namespace

TEST_CASE("On a device the shim times jobs with CUDA events") {
  DeviceFixture d;
  shim::Options o;
  o.stream = d.stream;
  o.sink = [](std::string_view) {};
  shim::Profiler p(o);
  INFO(p.backend_note());
  CHECK(p.backend() == shim::Backend::kCudaEvents);
}

TEST_CASE("A job behind long device work starts when the device reached it") {
  const shim::FlushWait wait = GENERATE(shim::FlushWait::kSynchronize, shim::FlushWait::kPoll);
  DeviceFixture d;
  std::vector<shim::JobTimes> jobs;
  shim::Options o;
  o.stream = d.stream;
  o.wait = wait;
  o.sink = [](std::string_view) {};
  o.on_job = [&](const shim::JobTimes& j) { jobs.push_back(j); };
  shim::Profiler p(o);
  REQUIRE(p.backend() == shim::Backend::kCudaEvents);
  cudaEvent_t before;
  REQUIRE(cudaEventCreate(&before) == cudaSuccess);
  for (int step = 0; step < 5; ++step) {
    d.long_work(40);  // milliseconds of memsets
    cudaEventRecord(before, d.stream);
    const int64_t enqueued = wall_ns();
    REQUIRE(p.begin("forward", step).ok());
    cudaMemsetAsync(d.buffer, 1, 4096, d.stream);
    REQUIRE(p.end().ok());
    // The host sees the long work finish by polling the event before the job.
    int64_t low = wall_ns(), high = 0;
    for (;;) {
      const int64_t t = wall_ns();
      if (cudaEventQuery(before) == cudaSuccess) {
        high = wall_ns();
        break;
      }
      low = t;
    }
    REQUIRE(p.flush(step).ok());
    REQUIRE(p.finish().ok());  // the job's end may still be ahead of the device at flush
    REQUIRE(jobs.size() == static_cast<size_t>(step + 1));
    const shim::JobTimes& j = jobs.back();
    INFO("step " << step << ": start - seen done = " << (j.start_ns - high) / 1000.0 << " us, bracket "
                 << (high - low) / 1000.0 << " us, enqueue was " << (high - enqueued) / 1000.0 << " us before");
    CHECK(high - enqueued > 1'000'000);  // the long work really was long
    CHECK(j.start_ns >= low - 5'000);
    CHECK(j.start_ns <= high + 5'000);
    CHECK(j.end_ns >= j.start_ns);
  }
  cudaEventDestroy(before);
  const shim::Stats s = p.stats();
  CHECK(s.flush_waits <= 5);  // only finish() may wait
  CHECK(s.anchors >= 5);
}

TEST_CASE("On a device flush() never waits, even with the host steps ahead") {
  DeviceFixture d;
  size_t written = 0;
  shim::Options o;
  o.stream = d.stream;
  o.sink = [](std::string_view) {};
  o.on_job = [&](const shim::JobTimes&) { ++written; };
  shim::Profiler p(o);
  REQUIRE(p.backend() == shim::Backend::kCudaEvents);
  for (int step = 0; step < 6; ++step) {
    for (int j = 0; j < 4; ++j) {
      REQUIRE(p.begin("forward", j).ok());
      d.long_work(4);
      REQUIRE(p.end().ok());
    }
    REQUIRE(p.flush(step).ok());
  }
  CHECK(p.stats().flush_waits == 0);
  REQUIRE(p.finish().ok());
  CHECK(written == 24);
}

TEST_CASE("pp-demo on the device keeps the schedule's order and dependencies") {
  demo_check::TempDir dir;
  const auto run =
      demo_check::run_demo({"--log_dir", dir.path(), "--ranks", "4", "--schedule", "1f1b", "--micro-batches", "8",
                            "--steps", "3", "--work_us", "500", "--device", "cuda"});
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  const auto loaded = demo_check::load(dir.path());
  REQUIRE(loaded.error == "");
  const demo::PipelineShape shape{demo::ScheduleKind::k1F1B, 4, 1, 8};
  const auto order = demo_check::check_order(shape, 3, loaded);
  INFO(joined(order));
  CHECK(order.empty());
  const auto deps = demo_check::check_dependencies(shape, loaded);
  INFO(joined(deps));
  CHECK(deps.empty());
}

#endif  // PPT_SHIM_HAVE_CUDA

int main(int argc, char** argv) {
#ifndef PPT_SHIM_HAVE_CUDA
  (void)argc;
  (void)argv;
  std::printf("SKIPPED: the shim was built without CUDA\n");
  return 77;
#else
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    std::printf("SKIPPED: no CUDA device (%s)\n", e != cudaSuccess ? cudaGetErrorName(e) : "0 devices");
    return 77;
  }
  return Catch::Session().run(argc, argv);
#endif
}
