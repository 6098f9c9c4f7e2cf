// What whatif's table and JSON say of a report built by hand: every figure
// is the report's (the writers decide nothing), a target of another M is
// compared per micro-batch and says so, a failed target shows its reason and
// no figures, the ranges, the model error, and text from the logs escaped.
#include <catch2/catch.hpp>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "output/text/whatif_writers.h"

namespace ppt {
namespace {

WhatifOutcome outcome(const char* label, ScheduleKind kind, int32_t m, double period_ms, double lo_ms, double hi_ms) {
  WhatifOutcome o;
  o.shape = PlanShape{kind, 4, m, 1, false};
  o.label = label;
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
  r.measured = outcome("1F1B M=8", ScheduleKind::k1F1B, 8, 10.0, 10.0, 10.0);
  r.replayed = outcome("1F1B M=8", ScheduleKind::k1F1B, 8, 10.2, 10.0, 10.4);
  r.predicted.push_back(outcome("ZBH1 M=8", ScheduleKind::kZBH1, 8, 9.0, 8.8, 9.2));
  r.predicted.push_back(outcome("1F1B M=16", ScheduleKind::k1F1B, 16, 18.2, 17.9, 18.5));
  WhatifOutcome failed = outcome("VPP M=8 V=2", ScheduleKind::kVPP, 8, 0, 0, 0);
  failed.error = "no plan \x1b[31mhere";
  r.predicted.push_back(failed);
  r.within_noise_of_best = {1};
  r.model_error = 0.02;
  r.assumptions = {"an assumption"};
  r.warnings = {"a warning"};
  return r;
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
  CHECK(j["model_error_pct"] == 2.0);
  CHECK(j["warnings"] == nlohmann::json::array({"a warning"}));
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
  CHECK(t.find("warnings (where the model does not hold):\n  - a warning") != std::string::npos);
  CHECK(t.find("assumptions:\n  - an assumption") != std::string::npos);
}

TEST_CASE("whatif without a model error says none, in both writers", "[whatif][writers]") {
  WhatifReport r = report();
  r.model_error = std::nan("");
  CHECK(nlohmann::json::parse(format_whatif_json(r))["model_error_pct"].is_null());
  CHECK(format_whatif_text(r).find("model error") == std::string::npos);
}

}  // namespace ppt
