#include "output/text/stats_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "output/text/stats_schema.h"
#include "util/json_values.h"

namespace ppt {

// Ratios and percentages rounded so the JSON stays readable (stats_json.h).
double round6(double v) { return std::round(v * 1e6) / 1e6; }
double round3(double v) { return std::round(v * 1e3) / 1e3; }

namespace {

using nlohmann::json;

// Every document is dumped here. Text from the input (types, paths, machine
// names) need not be UTF-8 (a folder name is any bytes): each byte that is
// not is written as U+FFFD, the rule of every JSON output (docs/hardening.md),
// where the library's default would throw.
template <typename Json>
std::string dumped(const Json& doc, int indent) {
  return doc.dump(indent, ' ', false, Json::error_handler_t::replace);
}

// Durations are integer nanoseconds inside and microseconds in the JSON.
// Held within the bound a stats file read back is checked against
// (json_values.h): a sum or a time past it (a hostile log's 292-year jobs)
// is written as the bound, so that diff reads what stats wrote.
double us(double ns) { return std::clamp(ns / 1000.0, -kJsonNumberLimit, kJsonNumberLimit); }
int64_t ns_from_us(double v) { return static_cast<int64_t>(std::llround(v * 1000.0)); }

json types_json(const std::vector<TypeDurations>& types) {
  json arr = json::array();
  for (const TypeDurations& t : types) {
    arr.push_back({{"type", t.type},
                   {"count", t.count},
                   {"mean_us", round3(us(t.mean_ns))},
                   {"p50_us", us(t.p50_ns)},
                   {"p95_us", us(t.p95_ns)},
                   {"max_us", us(t.max_ns)},
                   {"total_us", us(t.total_ns)}});
  }
  return arr;
}

json straggler_json(const Straggler& s) {
  return {{"rank", s.rank},
          {"stage", s.stage},
          {"type", s.type},
          {"median_us", us(s.median_ns)},
          {"others_median_us", us(s.others_median_ns)},
          {"margin", round6(s.margin)},
          {"consistency", round6(s.consistency)},
          {"jobs", s.jobs}};
}

json nullable_ratio(double v) { return v < 0 ? json(nullptr) : json(round6(v)); }

json step_json(const StepStats& ss, int64_t origin) {
  json step = {{"run", ss.run},
               {"step", ss.step},
               {"time_us", us(ss.time_ns())},
               {"start_us", us(ss.start_ns - origin)},
               {"end_us", us(ss.end_ns - origin)},
               {"ranks", ss.ranks},
               {"busy_us", us(ss.busy_ns)},
               {"idle_us", us(ss.idle_ns)},
               {"bubble_ratio", round6(ss.bubble_ratio)},
               {"period_us", ss.period_ns >= 0 ? json(us(ss.period_ns)) : json(nullptr)},
               {"incomplete_ranks", ss.incomplete_ranks}};
  const CriticalPath& cp = ss.critical_path;
  if (!cp.hops.empty()) {
    json hops = json::array();
    for (const CriticalHop& h : cp.hops) {
      hops.push_back({{"rank", h.rank},
                      {"type", h.type},
                      {"micro_batch", h.micro_batch},
                      {"start_us", us(h.start_ns - origin)},
                      {"dur_us", us(h.end_ns - h.start_ns)},
                      {"wait_us", us(h.wait_ns)},
                      {"from_other_rank", h.from_other_rank}});
    }
    step["critical_path"] = {
        {"share", round6(cp.share)}, {"job_us", us(cp.job_ns)}, {"wait_us", us(cp.wait_ns)}, {"hops", std::move(hops)}};
  }
  return step;
}

// Byte counts are integers within the bound the schema gives them (a margin
// below it as well), so that what stats writes reads back.
constexpr int64_t kBytesLimit = 9'000'000'000'000'000'000;
int64_t bytes(int64_t v) { return std::clamp(v, -kBytesLimit, kBytesLimit); }

json memory_json(const MemoryStats& mem) {
  json doc = {{"resolution_bytes", bytes(mem.resolution_bytes)}};
  const bool device = mem.device_memory_bytes > 0;
  if (device) doc["device_memory_bytes"] = bytes(mem.device_memory_bytes);
  json stages = json::array();
  for (const StageMemory& m : mem.stages) {
    json per_chunk = json::array();
    for (int64_t a : m.activation_bytes_per_chunk) per_chunk.push_back(bytes(a));
    json stage = {{"stage", m.stage},
                  {"ranks", m.ranks},
                  {"peak_allocated_bytes", bytes(m.peak_allocated_bytes)},
                  {"peak_reserved_bytes", bytes(m.peak_reserved_bytes)},
                  {"static_bytes", bytes(m.static_bytes)},
                  {"activation_bytes_per_micro_batch", bytes(m.activation_bytes_per_micro_batch)},
                  {"activation_bytes_per_chunk", std::move(per_chunk)},
                  {"peak_in_flight", m.peak_in_flight},
                  {"peak_rank", m.peak_rank},
                  {"peak_step", m.peak_step},
                  {"peak_at", m.peak_at}};
    if (device) {
      // Both sizes are at least 0, so the difference does not overflow.
      const int64_t margin = mem.device_memory_bytes - m.peak_allocated_bytes;
      stage["fits"] = margin >= 0;
      stage["margin_bytes"] = bytes(margin);
    }
    stages.push_back(std::move(stage));
  }
  doc["stages"] = std::move(stages);
  return doc;
}

}  // namespace

std::string format_step_json(const StepStats& step, int64_t time_origin_ns) {
  return dumped(step_json(step, time_origin_ns), -1);
}

bool looks_like_json(std::string_view head) {
  for (char c : head) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    return c == '{';
  }
  return false;
}

std::string format_stats_json(const Stats& st, int64_t origin) {
  json doc;
  doc["schema"] = std::string(kStatsSchema);
  doc["source"] = st.source;
  if (!st.partial.empty()) doc["partial"] = st.partial;
  doc["jobs"] = st.jobs;
  doc["runs"] = st.runs;
  doc["measured_run"] = st.run;
  doc["selection"] = st.selection;
  doc["notes"] = st.notes;
  doc["rank_steps"] = st.rank_steps;
  doc["complete_rank_steps"] = st.complete_rank_steps;
  doc["short_ranks"] = st.short_ranks;
  doc["ranks_without_jobs"] = st.ranks_without_jobs;
  doc["time_origin_epoch_ns"] = origin;
  const ScheduleInfo& s = st.schedule;
  doc["schedule"] = {{"name", std::string(schedule_name(s.kind))},
                     {"variant", s.variant},
                     {"pp_degree", s.pp_degree},
                     {"pp_degree_source", s.pp_degree_source},
                     {"replicas", s.replicas},
                     {"micro_batches", s.micro_batches},
                     {"chunks", s.chunks},
                     {"ideal_bubble_ratio", nullable_ratio(s.ideal_bubble_ratio)},
                     {"ideal_formula", s.ideal_formula},
                     {"measured_bubble_ratio", round6(st.bubble_ratio)},
                     {"evidence", s.evidence}};
  doc["bubble_ratio"] = round6(st.bubble_ratio);
  if (st.resolution_ns > 1) {
    doc["time_resolution_ns"] = st.resolution_ns;
    doc["bubble_ratio_error"] = round6(st.bubble_ratio_error);
  }
  auto summary = [](const StepTimeSummary& t) {
    return json{{"count", t.count},       {"mean_us", round3(us(t.mean_ns))}, {"median_us", us(t.median_ns)},
                {"min_us", us(t.min_ns)}, {"max_us", us(t.max_ns)},           {"stdev_us", round3(us(t.stdev_ns))}};
  };
  doc["step_time"] = summary(st.step_time);
  doc["step_period"] = summary(st.step_period);
  const Throughput& tp = st.throughput;
  auto positive = [](double v) { return v > 0 ? json(round3(v)) : json(nullptr); };
  doc["throughput"] = {{"steps_per_second", round6(tp.steps_per_second)},
                       {"micro_batches_per_second", positive(tp.micro_batches_per_second)},
                       {"micro_batch_size", tp.micro_batch_size > 0 ? json(tp.micro_batch_size) : json(nullptr)},
                       {"samples_per_second", positive(tp.samples_per_second)}};
  json steps = json::array();
  for (const StepStats& ss : st.steps) steps.push_back(step_json(ss, origin));
  doc["steps"] = std::move(steps);
  json ranks = json::array();
  for (const RankStats& r : st.ranks) {
    ranks.push_back({{"rank", r.rank},
                     {"stage", r.stage},
                     {"replica", r.replica},
                     {"machine", r.machine},
                     {"steps", r.steps},
                     {"jobs", r.jobs},
                     {"span_us", us(r.span_ns)},
                     {"busy_us", us(r.busy_ns)},
                     {"idle_us", us(r.idle_ns)},
                     {"bubble_ratio", round6(r.bubble_ratio)},
                     {"warmup_us", us(r.warmup_ns)},
                     {"cooldown_us", us(r.cooldown_ns)},
                     {"gaps_us", us(r.gaps_ns)},
                     {"types", types_json(r.types)},
                     {"job_order", r.job_order},
                     {"steps_like_order", r.steps_like_order},
                     {"missing_steps", r.missing_steps},
                     {"incomplete_steps", r.incomplete_steps},
                     {"missing_jobs", r.missing_jobs}});
    if (st.resolution_ns > 1) ranks.back()["bubble_ratio_error"] = round6(r.bubble_ratio_error);
  }
  doc["ranks"] = std::move(ranks);
  json stages = json::array();
  for (const StageStats& sg : st.stages) {
    stages.push_back({{"stage", sg.stage},
                      {"ranks", sg.ranks},
                      {"span_us", us(sg.span_ns)},
                      {"busy_us", us(sg.busy_ns)},
                      {"idle_us", us(sg.idle_ns)},
                      {"bubble_ratio", round6(sg.bubble_ratio)},
                      {"rank_steps", sg.rank_steps}});
  }
  doc["stages"] = std::move(stages);
  doc["types"] = types_json(st.types);
  doc["straggler_margin"] = round6(st.straggler_margin);
  json stragglers = json::array();
  for (const Straggler& s2 : st.stragglers) stragglers.push_back(straggler_json(s2));
  doc["stragglers"] = std::move(stragglers);
  json suggestions = json::array();
  for (const WhatifSuggestion& w : st.suggestions) {
    suggestions.push_back({{"change", w.change},
                           {"period_gain", round6(w.period_gain)},
                           {"gain_range", {round6(w.gain_lo), round6(w.gain_hi)}},
                           {"gain_of", w.per_micro_batch ? "time_per_micro_batch" : "period"},
                           {"peak_memory", round3(w.peak_memory)},
                           {"measured_peak_memory", round3(w.measured_peak_memory)},
                           {"peak_memory_bytes", w.peak_memory_bytes >= 0 ? json(w.peak_memory_bytes) : json(nullptr)},
                           {"text", w.text}});
  }
  doc["suggestions"] = std::move(suggestions);
  if (!st.suggestion_warnings.empty()) doc["suggestion_warnings"] = st.suggestion_warnings;
  if (st.memory.present()) doc["memory"] = memory_json(st.memory);
  return dumped(doc, 1) + "\n";
}

namespace {

// Reading: a missing key keeps the default; a key of the wrong type is an error.
template <typename T>
void get(const json& obj, const char* key, T& out) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return;
  out = it->get<T>();
}

int64_t get_us(const json& obj, const char* key) {
  double v = 0;
  get(obj, key, v);
  return ns_from_us(v);
}

std::vector<TypeDurations> read_types(const json& arr) {
  std::vector<TypeDurations> out;
  if (!arr.is_array()) return out;
  for (const json& t : arr) {
    TypeDurations d;
    get(t, "type", d.type);
    get(t, "count", d.count);
    double mean = 0;
    get(t, "mean_us", mean);
    d.mean_ns = mean * 1000.0;
    d.p50_ns = get_us(t, "p50_us");
    d.p95_ns = get_us(t, "p95_us");
    d.max_ns = get_us(t, "max_us");
    d.total_ns = get_us(t, "total_us");
    out.push_back(std::move(d));
  }
  return out;
}

MemoryStats read_memory(const json& doc) {
  MemoryStats mem;
  get(doc, "resolution_bytes", mem.resolution_bytes);
  get(doc, "device_memory_bytes", mem.device_memory_bytes);
  if (auto it = doc.find("stages"); it != doc.end() && it->is_array()) {
    for (const json& s : *it) {
      StageMemory m;
      get(s, "stage", m.stage);
      get(s, "ranks", m.ranks);
      get(s, "peak_allocated_bytes", m.peak_allocated_bytes);
      get(s, "peak_reserved_bytes", m.peak_reserved_bytes);
      get(s, "static_bytes", m.static_bytes);
      get(s, "activation_bytes_per_micro_batch", m.activation_bytes_per_micro_batch);
      get(s, "activation_bytes_per_chunk", m.activation_bytes_per_chunk);
      get(s, "peak_in_flight", m.peak_in_flight);
      get(s, "peak_rank", m.peak_rank);
      get(s, "peak_step", m.peak_step);
      get(s, "peak_at", m.peak_at);
      mem.stages.push_back(std::move(m));
    }
  }
  return mem;
}

}  // namespace

std::optional<Stats> parse_stats_json(std::string_view text, std::string* error, bool* bad_value) {
  if (bad_value) *bad_value = false;
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    *error = fmt::format("not JSON: {}", e.what());
    return std::nullopt;
  }
  try {
    std::string schema;
    if (doc.is_object()) get(doc, "schema", schema);
    if (schema.rfind("pp-timeline-stats/", 0) != 0) {
      *error = schema.empty() ? "not a `pp-timeline stats --json` file (no \"schema\" key)"
                              : fmt::format("schema \"{}\" is not a stats file", schema);
      return std::nullopt;
    }
    if (schema != kStatsSchema && schema != kStatsSchemaV1) {
      *error = fmt::format("schema \"{}\" is newer than this pp-timeline reads ({})", schema, kStatsSchema);
      return std::nullopt;
    }
    // A baseline may be crafted: every value is checked against the schema
    // (types, integer-ness, ranges, finiteness) before it is converted, so
    // that 1e308 is refused by name instead of becoming an int by undefined
    // behaviour. Version 1 files are checked by the same rules (their keys
    // are a subset).
    static const json kSchema = json::parse(kStatsSchemaText);
    std::string bad;
    if (schema == kStatsSchema) {
      bad = check_json_values(doc, kSchema);
    } else {
      json v1 = doc;  // all but its "schema" constant
      v1.erase("schema");
      bad = check_json_values(v1, kSchema);
    }
    if (!bad.empty()) {
      *error = "not a valid stats file: " + bad;
      if (bad_value) *bad_value = true;
      return std::nullopt;
    }
    Stats st;
    int64_t origin = 0;
    get(doc, "source", st.source);
    get(doc, "partial", st.partial);
    get(doc, "jobs", st.jobs);
    get(doc, "runs", st.runs);
    get(doc, "measured_run", st.run);
    get(doc, "selection", st.selection);
    get(doc, "notes", st.notes);
    get(doc, "rank_steps", st.rank_steps);
    get(doc, "complete_rank_steps", st.complete_rank_steps);
    get(doc, "short_ranks", st.short_ranks);
    get(doc, "ranks_without_jobs", st.ranks_without_jobs);
    get(doc, "time_origin_epoch_ns", origin);
    get(doc, "bubble_ratio", st.bubble_ratio);
    get(doc, "time_resolution_ns", st.resolution_ns);
    get(doc, "bubble_ratio_error", st.bubble_ratio_error);
    get(doc, "straggler_margin", st.straggler_margin);
    if (auto it = doc.find("schedule"); it != doc.end() && it->is_object()) {
      const json& s = *it;
      ScheduleInfo& si = st.schedule;
      std::string name;
      get(s, "name", name);
      si.kind = schedule_from_name(name).value_or(ScheduleKind::kUnknown);
      get(s, "variant", si.variant);
      get(s, "pp_degree", si.pp_degree);
      get(s, "pp_degree_source", si.pp_degree_source);
      get(s, "replicas", si.replicas);
      get(s, "micro_batches", si.micro_batches);
      get(s, "chunks", si.chunks);
      get(s, "ideal_bubble_ratio", si.ideal_bubble_ratio);
      get(s, "ideal_formula", si.ideal_formula);
      get(s, "evidence", si.evidence);
    }
    auto read_summary = [](const json& t, StepTimeSummary& sum) {
      get(t, "count", sum.count);
      double v = 0;
      get(t, "mean_us", v);
      sum.mean_ns = v * 1000.0;
      sum.median_ns = get_us(t, "median_us");
      sum.min_ns = get_us(t, "min_us");
      sum.max_ns = get_us(t, "max_us");
      v = 0;
      get(t, "stdev_us", v);
      sum.stdev_ns = v * 1000.0;
    };
    if (auto it = doc.find("step_time"); it != doc.end() && it->is_object()) read_summary(*it, st.step_time);
    const bool has_period = doc.contains("step_period") && doc["step_period"].is_object();
    if (has_period) read_summary(doc["step_period"], st.step_period);
    if (auto it = doc.find("steps"); it != doc.end() && it->is_array()) {
      for (const json& s : *it) {
        StepStats ss;
        get(s, "run", ss.run);
        get(s, "step", ss.step);
        if (__builtin_add_overflow(get_us(s, "start_us"), origin, &ss.start_ns) ||
            __builtin_add_overflow(ss.start_ns, get_us(s, "time_us"), &ss.end_ns)) {
          *error = fmt::format(
              "not a valid stats file: steps[{}]: start_us + time_origin_epoch_ns is "
              "beyond 64-bit nanoseconds",
              st.steps.size());
          if (bad_value) *bad_value = true;
          return std::nullopt;
        }
        get(s, "ranks", ss.ranks);
        ss.busy_ns = get_us(s, "busy_us");
        ss.idle_ns = get_us(s, "idle_us");
        get(s, "bubble_ratio", ss.bubble_ratio);
        if (auto p = s.find("period_us"); p != s.end() && !p->is_null()) ss.period_ns = ns_from_us(p->get<double>());
        get(s, "incomplete_ranks", ss.incomplete_ranks);
        st.steps.push_back(std::move(ss));
      }
    }
    bool starts = false;
    if (auto it = doc.find("steps"); it != doc.end() && it->is_array()) {
      starts = std::all_of(it->begin(), it->end(), [](const json& s) { return s.contains("start_us"); });
    }
    if (!has_period && starts) {
      // Written before periods were measured (pp-timeline-stats/1): each
      // step's start is there, so the periods follow (start to the next
      // start of the same run).
      std::vector<int64_t> periods;
      for (size_t k = 0; k + 1 < st.steps.size(); ++k) {
        if (st.steps[k + 1].run != st.steps[k].run) continue;
        st.steps[k].period_ns = st.steps[k + 1].start_ns - st.steps[k].start_ns;
        periods.push_back(st.steps[k].period_ns);
      }
      st.step_period = summarize_times(std::move(periods));
    }
    if (auto it = doc.find("ranks"); it != doc.end() && it->is_array()) {
      for (const json& r : *it) {
        RankStats rs;
        get(r, "rank", rs.rank);
        get(r, "stage", rs.stage);
        get(r, "replica", rs.replica);
        get(r, "machine", rs.machine);
        get(r, "steps", rs.steps);
        get(r, "jobs", rs.jobs);
        rs.span_ns = get_us(r, "span_us");
        rs.busy_ns = get_us(r, "busy_us");
        rs.idle_ns = get_us(r, "idle_us");
        get(r, "bubble_ratio", rs.bubble_ratio);
        get(r, "bubble_ratio_error", rs.bubble_ratio_error);
        rs.warmup_ns = get_us(r, "warmup_us");
        rs.cooldown_ns = get_us(r, "cooldown_us");
        rs.gaps_ns = get_us(r, "gaps_us");
        if (auto t = r.find("types"); t != r.end()) rs.types = read_types(*t);
        get(r, "job_order", rs.job_order);
        get(r, "steps_like_order", rs.steps_like_order);
        get(r, "missing_steps", rs.missing_steps);
        get(r, "incomplete_steps", rs.incomplete_steps);
        get(r, "missing_jobs", rs.missing_jobs);
        st.ranks.push_back(std::move(rs));
      }
    }
    if (auto it = doc.find("stages"); it != doc.end() && it->is_array()) {
      for (const json& s : *it) {
        StageStats sg;
        get(s, "stage", sg.stage);
        get(s, "ranks", sg.ranks);
        sg.span_ns = get_us(s, "span_us");
        sg.busy_ns = get_us(s, "busy_us");
        sg.idle_ns = get_us(s, "idle_us");
        get(s, "bubble_ratio", sg.bubble_ratio);
        get(s, "rank_steps", sg.rank_steps);
        st.stages.push_back(sg);
      }
    }
    if (auto it = doc.find("types"); it != doc.end()) st.types = read_types(*it);
    if (auto it = doc.find("stragglers"); it != doc.end() && it->is_array()) {
      for (const json& s : *it) {
        Straggler sg;
        get(s, "rank", sg.rank);
        get(s, "stage", sg.stage);
        get(s, "type", sg.type);
        sg.median_ns = get_us(s, "median_us");
        sg.others_median_ns = get_us(s, "others_median_us");
        get(s, "margin", sg.margin);
        get(s, "consistency", sg.consistency);
        get(s, "jobs", sg.jobs);
        st.stragglers.push_back(std::move(sg));
      }
    }
    uint32_t micro_batch_size = 0;
    if (auto it = doc.find("throughput"); it != doc.end() && it->is_object())
      get(*it, "micro_batch_size", micro_batch_size);
    st.throughput = compute_throughput(st.step_period, st.schedule, micro_batch_size);
    if (auto it = doc.find("memory"); it != doc.end() && it->is_object()) st.memory = read_memory(*it);
    return st;
  } catch (const json::exception& e) {
    *error = fmt::format("not a valid stats file: {}", e.what());
    return std::nullopt;
  }
}

namespace {

json diff_doc(const Diff& d) {
  json doc;
  doc["schema"] = std::string(kDiffSchema);
  doc["a"] = {{"source", d.a_source},
              {"schedule", d.a_schedule},
              {"bubble_ratio", round6(d.bubble_a)},
              {"steps", d.step_time.a_steps}};
  doc["b"] = {{"source", d.b_source},
              {"schedule", d.b_schedule},
              {"bubble_ratio", round6(d.bubble_b)},
              {"steps", d.step_time.b_steps}};
  if (d.bubble_a_error > 0) doc["a"]["bubble_ratio_error"] = round6(d.bubble_a_error);
  if (d.bubble_b_error > 0) doc["b"]["bubble_ratio_error"] = round6(d.bubble_b_error);
  doc["verdict"] = std::string(verdict_name(d.verdict));
  doc["metric"] = std::string(gate_metric_name(d.metric));
  doc["metric_note"] = d.metric_note.empty() ? json(nullptr) : json(d.metric_note);
  doc["slower_pct"] = round3(d.slower_pct);
  doc["noise_pct"] = round3(d.noise_pct);
  auto times = [](const StepTimeDelta& t) {
    return json{{"a_us", round3(us(t.a_ns))},
                {"b_us", round3(us(t.b_ns))},
                {"delta_pct", round3(t.delta_pct)},
                {"a_median_us", us(t.a_median_ns)},
                {"b_median_us", us(t.b_median_ns)},
                {"a_steps", t.a_steps},
                {"b_steps", t.b_steps},
                {"noise_pct", round3(t.noise_pct)}};
  };
  doc["step_time"] = times(d.step_time);
  doc["period"] = times(d.period);
  auto positive = [](double v) { return v > 0 ? json(round3(v)) : json(nullptr); };
  const ThroughputDelta& tp = d.throughput;
  doc["throughput"] = {{"a_steps_per_second", round6(tp.a.steps_per_second)},
                       {"b_steps_per_second", round6(tp.b.steps_per_second)},
                       {"delta_pct", round3(tp.delta_pct)},
                       {"a_micro_batches_per_second", positive(tp.a.micro_batches_per_second)},
                       {"b_micro_batches_per_second", positive(tp.b.micro_batches_per_second)},
                       {"a_samples_per_second", positive(tp.a.samples_per_second)},
                       {"b_samples_per_second", positive(tp.b.samples_per_second)}};
  json steps = json::array();
  auto opt_us = [](bool in, int64_t ns) { return in && ns >= 0 ? json(us(ns)) : json(nullptr); };
  for (const StepDelta& sd : d.steps) {
    steps.push_back({{"step_a", sd.in_a ? json(sd.step_a) : json(nullptr)},
                     {"step_b", sd.in_b ? json(sd.step_b) : json(nullptr)},
                     {"period_a_us", opt_us(sd.in_a, sd.period_a_ns)},
                     {"period_b_us", opt_us(sd.in_b, sd.period_b_ns)},
                     {"period_delta_pct", round3(sd.period_delta_pct)},
                     {"span_a_us", opt_us(sd.in_a, sd.span_a_ns)},
                     {"span_b_us", opt_us(sd.in_b, sd.span_b_ns)},
                     {"span_delta_pct", round3(sd.span_delta_pct)}});
  }
  doc["steps"] = std::move(steps);
  doc["bubble"] = {{"a", round6(d.bubble_a)}, {"b", round6(d.bubble_b)}, {"delta", round6(d.bubble_b - d.bubble_a)}};
  if (d.fail_if_slower_pct >= 0) {
    doc["gate"] = {{"fail_if_slower_pct", d.fail_if_slower_pct},
                   {"metric", std::string(gate_metric_name(d.metric))},
                   {"failed", d.gate_failed}};
  } else {
    doc["gate"] = nullptr;
  }
  doc["changed_ranks"] = d.changed_ranks;
  auto type_json = [](const TypeDelta& td) {
    return json{{"type", td.type},
                {"count_a", td.count_a},
                {"count_b", td.count_b},
                {"mean_a_us", round3(us(td.mean_a_ns))},
                {"mean_b_us", round3(us(td.mean_b_ns))},
                {"delta_pct", round3(td.delta_pct)},
                {"p50_a_us", us(td.p50_a_ns)},
                {"p50_b_us", us(td.p50_b_ns)},
                {"p95_a_us", us(td.p95_a_ns)},
                {"p95_b_us", us(td.p95_b_ns)}};
  };
  json ranks = json::array();
  for (const RankDelta& r : d.ranks) {
    json types = json::array();
    for (const TypeDelta& td : r.types) types.push_back(type_json(td));
    ranks.push_back({{"rank", r.rank},
                     {"stage", r.stage},
                     {"in_a", r.in_a},
                     {"in_b", r.in_b},
                     {"busy_a_us", round3(us(r.busy_a_ns))},
                     {"busy_b_us", round3(us(r.busy_b_ns))},
                     {"busy_delta_pct", round3(r.busy_delta_pct)},
                     {"idle_a_us", round3(us(r.idle_a_ns))},
                     {"idle_b_us", round3(us(r.idle_b_ns))},
                     {"idle_delta_pct", round3(r.idle_delta_pct)},
                     {"bubble_a", round6(r.bubble_a)},
                     {"bubble_b", round6(r.bubble_b)},
                     {"bubble_delta", round6(r.bubble_delta)},
                     {"types", std::move(types)}});
  }
  doc["ranks"] = std::move(ranks);
  json types = json::array();
  for (const TypeDelta& td : d.types) types.push_back(type_json(td));
  doc["types"] = std::move(types);
  json changes = json::array();
  for (const ScheduleChange& c : d.schedule_changes) {
    changes.push_back(
        {{"rank", c.rank}, {"index", c.index}, {"a", c.a}, {"b", c.b}, {"a_jobs", c.a_jobs}, {"b_jobs", c.b_jobs}});
  }
  doc["schedule_changes"] = std::move(changes);
  json stragglers = json::array();
  for (const Straggler& s : d.new_stragglers) stragglers.push_back(straggler_json(s));
  doc["new_stragglers"] = std::move(stragglers);
  doc["notes"] = d.notes;
  return doc;
}

}  // namespace

std::string format_diff_json(const Diff& d) { return dumped(diff_doc(d), 1) + "\n"; }

std::string format_diff_set_json(const std::vector<Diff>& diffs) {
  json doc;
  doc["schema"] = std::string(kDiffSetSchema);
  doc["baseline"] = diffs.empty() ? std::string() : diffs.front().a_source;
  bool failed = false;
  json arr = json::array();
  for (const Diff& d : diffs) {
    failed = failed || d.gate_failed;
    json one = diff_doc(d);
    arr.push_back(std::move(one));
  }
  doc["gate_failed"] = failed;
  doc["diffs"] = std::move(arr);
  return dumped(doc, 1) + "\n";
}

}  // namespace ppt
