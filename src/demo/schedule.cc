#include "schedule.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "schedule/plan.h"
#include "schedule/schedules.h"

namespace ppt::demo {

const char* schedule_name(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::kFThenB: return "fthenb";
    case ScheduleKind::k1F1B: return "1f1b";
    case ScheduleKind::kEager1F1B: return "eager1f1b";
    case ScheduleKind::kVpp: return "vpp";
    case ScheduleKind::kZbh1: return "zbh1";
  }
  return "?";
}

std::optional<ScheduleKind> parse_schedule(const std::string& name) {
  // pp-timeline's reading of every spelling (schedule/schedules.h), then the
  // schedules the demo runs.
  switch (ppt::parse_schedule_name(name).value_or(ppt::ScheduleKind::kUnknown)) {
    case ppt::ScheduleKind::kFThenB: return ScheduleKind::kFThenB;
    case ppt::ScheduleKind::k1F1B: return ScheduleKind::k1F1B;
    case ppt::ScheduleKind::kEager1F1B: return ScheduleKind::kEager1F1B;
    case ppt::ScheduleKind::kVPP: return ScheduleKind::kVpp;
    case ppt::ScheduleKind::kZBH1: return ScheduleKind::kZbh1;
    default: return std::nullopt;
  }
}

std::string schedule_error(const std::string& name) {
  return name + ": " +
         ppt::schedule_name_error(name,
                                  {ppt::ScheduleKind::kFThenB, ppt::ScheduleKind::k1F1B, ppt::ScheduleKind::kEager1F1B,
                                   ppt::ScheduleKind::kVPP, ppt::ScheduleKind::kZBH1});
}

namespace {

// The plan's shape in schedule/plan.h's terms: the demo runs Paddle's plans.
PlanShape plan_shape(const PipelineShape& s) {
  PlanShape p;
  switch (s.schedule) {
    case ScheduleKind::kFThenB: p.schedule = ppt::ScheduleKind::kFThenB; break;
    case ScheduleKind::k1F1B: p.schedule = ppt::ScheduleKind::k1F1B; break;
    case ScheduleKind::kEager1F1B: p.schedule = ppt::ScheduleKind::kEager1F1B; break;
    case ScheduleKind::kVpp: p.schedule = ppt::ScheduleKind::kVPP; break;
    case ScheduleKind::kZbh1: p.schedule = ppt::ScheduleKind::kZBH1; break;
  }
  p.stages = s.stages;
  p.micro_batches = s.micro_batches;
  p.chunks = s.chunks;
  return p;
}

JobKind kind_of(PlanRole role) {
  switch (role) {
    case PlanRole::kForward: return JobKind::kForward;
    case PlanRole::kBackward: return JobKind::kBackward;
    case PlanRole::kBackwardB: return JobKind::kBackwardB;
    case PlanRole::kBackwardW: return JobKind::kBackwardW;
  }
  return JobKind::kForward;
}

}  // namespace

std::string validate(const PipelineShape& s) {
  if (s.stages < 1) return "the pipeline needs at least one stage (rank)";
  if (s.micro_batches < 1) return "a step needs at least one micro-batch";
  if (s.chunks < 1) return "the number of chunks must be at least 1";
  if (s.schedule == ScheduleKind::kVpp) {
    if (s.chunks < 2) return "vpp needs at least 2 chunks per stage (--chunks)";
    if (s.micro_batches % s.stages != 0) {
      return "vpp needs the micro-batches (" + std::to_string(s.micro_batches) + ") to be a multiple of the stages (" +
             std::to_string(s.stages) + ")";
    }
  } else if (s.chunks != 1) {
    return std::string("chunks apply to vpp only, not to ") + schedule_name(s.schedule);
  }
  // What else Paddle refuses (1F1B and ZB-H1 need M >= P, Eager1F1B M >= 2P-1).
  if (std::string why = check_plan_shape(plan_shape(s)); !why.empty()) {
    return std::string(schedule_name(s.schedule)) + ": " + why;
  }
  return {};
}

std::vector<JobSpec> stage_jobs(const PipelineShape& shape, int stage) {
  std::vector<JobSpec> out;
  for (const PlanJob& j : stage_plan(plan_shape(shape), stage))
    out.push_back({kind_of(j.role), j.chunk, j.micro_batch});
  out.push_back({JobKind::kOptimizer, 0, 0});
  return out;
}

std::string job_type(const PipelineShape& shape, const JobSpec& job) {
  const bool chunked = shape.schedule == ScheduleKind::kVpp;
  const std::string suffix = chunked ? std::to_string(job.chunk) : std::string();
  switch (job.kind) {
    case JobKind::kForward: return "forward" + suffix;
    case JobKind::kBackward: return "backward" + suffix;
    case JobKind::kBackwardB: return "backward_b" + suffix;
    case JobKind::kBackwardW: return "backward_w" + suffix;
    case JobKind::kOptimizer: return "optimizer";
  }
  return "?";
}

std::optional<JobSpec> parse_job_type(const PipelineShape& shape, const std::string& type, int micro_batch) {
  const int chunks = shape.schedule == ScheduleKind::kVpp ? shape.chunks : 1;
  for (JobKind kind :
       {JobKind::kForward, JobKind::kBackward, JobKind::kBackwardB, JobKind::kBackwardW, JobKind::kOptimizer}) {
    for (int c = 0; c < chunks; ++c) {
      JobSpec j{kind, c, kind == JobKind::kOptimizer ? 0 : micro_batch};
      if (job_type(shape, j) == type) return j;
    }
  }
  return std::nullopt;
}

namespace {

int virtual_stage(const PipelineShape& shape, int stage, int chunk) { return chunk * shape.stages + stage; }

int virtual_stages(const PipelineShape& shape) { return shape.stages * shape.chunks; }

Endpoint endpoint_of(const PipelineShape& shape, int vs, Payload payload) {
  return {vs % shape.stages, vs / shape.stages, payload};
}

}  // namespace

std::optional<Endpoint> input_from(const PipelineShape& shape, int stage, const JobSpec& job) {
  const int vs = virtual_stage(shape, stage, job.chunk);
  switch (job.kind) {
    case JobKind::kForward:
      if (vs > 0) return endpoint_of(shape, vs - 1, Payload::kActivation);
      return std::nullopt;
    case JobKind::kBackward:
    case JobKind::kBackwardB:
      if (vs + 1 < virtual_stages(shape)) return endpoint_of(shape, vs + 1, Payload::kGradient);
      return std::nullopt;
    case JobKind::kBackwardW:
    case JobKind::kOptimizer: return std::nullopt;
  }
  return std::nullopt;
}

std::optional<Endpoint> output_to(const PipelineShape& shape, int stage, const JobSpec& job) {
  const int vs = virtual_stage(shape, stage, job.chunk);
  switch (job.kind) {
    case JobKind::kForward:
      if (vs + 1 < virtual_stages(shape)) return endpoint_of(shape, vs + 1, Payload::kActivation);
      return std::nullopt;
    case JobKind::kBackward:
    case JobKind::kBackwardB:
      if (vs > 0) return endpoint_of(shape, vs - 1, Payload::kGradient);
      return std::nullopt;
    case JobKind::kBackwardW:
    case JobKind::kOptimizer: return std::nullopt;
  }
  return std::nullopt;
}

std::string check_runs_to_completion(const PipelineShape& shape) {
  if (std::string bad = validate(shape); !bad.empty()) return bad;
  const int p = shape.stages;
  std::vector<std::vector<JobSpec>> orders;
  for (int s = 0; s < p; ++s) orders.push_back(stage_jobs(shape, s));
  // (receiving virtual stage, payload, micro-batch) of every message sent.
  std::set<std::tuple<int, Payload, int>> sent;
  // Local order: (virtual stage, kind, micro-batch) of every job done.
  std::set<std::tuple<int, JobKind, int>> done;
  std::vector<size_t> pc(p, 0);
  auto describe = [&](int s, const JobSpec& j) {
    return "stage " + std::to_string(s) + " " + job_type(shape, j) + " micro-batch " + std::to_string(j.micro_batch);
  };
  for (bool progress = true; progress;) {
    progress = false;
    for (int s = 0; s < p; ++s) {
      while (pc[s] < orders[s].size()) {
        const JobSpec& j = orders[s][pc[s]];
        const int vs = virtual_stage(shape, s, j.chunk);
        if (auto in = input_from(shape, s, j)) {
          if (!sent.count({vs, in->payload, j.micro_batch})) break;
        }
        // A backward needs its own forward; a weight gradient its input gradient.
        if ((j.kind == JobKind::kBackward || j.kind == JobKind::kBackwardB) &&
            !done.count({vs, JobKind::kForward, j.micro_batch})) {
          return describe(s, j) + " comes before its forward";
        }
        if (j.kind == JobKind::kBackwardW && !done.count({vs, JobKind::kBackwardB, j.micro_batch})) {
          return describe(s, j) + " comes before its backward_b";
        }
        if (auto out = output_to(shape, s, j)) {
          sent.insert({virtual_stage(shape, out->stage, out->chunk), out->payload, j.micro_batch});
        }
        done.insert({vs, j.kind, j.micro_batch});
        ++pc[s];
        progress = true;
      }
    }
  }
  for (int s = 0; s < p; ++s) {
    if (pc[s] < orders[s].size()) {
      return describe(s, orders[s][pc[s]]) + " waits forever for its input";
    }
  }
  return {};
}

}  // namespace ppt::demo
