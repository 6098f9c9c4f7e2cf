// What whatif's table and JSON say of a report built by hand: every figure
// is the report's (the writers decide nothing), a target of another M is
// compared per micro-batch and says so, a failed target shows its reason and
// no figures, the ranges, the model error, text from the logs escaped, and
// the peak memory with the device's fit.
#include <catch2/catch.hpp>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "output/text/advice_text.h"
#include "output/text/whatif_writers.h"

namespace ppt {
namespace {

WhatifOutcome outcome(ScheduleKind kind, int32_t m, double period_ms, double lo_ms, double hi_ms) {
  WhatifOutcome o;
  o.shape = PlanShape{kind, 4, m, 1, false};
  o.period_ns = period_ms * 1e6;
  o.busy_ns = period_ms * 0.9e6;
  o.bubble_ratio = 0.25;
  o.micro_batches_per_second = m / (period_ms / 1e3);
  o.time_per_micro_batch_ns = o.period_ns / m;
  o.period_lo_ns = lo_ms * 1e6;
  o.period_hi_ns = hi_ms * 1e6;
  o.peak_in_flight = {4, 3, 2, 1};
  return o;
}

WhatifReport report() {
  WhatifReport r;
  r.measured = outcome(ScheduleKind::k1F1B, 8, 10.0, 10.0, 10.0);
  r.replayed = outcome(ScheduleKind::k1F1B, 8, 10.2, 10.0, 10.4);
  r.predicted.push_back(outcome(ScheduleKind::kZBH1, 8, 9.0, 8.8, 9.2));
  r.predicted.push_back(outcome(ScheduleKind::k1F1B, 16, 18.2, 17.9, 18.5));
  WhatifOutcome failed = outcome(ScheduleKind::kVPP, 8, 0, 0, 0);
  failed.shape.chunks = 2;
  failed.error = "no plan \x1b[31mhere";
  r.predicted.push_back(failed);
  r.within_noise_of_best = {1};
  r.model_error = 0.02;
  r.assumptions = {assumption::Balanced{}};
  r.warnings = {model_warning::OneStep{}};
  return r;
}

// The table's line that starts with `kind` ("predicted #3"), "" when none.
std::string table_line(const std::string& table, const std::string& kind) {
  const size_t at = table.find("\n" + kind + " ");
  if (at == std::string::npos) return "";
  return table.substr(at + 1, table.find('\n', at + 1) - at - 1);
}

}  // namespace

TEST_CASE("whatif's JSON carries the report's figures, per micro-batch where M differs", "[whatif][writers]") {
  const nlohmann::json j = nlohmann::json::parse(format_whatif_json(report()));
  CHECK(j["schema"] == "pp-timeline-whatif/1");
  CHECK(j["measured"]["period_us"] == 10000.0);
  CHECK(j["measured"]["period_range_us"].is_null());  // the measured run has no range
  CHECK(j["measured"]["vs_measured_pct"].is_null());
  CHECK(j["replayed"]["period_range_us"] == nlohmann::json::array({10000.0, 10400.0}));
  CHECK(j["replayed"]["vs_measured_pct"] == 2.0);
  REQUIRE(j["predicted"].size() == 3);
  CHECK(j["predicted"][0]["vs_measured_pct"] == -10.0);
  CHECK(j["predicted"][0]["vs_measured_of"] == "period");
  CHECK(j["predicted"][0]["within_noise_of_best"] == false);
  // 18.2 ms for 16 micro-batches against 10 ms for 8: 1.1375 ms against 1.25 ms each.
  CHECK(j["predicted"][1]["vs_measured_of"] == "time_per_micro_batch");
  CHECK(j["predicted"][1]["vs_measured_pct"] == -9.0);
  CHECK(j["predicted"][1]["within_noise_of_best"] == true);
  CHECK(j["predicted"][2]["period_us"].is_null());
  CHECK(j["predicted"][2]["error"] == "no plan \x1b[31mhere");  // JSON escapes it itself
  CHECK(j["measured"]["label"] == "1F1B M=8");
  CHECK(j["predicted"][0]["label"] == "ZBH1 M=8");
  CHECK(j["predicted"][2]["label"] == "VPP M=8 V=2");
  CHECK(j["model_error_pct"] == 2.0);
  CHECK(j["warnings"] == nlohmann::json::array({warning_text(model_warning::OneStep{})}));
  CHECK(j["assumptions"] == nlohmann::json::array({assumption_text(assumption::Balanced{})}));
  CHECK(j["refusal"].is_null());
}

TEST_CASE("whatif's table: ranges, per-mb deltas, noise marks, the model error and escaped text", "[whatif][writers]") {
  const std::string t = format_whatif_text(report());
  CHECK(t.find("ranked by throughput") != std::string::npos);
  CHECK(t.find("10.000-10.400") != std::string::npos);  // the replayed range
  CHECK(t.find("-10.0%") != std::string::npos);
  CHECK(t.find("-9.0% per mb") != std::string::npos);
  CHECK(t.find("predicted #2 ~#1") != std::string::npos);
  CHECK(t.find("model error (replayed against measured period): +2.00%") != std::string::npos);
  CHECK(t.find("\x1b") == std::string::npos);  // the error text is terminal-escaped
  CHECK(t.find("warnings (where the model does not hold):\n  - the run has one step: there is no period") !=
        std::string::npos);
  CHECK(t.find("assumptions:\n  - balanced: every stage at the median stage's costs\n") != std::string::npos);
  CHECK(table_line(t, "predicted #3").find(" VPP M=8 V=2 ") != std::string::npos);
  CHECK(t.find("no prediction") == std::string::npos);
}

TEST_CASE("whatif refused: every target fails with the refusal's reason, in both writers", "[whatif][writers]") {
  WhatifReport r = report();
  r.refusal = model_warning::Refusal{0.5, PlanShape{ScheduleKind::k1F1B, 4, 8, 1, false},
                                     PlanDifference{1, 3, 2, PlanJob{PlanRole::kForward, 0, 1}, std::nullopt}};
  r.predicted[0].refused = r.predicted[1].refused = true;
  const std::string why = refusal_text(*r.refusal);
  REQUIRE(why.find("rank 1 step 3, job 2: forward:1 where the plan has the step's end") != std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(format_whatif_json(r));
  CHECK(j["refusal"] == why);
  CHECK(j["predicted"][0]["error"] == why);
  CHECK(j["predicted"][0]["period_us"].is_null());
  CHECK(j["predicted"][1]["error"] == why);
  CHECK(j["predicted"][2]["error"] == "no plan \x1b[31mhere");  // its own error before the refusal
  CHECK(j["replayed"]["error"].is_null());
  const std::string t = format_whatif_text(r);
  CHECK(t.find("\nno prediction: " + why + "\n") != std::string::npos);
  const std::string zbh1 = table_line(t, "predicted #1");
  CHECK(zbh1.find(" ZBH1 M=8 ") != std::string::npos);
  CHECK(zbh1.find("9.000") == std::string::npos);  // no figures
  CHECK(zbh1.find(why.substr(0, 40)) != std::string::npos);
}

TEST_CASE("whatif without a model error says none, in both writers", "[whatif][writers]") {
  WhatifReport r = report();
  r.model_error = std::nan("");
  CHECK(nlohmann::json::parse(format_whatif_json(r))["model_error_pct"].is_null());
  CHECK(format_whatif_text(r).find("model error") == std::string::npos);
}

TEST_CASE("whatif's JSON and table without memory samples: no peak, no fit", "[whatif][writers][memory]") {
  const WhatifReport r = report();
  const nlohmann::json j = nlohmann::json::parse(format_whatif_json(r));
  for (const nlohmann::json& o : {j["measured"], j["replayed"], j["predicted"][0]}) {
    CHECK(o["peak_memory_bytes"].is_null());
    CHECK(o["fits"].is_null());
    CHECK(o["margin_bytes"].is_null());
  }
  CHECK(j["memory_model_error_pct"].is_null());
  CHECK(j["device_memory_bytes"].is_null());
  const std::string t = format_whatif_text(r);
  CHECK(t.find("peak GiB") == std::string::npos);
  CHECK(t.find("fit") == std::string::npos);
}

namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

// report() with memory: the measured peaks, the replay 1% above, ZBH1 too
// big for an 80 GiB device (83.2 GiB on stage 0), 1F1B M=16 within it.
WhatifReport memory_report() {
  WhatifReport r = report();
  r.memory.resolution_bytes = 10737418;
  r.memory.stages.resize(4);
  r.device_memory_bytes = 80 * kGiB;
  r.measured.peak_memory_bytes = {70 * kGiB, 60 * kGiB, 50 * kGiB, -1};
  r.replayed.peak_memory_bytes = {std::llround(70.7 * kGiB), 60 * kGiB, 50 * kGiB, -1};
  r.predicted[0].peak_memory_bytes = {std::llround(83.2 * kGiB), 70 * kGiB, 60 * kGiB, -1};
  r.predicted[0].fits = false;
  r.predicted[0].margin_bytes = 80 * kGiB - std::llround(83.2 * kGiB);
  r.predicted[1].peak_memory_bytes = {75 * kGiB, 65 * kGiB, 55 * kGiB, -1};
  r.predicted[1].margin_bytes = 5 * kGiB;
  r.measured.margin_bytes = 10 * kGiB;
  r.replayed.margin_bytes = 80 * kGiB - std::llround(70.7 * kGiB);
  r.memory_model_error = 0.01;
  r.memory_error_stage = 0;
  return r;
}

}  // namespace

TEST_CASE("whatif's JSON: peak memory by stage, the fit and its margin, the memory model's error",
          "[whatif][writers][memory]") {
  const WhatifReport r = memory_report();
  const nlohmann::json j = nlohmann::json::parse(format_whatif_json(r));
  CHECK(j["measured"]["peak_memory_bytes"] == nlohmann::json::array({70 * kGiB, 60 * kGiB, 50 * kGiB, nullptr}));
  CHECK(j["replayed"]["peak_memory_bytes"][0] == std::llround(70.7 * kGiB));
  CHECK(j["predicted"][0]["fits"] == false);
  CHECK(j["predicted"][0]["margin_bytes"] == 80 * kGiB - std::llround(83.2 * kGiB));
  CHECK(j["predicted"][0]["margin_bytes"].get<int64_t>() < 0);
  CHECK(j["predicted"][1]["fits"] == true);
  CHECK(j["predicted"][1]["margin_bytes"] == 5 * kGiB);
  CHECK(j["measured"]["fits"] == true);
  // The failed target has no peak, so no fit either.
  CHECK(j["predicted"][2]["peak_memory_bytes"].is_null());
  CHECK(j["predicted"][2]["fits"].is_null());
  CHECK(j["memory_model_error_pct"] == 1.0);
  CHECK(j["memory_error_stage"] == 0);
  CHECK(j["device_memory_bytes"] == 80 * kGiB);
  // Without a device size: the peaks, no fit.
  WhatifReport no_device = r;
  no_device.device_memory_bytes = 0;
  const nlohmann::json n = nlohmann::json::parse(format_whatif_json(no_device));
  CHECK(n["predicted"][0]["peak_memory_bytes"][0] == std::llround(83.2 * kGiB));
  CHECK(n["predicted"][0]["fits"].is_null());
  CHECK(n["device_memory_bytes"].is_null());
}

TEST_CASE("whatif's table: a peak memory column and the target that does not fit marked", "[whatif][writers][memory]") {
  const std::string t = format_whatif_text(memory_report());
  CHECK(t.find("peak GiB") != std::string::npos);
  CHECK(t.find("83.20") != std::string::npos);
  CHECK(t.find("70.70") != std::string::npos);
  CHECK(t.find("does not fit: 83.2 GiB > 80.0 GiB") != std::string::npos);
  // Only the one: the line of 1F1B M=16 has no mark.
  const size_t m16 = t.find("1F1B M=16");
  REQUIRE(m16 != std::string::npos);
  CHECK(t.substr(m16, t.find('\n', m16) - m16).find("fit") == std::string::npos);
  CHECK(t.find("memory model error (replayed against measured peak, worst on stage 0): +1.00%") != std::string::npos);
  CHECK(t.find("device memory 80.0 GiB") != std::string::npos);
  for (size_t at = 0, end; (end = t.find('\n', at)) != std::string::npos; at = end + 1) {
    CHECK((end == at || t[end - 1] != ' '));  // no trailing spaces where the last column is empty
  }
}

}  // namespace ppt
