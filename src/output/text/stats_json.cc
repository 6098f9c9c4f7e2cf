#include "output/text/stats_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <type_traits>

#include "output/text/advice_text.h"
#include "output/text/json_text.h"
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

// Byte counts are integers within the bound the schema gives them (a margin
// below it as well), so that what stats writes reads back.
constexpr int64_t kBytesLimit = 9'000'000'000'000'000'000;
int64_t clamp_bytes(int64_t v) { return std::clamp(v, -kBytesLimit, kBytesLimit); }

json ratio_or_null(double v) { return v < 0 ? json(nullptr) : json(round6(v)); }

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

// What a block's fields need from around it.
struct JsonContext {
  int64_t origin = 0;               // time_origin_epoch_ns: the steps' times are relative to it
  bool resolution_errors = true;    // the ± of the bubble ratios (written when the resolution is coarse)
  int64_t device_memory_bytes = 0;  // the memory stages' fits and margins (written with --device-memory)
  std::string where;                // "steps[3]": the block, for a reader's error
  // Called before the suggestions are written, which may still be being
  // made while the fields before them are (format_stats_json).
  const std::function<void()>* before_suggestions = nullptr;
};

// Each block of the stats JSON lists its fields once, in a fields() below,
// for both directions: JsonWriter puts each field into a JSON object,
// JsonReader takes it back out, so that a field is added in one place and
// the writer and the reader cannot drift apart. The method names the
// field's form: micros (nanoseconds inside, microseconds in the JSON),
// micros3 (the same, rounded to 3 decimals, read back unrounded), ratio
// (6 decimals), bytes (clamped to the schema's bound), the nullable forms
// (null for "none"). A field written only (a figure derived from others)
// goes through written(); one that only one direction has is under
// `if (!IO::kWrites || ...)` (read when there, written when it applies).
class JsonWriter {
 public:
  static constexpr bool kWrites = true;
  JsonWriter(JsonContext context, JsonTextStyle& style, int depth = 0)
      : context(std::move(context)), members_(style, depth) {}

  template <typename T>
  void value(const char* key, const T& v) {
    // Integers that fit int64 by their type take the short path; a uint64_t
    // goes through the serializer, which writes it unsigned.
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool> && (std::is_signed_v<T> || sizeof(T) < 8)) {
      members_.add_integer(key, static_cast<int64_t>(v));
    } else {
      members_.add(key, json(v));
    }
  }
  void micros(const char* key, double ns) { members_.add(key, us(ns)); }
  void micros3(const char* key, double ns) { members_.add(key, round3(us(ns))); }
  void ratio(const char* key, double r) { members_.add(key, round6(r)); }
  void nullable_ratio(const char* key, double r) { members_.add(key, ratio_or_null(r)); }
  void nullable_micros(const char* key, int64_t ns) { members_.add(key, ns >= 0 ? json(us(ns)) : json(nullptr)); }
  void nonzero(const char* key, uint32_t v) { members_.add(key, v > 0 ? json(v) : json(nullptr)); }
  void bytes(const char* key, int64_t b) { members_.add_integer(key, clamp_bytes(b)); }
  void bytes(const char* key, const std::vector<int64_t>& list) {
    JsonArrayText arr(style(), members_.depth() + 1);
    for (int64_t b : list) arr.add_text(style().integer(clamp_bytes(b)));
    members_.add_text(key, arr.finish());
  }
  void schedule_kind(const char* key, ScheduleKind kind) { members_.add(key, std::string(schedule_name(kind))); }
  template <typename Fn>
  void written(const char* key, Fn&& fn) {
    members_.add(key, json(fn()));
  }
  // An object whose fields `fn` lists (on a JsonWriter of its own).
  template <typename Fn>
  void block(const char* key, Fn&& fn) {
    JsonWriter sub(context, style(), members_.depth() + 1);
    fn(sub);
    members_.add_text(key, sub.finish());
  }
  template <typename T>
  void object(const char* key, const T& item) {
    block(key, [&](JsonWriter& sub) { fields(sub, item); });
  }
  // A list of objects, each written by `fn(writer, item)`.
  template <typename T, typename Fn>
  void list_of(const char* key, const std::vector<T>& items, Fn&& fn) {
    JsonArrayText arr(style(), members_.depth() + 1);
    for (const T& item : items) {
      JsonWriter sub(context, style(), members_.depth() + 2);
      fn(sub, item);
      arr.add_text(sub.finish());
    }
    members_.add_text(key, arr.finish());
  }
  template <typename T>
  void list(const char* key, const std::vector<T>& items) {
    list_of(key, items, [](JsonWriter& sub, const T& item) { fields(sub, item); });
  }

  JsonTextStyle& style() const { return members_.style(); }
  std::string finish(std::string_view suffix = {}) { return members_.finish(suffix); }

  JsonContext context;

 private:
  JsonObjectText members_;
};

class JsonReader {
 public:
  static constexpr bool kWrites = false;
  JsonReader(const json& doc, JsonContext context) : context(std::move(context)), doc_(doc) {}

  template <typename T>
  void value(const char* key, T& v) {
    get(doc_, key, v);
  }
  template <typename T>
  void micros(const char* key, T& ns) {
    ns = static_cast<T>(get_us(doc_, key));
  }
  void micros3(const char* key, double& ns) {
    double v = 0;
    get(doc_, key, v);
    ns = v * 1000.0;
  }
  void ratio(const char* key, double& r) { get(doc_, key, r); }
  void nullable_ratio(const char* key, double& r) { get(doc_, key, r); }
  void nullable_micros(const char* key, int64_t& ns) {
    if (auto p = doc_.find(key); p != doc_.end() && !p->is_null()) ns = ns_from_us(p->get<double>());
  }
  void nonzero(const char* key, uint32_t& v) { get(doc_, key, v); }
  template <typename T>
  void bytes(const char* key, T& b) {
    get(doc_, key, b);
  }
  void schedule_kind(const char* key, ScheduleKind& kind) {
    std::string name;
    get(doc_, key, name);
    kind = schedule_from_name(name).value_or(ScheduleKind::kUnknown);
  }
  template <typename Fn>
  void written(const char*, Fn&&) {}
  template <typename Fn>
  void block(const char* key, Fn&& fn) {
    auto it = doc_.find(key);
    if (it == doc_.end() || !it->is_object()) return;
    JsonReader sub(*it, context);
    fn(sub);
    take_error(sub);
  }
  template <typename T>
  void object(const char* key, T& item) {
    block(key, [&](JsonReader& sub) { fields(sub, item); });
  }
  template <typename T>
  void list(const char* key, std::vector<T>& items) {
    auto it = doc_.find(key);
    if (it == doc_.end() || !it->is_array()) return;
    for (const json& one : *it) {
      JsonContext at = context;
      at.where = fmt::format("{}[{}]", key, items.size());
      JsonReader sub(one, at);
      T item;
      fields(sub, item);
      take_error(sub);
      items.push_back(std::move(item));
    }
  }
  const json& doc() const { return doc_; }
  // A value the schema allows that cannot be held (the first one met).
  void fail(std::string why) {
    if (error.empty()) error = fmt::format("{}: {}", context.where, why);
  }

  JsonContext context;
  std::string error;

 private:
  void take_error(const JsonReader& sub) {
    if (error.empty()) error = sub.error;
  }
  const json& doc_;
};

// T when reading into it, const T when writing it.
template <typename IO, typename T>
using Field = std::conditional_t<IO::kWrites, const T, T>;

template <typename IO>
void fields(IO& io, Field<IO, TypeDurations>& t) {
  io.value("type", t.type);
  io.value("count", t.count);
  io.micros3("mean_us", t.mean_ns);
  io.micros("p50_us", t.p50_ns);
  io.micros("p95_us", t.p95_ns);
  io.micros("max_us", t.max_ns);
  io.micros("total_us", t.total_ns);
}

template <typename IO>
void fields(IO& io, Field<IO, Straggler>& s) {
  io.value("rank", s.rank);
  io.value("stage", s.stage);
  io.value("type", s.type);
  io.micros("median_us", s.median_ns);
  io.micros("others_median_us", s.others_median_ns);
  io.ratio("margin", s.margin);
  io.ratio("consistency", s.consistency);
  io.value("jobs", s.jobs);
}

template <typename IO>
void fields(IO& io, Field<IO, StepTimeSummary>& t) {
  io.value("count", t.count);
  io.micros3("mean_us", t.mean_ns);
  io.micros("median_us", t.median_ns);
  io.micros("min_us", t.min_ns);
  io.micros("max_us", t.max_ns);
  io.micros3("stdev_us", t.stdev_ns);
}

// A step's critical path: written, not read back (diff compares figures).
void critical_path_fields(JsonWriter& io, const CriticalPath& cp) {
  const int64_t origin = io.context.origin;
  io.ratio("share", cp.share);
  io.micros("job_us", static_cast<double>(cp.job_ns));
  io.micros("wait_us", static_cast<double>(cp.wait_ns));
  io.list_of("hops", cp.hops, [origin](JsonWriter& hop, const CriticalHop& h) {
    hop.value("rank", h.rank);
    hop.value("type", h.type);
    hop.value("micro_batch", h.micro_batch);
    hop.micros("start_us", static_cast<double>(h.start_ns - origin));
    hop.micros("dur_us", static_cast<double>(h.end_ns - h.start_ns));
    hop.micros("wait_us", static_cast<double>(h.wait_ns));
    hop.value("from_other_rank", h.from_other_rank);
  });
}

// A step's times: relative to the origin in the JSON, absolute inside.
void step_times(JsonWriter& io, const StepStats& s) {
  io.micros("time_us", static_cast<double>(s.time_ns()));
  io.micros("start_us", static_cast<double>(s.start_ns - io.context.origin));
  io.micros("end_us", static_cast<double>(s.end_ns - io.context.origin));
  if (!s.critical_path.hops.empty()) {
    io.block("critical_path", [&](JsonWriter& cp) { critical_path_fields(cp, s.critical_path); });
  }
}
void step_times(JsonReader& io, StepStats& s) {
  int64_t start = 0, time = 0;
  io.micros("start_us", start);
  io.micros("time_us", time);
  if (__builtin_add_overflow(start, io.context.origin, &s.start_ns) ||
      __builtin_add_overflow(s.start_ns, time, &s.end_ns)) {
    io.fail("start_us + time_origin_epoch_ns is beyond 64-bit nanoseconds");
  }
}

template <typename IO>
void fields(IO& io, Field<IO, StepStats>& s) {
  io.value("run", s.run);
  io.value("step", s.step);
  step_times(io, s);
  io.value("ranks", s.ranks);
  io.micros("busy_us", s.busy_ns);
  io.micros("idle_us", s.idle_ns);
  io.ratio("bubble_ratio", s.bubble_ratio);
  io.nullable_micros("period_us", s.period_ns);
  io.value("incomplete_ranks", s.incomplete_ranks);
}

template <typename IO>
void fields(IO& io, Field<IO, RankStats>& r) {
  io.value("rank", r.rank);
  io.value("stage", r.stage);
  io.value("replica", r.replica);
  io.value("machine", r.machine);
  io.value("steps", r.steps);
  io.value("jobs", r.jobs);
  io.micros("span_us", r.span_ns);
  io.micros("busy_us", r.busy_ns);
  io.micros("idle_us", r.idle_ns);
  io.ratio("bubble_ratio", r.bubble_ratio);
  if (io.context.resolution_errors) io.ratio("bubble_ratio_error", r.bubble_ratio_error);
  io.micros("warmup_us", r.warmup_ns);
  io.micros("cooldown_us", r.cooldown_ns);
  io.micros("gaps_us", r.gaps_ns);
  io.list("types", r.types);
  io.value("job_order", r.job_order);
  io.value("steps_like_order", r.steps_like_order);
  io.value("missing_steps", r.missing_steps);
  io.value("incomplete_steps", r.incomplete_steps);
  io.value("missing_jobs", r.missing_jobs);
}

template <typename IO>
void fields(IO& io, Field<IO, StageStats>& s) {
  io.value("stage", s.stage);
  io.value("ranks", s.ranks);
  io.micros("span_us", s.span_ns);
  io.micros("busy_us", s.busy_ns);
  io.micros("idle_us", s.idle_ns);
  io.ratio("bubble_ratio", s.bubble_ratio);
  io.value("rank_steps", s.rank_steps);
}

template <typename IO>
void fields(IO& io, Field<IO, StageMemory>& m) {
  io.value("stage", m.stage);
  io.value("ranks", m.ranks);
  io.bytes("peak_allocated_bytes", m.peak_allocated_bytes);
  io.bytes("peak_reserved_bytes", m.peak_reserved_bytes);
  io.bytes("static_bytes", m.static_bytes);
  io.bytes("activation_bytes_per_micro_batch", m.activation_bytes_per_micro_batch);
  io.bytes("activation_bytes_per_chunk", m.activation_bytes_per_chunk);
  io.value("peak_in_flight", m.peak_in_flight);
  io.value("peak_rank", m.peak_rank);
  io.value("peak_step", m.peak_step);
  io.value("peak_at", m.peak_at);
  if (IO::kWrites && io.context.device_memory_bytes > 0) {
    // Both sizes are at least 0, so the difference does not overflow.
    const int64_t margin = io.context.device_memory_bytes - m.peak_allocated_bytes;
    io.written("fits", [&] { return margin >= 0; });
    io.written("margin_bytes", [&] { return clamp_bytes(margin); });
  }
}

template <typename IO>
void fields(IO& io, Field<IO, MemoryStats>& mem) {
  io.bytes("resolution_bytes", mem.resolution_bytes);
  if (!IO::kWrites || mem.device_memory_bytes > 0) io.bytes("device_memory_bytes", mem.device_memory_bytes);
  io.context.device_memory_bytes = mem.device_memory_bytes;
  io.list("stages", mem.stages);
}

json suggestions_json(const std::vector<WhatifSuggestion>& suggestions) {
  json arr = json::array();
  for (const WhatifSuggestion& w : suggestions) {
    arr.push_back({{"change", change_text(w.change)},
                   {"period_gain", round6(w.period_gain)},
                   {"gain_range", {round6(w.gain_lo), round6(w.gain_hi)}},
                   {"gain_of", w.per_micro_batch ? "time_per_micro_batch" : "period"},
                   {"peak_memory", round3(w.peak_memory)},
                   {"measured_peak_memory", round3(w.measured_peak_memory)},
                   {"peak_memory_bytes", w.peak_memory_bytes >= 0 ? json(w.peak_memory_bytes) : json(nullptr)},
                   {"text", suggestion_text(w)}});
  }
  return arr;
}

// The schedule, with the run's measured bubble ratio beside its ideal one
// (written only: it is the run's "bubble_ratio").
template <typename IO>
void schedule_fields(IO& io, Field<IO, Stats>& st) {
  auto& s = st.schedule;
  io.schedule_kind("name", s.kind);
  io.value("variant", s.variant);
  io.value("pp_degree", s.pp_degree);
  io.value("pp_degree_source", s.pp_degree_source);
  io.value("replicas", s.replicas);
  io.value("micro_batches", s.micro_batches);
  io.value("chunks", s.chunks);
  io.nullable_ratio("ideal_bubble_ratio", s.ideal_bubble_ratio);
  io.value("ideal_formula", s.ideal_formula);
  io.written("measured_bubble_ratio", [&] { return round6(st.bubble_ratio); });
  io.value("evidence", s.evidence);
}

// The throughput is written whole; only the micro-batch size is read back
// (the rates follow from the periods: compute_throughput).
template <typename IO>
void throughput_fields(IO& io, Field<IO, Throughput>& tp) {
  auto positive = [](double v) { return v > 0 ? json(round3(v)) : json(nullptr); };
  io.written("steps_per_second", [&] { return round6(tp.steps_per_second); });
  io.written("micro_batches_per_second", [&] { return positive(tp.micro_batches_per_second); });
  io.nonzero("micro_batch_size", tp.micro_batch_size);
  io.written("samples_per_second", [&] { return positive(tp.samples_per_second); });
}

template <typename IO>
void fields(IO& io, Field<IO, Stats>& st) {
  io.value("source", st.source);
  if (!IO::kWrites || !st.partial.empty()) io.value("partial", st.partial);
  io.value("jobs", st.jobs);
  io.value("runs", st.runs);
  io.value("measured_run", st.run);
  io.value("selection", st.selection);
  io.value("notes", st.notes);
  io.value("rank_steps", st.rank_steps);
  io.value("complete_rank_steps", st.complete_rank_steps);
  io.value("short_ranks", st.short_ranks);
  io.value("ranks_without_jobs", st.ranks_without_jobs);
  io.value("time_origin_epoch_ns", io.context.origin);
  io.block("schedule", [&](IO& sub) { schedule_fields(sub, st); });
  io.ratio("bubble_ratio", st.bubble_ratio);
  if (!IO::kWrites || st.resolution_ns > 1) {
    io.value("time_resolution_ns", st.resolution_ns);
    io.ratio("bubble_ratio_error", st.bubble_ratio_error);
  }
  io.object("step_time", st.step_time);
  io.object("step_period", st.step_period);
  io.block("throughput", [&](IO& sub) { throughput_fields(sub, st.throughput); });
  io.list("steps", st.steps);
  io.list("ranks", st.ranks);
  io.list("stages", st.stages);
  io.list("types", st.types);
  io.ratio("straggler_margin", st.straggler_margin);
  io.list("stragglers", st.stragglers);
  io.written("suggestions", [&] {
    if (io.context.before_suggestions) (*io.context.before_suggestions)();
    return suggestions_json(st.suggestions);
  });
  if (IO::kWrites && !st.suggestion_warnings.empty()) {
    io.written("suggestion_warnings", [&] { return warning_texts(st.suggestion_warnings); });
  }
  if (!IO::kWrites || st.memory.present()) io.object("memory", st.memory);
}

// One block on its own, as text: a step (watch's lines, compact), or a
// straggler (diff's, read into diff's document).
template <typename T>
std::string block_text(const T& item, JsonContext context, int indent) {
  JsonTextStyle style(indent);
  JsonWriter io(std::move(context), style);
  fields(io, item);
  return io.finish();
}

template <typename T>
json to_json(const T& item) {
  return json::parse(block_text(item, JsonContext{}, -1));
}

}  // namespace

std::string format_step_json(const StepStats& step, int64_t time_origin_ns) {
  JsonContext context;
  context.origin = time_origin_ns;
  return block_text(step, context, -1);
}

bool looks_like_json(std::string_view head) {
  for (char c : head) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    return c == '{';
  }
  return false;
}

std::string format_stats_json(const Stats& st, int64_t origin, const std::function<void()>& before_suggestions) {
  JsonContext context;
  context.origin = origin;
  if (before_suggestions) context.before_suggestions = &before_suggestions;
  context.resolution_errors = st.resolution_ns > 1;
  JsonTextStyle style(1);
  JsonWriter io(context, style);
  io.value("schema", std::string(kStatsSchema));
  fields(io, st);
  return io.finish("\n");
}

namespace {

// The schema a stats file names: "" when this version reads it, else why not.
std::string schema_error(const json& doc, std::string* schema) {
  if (doc.is_object()) get(doc, "schema", *schema);
  if (schema->rfind("pp-timeline-stats/", 0) != 0) {
    return schema->empty() ? "not a `pp-timeline stats --json` file (no \"schema\" key)"
                           : fmt::format("schema \"{}\" is not a stats file", *schema);
  }
  if (*schema != kStatsSchema && *schema != kStatsSchemaV1) {
    return fmt::format("schema \"{}\" is newer than this pp-timeline reads ({})", *schema, kStatsSchema);
  }
  return "";
}

// A baseline may be crafted: every value is checked against the schema
// (types, integer-ness, ranges, finiteness) before it is converted, so that
// 1e308 is refused by name instead of becoming an int by undefined
// behaviour. Version 1 files are checked by the same rules (their keys are a
// subset). "" or the field and why.
std::string value_error(const json& doc, const std::string& schema) {
  static const json kSchema = json::parse(kStatsSchemaText);
  if (schema == kStatsSchema) return check_json_values(doc, kSchema);
  json v1 = doc;  // all but its "schema" constant
  v1.erase("schema");
  return check_json_values(v1, kSchema);
}

// Written before periods were measured (pp-timeline-stats/1): each step's
// start is there, so the periods follow (start to the next start of the same
// run).
void periods_from_starts(const json& doc, Stats& st) {
  if (doc.contains("step_period") && doc["step_period"].is_object()) return;
  auto it = doc.find("steps");
  if (it == doc.end() || !it->is_array()) return;
  if (!std::all_of(it->begin(), it->end(), [](const json& s) { return s.contains("start_us"); })) return;
  std::vector<int64_t> periods;
  for (size_t k = 0; k + 1 < st.steps.size(); ++k) {
    if (st.steps[k + 1].run != st.steps[k].run) continue;
    st.steps[k].period_ns = st.steps[k + 1].start_ns - st.steps[k].start_ns;
    periods.push_back(st.steps[k].period_ns);
  }
  st.step_period = summarize_times(std::move(periods));
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
    if (std::string why = schema_error(doc, &schema); !why.empty()) {
      *error = why;
      return std::nullopt;
    }
    std::string bad = value_error(doc, schema);
    Stats st;
    JsonReader io(doc, JsonContext{});
    if (bad.empty()) {
      fields(io, st);
      bad = io.error;
    }
    if (!bad.empty()) {
      *error = "not a valid stats file: " + bad;
      if (bad_value) *bad_value = true;
      return std::nullopt;
    }
    periods_from_starts(doc, st);
    st.throughput = compute_throughput(st.step_period, st.schedule, st.throughput.micro_batch_size);
    return st;
  } catch (const json::exception& e) {
    *error = fmt::format("not a valid stats file: {}", e.what());
    return std::nullopt;
  }
}

namespace {

// diff --json, block by block: each side, the step times, the throughput,
// the steps, the gate, the ranks and types, what changed.
json side_json(const std::string& source, const std::string& schedule, double bubble, double error, uint32_t steps) {
  json side = {{"source", source}, {"schedule", schedule}, {"bubble_ratio", round6(bubble)}, {"steps", steps}};
  if (error > 0) side["bubble_ratio_error"] = round6(error);
  return side;
}

json times_json(const StepTimeDelta& t) {
  return json{{"a_us", round3(us(t.a_ns))},
              {"b_us", round3(us(t.b_ns))},
              {"delta_pct", round3(t.delta_pct)},
              {"a_median_us", us(t.a_median_ns)},
              {"b_median_us", us(t.b_median_ns)},
              {"a_steps", t.a_steps},
              {"b_steps", t.b_steps},
              {"noise_pct", round3(t.noise_pct)}};
}

json throughput_delta_json(const ThroughputDelta& tp) {
  auto positive = [](double v) { return v > 0 ? json(round3(v)) : json(nullptr); };
  return {{"a_steps_per_second", round6(tp.a.steps_per_second)},
          {"b_steps_per_second", round6(tp.b.steps_per_second)},
          {"delta_pct", round3(tp.delta_pct)},
          {"a_micro_batches_per_second", positive(tp.a.micro_batches_per_second)},
          {"b_micro_batches_per_second", positive(tp.b.micro_batches_per_second)},
          {"a_samples_per_second", positive(tp.a.samples_per_second)},
          {"b_samples_per_second", positive(tp.b.samples_per_second)}};
}

json step_deltas_json(const std::vector<StepDelta>& deltas) {
  json steps = json::array();
  auto opt_us = [](bool in, int64_t ns) { return in && ns >= 0 ? json(us(ns)) : json(nullptr); };
  for (const StepDelta& sd : deltas) {
    steps.push_back({{"step_a", sd.in_a ? json(sd.step_a) : json(nullptr)},
                     {"step_b", sd.in_b ? json(sd.step_b) : json(nullptr)},
                     {"period_a_us", opt_us(sd.in_a, sd.period_a_ns)},
                     {"period_b_us", opt_us(sd.in_b, sd.period_b_ns)},
                     {"period_delta_pct", round3(sd.period_delta_pct)},
                     {"span_a_us", opt_us(sd.in_a, sd.span_a_ns)},
                     {"span_b_us", opt_us(sd.in_b, sd.span_b_ns)},
                     {"span_delta_pct", round3(sd.span_delta_pct)}});
  }
  return steps;
}

json type_delta_json(const TypeDelta& td) {
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
}

json type_deltas_json(const std::vector<TypeDelta>& deltas) {
  json types = json::array();
  for (const TypeDelta& td : deltas) types.push_back(type_delta_json(td));
  return types;
}

json rank_deltas_json(const std::vector<RankDelta>& deltas) {
  json ranks = json::array();
  for (const RankDelta& r : deltas) {
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
                     {"types", type_deltas_json(r.types)}});
  }
  return ranks;
}

json gate_json(const Diff& d) {
  if (d.fail_if_slower_pct < 0) return nullptr;
  return {{"fail_if_slower_pct", d.fail_if_slower_pct},
          {"metric", std::string(gate_metric_name(d.metric))},
          {"failed", d.gate_failed}};
}

json schedule_changes_json(const std::vector<ScheduleChange>& changes) {
  json arr = json::array();
  for (const ScheduleChange& c : changes) {
    arr.push_back(
        {{"rank", c.rank}, {"index", c.index}, {"a", c.a}, {"b", c.b}, {"a_jobs", c.a_jobs}, {"b_jobs", c.b_jobs}});
  }
  return arr;
}

json diff_doc(const Diff& d) {
  json doc;
  doc["schema"] = std::string(kDiffSchema);
  doc["a"] = side_json(d.a_source, d.a_schedule, d.bubble_a, d.bubble_a_error, d.step_time.a_steps);
  doc["b"] = side_json(d.b_source, d.b_schedule, d.bubble_b, d.bubble_b_error, d.step_time.b_steps);
  doc["verdict"] = std::string(verdict_name(d.verdict));
  doc["metric"] = std::string(gate_metric_name(d.metric));
  doc["metric_note"] = d.metric_note.empty() ? json(nullptr) : json(d.metric_note);
  doc["slower_pct"] = round3(d.slower_pct);
  doc["noise_pct"] = round3(d.noise_pct);
  doc["step_time"] = times_json(d.step_time);
  doc["period"] = times_json(d.period);
  doc["throughput"] = throughput_delta_json(d.throughput);
  doc["steps"] = step_deltas_json(d.steps);
  doc["bubble"] = {{"a", round6(d.bubble_a)}, {"b", round6(d.bubble_b)}, {"delta", round6(d.bubble_b - d.bubble_a)}};
  doc["gate"] = gate_json(d);
  doc["changed_ranks"] = d.changed_ranks;
  doc["ranks"] = rank_deltas_json(d.ranks);
  doc["types"] = type_deltas_json(d.types);
  doc["schedule_changes"] = schedule_changes_json(d.schedule_changes);
  json stragglers = json::array();
  for (const Straggler& s : d.new_stragglers) stragglers.push_back(to_json(s));
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
    arr.push_back(diff_doc(d));
  }
  doc["gate_failed"] = failed;
  doc["diffs"] = std::move(arr);
  return dumped(doc, 1) + "\n";
}

}  // namespace ppt
