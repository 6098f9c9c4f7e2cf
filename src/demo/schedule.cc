#include "schedule.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <tuple>

#include "schedule/plan.h"
#include "schedule/schedules.h"
#include "schedule/virtual_stage.h"

namespace ppt::demo {

const std::vector<ScheduleKind>& demo_schedules() {
  // Every schedule with a plan but the V-shaped ones, whose chunks the demo's
  // transport (a chain, or a ring for the chunked schedules) does not place.
  static const std::vector<ScheduleKind> runs = [] {
    std::vector<ScheduleKind> out;
    for (const ScheduleRow& r : schedule_rows()) {
      if (!r.v_shape) out.push_back(r.kind);
    }
    return out;
  }();
  return runs;
}

std::string demo_name(ScheduleKind kind) {
  std::string name(ppt::schedule_name(kind));
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

std::optional<ScheduleKind> parse_schedule(const std::string& name) {
  // The table's reading of every spelling, then the schedules the demo runs.
  std::optional<ScheduleKind> kind = ppt::parse_schedule_name(name);
  const std::vector<ScheduleKind>& runs = demo_schedules();
  if (!kind || std::find(runs.begin(), runs.end(), *kind) == runs.end()) return std::nullopt;
  return kind;
}

std::string schedule_error(const std::string& name) {
  return name + ": " + ppt::schedule_name_error(name, demo_schedules());
}

namespace {

// The plan's shape in schedule/plan.h's terms: the demo runs Paddle's plans.
PlanShape plan_shape(const PipelineShape& s) {
  PlanShape p;
  p.schedule = s.schedule;
  p.stages = s.stages;
  p.micro_batches = s.micro_batches;
  p.chunks = s.chunks;
  return p;
}

// The chunked schedules the demo runs, by demo_name(): "vpp".
std::string chunked_names() {
  std::string out;
  for (ScheduleKind k : demo_schedules()) {
    if (schedule_chunked(k)) out += (out.empty() ? "" : ", ") + demo_name(k);
  }
  return out;
}

}  // namespace

std::string validate(const PipelineShape& s) {
  if (s.stages < 1) return "the pipeline needs at least one stage (rank)";
  if (s.micro_batches < 1) return "a step needs at least one micro-batch";
  if (s.chunks < 1) return "the number of chunks must be at least 1";
  const std::string name = demo_name(s.schedule);
  if (schedule_chunked(s.schedule)) {
    if (s.chunks < 2) return name + " needs at least 2 chunks per stage (--chunks)";
    if (s.micro_batches % s.stages != 0) {
      return name + " needs the micro-batches (" + std::to_string(s.micro_batches) +
             ") to be a multiple of the stages (" + std::to_string(s.stages) + ")";
    }
  } else if (s.chunks != 1) {
    return "chunks apply to " + chunked_names() + " only, not to " + name;
  }
  // What else Paddle refuses (1F1B and ZB-H1 need M >= P, Eager1F1B M >= 2P-1).
  if (std::string why = check_plan_shape(plan_shape(s)); !why.empty()) {
    return name + ": " + why;
  }
  return {};
}

std::vector<JobSpec> stage_jobs(const PipelineShape& shape, int stage) {
  std::vector<JobSpec> out;
  for (const PlanJob& j : stage_plan(plan_shape(shape), stage)) out.push_back({j.role, j.chunk, j.micro_batch});
  out.push_back({std::nullopt, 0, 0});
  return out;
}

std::string job_type(const PipelineShape& shape, const JobSpec& job) {
  const bool chunked = schedule_chunked(shape.schedule);
  const std::string suffix = chunked ? std::to_string(job.chunk) : std::string();
  if (job.optimizer()) return "optimizer";
  return plan_role_name(*job.role) + suffix;
}

std::optional<JobSpec> parse_job_type(const PipelineShape& shape, const std::string& type, int micro_batch) {
  const int chunks = schedule_chunked(shape.schedule) ? shape.chunks : 1;
  for (std::optional<PlanRole> role :
       {std::optional<PlanRole>(PlanRole::kForward), std::optional<PlanRole>(PlanRole::kBackward),
        std::optional<PlanRole>(PlanRole::kBackwardB), std::optional<PlanRole>(PlanRole::kBackwardW),
        std::optional<PlanRole>()}) {
    for (int c = 0; c < chunks; ++c) {
      JobSpec j{role, c, role ? micro_batch : 0};
      if (job_type(shape, j) == type) return j;
    }
  }
  return std::nullopt;
}

namespace {

// The table's virtual-stage rule (schedule/virtual_stage.h).
int virtual_stage(const PipelineShape& shape, int stage, int chunk) {
  return ppt::virtual_stage(shape.schedule, shape.stages, stage, chunk);
}

int virtual_stages(const PipelineShape& shape) { return shape.stages * shape.chunks; }

Endpoint endpoint_of(const PipelineShape& shape, int vs, Payload payload) {
  const StageChunk at = virtual_stage_place(shape.schedule, shape.stages, vs);
  return {at.stage, at.chunk, payload};
}

}  // namespace

std::optional<Endpoint> input_from(const PipelineShape& shape, int stage, const JobSpec& job) {
  const int vs = virtual_stage(shape, stage, job.chunk);
  if (job.optimizer()) return std::nullopt;
  switch (*job.role) {
    case PlanRole::kForward:
      if (vs > 0) return endpoint_of(shape, vs - 1, Payload::kActivation);
      return std::nullopt;
    case PlanRole::kBackward:
    case PlanRole::kBackwardB:
      if (vs + 1 < virtual_stages(shape)) return endpoint_of(shape, vs + 1, Payload::kGradient);
      return std::nullopt;
    case PlanRole::kBackwardW: return std::nullopt;
  }
  return std::nullopt;
}

std::optional<Endpoint> output_to(const PipelineShape& shape, int stage, const JobSpec& job) {
  const int vs = virtual_stage(shape, stage, job.chunk);
  if (job.optimizer()) return std::nullopt;
  switch (*job.role) {
    case PlanRole::kForward:
      if (vs + 1 < virtual_stages(shape)) return endpoint_of(shape, vs + 1, Payload::kActivation);
      return std::nullopt;
    case PlanRole::kBackward:
    case PlanRole::kBackwardB:
      if (vs > 0) return endpoint_of(shape, vs - 1, Payload::kGradient);
      return std::nullopt;
    case PlanRole::kBackwardW: return std::nullopt;
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
  std::set<std::tuple<int, std::optional<PlanRole>, int>> done;
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
        if ((j.is(PlanRole::kBackward) || j.is(PlanRole::kBackwardB)) &&
            !done.count({vs, PlanRole::kForward, j.micro_batch})) {
          return describe(s, j) + " comes before its forward";
        }
        if (j.is(PlanRole::kBackwardW) && !done.count({vs, PlanRole::kBackwardB, j.micro_batch})) {
          return describe(s, j) + " comes before its backward_b";
        }
        if (auto out = output_to(shape, s, j)) {
          sent.insert({virtual_stage(shape, out->stage, out->chunk), out->payload, j.micro_batch});
        }
        done.insert({vs, j.role, j.micro_batch});
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
