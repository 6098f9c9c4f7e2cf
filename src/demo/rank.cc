// One rank of the demo: its stage's job order, step after step, each job timed
// by the shim, waiting for its input from the neighbour stage before it
// begins and sending its output after it ends, so that the gaps in the
// timeline are real waits; with --act-mb its forwards hold activations that
// its backwards free, and with --pipeline-details it logs Paddle's
// `[Pipeline details]` lines around them (details_log.h).
#include <glog/logging.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <memory>
#include <string>
#include <vector>

#include "activations.h"
#include "demo.h"
#include "details_log.h"
#include "pp_timeline/shim.h"
#include "transport.h"
#include "work.h"

namespace ppt::demo {
namespace {

// A job's work on `stage`: --work_us is the stage's forward for one
// micro-batch, so a chunk job (VPP) does 1/V of it; the optimizer updates the
// whole stage once. --stage-scale multiplies all of the stage's work.
double work_of(const DemoConfig& c, const JobSpec& job, int stage) {
  const double scale = stage < static_cast<int>(c.stage_scale.size()) ? c.stage_scale[stage] : 1.0;
  const double chunk = c.work_us * scale / std::max(c.shape.chunks, 1);
  if (job.optimizer()) return c.work_us * scale / 2;
  switch (*job.role) {
    case PlanRole::kForward: return chunk;
    case PlanRole::kBackward: return 2 * chunk;
    case PlanRole::kBackwardB: return chunk;
    case PlanRole::kBackwardW: return chunk;
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

// One rank's steps: each job waits for its input, is timed by the shim, holds
// or frees its activations, and sends its output.
struct StepRunner {
  const DemoConfig& c;
  int stage;
  const std::vector<JobSpec>& jobs;
  const std::vector<std::string>& types;
  Work& work;
  shim::Profiler& profiler;
  Mailbox& mailbox;
  HeldMemory& memory;
  JobMemory& job_memory;
  std::vector<uint8_t> input, output;
  std::string error;

  bool failed(int step, size_t i) {
    LOG(ERROR) << "pp-demo: step " << step << ", " << types[i] << " micro-batch " << jobs[i].micro_batch << ": "
               << error;
    return false;
  }

  bool shim_failed(const shim::Status& s) {
    LOG(ERROR) << "pp-demo: " << s.message();
    return false;
  }

  // The job's own time: allocation, work and freeing, between begin and end.
  bool timed_job(int step, size_t i, bool want_output) {
    const JobSpec& job = jobs[i];
    if (shim::Status s = profiler.begin(types[i], job.micro_batch); !s.ok()) return shim_failed(s);
    const bool ran = job_memory.begin_job(job, &error) &&
                     work.run(work_of(c, job, stage), input, want_output, &error) && job_memory.end_job(job, &error);
    if (shim::Status s = profiler.end(); !s.ok()) return shim_failed(s);
    return ran || failed(step, i);
  }

  bool run_job(int step, size_t i) {
    const JobSpec& job = jobs[i];
    const PipelineShape& shape = c.shape;
    input.clear();
    if (auto from = input_from(shape, stage, job)) {
      if (!mailbox.receive(*from, job.chunk, job.micro_batch, &input, &error)) return failed(step, i);
    }
    if (job.optimizer() && !job_memory.end_step(&error)) return failed(step, i);
    if (!job_memory.before_job(job, &error)) return failed(step, i);
    const auto to = output_to(shape, stage, job);
    if (!timed_job(step, i, to.has_value())) return false;
    if (!job_memory.after_job(job, &error)) return failed(step, i);
    if (to && (!work.finish(&output, &error) || !mailbox.send(*to, job.micro_batch, output, &error))) {
      return failed(step, i);
    }
    return true;
  }

  bool run_step(int step) {
    if (!job_memory.start_step(&error)) {
      LOG(ERROR) << "pp-demo: step " << step << ": " << error;
      return false;
    }
    for (size_t i = 0; i < jobs.size(); ++i) {
      if (!run_job(step, i)) return false;
    }
    if (memory.activations_held() != 0) {
      LOG(ERROR) << "pp-demo: step " << step << " ended with " << memory.activations_held()
                 << " micro-batches' activations still held";
      return false;
    }
    return true;
  }
};

// What the rank held, beside what the process's resident memory reached.
void log_memory(const DemoConfig& c, int rank, const HeldMemory& memory) {
  if (c.act_mb <= 0 && c.static_mb <= 0) return;
  const ResidentMemory resident = resident_memory();
  LOG(INFO) << "pp-demo: rank " << rank << " memory: peak allocated " << memory.peak_allocated_bytes()
            << " bytes, reserved " << memory.reserved_bytes() << " bytes, resident peak (VmHWM) " << resident.hwm_bytes
            << " bytes";
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
            << ", local rank " << place.local_rank << "), stage " << stage << ", " << demo_name(shape.schedule) << ", "
            << shape.micro_batches << " micro-batches, " << shape.chunks << " chunk(s), work on " << work->describe()
            << ", timing: " << profiler.backend_note();

  Mailbox mailbox(stage, place.prev_fd, place.next_fd, c.timeout_s * 1000);
  const std::vector<JobSpec> jobs = stage_jobs(shape, stage);
  std::vector<std::string> types;
  for (const JobSpec& j : jobs) types.push_back(job_type(shape, j));

  std::string error;
  HeldMemory memory;
  if (!memory.hold_static(mib_to_bytes(c.static_mb), &error)) {
    LOG(ERROR) << "pp-demo: --static-mb: " << error;
    return 1;
  }
  JobMemory job_memory(shape, mib_to_bytes(c.act_mb), &memory, c.pipeline_details, stderr,
                       [&work](std::string* e) { return work->synchronize(e); });
  StepRunner runner{c, stage, jobs, types, *work, profiler, mailbox, memory, job_memory, {}, {}, {}};
  if (!wait_for_start(place)) {
    LOG(ERROR) << "pp-demo: the launcher went away before the start";
    return 1;
  }
  for (int step = 0; step < c.steps; ++step) {
    if (!runner.run_step(step)) return 1;
    if (shim::Status s = profiler.flush(step); !s.ok()) {
      LOG(ERROR) << "pp-demo: " << s.message();
      return 1;
    }
  }
  if (shim::Status s = profiler.finish(); !s.ok()) {  // the steps still waiting for the device
    LOG(ERROR) << "pp-demo: " << s.message();
    return 1;
  }
  log_memory(c, place.rank, memory);
  LOG(INFO) << "pp-demo: rank " << place.rank << " done, " << profiler.stats().jobs_written << " jobs written";
  return 0;
}

}  // namespace ppt::demo
