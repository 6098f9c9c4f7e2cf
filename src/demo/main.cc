// pp-demo: a pipeline-parallel mini training run whose launch logs pp-timeline
// converts, so the whole tool can be seen working without Paddle.
//
//   pp-demo --log_dir DIR --ranks P --schedule {fthenb,1f1b,eager1f1b,vpp,zbh1}
//           --micro-batches M --steps S [--chunks V] [--machines K]
#include <CLI/CLI.hpp>

#include <cstdio>
#include <map>

#include "cli/finite_range.h"
#include "demo.h"

int main(int argc, char** argv) {
  using namespace ppt::demo;
  DemoConfig c;
  std::string schedule;
  std::optional<int> chunks;
  std::string device = "auto";

  CLI::App app{
      "pp-demo: runs a pipeline-parallel mini training in P processes and writes "
      "their launch logs, one workerlog per rank, every job timed by the shim"};
  app.add_option("--log_dir", c.log_dir, "where the workerlog.<rank> files go")->required();
  app.add_option("--ranks", c.shape.stages, "pipeline stages, one process each")->required()->check(CLI::Range(1, 256));
  app.add_option("--schedule", schedule, "the pipeline schedule")
      ->required()
      ->check(CLI::IsMember({"fthenb", "1f1b", "eager1f1b", "vpp", "zbh1"}));
  app.add_option("--micro-batches,--micro_batches", c.shape.micro_batches, "micro-batches per step")
      ->required()
      ->check(CLI::Range(1, 4096));
  app.add_option("--steps", c.steps, "training steps")->required()->check(CLI::Range(1, 100000));
  app.add_option("--chunks", chunks, "model chunks per stage (vpp only; default 2)")->check(CLI::Range(1, 64));
  app.add_option("--machines", c.machines, "spread the ranks over K machines: logs in DIR/machine<k>/")
      ->check(CLI::Range(1, 256));
  app.add_option("--work_us", c.work_us,
                 "a forward's work in microseconds (backward 2x, backward_b and backward_w 1x, "
                 "optimizer 0.5x)")
      ->capture_default_str()
      ->check(ppt::cli::finite_range(0.0, 1e7));
  app.add_option("--device", device,
                 "where the work runs: auto (a CUDA device when present), "
                 "cpu or cuda")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  app.add_option("--payload_bytes", c.payload_bytes, "bytes of activation or gradient sent")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 24));
  app.add_option("--timeout_s", c.timeout_s, "give up waiting for a neighbour after this long")
      ->capture_default_str()
      ->check(CLI::Range(1, 86400));
  app.add_option("--profile_start", c.profile_start, "first profiled step (default: PPT_SHIM_START_STEP, else 0)");
  app.add_option("--profile_end", c.profile_end,
                 "profiling ends before this step (default: PPT_SHIM_END_STEP, else --steps)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // A usage error is exit 2, as pp-timeline's (CLI11's own codes run past 100).
    std::fprintf(stderr, "pp-demo: error: %s\n", e.what());
    return 2;
  }

  c.shape.schedule = *parse_schedule(schedule);
  c.shape.chunks = chunks.value_or(c.shape.schedule == ScheduleKind::kVpp ? 2 : 1);
  c.device = device == "cpu" ? DeviceChoice::kCpu : device == "cuda" ? DeviceChoice::kCuda : DeviceChoice::kAuto;
  const int status = launch(c);
  if (status == 0) {
    std::printf("pp-demo: %d ranks ran %s (%d micro-batches, %d chunk(s), %d steps); logs in %s\n", c.shape.stages,
                schedule.c_str(), c.shape.micro_batches, c.shape.chunks, c.steps, c.log_dir.c_str());
  }
  return status;
}
