#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "schedule.h"

using namespace ppt::demo;
using ppt::PlanRole;

namespace {

std::vector<std::string> types_of(const PipelineShape& shape, int stage) {
  std::vector<std::string> out;
  for (const JobSpec& j : stage_jobs(shape, stage)) {
    out.push_back(j.optimizer() ? job_type(shape, j) : job_type(shape, j) + ":" + std::to_string(j.micro_batch));
  }
  return out;
}

using V = std::vector<std::string>;

}  // namespace

TEST_CASE("FThenB runs every forward, then every backward, then the optimizer") {
  const PipelineShape s{ScheduleKind::kFThenB, 2, 1, 3};
  const V want{"forward:0", "forward:1", "forward:2", "backward:0", "backward:1", "backward:2", "optimizer"};
  CHECK(types_of(s, 0) == want);
  CHECK(types_of(s, 1) == want);
}

TEST_CASE("1F1B warms up with P-s forwards, then (backward, forward) pairs, then cools down") {
  const PipelineShape s{ScheduleKind::k1F1B, 2, 1, 3};
  CHECK(types_of(s, 0) ==
        V{"forward:0", "forward:1", "backward:0", "forward:2", "backward:1", "backward:2", "optimizer"});
  CHECK(types_of(s, 1) ==
        V{"forward:0", "backward:0", "forward:1", "backward:1", "forward:2", "backward:2", "optimizer"});
}

TEST_CASE("Eager1F1B warms up with 2(P-s)-1 forwards") {
  const PipelineShape s{ScheduleKind::kEager1F1B, 2, 1, 4};
  CHECK(types_of(s, 0) == V{"forward:0", "forward:1", "forward:2", "backward:0", "forward:3", "backward:1",
                            "backward:2", "backward:3", "optimizer"});
  CHECK(types_of(s, 1) == V{"forward:0", "backward:0", "forward:1", "backward:1", "forward:2", "backward:2",
                            "forward:3", "backward:3", "optimizer"});
}

TEST_CASE("1F1B with fewer micro-batches than stages is refused, as Paddle refuses it") {
  CHECK_THAT(validate({ScheduleKind::k1F1B, 4, 1, 2}), Catch::Contains("M >= P"));
  CHECK(stage_jobs({ScheduleKind::k1F1B, 4, 1, 2}, 0) == std::vector<JobSpec>{{std::nullopt, 0, 0}});
}

TEST_CASE("VPP follows Megatron's interleaved order, chunk suffixes as Paddle prints them") {
  const PipelineShape s{ScheduleKind::kVPP, 2, 2, 4};
  CHECK(types_of(s, 0) == V{"forward0:0", "forward0:1", "forward1:0", "forward1:1", "forward0:2", "backward1:0",
                            "forward0:3", "backward1:1", "forward1:2", "backward0:0", "forward1:3", "backward0:1",
                            "backward1:2", "backward1:3", "backward0:2", "backward0:3", "optimizer"});
  // The last stage warms up with one group of chunk-0 forwards less.
  CHECK(types_of(s, 1) == V{"forward0:0", "forward0:1", "forward1:0", "backward1:0", "forward1:1", "backward1:1",
                            "forward0:2", "backward0:0", "forward0:3", "backward0:1", "forward1:2", "backward1:2",
                            "forward1:3", "backward1:3", "backward0:2", "backward0:3", "optimizer"});
}

TEST_CASE("VPP with as many micro-batches as stages runs all forwards first") {
  const PipelineShape s{ScheduleKind::kVPP, 2, 2, 2};
  CHECK(types_of(s, 1) == V{"forward0:0", "forward0:1", "forward1:0", "forward1:1", "backward1:0", "backward1:1",
                            "backward0:0", "backward0:1", "optimizer"});
}

TEST_CASE("ZB-H1 is Paddle's plan: backward_b in the warm-up pairs, stage s's first s backward_w last") {
  const PipelineShape s{ScheduleKind::kZBH1, 2, 1, 3};
  CHECK(types_of(s, 0) ==
        V{"forward:0", "forward:1", "backward:0", "forward:2", "backward:1", "backward:2", "optimizer"});
  CHECK(types_of(s, 1) == V{"forward:0", "backward_b:0", "forward:1", "backward:1", "forward:2", "backward_b:2",
                            "backward_w:2", "backward_w:0", "optimizer"});
}

TEST_CASE("Every schedule runs to completion and holds each job exactly once") {
  for (ScheduleKind kind : {ScheduleKind::kFThenB, ScheduleKind::k1F1B, ScheduleKind::kEager1F1B, ScheduleKind::kVPP,
                            ScheduleKind::kZBH1}) {
    for (int p = 1; p <= 6; ++p) {
      for (int m = 1; m <= 12; ++m) {
        for (int v = 1; v <= 3; ++v) {
          const PipelineShape s{kind, p, v, m};
          if (!validate(s).empty()) continue;
          INFO(demo_name(kind) << " P=" << p << " M=" << m << " V=" << v);
          CHECK(check_runs_to_completion(s) == "");
          for (int stage = 0; stage < p; ++stage) {
            std::map<std::string, int> seen;
            int forwards = 0, input_grads = 0;
            for (const JobSpec& j : stage_jobs(s, stage)) {
              ++seen[job_type(s, j) + ":" + std::to_string(j.micro_batch)];
              forwards += j.is(PlanRole::kForward) ? 1 : 0;
              input_grads += j.is(PlanRole::kBackward) || j.is(PlanRole::kBackwardB) ? 1 : 0;
            }
            CHECK(seen.size() == stage_jobs(s, stage).size());
            CHECK(forwards == m * v);
            CHECK(input_grads == m * v);
            for (const auto& [name, count] : seen) CHECK(count == 1);
          }
        }
      }
    }
  }
}

TEST_CASE("Shapes that cannot run are refused with a reason") {
  CHECK_THAT(validate({ScheduleKind::kVPP, 4, 2, 6}), Catch::Contains("multiple"));
  CHECK_THAT(validate({ScheduleKind::kVPP, 4, 1, 8}), Catch::Contains("at least 2 chunks"));
  CHECK_THAT(validate({ScheduleKind::k1F1B, 4, 2, 8}), Catch::Contains("vpp only"));
  CHECK_THAT(validate({ScheduleKind::k1F1B, 0, 1, 8}), Catch::Contains("stage"));
  CHECK_THAT(validate({ScheduleKind::kZBH1, 4, 1, 2}), Catch::Contains("M >= P"));
  CHECK_THAT(validate({ScheduleKind::kEager1F1B, 4, 1, 6}), Catch::Contains("M >= 2P-1"));
  CHECK(validate({ScheduleKind::kZBH1, 4, 1, 4}).empty());
}

TEST_CASE("Activations go up the virtual stages and gradients come down") {
  const PipelineShape s{ScheduleKind::kVPP, 2, 2, 2};
  // Stage 1 chunk 0 (virtual stage 1) feeds stage 0 chunk 1 (virtual stage 2).
  const JobSpec f{PlanRole::kForward, 0, 0};
  CHECK(output_to(s, 1, f) == Endpoint{0, 1, Payload::kActivation});
  CHECK(input_from(s, 0, JobSpec{PlanRole::kForward, 1, 0}) == Endpoint{1, 0, Payload::kActivation});
  CHECK_FALSE(input_from(s, 0, f).has_value());
  CHECK(input_from(s, 1, JobSpec{PlanRole::kBackward, 0, 0}) == Endpoint{0, 1, Payload::kGradient});
  CHECK_FALSE(output_to(s, 0, JobSpec{PlanRole::kBackward, 0, 0}).has_value());
  const PipelineShape z{ScheduleKind::kZBH1, 2, 1, 2};
  CHECK_FALSE(input_from(z, 0, JobSpec{PlanRole::kBackwardW, 0, 0}).has_value());
  CHECK(input_from(z, 0, JobSpec{PlanRole::kBackwardB, 0, 0}) == Endpoint{1, 0, Payload::kGradient});
}

TEST_CASE("Job types parse back to the job they name") {
  const PipelineShape s{ScheduleKind::kVPP, 2, 3, 2};
  for (const JobSpec& j : stage_jobs(s, 1)) {
    CHECK(parse_job_type(s, job_type(s, j), j.micro_batch) == j);
  }
  CHECK_FALSE(parse_job_type(s, "forward9", 0).has_value());
  CHECK(demo_name(*parse_schedule("zbh1")) == "zbh1");
  // Every spelling pp-timeline reads (passes/schedule.h); ZBVPP is none the demo runs.
  CHECK(parse_schedule("ZB-H1") == ScheduleKind::kZBH1);
  CHECK(parse_schedule("1F1B") == ScheduleKind::k1F1B);
  CHECK(parse_schedule("FThenB") == ScheduleKind::kFThenB);
  CHECK(parse_schedule("gpipe") == ScheduleKind::kFThenB);
  CHECK(parse_schedule("Eager-1F1B") == ScheduleKind::kEager1F1B);
  CHECK_FALSE(parse_schedule("ZB-VPP").has_value());
  CHECK(schedule_error("ZB-VPP").find("ZBVPP is not one of the schedules here: FThenB, 1F1B, Eager1F1B, VPP, ZBH1") !=
        std::string::npos);
  CHECK(schedule_error("zbh2").find("did you mean ZBH1?") != std::string::npos);
}
