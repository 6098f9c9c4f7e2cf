// The CUDA timer's real logic, driven by the fake runtime (fake_cuda.h) on
// any machine: flush never waits for the device, times follow the device
// through anchors, devices and captures are handled, errors are reported.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "fake_cuda.h"
#include "pp_timeline/shim.h"
#include "shim_run.h"

using namespace ppt::shim;

namespace {

using shim_test::Run;

// One step of `jobs` jobs, each `device_ns` of device work while the host
// spends `host_ns` per job.
void step(Profiler& p, fake_cuda::Stream s, int jobs, int64_t device_ns, int64_t host_ns) {
  for (int j = 0; j < jobs; ++j) {
    REQUIRE(p.begin(j % 2 == 0 ? "forward" : "backward", j).ok());
    fake_cuda::work(s, device_ns);
    fake_cuda::advance(host_ns);
    REQUIRE(p.end().ok());
  }
}

}  // namespace

TEST_CASE("fake CUDA: the host never waits for the device, over a whole loop flush included") {
  fake_cuda::Scope fake;
  fake_cuda::Stream s = fake_cuda::make_stream(0);
  Run r;
  Profiler p(r.options(s));
  INFO(p.backend_note());
  REQUIRE(p.backend() == Backend::kCudaEvents);
  constexpr int kSteps = 12, kJobs = 8;
  const int64_t before = fake_cuda::blocking_calls();
  const int64_t syncs = fake_cuda::calls("cudaEventSynchronize");
  for (int k = 0; k < kSteps; ++k) {
    // The device runs 1 ms per job and the host enqueues faster (0.5 ms), so
    // at each flush the step's last event is still ahead of the device.
    step(p, s, kJobs, 1'000'000, 500'000);
    REQUIRE(p.flush(k).ok());
    fake_cuda::advance(5'000'000);  // the host's work between steps
  }
  CHECK(fake_cuda::blocking_calls() - before == 0);
  CHECK(fake_cuda::calls("cudaEventSynchronize") - syncs == 0);
  CHECK(p.stats().flush_waits == 0);
  // Every step but the last was written at a later flush; the last one waits.
  CHECK(r.jobs.size() == static_cast<size_t>((kSteps - 1) * kJobs));
  CHECK(p.stats().steps_pending == 1);
  REQUIRE(p.finish().ok());
  CHECK(r.jobs.size() == static_cast<size_t>(kSteps * kJobs));
  CHECK(p.stats().steps_pending == 0);
}

TEST_CASE("fake CUDA: each job's times are when the device reached its events") {
  const double drift = GENERATE(0.0, 50e-6, -200e-6);
  fake_cuda::Config c;
  c.device_drift = drift;
  c.wall_drift = 300e-6;  // and the wall clock is being slewed
  fake_cuda::Scope fake(c);
  fake_cuda::Stream s = fake_cuda::make_stream(0);
  Run r;
  Profiler p(r.options(s));
  for (int k = 0; k < 6; ++k) {
    step(p, s, 6, 2'000'000, 300'000);
    REQUIRE(p.flush(k).ok());
    fake_cuda::advance(20'000'000);
  }
  REQUIRE(p.finish().ok());
  const std::vector<int64_t> truth = fake_cuda::user_event_times();
  REQUIRE(truth.size() == 2 * r.jobs.size());
  int64_t worst = 0;
  for (size_t i = 0; i < r.jobs.size(); ++i) {
    const int64_t ds = r.jobs[i].start_ns - fake_cuda::wall_at(truth[2 * i]);
    const int64_t de = r.jobs[i].end_ns - fake_cuda::wall_at(truth[2 * i + 1]);
    worst = std::max({worst, ds < 0 ? -ds : ds, de < 0 ? -de : de});
  }
  INFO("device drift " << drift << ", worst error " << worst << " ns");
  CHECK(worst <= 1'000);
}

TEST_CASE("fake CUDA: events are reused; after warm-up no event is created") {
  fake_cuda::Scope fake;
  fake_cuda::Stream s = fake_cuda::make_stream(0);
  Run r;
  Options o = r.options(s);
  o.reserve_jobs = 4;  // make the warm-up grow the pool
  Profiler p(o);
  for (int k = 0; k < 3; ++k) {
    step(p, s, 40, 100'000, 50'000);
    REQUIRE(p.flush(k).ok());
    fake_cuda::advance(10'000'000);
  }
  const int64_t created = fake_cuda::calls("cudaEventCreateWithFlags");
  const int64_t alive = fake_cuda::events_alive();
  for (int k = 3; k < 30; ++k) {
    step(p, s, 40, 100'000, 50'000);
    REQUIRE(p.flush(k).ok());
    fake_cuda::advance(10'000'000);
  }
  CHECK(fake_cuda::calls("cudaEventCreateWithFlags") == created);
  CHECK(fake_cuda::events_alive() == alive);
  REQUIRE(p.finish().ok());
  CHECK(r.jobs.size() == 30u * 40u);
}

TEST_CASE("fake CUDA: a host far ahead of the device waits only when the queue is full") {
  fake_cuda::Config c;
  c.tick_ns = 20'000;  // so that the wait's polling covers the device's lag quickly
  fake_cuda::Scope fake(c);
  fake_cuda::Stream s = fake_cuda::make_stream(0);
  Run r;
  Profiler p(r.options(s));
  for (int k = 0; k < static_cast<int>(kMaxPendingSteps) + 3; ++k) {
    step(p, s, 2, 50'000'000, 10'000);  // 100 ms of device work per step, enqueued at once
    REQUIRE(p.flush(k).ok());
  }
  CHECK(p.stats().flush_waits == 3);
  CHECK(p.stats().steps_pending == static_cast<int64_t>(kMaxPendingSteps));
  REQUIRE(p.finish().ok());
  CHECK(r.jobs.size() == 2u * (kMaxPendingSteps + 3));
}

TEST_CASE("fake CUDA: the destructor writes the steps still waiting for the device") {
  fake_cuda::Scope fake;
  fake_cuda::Stream s = fake_cuda::make_stream(0);
  Run r;
  {
    Profiler p(r.options(s));
    step(p, s, 3, 1'000'000, 10'000);
    REQUIRE(p.flush(0).ok());
    CHECK(r.jobs.empty());  // still ahead of the device
    // The loop ends here, early.
  }
  CHECK(r.jobs.size() == 3);
  CHECK(r.warnings.empty());
}

TEST_CASE("fake CUDA: another current device, and no context made on device 0") {
  fake_cuda::Scope fake;
  CHECK_FALSE(fake_cuda::has_context());
  fake_cuda::Stream s = fake_cuda::make_stream(1);
  Run r;
  Options o = r.options(s);
  o.device = 1;
  Profiler p(o);
  REQUIRE(p.backend() == Backend::kCudaEvents);
  // The thread had chosen no device: it still has none, and device 0 has no
  // context.
  CHECK_FALSE(fake_cuda::has_context());
  CHECK_FALSE(fake_cuda::context_created(0));

  fake_cuda::set_current_device(0);  // the caller works on device 0 meanwhile
  step(p, s, 4, 100'000, 100'000);
  CHECK(fake_cuda::current_device() == 0);  // and keeps it
  fake_cuda::advance(10'000'000);
  REQUIRE(p.flush(0).ok());
  CHECK(r.jobs.size() == 4);
  CHECK(p.stats().device_switches == 8);
}

TEST_CASE("fake CUDA: flush during a graph capture refuses and touches nothing") {
  fake_cuda::Scope fake;
  fake_cuda::Stream s = fake_cuda::make_stream(0);
  Run r;
  Profiler p(r.options(s));
  step(p, s, 2, 100'000, 100'000);
  fake_cuda::advance(10'000'000);
  fake_cuda::set_capturing(s, true);
  const int64_t queries = fake_cuda::calls("cudaEventQuery");
  const Status st = p.flush(0);
  CHECK(st.code() == Code::kCaptureActive);
  CHECK_THAT(st.message(), Catch::Contains("captured into a CUDA graph") && Catch::Contains("cudaStreamEndCapture"));
  CHECK(fake_cuda::capture_violations() == 0);
  CHECK(fake_cuda::calls("cudaEventQuery") == queries);
  fake_cuda::set_capturing(s, false);
  // After the capture the same step flushes normally.
  REQUIRE(p.flush(0).ok());
  REQUIRE(p.finish().ok());
  CHECK(r.jobs.size() == 2);
}

TEST_CASE("fake CUDA: a driver too old for the runtime is named in the note") {
  fake_cuda::Config c;
  c.device_count_error = 35;  // cudaErrorInsufficientDriver
  fake_cuda::Scope fake(c);
  Run r;
  Profiler p(r.options(nullptr));
  CHECK(p.backend() == Backend::kHostClock);
  CHECK_THAT(p.backend_note(),
             Catch::Contains("cudaErrorInsufficientDriver") && Catch::Contains("driver supports CUDA 12.2"));
}

TEST_CASE("fake CUDA: failed calls are errors and the step says what was lost") {
  fake_cuda::Scope fake;
  fake_cuda::Stream s = fake_cuda::make_stream(0);
  Run r;
  Profiler p(r.options(s));
  fake_cuda::fail_next("cudaEventRecord", 400);
  const Status b = p.begin("forward", 0);
  CHECK(b.code() == Code::kCudaError);
  CHECK_THAT(b.message(), Catch::Contains("cudaEventRecord") && Catch::Contains("cudaErrorInvalidResourceHandle"));
  step(p, s, 2, 100'000, 100'000);
  fake_cuda::advance(10'000'000);
  // The anchor's drift check, then the first mark's time.
  fake_cuda::fail_next("cudaEventElapsedTime", 400, 2);
  const Status f = p.flush(0);
  CHECK(f.code() == Code::kCudaError);
  CHECK_THAT(f.message(), Catch::Contains("step 0") && Catch::Contains("2 jobs were dropped"));
  CHECK(p.stats().jobs_dropped == 2);
  CHECK(r.jobs.empty());
  // The next step is timed again.
  step(p, s, 2, 100'000, 100'000);
  fake_cuda::advance(10'000'000);
  REQUIRE(p.flush(1).ok());
  REQUIRE(p.finish().ok());
  CHECK(r.jobs.size() == 2);
}
