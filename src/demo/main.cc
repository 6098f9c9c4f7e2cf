// pp-demo: a pipeline-parallel mini training run whose launch logs pp-timeline
// converts, so the whole tool can be seen working without Paddle.
//
//   pp-demo --log_dir DIR --ranks P --schedule {FThenB,1F1B,Eager1F1B,VPP,ZBH1}
//           --micro-batches M --steps S [--chunks V] [--machines K] [--stage-scale S:F]
//           [--act-mb MB] [--static-mb MB] [--pipeline-details]
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/finite_range.h"
#include "demo.h"
#include "schedule/schedules.h"

namespace {

// "STAGE:FACTOR" (a stage number, a factor from 0 to 1000), as whatif's
// --stage-scale reads it; false when it is not one.
bool parse_stage_scale(const std::string& s, int* stage, double* factor) {
  const size_t colon = s.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == s.size()) return false;
  char* end = nullptr;
  const long st = std::strtol(s.c_str(), &end, 10);
  if (end != s.c_str() + colon || st < 0 || st > 100000) return false;
  const std::string f = s.substr(colon + 1);
  const double v = std::strtod(f.c_str(), &end);
  if (end != f.c_str() + f.size() || !std::isfinite(v) || v < 0 || v > 1000) return false;
  *stage = static_cast<int>(st);
  *factor = v;
  return true;
}

// The command line's values, before they are checked against each other.
struct Args {
  ppt::demo::DemoConfig c;
  std::string schedule;
  std::optional<int> chunks;
  std::string device = "auto";
  std::vector<std::string> stage_scale;
};

// The run's shape: where its logs go, its stages, schedule, micro-batches,
// steps, chunks and machines.
void add_shape_options(CLI::App& app, Args& a) {
  using namespace ppt::demo;
  DemoConfig& c = a.c;
  app.add_option("--log_dir", c.log_dir, "where the workerlog.<rank> files go")->required();
  app.add_option("--ranks", c.shape.stages, "pipeline stages, one process each")->required()->check(CLI::Range(1, 256));
  app.add_option("--schedule", a.schedule,
                 "the pipeline schedule: FThenB, 1F1B, Eager1F1B, VPP or ZBH1, in any case, with or without '-' "
                 "or '_' (ZB-H1, zbh1)")
      ->required()
      ->check([](const std::string& name) { return parse_schedule(name) ? std::string() : schedule_error(name); });
  app.add_option("--micro-batches,--micro_batches", c.shape.micro_batches, "micro-batches per step")
      ->required()
      ->check(CLI::Range(1, 4096));
  app.add_option("--steps", c.steps, "training steps")->required()->check(CLI::Range(1, 100000));
  app.add_option("--chunks", a.chunks, "model chunks per stage (vpp only; default 2)")->check(CLI::Range(1, 64));
  app.add_option("--machines", c.machines, "spread the ranks over K machines: logs in DIR/machine<k>/")
      ->check(CLI::Range(1, 256));
}

// The work each job does: its time, the stragglers, its memory.
void add_work_options(CLI::App& app, Args& a) {
  ppt::demo::DemoConfig& c = a.c;
  app.add_option("--work_us", c.work_us,
                 "a stage's forward work for one micro-batch, in microseconds (backward 2x, backward_b and "
                 "backward_w 1x, optimizer 0.5x); under vpp each of the V chunk jobs does 1/V of it, so the same "
                 "value is the same model's work")
      ->capture_default_str()
      ->check(ppt::cli::finite_range(0.0, 1e7));
  app.add_option("--stage-scale", a.stage_scale,
                 "STAGE:FACTOR multiplies every job's work on that stage (1.5: a straggler 50% slower), as "
                 "pp-timeline whatif --stage-scale predicts it; may be repeated")
      ->check([](const std::string& s) {
        double factor = 0;
        int stage = -1;
        return parse_stage_scale(s, &stage, &factor) ? std::string()
                                                     : "give STAGE:FACTOR, a factor from 0 to 1000, e.g. 2:1.5";
      });
  app.add_option("--act-mb,--act_mb", c.act_mb,
                 "MiB of activations each stage allocates and writes (every page) at a micro-batch's forward and "
                 "frees at its backward (to the rank's cache, which later forwards reuse, as a caching device "
                 "allocator does); with the split backward (zbh1) backward_b keeps them and backward_w frees them; "
                 "under vpp each chunk's forward holds MB/V, so the same value is the same model")
      ->capture_default_str()
      ->check(ppt::cli::finite_range(0.0, 1e6));
  app.add_option("--static-mb,--static_mb", c.static_mb,
                 "MiB each rank allocates and writes before its first step and holds to the end (the model's "
                 "state): the static part of its memory")
      ->capture_default_str()
      ->check(ppt::cli::finite_range(0.0, 1e6));
}

// What the ranks log and how they run: the details lines, the device, the
// messages between them, the profiled steps.
void add_run_options(CLI::App& app, Args& a) {
  ppt::demo::DemoConfig& c = a.c;
  app.add_flag("--pipeline-details,--pipeline_details", c.pipeline_details,
               "each rank logs Paddle's dynamic-graph [Pipeline details] lines (FLAGS_profile_pipeline_details_steps) "
               "in every step: before and after every forward and backward (none for backward_b and backward_w), "
               "around the step; allocated = the static part + the activations held, reserved = the blocks mapped "
               "(held or cached), each rounded up to 2 MiB: their high-water mark; GiB with 2 decimals, stamps in "
               "UTC");
  app.add_option("--device", a.device,
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
}

// The exit status when the command line ends the program (help, a usage
// error); nothing when the run goes on.
std::optional<int> parse_args(CLI::App& app, int argc, char** argv) {
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
  return std::nullopt;
}

// Each --stage-scale into the config; false (said on stderr) for a stage
// the run does not have.
bool apply_stage_scales(Args& a) {
  ppt::demo::DemoConfig& c = a.c;
  for (const std::string& s : a.stage_scale) {
    int stage = -1;
    double factor = 1;
    parse_stage_scale(s, &stage, &factor);
    if (stage >= c.shape.stages) {
      std::fprintf(stderr, "pp-demo: error: --stage-scale %s: the run has stages 0-%d\n", s.c_str(),
                   c.shape.stages - 1);
      return false;
    }
    if (c.stage_scale.size() < static_cast<size_t>(c.shape.stages)) c.stage_scale.resize(c.shape.stages, 1.0);
    c.stage_scale[stage] = factor;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ppt::demo;
  Args a;
  CLI::App app{
      "pp-demo: runs a pipeline-parallel mini training in P processes and writes "
      "their launch logs, one workerlog per rank, every job timed by the shim"};
  add_shape_options(app, a);
  add_work_options(app, a);
  add_run_options(app, a);
  if (std::optional<int> status = parse_args(app, argc, argv)) return *status;

  DemoConfig& c = a.c;
  c.shape.schedule = *parse_schedule(a.schedule);
  if (!apply_stage_scales(a)) return 2;
  c.shape.chunks = a.chunks.value_or(schedule_chunked(c.shape.schedule) ? 2 : 1);
  c.device = a.device == "cpu" ? DeviceChoice::kCpu : a.device == "cuda" ? DeviceChoice::kCuda : DeviceChoice::kAuto;
  const int status = launch(c);
  if (status == 0) {
    std::printf("pp-demo: %d ranks ran %s (%d micro-batches, %d chunk(s), %d steps); logs in %s\n", c.shape.stages,
                demo_name(c.shape.schedule).c_str(), c.shape.micro_batches, c.shape.chunks, c.steps, c.log_dir.c_str());
  }
  return status;
}
