// Comparing two runs: verdict, gate, where it changed, and the JSON that
// carries a baseline.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "analysis/diff.h"
#include "output/text/stats_writers.h"
#include "support/test_support.h"

namespace ppt {
namespace {

const std::string kRun = "--schedule 1f1b --stages 4 --micro-batches 8 --steps 4 --seed 21";

Stats stats_of(const std::string& dir) {
  Stats st = testing::stats_of(testing::load_dir(dir));
  st.source = dir;
  return st;
}

TEST_CASE("an identical pair of runs is the same and passes the gate", "[diff]") {
  testing::TempDir dir;
  Stats a = stats_of(testing::generate_log_dir(dir, "a", kRun));
  Stats b = stats_of(testing::generate_log_dir(dir, "b", kRun));
  DiffOptions opt;
  opt.fail_if_slower_pct = 1;
  Diff d = diff_stats(a, b, opt);
  CHECK(d.verdict == Verdict::kSame);
  CHECK(d.step_time.delta_pct == 0.0);
  CHECK_FALSE(d.gate_failed);
  CHECK(d.changed_ranks.empty());
  CHECK(d.schedule_changes.empty());
  CHECK(d.new_stragglers.empty());
  CHECK(d.notes.empty());
  REQUIRE(d.ranks.size() == 4);
  for (const RankDelta& r : d.ranks) {
    CHECK(r.busy_delta_pct == 0.0);
    CHECK(r.bubble_delta == 0.0);
  }
}

TEST_CASE("one rank 20% slower is named, makes the run slower and trips the gate", "[diff]") {
  testing::TempDir dir;
  Stats a = stats_of(testing::generate_log_dir(dir, "a", kRun));
  Stats b = stats_of(testing::generate_log_dir(dir, "b", kRun + " --slow 2:1.2"));
  DiffOptions opt;
  opt.fail_if_slower_pct = 5;
  Diff d = diff_stats(a, b, opt);
  CHECK(d.verdict == Verdict::kSlower);
  CHECK(d.step_time.delta_pct > 5);
  CHECK(d.gate_failed);
  REQUIRE_FALSE(d.changed_ranks.empty());
  CHECK(d.changed_ranks.front() == 2);
  CHECK(d.changed_ranks.size() == 1);  // the others wait more, but work the same
  for (const RankDelta& r : d.ranks) {
    INFO("rank " << r.rank);
    if (r.rank == 2) {
      CHECK(r.busy_delta_pct == Approx(20).margin(3));
      for (const TypeDelta& t : r.types) {
        if (t.type == "forward" || t.type == "backward") CHECK(t.delta_pct == Approx(20).margin(3));
      }
    } else {
      CHECK(std::fabs(r.busy_delta_pct) < 2);
      CHECK(r.bubble_delta > 0);  // they idle while rank 2 works
    }
  }
  REQUIRE_FALSE(d.new_stragglers.empty());
  CHECK(d.new_stragglers.front().rank == 2);
  CHECK(d.schedule_changes.empty());

  // A looser gate passes; the verdict does not depend on it.
  opt.fail_if_slower_pct = 50;
  Diff loose = diff_stats(a, b, opt);
  CHECK_FALSE(loose.gate_failed);
  CHECK(loose.verdict == Verdict::kSlower);
  // B against A is faster.
  CHECK(diff_stats(b, a).verdict == Verdict::kFaster);

  std::string text = format_diff_text(d);
  CHECK_THAT(text,
             Catch::Contains("slower") && Catch::Contains("rank 2 (stage 2) busy +") && Catch::Contains("FAILED"));
  CHECK_THAT(format_diff_markdown(d), Catch::Contains("| rank |") && Catch::Contains("slower"));
}

TEST_CASE("an optimizer with micro-batch 0 and one with none are the same job, not a change of schedule", "[diff]") {
  testing::TempDir dir;
  Stats a = stats_of(testing::generate_log_dir(dir, "a", "--schedule 1f1b --stages 4 --micro-batches 8 --steps 2"));
  Stats b = a;
  size_t renamed = 0;
  for (RankStats& r : b.ranks) {
    for (std::string& item : r.job_order) {
      if (item.rfind("optimizer:", 0) == 0) item = "optimizer", ++renamed;
    }
  }
  REQUIRE(renamed == 4);
  CHECK(diff_stats(a, b).schedule_changes.empty());
  // A real change is still one.
  b.ranks[1].job_order[0] = "backward:0";
  CHECK(diff_stats(a, b).schedule_changes.size() == 1);
}

TEST_CASE("a change of schedule is shown at the first position where a rank's job order differs", "[diff]") {
  testing::TempDir dir;
  Stats a = stats_of(testing::generate_log_dir(dir, "a", "--schedule 1f1b --stages 4 --micro-batches 8 --steps 2"));
  Stats b = stats_of(testing::generate_log_dir(dir, "b", "--schedule fthenb --stages 4 --micro-batches 8 --steps 2"));
  Diff d = diff_stats(a, b);
  // Stage s of 1F1B runs P-s = 4-s forwards, then backward 0; FThenB runs forward 4-s.
  REQUIRE(d.schedule_changes.size() == 4);
  for (const ScheduleChange& c : d.schedule_changes) {
    INFO("rank " << c.rank);
    CHECK(c.index == static_cast<size_t>(4 - c.rank));
    CHECK(c.a == "backward:0");
    CHECK(c.b == "forward:" + std::to_string(4 - c.rank));
    CHECK(c.a_jobs == c.b_jobs);
  }
  CHECK_FALSE(d.notes.empty());  // the schedules differ
}

TEST_CASE("stats JSON reads back into the same numbers and diffs as the logs do", "[diff][json]") {
  testing::TempDir dir;
  std::string a_dir = testing::generate_log_dir(dir, "a", kRun + " --dp 2 --machines 2");
  std::string b_dir = testing::generate_log_dir(dir, "b", kRun + " --dp 2 --machines 2 --slow 5:1.3");
  Timeline tl = testing::load_dir(a_dir);
  Stats a = testing::stats_of(tl);
  a.source = a_dir;
  std::string text = format_stats_json(a, tl.origin_ns);

  // The documented keys.
  nlohmann::json doc = nlohmann::json::parse(text);
  CHECK(doc["schema"] == "pp-timeline-stats/2");
  REQUIRE(doc["ranks"].size() == 8);
  for (const char* key : {"rank", "stage", "busy_us", "idle_us", "bubble_ratio", "warmup_us", "cooldown_us", "gaps_us",
                          "types", "job_order"}) {
    INFO(key);
    CHECK(doc["ranks"][0].contains(key));
  }
  REQUIRE(doc["steps"].size() == 4);
  CHECK(doc["steps"][0].contains("step"));
  CHECK(doc["steps"][0].contains("time_us"));
  CHECK(doc["steps"][0]["critical_path"]["hops"].size() > 0);
  CHECK(doc["schedule"]["name"] == "1F1B");
  CHECK(doc["ranks"][3]["busy_us"].get<double>() * 1000 == Approx(static_cast<double>(a.ranks[3].busy_ns)));

  std::string error;
  std::optional<Stats> back = parse_stats_json(text, &error);
  REQUIRE(back);
  CHECK(error.empty());
  CHECK(back->ranks.size() == a.ranks.size());
  CHECK(back->ranks[3].busy_ns == a.ranks[3].busy_ns);
  CHECK(back->ranks[3].job_order == a.ranks[3].job_order);
  CHECK(back->step_time.count == a.step_time.count);
  CHECK(back->steps[1].time_ns() == a.steps[1].time_ns());
  CHECK(back->schedule.kind == a.schedule.kind);
  CHECK(back->schedule.replicas == 2);

  Stats b = stats_of(b_dir);
  Diff from_logs = diff_stats(a, b);
  Diff from_json = diff_stats(*back, b);
  CHECK(from_json.verdict == from_logs.verdict);
  CHECK(from_json.verdict == Verdict::kSlower);
  CHECK(from_json.step_time.delta_pct == Approx(from_logs.step_time.delta_pct).margin(1e-6));
  CHECK(from_json.changed_ranks == from_logs.changed_ranks);
  CHECK(from_json.changed_ranks.front() == 5);
  CHECK(diff_stats(*back, a).verdict == Verdict::kSame);

  nlohmann::json dj = nlohmann::json::parse(format_diff_json(from_json));
  CHECK(dj["verdict"] == "slower");
  for (const char* key : {"a_us", "b_us", "delta_pct"}) CHECK(dj["step_time"].contains(key));
  CHECK(dj["ranks"][5].contains("busy_delta_pct"));
  CHECK(dj["ranks"][5].contains("bubble_delta"));
  CHECK(dj.contains("types"));
  CHECK(dj["schedule_changes"].is_array());
  CHECK(dj["gate"].is_null());
}

TEST_CASE("what is not a stats JSON is refused with a reason", "[diff][json]") {
  struct Case {
    std::string text, reason;
  };
  const std::vector<Case> cases = {
      {"{\"traceEvents\": []}", "no \"schema\""},
      {"{\"schema\": \"pp-timeline-diff/1\"}", "not a stats file"},
      {"{\"schema\": \"pp-timeline-stats/9\"}", "newer"},
      {"{\"schema\": \"pp-timeline-stats/1\", \"ranks\": [{\"rank\": \"x\"}]}", "not a valid stats file"},
      {"{\"schema\": ", "not JSON"},
      {"[1, 2]", "no \"schema\""},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    std::string error;
    CHECK_FALSE(parse_stats_json(c.text, &error));
    CHECK_THAT(error, Catch::Contains(c.reason));
  }
  CHECK(looks_like_json("  \n{\"a\":1}"));
  CHECK_FALSE(looks_like_json("I1020 09:15:07 ... Profiler Info"));
}

}  // namespace
}  // namespace ppt

namespace ppt {
namespace {

TEST_CASE("time between steps makes B slower in period and throughput, not in busy span", "[diff][period]") {
  testing::TempDir dir;
  const std::string run = "--schedule 1f1b --stages 4 --micro-batches 8 --steps 4 --seed 21";
  Stats a = stats_of(testing::generate_log_dir(dir, "a", run));
  Stats b = stats_of(testing::generate_log_dir(dir, "b", run + " --step-gap-us 100500"));
  DiffOptions opt;
  opt.fail_if_slower_pct = 3;
  Diff d = diff_stats(a, b, opt);
  CHECK(d.metric == GateMetric::kPeriod);
  CHECK(d.period.delta_pct > 3);
  CHECK(d.slower_pct == d.period.delta_pct);
  CHECK(d.verdict == Verdict::kSlower);
  CHECK(d.gate_failed);
  CHECK(std::fabs(d.step_time.delta_pct) < 1);
  REQUIRE(d.steps.size() == 4);
  CHECK(d.steps[0].period_b_ns - d.steps[0].period_a_ns > 99'000'000);
  CHECK(d.steps[3].period_a_ns == -1);
  CHECK(metric_change(d).rfind("step period +", 0) == 0);

  opt.metric = GateMetric::kBusy;
  Diff busy = diff_stats(a, b, opt);
  CHECK(busy.verdict == Verdict::kSame);
  CHECK_FALSE(busy.gate_failed);

  opt.metric = GateMetric::kThroughput;
  Diff tp = diff_stats(a, b, opt);
  CHECK(tp.throughput.delta_pct < -3);
  CHECK(tp.slower_pct == -tp.throughput.delta_pct);
  CHECK(tp.gate_failed);
}

TEST_CASE("without periods the busy span is compared, or the chosen metric is an error", "[diff][period]") {
  testing::TempDir dir;
  Stats a = stats_of(testing::generate_log_dir(dir, "a", "--schedule 1f1b --stages 2 --steps 1 --seed 3"));
  Stats b = stats_of(testing::generate_log_dir(dir, "b", "--schedule 1f1b --stages 2 --steps 1 --seed 3"));
  REQUIRE(a.step_period.count == 0);
  Diff d = diff_stats(a, b, {});
  CHECK(d.metric == GateMetric::kBusy);
  CHECK(d.metric_note.find("neither run has a step period") != std::string::npos);
  CHECK(d.gate_error.empty());
  DiffOptions chosen;
  chosen.metric_chosen = true;
  Diff e = diff_stats(a, b, chosen);
  CHECK(e.gate_error.rfind("--gate period: ", 0) == 0);
}

TEST_CASE("a stats JSON of format 1 reads back with its periods from the steps' starts", "[diff][json]") {
  testing::TempDir dir;
  Stats a = stats_of(testing::generate_log_dir(dir, "a", "--schedule 1f1b --stages 2 --steps 3 --seed 8"));
  nlohmann::json doc = nlohmann::json::parse(format_stats_json(a));
  CHECK(doc["schema"] == "pp-timeline-stats/2");
  doc["schema"] = "pp-timeline-stats/1";
  doc.erase("step_period");
  doc.erase("throughput");
  for (auto& s : doc["steps"]) s.erase("period_us");
  std::string error;
  std::optional<Stats> back = parse_stats_json(doc.dump(), &error);
  REQUIRE(back);
  CHECK(back->step_period.count == 2);
  CHECK(back->step_period.mean_ns == Approx(a.step_period.mean_ns).margin(2));
  CHECK(back->steps[0].period_ns == Approx(a.steps[0].period_ns).margin(2));
  CHECK(back->throughput.steps_per_second == Approx(a.throughput.steps_per_second).epsilon(1e-4));
}

}  // namespace
}  // namespace ppt
