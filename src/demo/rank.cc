// One rank of the demo: its stage's job order, step after step, each job timed
// by the shim, waiting for its input from the neighbour stage before it
// begins and sending its output after it ends, so that the gaps in the
// timeline are real waits.
#include <glog/logging.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <memory>
#include <string>
#include <vector>

#include "demo.h"
#include "pp_timeline/shim.h"
#include "transport.h"
#include "work.h"

namespace ppt::demo {
namespace {

// A job's work on `stage`: --work_us is the stage's forward for one
// micro-batch, so a chunk job (VPP) does 1/V of it; the optimizer updates the
// whole stage once. --stage-scale multiplies all of the stage's work.
double work_of(const DemoConfig& c, JobKind kind, int stage) {
  const double scale = stage < static_cast<int>(c.stage_scale.size()) ? c.stage_scale[stage] : 1.0;
  const double chunk = c.work_us * scale / std::max(c.shape.chunks, 1);
  switch (kind) {
    case JobKind::kForward: return chunk;
    case JobKind::kBackward: return 2 * chunk;
    case JobKind::kBackwardB: return chunk;
    case JobKind::kBackwardW: return chunk;
    case JobKind::kOptimizer: return c.work_us * scale / 2;
  }
  return chunk;
}

std::unique_ptr<Work> choose_work(const DemoConfig& c, int local_rank, bool* failed) {
  *failed = false;
  if (c.device != DeviceChoice::kCpu) {
    std::string why_not;
    if (auto w = make_cuda_work(local_rank, c.payload_bytes, &why_not)) return w;
    if (c.device == DeviceChoice::kCuda) {
      LOG(ERROR) << "pp-demo: --device cuda, but CUDA cannot be used: " << why_not;
      *failed = true;
      return nullptr;
    }
    LOG(INFO) << "pp-demo: CPU work (" << why_not << ")";
  }
  return make_cpu_work(c.payload_bytes);
}

// Every rank starts its first step together, as after a real run's
// communicator set-up; without it the first step would show the ranks'
// start-up skew (process start, CUDA initialisation) as pipeline bubbles.
bool wait_for_start(const RankPlace& place) {
  if (place.ready_fd < 0 || place.go_fd < 0) return true;
  const char byte = 1;
  ssize_t n;
  while ((n = ::write(place.ready_fd, &byte, 1)) < 0 && errno == EINTR) {
  }
  if (n != 1) return false;
  ::close(place.ready_fd);
  char ignored;
  while ((n = ::read(place.go_fd, &ignored, 1)) < 0 && errno == EINTR) {
  }
  ::close(place.go_fd);
  return n == 0;  // the launcher closed its end: go
}

}  // namespace

int run_rank(const DemoConfig& c, const RankPlace& place) {
  const PipelineShape& shape = c.shape;
  const int stage = place.rank;
  bool failed = false;
  std::unique_ptr<Work> work = choose_work(c, place.local_rank, &failed);
  if (failed) return 1;

  shim::Options options;
  if (shim::Status s = shim::options_from_environment(&options); !s.ok()) {
    LOG(ERROR) << "pp-demo: " << s.message();
    return 2;
  }
  options.stream = work->stream();
  if (work->stream() == nullptr) options.use_cuda = false;  // CPU work: nothing to time on a device
  shim::Profiler profiler(options);
  if (c.profile_start || c.profile_end || !options.window_set) {
    const int64_t start = c.profile_start.value_or(options.window_set ? options.window_start : 0);
    const int64_t end = c.profile_end.value_or(options.window_set ? options.window_end : c.steps);
    if (shim::Status s = profiler.set_window(start, end); !s.ok()) {
      LOG(ERROR) << "pp-demo: " << s.message();
      return 2;
    }
  }
  LOG(INFO) << "pp-demo: rank " << place.rank << " of " << shape.stages << " (machine " << place.machine
            << ", local rank " << place.local_rank << "), stage " << stage << ", " << schedule_name(shape.schedule)
            << ", " << shape.micro_batches << " micro-batches, " << shape.chunks << " chunk(s), work on "
            << work->describe() << ", timing: " << profiler.backend_note();

  Mailbox mailbox(stage, place.prev_fd, place.next_fd, c.timeout_s * 1000);
  const std::vector<JobSpec> jobs = stage_jobs(shape, stage);
  std::vector<std::string> types;
  for (const JobSpec& j : jobs) types.push_back(job_type(shape, j));

  std::vector<uint8_t> input, output;
  std::string error;
  if (!wait_for_start(place)) {
    LOG(ERROR) << "pp-demo: the launcher went away before the start";
    return 1;
  }
  for (int step = 0; step < c.steps; ++step) {
    for (size_t i = 0; i < jobs.size(); ++i) {
      const JobSpec& job = jobs[i];
      input.clear();
      if (auto from = input_from(shape, stage, job)) {
        if (!mailbox.receive(*from, job.chunk, job.micro_batch, &input, &error)) {
          LOG(ERROR) << "pp-demo: step " << step << ", " << types[i] << " micro-batch " << job.micro_batch << ": "
                     << error;
          return 1;
        }
      }
      const auto to = output_to(shape, stage, job);
      if (shim::Status s = profiler.begin(types[i], job.micro_batch); !s.ok()) {
        LOG(ERROR) << "pp-demo: " << s.message();
        return 1;
      }
      const bool ran = work->run(work_of(c, job.kind, stage), input, to.has_value(), &error);
      if (shim::Status s = profiler.end(); !s.ok()) {
        LOG(ERROR) << "pp-demo: " << s.message();
        return 1;
      }
      if (!ran) {
        LOG(ERROR) << "pp-demo: " << types[i] << ": " << error;
        return 1;
      }
      if (to) {
        if (!work->finish(&output, &error) || !mailbox.send(*to, job.micro_batch, output, &error)) {
          LOG(ERROR) << "pp-demo: step " << step << ", " << types[i] << " micro-batch " << job.micro_batch << ": "
                     << error;
          return 1;
        }
      }
    }
    if (shim::Status s = profiler.flush(step); !s.ok()) {
      LOG(ERROR) << "pp-demo: " << s.message();
      return 1;
    }
  }
  if (shim::Status s = profiler.finish(); !s.ok()) {  // the steps still waiting for the device
    LOG(ERROR) << "pp-demo: " << s.message();
    return 1;
  }
  LOG(INFO) << "pp-demo: rank " << place.rank << " done, " << profiler.stats().jobs_written << " jobs written";
  return 0;
}

}  // namespace ppt::demo
