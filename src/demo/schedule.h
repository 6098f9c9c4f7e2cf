// The pipeline schedules the demo runs: each stage's job order for one step,
// and which jobs wait for, or send to, another stage.
//
// Stages are numbered 0..P-1. A schedule with chunks (VPP) places chunk c of
// stage s at virtual stage c*P + s; activations flow up the virtual stages and
// gradients down. Without chunks the virtual stage is the stage.
//
// Orders are Paddle's plans (schedule/plan.h, docs/schedules.md): fthenb,
// 1f1b (P-s warm-up forwards, then (backward, forward) pairs), eager1f1b
// (2(P-s)-1 warm-up forwards), vpp (Paddle's interleaved order; needs M a
// multiple of P) and zbh1 (Paddle's ZB-H1: backward_b in the warm-up pairs,
// whole backwards in the steady phase, stage s's first s backward_w deferred
// to the end of the step); shapes Paddle refuses are refused (validate).
// Every stage ends its step with `optimizer` (micro-batch 0).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "schedule/shape.h"

namespace ppt::demo {

// The schedules are the table's (schedule/schedules.h); the demo runs those
// of demo_schedules().
using ppt::ScheduleKind;

struct PipelineShape {
  ScheduleKind schedule = ScheduleKind::k1F1B;
  int stages = 1;         // P
  int chunks = 1;         // V, above 1 for a chunked schedule (vpp) only
  int micro_batches = 1;  // M
};

// A job of a step: one of the plan's, with its role (schedule/shape.h: the
// one role enum of plans, replays and dependencies), or the optimizer that
// ends the step, which no plan holds (no role).
struct JobSpec {
  std::optional<PlanRole> role = PlanRole::kForward;  // nullopt: the optimizer
  int chunk = 0;
  int micro_batch = 0;
  bool is(PlanRole r) const { return role == r; }
  bool optimizer() const { return !role; }
  bool operator==(const JobSpec&) const = default;
};

// The schedules the demo runs, in the table's order.
const std::vector<ScheduleKind>& demo_schedules();
// The schedule's name in the demo's messages: the table's name in lower case
// ("1f1b"); a name as a user spells it ("1F1B", "ZB-H1", "zbh1": the table's
// one reading, schedule/schedules.h) to the schedule, nullopt when it is none
// the demo runs, and then the usage error that says which it runs.
std::string demo_name(ScheduleKind kind);
std::optional<ScheduleKind> parse_schedule(const std::string& name);
std::string schedule_error(const std::string& name);

// "" when the shape can run, else a sentence saying what is wrong.
std::string validate(const PipelineShape& shape);

// Stage `stage`'s jobs for one step, in order.
std::vector<JobSpec> stage_jobs(const PipelineShape& shape, int stage);

// The type as Paddle prints it: forward, backward, forward1, backward0,
// backward_b, backward_w, optimizer.
std::string job_type(const PipelineShape& shape, const JobSpec& job);
// The inverse of job_type for this shape.
std::optional<JobSpec> parse_job_type(const PipelineShape& shape, const std::string& type, int micro_batch);

// Messages between stages.
enum class Payload { kActivation, kGradient };

struct Endpoint {
  int stage = 0;
  int chunk = 0;
  Payload payload = Payload::kActivation;
  bool operator==(const Endpoint&) const = default;
};

// Where the input of `job` on `stage` comes from (the sender's stage and
// chunk), if it has one from another virtual stage.
std::optional<Endpoint> input_from(const PipelineShape& shape, int stage, const JobSpec& job);
// Where the output of `job` on `stage` goes (the receiver's stage and chunk).
std::optional<Endpoint> output_to(const PipelineShape& shape, int stage, const JobSpec& job);

// Runs every stage's order against the others with unbounded buffers and
// says whether each stage reaches its end: "" when it does, else which stage
// waits for what.
std::string check_runs_to_completion(const PipelineShape& shape);

}  // namespace ppt::demo
