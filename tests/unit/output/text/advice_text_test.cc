// The sentences of whatif's and the suggestions' advice (output/text/
// advice_text.h), each made from the numbers its value carries: every kind
// of warning, the refusal, every kind of assumption, the changes, the
// suggestions and the outcomes' labels.
#include "output/text/advice_text.h"

#include <catch2/catch.hpp>

#include <string>

namespace ppt {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A 1F1B plan of 4 stages and 8 micro-batches.
PlanShape one_f_one_b() { return PlanShape{ScheduleKind::k1F1B, 4, 8, 1, false}; }

}  // namespace

TEST_CASE("advice: the runs warning names the run modelled, its steps and ranks", "[advice]") {
  model_warning::SeveralRuns w{3, 1, true, 4, 9, 8};
  CHECK(warning_text(w) == "the logs hold 3 runs; the model is run 2 (steps 4-9, 8 rank(s)); --run N models another");
  w.modelled = 2;
  CHECK(contains(warning_text(w), "the model is run 3 (the last, steps 4-9, 8 rank(s))"));
  w.has_steps = false;
  CHECK(contains(warning_text(w), "(the last, no steps, 8 rank(s))"));
}

TEST_CASE("advice: overlap, resolution, one step and the model's error, from their figures", "[advice]") {
  CHECK(warning_text(model_warning::OverlappingJobs{3, 30})
            .rfind("3 of 30 jobs (10.0%) overlap another job on their rank: the model runs one job at a time", 0) == 0);
  CHECK(contains(warning_text(model_warning::OverlappingJobs{1, 3}), "1 of 3 jobs (33.3%)"));
  const std::string coarse = warning_text(model_warning::CoarseResolution{1000000, 4250000});
  CHECK(coarse.rfind("the input's times are whole 1000.0 us, coarser than a tenth of the typical job (4250.0 us): ",
                     0) == 0);
  CHECK(contains(warning_text(model_warning::OneStep{}), "the run has one step: there is no period"));
  CHECK(warning_text(model_warning::ModelError{-0.031}).rfind("the model's error is -3.1% (the measured plan", 0) == 0);
  CHECK(contains(warning_text(model_warning::ModelError{0.0251}), "error is +2.5%"));
}

TEST_CASE("advice: steps off the usual jobs, off the plan, and the refusal name the first difference", "[advice]") {
  CHECK(
      warning_text(model_warning::UnusualSteps{12, 24, 0, 0.5})
          .rfind(
              "12 of 24 rank-steps do not run their rank's usual jobs in its usual order (rank 0: 50% of its steps): ",
              0) == 0);
  const PlanDifference d{2, 3, 5, PlanJob{PlanRole::kBackward, 0, 0}, PlanJob{PlanRole::kForward, 0, 4}};
  CHECK(plan_difference_text(d, one_f_one_b()) == "rank 2 step 3, job 5: backward:0 where the plan has forward:4");
  // A chunked plan names its jobs with their chunk; a step's end where the step or plan ends.
  const PlanShape vpp{ScheduleKind::kVPP, 4, 8, 2, false};
  CHECK(plan_difference_text({1, 0, 9, PlanJob{PlanRole::kForward, 1, 3}, std::nullopt}, vpp) ==
        "rank 1 step 0, job 9: forward1:3 where the plan has the step's end");
  CHECK(warning_text(model_warning::OffPlan{4, 16, one_f_one_b(), d}) ==
        "4 of 16 rank-steps do not run the 1F1B M=8 plan the model replays (rank 2 step 3, job 5: backward:0 where "
        "the plan has forward:4)");
  const std::string refusal = refusal_text(model_warning::Refusal{0.504, one_f_one_b(), d});
  CHECK(refusal.rfind("50% of the modelled run's rank-steps do not run the 1F1B M=8 plan the model replays (rank 2 "
                      "step 3, job 5: backward:0 where the plan has forward:4): the run is not the schedule",
                      0) == 0);
  const std::string tail = " (--steps or --run can select a part that does)";
  REQUIRE(refusal.size() > tail.size());
  CHECK(refusal.substr(refusal.size() - tail.size()) == tail);
}

TEST_CASE("advice: the memory model's error and a balancing suggestion on noise", "[advice]") {
  CHECK(
      warning_text(model_warning::MemoryModelError{-0.111, 2, 0.03})
          .rfind("the memory model's error is -11.1% on stage 2 (the measured plan replayed against the logged peak), "
                 "above 3%: ",
                 0) == 0);
  CHECK(warning_text(model_warning::BalancingNoise{1})
            .rfind("balancing stage 1 rests on it being the busiest stage, but stats finds no straggler on it", 0) ==
        0);
  // The list is the sentences in order.
  const std::vector<std::string> texts =
      warning_texts({model_warning::OneStep{}, model_warning::BalancingNoise{3}, model_warning::ModelError{0.5}});
  REQUIRE(texts.size() == 3);
  CHECK(texts[0] == warning_text(model_warning::OneStep{}));
  CHECK(contains(texts[1], "balancing stage 3 "));
  CHECK(contains(texts[2], "+50.0%"));
}

TEST_CASE("advice: the fit's assumptions, from their figures", "[advice]") {
  CHECK(contains(assumption_text(assumption::JobCosts{5, 2}), "durations over 5 step(s) and 2 replica(s)"));
  const std::string links = assumption_text(assumption::Links{20500, 1});
  CHECK(contains(links, "(median 20.5 us); a pair never measured takes the median"));
  CHECK_FALSE(contains(links, "scaled"));
  CHECK(contains(assumption_text(assumption::Links{20500, 0.5}), "(median 20.5 us), scaled by 0.5; a pair"));
  CHECK(assumption_text(assumption::Modelled{1, 2, 5}) == "modelled: run 2 of 2 (5 step(s))");
  CHECK(assumption_text(assumption::Resolution{1000000}) ==
        "the input's times are whole 1000.0 us: every fitted time is good to about that");
  CHECK(assumption_text(assumption::StepGap{5, 512345}) == "between steps: 512.3 us (median of the measured gaps)");
  CHECK(assumption_text(assumption::StepGap{1, 0}) == "between steps: none measured (one step), 0 charged");
  CHECK(assumption_text(assumption::Ranges{}).rfind("ranges: the mean period less and plus twice", 0) == 0);
  CHECK(contains(assumption_text(assumption::HostGap{120, 1500}), "(120 pair(s); median 1.5 us)"));
}

TEST_CASE("advice: the targets' and replays' assumptions", "[advice]") {
  using Source = assumption::WShare::Source;
  CHECK(assumption_text(assumption::WShare{Source::kAsked, 0.3}) == "backward_w share of a backward: 0.3 (--w-share)");
  CHECK(assumption_text(assumption::WShare{Source::kMeasured, 0.456}) ==
        "backward_w share of a backward: 0.46, measured from backward_b/backward_w");
  CHECK(assumption_text(assumption::WShare{Source::kDefault, 0.5}) ==
        "backward_w share of a backward: 0.5, not measured (the run has no split backward)");
  CHECK(assumption_text(assumption::ChunkCost{1}) == "a chunk costs its stage's time / V (the run has V=1)");
  const PlanShape zbvpp{ScheduleKind::kZBVPP, 4, 8, 2, false};
  REQUIRE(paddle_refuses(zbvpp));
  CHECK(assumption_text(assumption::PaddleRefuses{zbvpp}) ==
        "ZBVPP M=8 V=2: Paddle's ZB-VPP asserts M <= P (pipeline_zero_bubble.py), so Paddle would refuse this "
        "shape; the prediction is the plan its schedule creator builds without that assertion");
  CHECK(assumption_text(assumption::Balanced{}) == "balanced: every stage at the median stage's costs");
  CHECK(assumption_text(assumption::StageScale{2, 0.8}) == "stage 2: every job's cost x 0.8");
  CHECK(assumption_text(assumption::OtherJobs{7}) ==
        "7 other timed job(s) (lr, communication) are counted with the optimizer");
  CHECK(assumption_text(assumption::ReplayedSteps{6, 2})
            .rfind("each of the last 6 measured step(s) replayed on each of the 2 replica(s) ", 0) == 0);
  CHECK(assumption_text(assumption::Pieces{12}) == "12 piece(s) of overlapped jobs are not modelled");
}

TEST_CASE("advice: the memory assumptions", "[advice]") {
  CHECK(contains(assumption_text(assumption::NoMemorySamples{}), "the run has no memory samples"));
  CHECK(assumption_text(assumption::MemoryModel{}).rfind("memory: a stage's peak is its static part", 0) == 0);
  CHECK(contains(assumption_text(assumption::MemorySplitBackward{}), "frees it at its backward_w"));
  CHECK(contains(assumption_text(assumption::MemoryOtherV{}), "activation per micro-batch / V"));
  CHECK(assumption_text(assumption::DeviceMemory{80 * kGiB}).rfind("device memory: 80.0 GiB (--device-memory): ", 0) ==
        0);
  const std::vector<std::string> texts = assumption_texts({assumption::Balanced{}, assumption::Pieces{1}});
  REQUIRE(texts.size() == 2);
  CHECK(texts[1] == "1 piece(s) of overlapped jobs are not modelled");
}

TEST_CASE("advice: labels, and an outcome's error or the report's refusal", "[advice]") {
  CHECK(shape_label(one_f_one_b()) == "1F1B M=8");
  CHECK(shape_label({ScheduleKind::kVPP, 4, 16, 2, false}) == "VPP M=16 V=2");
  WhatifOutcome o;
  o.shape = {ScheduleKind::kUnknown, 4, 8, 1, false};
  CHECK(outcome_label(o) == "unknown M=8");
  o.named_by_schedule = true;
  CHECK(outcome_label(o) == "unknown");
  o.shape.schedule = ScheduleKind::kNoPipeline;
  CHECK(outcome_label(o) == "none");
  WhatifReport r;
  CHECK(outcome_error(o, r).empty());
  r.refusal = model_warning::Refusal{0.3, one_f_one_b(), {}};
  CHECK(outcome_error(o, r).empty());  // not refused
  o.refused = true;
  CHECK(outcome_error(o, r) == refusal_text(*r.refusal));
  o.error = "no plan for this schedule";
  CHECK(outcome_error(o, r) == "no plan for this schedule");
}

TEST_CASE("advice: the changes suggested, by name", "[advice]") {
  using Kind = SuggestedChange::Kind;
  CHECK(change_text({Kind::kSchedule, {ScheduleKind::kZBH1, 4, 8, 1, false}}) == "ZBH1");
  CHECK(change_text({Kind::kSchedule, {ScheduleKind::kVPP, 4, 8, 2, false}}) == "VPP V=2");
  CHECK(change_text({Kind::kMicroBatches, {ScheduleKind::k1F1B, 4, 16, 1, false}}) == "M=16");
  CHECK(change_text({Kind::kBalance, one_f_one_b(), 2}) == "balancing stage 2");
  CHECK(change_text({Kind::kBalance, one_f_one_b(), -1}) == "balancing the stages");
}

TEST_CASE("advice: a suggestion's gain, range and memory", "[advice]") {
  WhatifSuggestion s;
  s.change = {SuggestedChange::Kind::kSchedule, {ScheduleKind::kZBH1, 4, 8, 1, false}};
  s.period_gain = 0.17;
  s.gain_lo = 0.152;
  s.gain_hi = 0.188;
  s.peak_memory = s.measured_peak_memory = 4;
  CHECK(suggestion_text(s) == "ZBH1: -17% period (-15.2% to -18.8%), same peak memory");
  // Activations only (no memory samples): their change in percent.
  s.peak_memory = 5;
  CHECK(suggestion_text(s) == "ZBH1: -17% period (-15.2% to -18.8%), peak memory +25%");
  // With the memory model's bytes: the predicted peak, and its change where there is one.
  s.peak_memory_bytes = 29 * kGiB;
  s.measured_peak_memory_bytes = 21 * kGiB;
  CHECK(suggestion_text(s) == "ZBH1: -17% period (-15.2% to -18.8%), peak memory 29.0 GiB (+38%)");
  s.peak_memory_bytes = 21 * kGiB;
  CHECK(suggestion_text(s) == "ZBH1: -17% period (-15.2% to -18.8%), peak memory 21.0 GiB");
  // Another M: per micro-batch.
  s.change = {SuggestedChange::Kind::kMicroBatches, {ScheduleKind::k1F1B, 4, 16, 1, false}};
  s.per_micro_batch = true;
  CHECK(suggestion_text(s).rfind("M=16: -17% time per micro-batch (-15.2% to -18.8%), ", 0) == 0);
  // A shape Paddle refuses: its assertion follows.
  s.change = {SuggestedChange::Kind::kSchedule, {ScheduleKind::kZBVPP, 4, 8, 2, false}};
  s.per_micro_batch = false;
  CHECK(suggestion_text(s) ==
        "ZBVPP V=2: -17% period (-15.2% to -18.8%), peak memory 21.0 GiB (Paddle's ZB-VPP asserts M <= P)");
}

}  // namespace ppt
