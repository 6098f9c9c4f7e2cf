// The demo run: a pipeline-parallel mini training run in P processes, laid
// out the way `python -m paddle.distributed.launch --log_dir DIR` lays out a
// real one, every job timed by the shim.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "schedule.h"

namespace ppt::demo {

enum class DeviceChoice { kAuto, kCpu, kCuda };

struct DemoConfig {
  std::string log_dir;
  PipelineShape shape;  // shape.stages is the number of ranks
  int steps = 1;
  int machines = 1;
  // A stage's forward work for one micro-batch (a backward does twice as
  // much): the model's part on the stage, so under VPP each of its V chunk
  // jobs does 1/V of it and the same --work_us is the same total work.
  double work_us = 1000;
  // Each stage's work multiplied by its factor (--stage-scale STAGE:FACTOR): a
  // real straggler. Empty or 1: as --work_us says.
  std::vector<double> stage_scale;
  // Memory each rank really holds (activations.h, details_log.h): MiB of
  // activations per micro-batch forward on a stage (a VPP chunk holds 1/V),
  // freed by its backward (by backward_w when the backward is split), and a
  // static part held for the whole run. 0: none.
  double act_mb = 0;
  double static_mb = 0;
  // Each rank logs Paddle's dynamic-graph `[Pipeline details]` lines.
  bool pipeline_details = false;
  DeviceChoice device = DeviceChoice::kAuto;
  size_t payload_bytes = 4096;
  int timeout_s = 60;
  // The shim's profiling window; [0, steps) when neither this nor the
  // PPT_SHIM_* variables set one.
  std::optional<int64_t> profile_start;
  std::optional<int64_t> profile_end;
};

// One rank's process body after the launcher has set up its output and links.
struct RankPlace {
  int rank = 0;
  int local_rank = 0;
  int machine = 0;
  int prev_fd = -1;
  int next_fd = -1;
  // The start barrier: the rank writes a byte to ready_fd once set up, then
  // waits until the launcher closes the other end of go_fd.
  int ready_fd = -1;
  int go_fd = -1;
};
int run_rank(const DemoConfig& config, const RankPlace& place);

// Starts every rank, waits for them, and returns 0 when all succeeded. What
// went wrong is written to stderr.
int launch(const DemoConfig& config);

}  // namespace ppt::demo
