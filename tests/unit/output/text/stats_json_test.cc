// The stats JSON's writer and reader: every field of every block that is
// read back comes back as it was written, so that what `diff` reads from a
// stored baseline is what `stats --json` measured.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>

#include "output/text/stats_json.h"

namespace ppt {
namespace {

TypeDurations type_durations(const std::string& type, int64_t scale) {
  TypeDurations t;
  t.type = type;
  t.count = 7;
  t.mean_ns = 1234.5 * static_cast<double>(scale);
  t.p50_ns = 1200 * scale;
  t.p95_ns = 1900 * scale;
  t.max_ns = 2500 * scale;
  t.total_ns = 8642 * scale;
  return t;
}

StepStats step(int32_t number, int64_t start, int64_t period) {
  StepStats s;
  s.run = 0;
  s.step = number;
  s.start_ns = start;
  s.end_ns = start + 800000;
  s.ranks = 2;
  s.busy_ns = 1200000;
  s.idle_ns = 400000;
  s.bubble_ratio = 0.25;
  s.period_ns = period;
  s.incomplete_ranks = number == 1 ? 1 : 0;
  return s;
}

// A run's stats with a value other than its default in every field the
// JSON reads back: a field written and not read (or read into another)
// changes the second writing.
Stats every_field() {
  Stats st;
  st.source = "logs/";
  st.partial = "ranks 0-1 of 4 loaded (--devices)";
  st.jobs = 96;
  st.runs = 2;
  st.run = 1;
  st.selection = "--steps 1:2";
  st.notes = {"a note"};
  st.rank_steps = 4;
  st.complete_rank_steps = 3;
  st.short_ranks = {1};
  st.ranks_without_jobs = {3};
  st.straggler_margin = 0.1;
  st.schedule.kind = ScheduleKind::k1F1B;
  st.schedule.variant = "split backward";
  st.schedule.pp_degree = 2;
  st.schedule.pp_degree_source = "--pp-degree";
  st.schedule.replicas = 2;
  st.schedule.micro_batches = 8;
  st.schedule.chunks = 1;
  st.schedule.ideal_bubble_ratio = 0.111111;
  st.schedule.ideal_formula = "(P-1)/(M+P-1)";
  st.schedule.evidence = "the job order";
  st.bubble_ratio = 0.3125;
  st.resolution_ns = 1000;
  st.bubble_ratio_error = 0.002;
  st.steps = {step(1, 5000000, 1000000), step(2, 6000000, -1)};
  st.step_time = summarize_times({800000, 800000});
  st.step_period = summarize_times({1000000});
  st.throughput = compute_throughput(st.step_period, st.schedule, 4);
  RankStats r;
  r.rank = 1;
  r.stage = 1;
  r.replica = 0;
  r.machine = 1;
  r.steps = 2;
  r.jobs = 32;
  r.span_ns = 1600000;
  r.busy_ns = 1100000;
  r.idle_ns = 500000;
  r.bubble_ratio = 0.3125;
  r.bubble_ratio_error = 0.001;
  r.warmup_ns = 200000;
  r.cooldown_ns = 100000;
  r.gaps_ns = 200000;
  r.types = {type_durations("forward", 1), type_durations("backward", 2)};
  r.job_order = {"forward:0", "backward:0"};
  r.steps_like_order = 1;
  r.missing_steps = 1;
  r.incomplete_steps = 1;
  r.missing_jobs = 3;
  st.ranks = {r};
  StageStats sg;
  sg.stage = 1;
  sg.ranks = 2;
  sg.span_ns = 3200000;
  sg.busy_ns = 2200000;
  sg.idle_ns = 1000000;
  sg.bubble_ratio = 0.3125;
  sg.rank_steps = 3;
  st.stages = {sg};
  st.types = {type_durations("forward", 3)};
  Straggler s;
  s.rank = 1;
  s.stage = 1;
  s.type = "backward";
  s.median_ns = 3000;
  s.others_median_ns = 2000;
  s.margin = 0.5;
  s.consistency = 0.875;
  s.jobs = 16;
  st.stragglers = {s};
  st.memory.resolution_bytes = 1024;
  st.memory.device_memory_bytes = int64_t{80} << 30;
  StageMemory m;
  m.stage = 1;
  m.ranks = 2;
  m.peak_allocated_bytes = int64_t{60} << 30;
  m.peak_reserved_bytes = int64_t{64} << 30;
  m.static_bytes = int64_t{20} << 30;
  m.activation_bytes_per_chunk = {int64_t{5} << 30, int64_t{3} << 30};
  m.activation_bytes_per_micro_batch = int64_t{8} << 30;
  m.peak_in_flight = 5;
  m.peak_rank = 3;
  m.peak_step = 2;
  m.peak_at = "after forward, micro-batch 4";
  st.memory.stages = {m};
  return st;
}

TEST_CASE("stats JSON: every field read back is written again the same", "[stats][json]") {
  const Stats st = every_field();
  const int64_t origin = 4000000;
  const std::string text = format_stats_json(st, origin);
  std::string error;
  std::optional<Stats> back = parse_stats_json(text, &error);
  REQUIRE(back);
  CHECK(error.empty());
  CHECK(format_stats_json(*back, origin) == text);
  // The values themselves, a few per block, in the units inside.
  CHECK(back->partial == st.partial);
  CHECK(back->steps[0].start_ns == st.steps[0].start_ns);
  CHECK(back->steps[0].end_ns == st.steps[0].end_ns);
  CHECK(back->steps[1].period_ns == -1);
  CHECK(back->ranks[0].types[1].p95_ns == st.ranks[0].types[1].p95_ns);
  CHECK(back->ranks[0].bubble_ratio_error == st.ranks[0].bubble_ratio_error);
  CHECK(back->stragglers[0].others_median_ns == st.stragglers[0].others_median_ns);
  CHECK(back->memory.stages[0].activation_bytes_per_chunk == st.memory.stages[0].activation_bytes_per_chunk);
  CHECK(back->schedule.kind == ScheduleKind::k1F1B);
  CHECK(back->throughput.micro_batch_size == 4);
  CHECK(back->step_period.count == 1);
}

TEST_CASE("stats JSON: the figures derived from others are written, not read", "[stats][json]") {
  const Stats st = every_field();
  nlohmann::json doc = nlohmann::json::parse(format_stats_json(st));
  // The memory's fits and margins follow from --device-memory; the schedule's
  // measured ratio is the run's.
  CHECK(doc["memory"]["stages"][0]["fits"] == true);
  CHECK(doc["memory"]["stages"][0]["margin_bytes"] == (int64_t{20} << 30));
  CHECK(doc["schedule"]["measured_bubble_ratio"] == doc["bubble_ratio"]);
  // Read back, a changed derived figure changes nothing.
  doc["schedule"]["measured_bubble_ratio"] = 0.9;
  doc["throughput"]["steps_per_second"] = 12345.0;
  std::string error;
  std::optional<Stats> back = parse_stats_json(doc.dump(), &error);
  REQUIRE(back);
  CHECK(back->bubble_ratio == Approx(st.bubble_ratio));
  CHECK(back->throughput.steps_per_second == Approx(st.throughput.steps_per_second));
}

TEST_CASE("stats JSON: a step past 64-bit nanoseconds is refused by its index", "[stats][json]") {
  nlohmann::json doc = nlohmann::json::parse(format_stats_json(every_field(), 4000000));
  doc["time_origin_epoch_ns"] = int64_t{9'000'000'000'000'000'000};
  doc["steps"][1]["start_us"] = 1e15;
  std::string error;
  bool bad_value = false;
  CHECK_FALSE(parse_stats_json(doc.dump(), &error, &bad_value));
  CHECK(bad_value);
  CHECK(error == "not a valid stats file: steps[1]: start_us + time_origin_epoch_ns is beyond 64-bit nanoseconds");
}

}  // namespace
}  // namespace ppt
