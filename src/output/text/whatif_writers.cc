#include "output/text/whatif_writers.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "output/text/advice_text.h"
#include "output/text/stats_json.h"
#include "util/escape.h"
#include "util/text.h"

namespace ppt {
namespace {

using nlohmann::json;

const char* role_key(size_t r) { return plan_role_name(static_cast<PlanRole>(r)); }

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return out;
}

// The memory keys of an outcome: its peaks by stage (null for a stage
// without samples; null throughout when the run has none) and, with a
// device size and a peak, whether it fits and by how much.
void memory_json(const WhatifOutcome& o, int64_t device_bytes, json& j) {
  j["peak_memory_bytes"] = nullptr;
  if (!o.peak_memory_bytes.empty()) {
    json peaks = json::array();
    for (int64_t p : o.peak_memory_bytes) peaks.push_back(p >= 0 ? json(p) : json(nullptr));
    j["peak_memory_bytes"] = std::move(peaks);
  }
  const bool checked = device_bytes > 0 && highest_peak(o.peak_memory_bytes) >= 0;
  j["fits"] = checked ? json(o.fits) : json(nullptr);
  j["margin_bytes"] = checked ? json(o.margin_bytes) : json(nullptr);
}

// `base` is the measured run: how o compares with it, or null for itself;
// `r` the report it is of.
json outcome_json(const WhatifOutcome& o, const WhatifOutcome* base, const WhatifReport& r) {
  json j;
  j["label"] = outcome_label(o);
  j["schedule"] = lower(schedule_name(o.shape.schedule));
  j["micro_batches"] = o.shape.micro_batches;
  j["chunks"] = o.shape.chunks;
  if (!o.failed()) {
    j["period_us"] = round3(o.period_ns / 1e3);
    j["busy_us"] = round3(o.busy_ns / 1e3);
    j["bubble_ratio"] = round6(o.bubble_ratio);
    j["micro_batches_per_second"] = round3(o.micro_batches_per_second);
    j["time_per_micro_batch_us"] = round3(o.time_per_micro_batch_ns / 1e3);
    if (base) {
      j["period_range_us"] = {round3(std::max(0.0, o.period_lo_ns) / 1e3), round3(o.period_hi_ns / 1e3)};
    } else {
      j["period_range_us"] = nullptr;
    }
  } else {
    j["period_range_us"] = nullptr;
    j["period_us"] = nullptr;
    j["busy_us"] = nullptr;
    j["bubble_ratio"] = nullptr;
    j["micro_batches_per_second"] = nullptr;
    j["time_per_micro_batch_us"] = nullptr;
  }
  j["vs_measured_pct"] = nullptr;
  j["vs_measured_of"] = nullptr;
  if (base && !o.failed() && !base->failed() && base->period_ns > 0) {
    bool per_mb = false;
    j["vs_measured_pct"] = round3(relative_time(o, *base, &per_mb) * 100);
    j["vs_measured_of"] = per_mb ? "time_per_micro_batch" : "period";
  }
  j["within_noise_of_best"] = false;
  j["peak_in_flight"] = o.peak_in_flight;
  memory_json(o, r.device_memory_bytes, j);
  j["error"] = o.failed() ? json(outcome_error(o, r)) : json(nullptr);
  return j;
}

json fit_json(const DurationFit& f) {
  return {{"count", f.count},
          {"cost_us", round3(static_cast<double>(f.cost_ns) / 1e3)},
          {"median_us", round3(static_cast<double>(f.median_ns) / 1e3)},
          {"p10_us", round3(static_cast<double>(f.p10_ns) / 1e3)},
          {"p90_us", round3(static_cast<double>(f.p90_ns) / 1e3)}};
}

json model_json(const CostModel& m) {
  json stages = json::array();
  for (int32_t s = 0; s < m.stages; ++s) {
    // The stages measured only: P may be a run's whole rank count when few of
    // its logs are loaded, and a stage whose ranks are all missing has no fit.
    const bool measured = !m.jobs[s].empty() || m.optimizer[s].count > 0 || m.other_ns[s] != 0;
    if (!measured) continue;
    json jobs = json::array();
    for (size_t c = 0; c < m.jobs[s].size(); ++c) {
      for (size_t r = 0; r < kPlanRoles; ++r) {
        const DurationFit& f = m.jobs[s][c][r];
        if (f.count == 0) continue;
        json j = fit_json(f);
        j["chunk"] = c;
        j["type"] = role_key(r);
        jobs.push_back(std::move(j));
      }
    }
    json st = {{"stage", s}, {"jobs", std::move(jobs)}, {"optimizer", fit_json(m.optimizer[s])}};
    st["other_us"] = round3(static_cast<double>(m.other_ns[s]) / 1e3);
    json gaps = json::object();
    const auto stage_gaps = m.host_gap_ns.find(s);
    for (size_t r = 0; r <= kPlanRoles; ++r) {
      const int64_t g = stage_gaps != m.host_gap_ns.end() ? stage_gaps->second[r] : -1;
      gaps[r < kPlanRoles ? role_key(r) : "optimizer"] =
          g >= 0 ? json(round3(static_cast<double>(g) / 1e3)) : json(nullptr);
    }
    st["host_gap_us"] = std::move(gaps);
    stages.push_back(std::move(st));
  }
  json links = json::array();
  for (const auto& [pair, lag] : m.link_ns) {
    links.push_back({{"from", pair.first}, {"to", pair.second}, {"lag_us", round3(static_cast<double>(lag) / 1e3)}});
  }
  json ranks = json::array();
  for (auto [rank, ns] : m.optimizer_by_rank) {
    ranks.push_back({{"rank", rank}, {"optimizer_us", round3(static_cast<double>(ns) / 1e3)}});
  }
  return {{"stages", std::move(stages)},
          {"links", std::move(links)},
          {"median_link_us", round3(static_cast<double>(m.median_link_ns) / 1e3)},
          {"ranks", std::move(ranks)},
          {"step_gap_us", round3(static_cast<double>(m.step_gap_ns) / 1e3)},
          {"w_share", m.w_share >= 0 ? json(round6(m.w_share)) : json(nullptr)},
          {"steps", m.steps},
          {"replicas", m.replicas}};
}

std::string ms_text(double ns) { return fmt::format("{:.3f}", ns / 1e6); }

// "does not fit: 83.2 GiB > 80.0 GiB" for an outcome whose peak is above
// the device size, else "".
std::string fit_text(const WhatifOutcome& o, int64_t device_bytes) {
  const int64_t peak = highest_peak(o.peak_memory_bytes);
  if (device_bytes <= 0 || peak < 0 || o.fits) return "";
  return fmt::format("does not fit: {} > {}", format_gib(peak), format_gib(device_bytes));
}

std::string peak_text(const std::vector<int32_t>& peak) {
  std::string s;
  for (int32_t p : peak) s += (s.empty() ? "" : " ") + std::to_string(p);
  return s;
}

}  // namespace

std::string format_whatif_json(const WhatifReport& r) {
  json doc;
  doc["schema"] = "pp-timeline-whatif/1";
  const int64_t device = r.device_memory_bytes;
  doc["measured"] = outcome_json(r.measured, nullptr, r);
  doc["replayed"] = outcome_json(r.replayed, &r.measured, r);
  json predicted = json::array();
  for (const WhatifOutcome& o : r.predicted) predicted.push_back(outcome_json(o, &r.measured, r));
  for (size_t i : r.within_noise_of_best) predicted[i]["within_noise_of_best"] = true;
  doc["predicted"] = std::move(predicted);
  doc["warnings"] = warning_texts(r.warnings);
  doc["refusal"] = r.refusal ? json(refusal_text(*r.refusal)) : json(nullptr);
  doc["model_error_pct"] = std::isfinite(r.model_error) ? json(round3(r.model_error * 100)) : json(nullptr);
  doc["memory_model_error_pct"] =
      std::isfinite(r.memory_model_error) ? json(round3(r.memory_model_error * 100)) : json(nullptr);
  doc["memory_error_stage"] = r.memory_error_stage >= 0 ? json(r.memory_error_stage) : json(nullptr);
  doc["device_memory_bytes"] = device > 0 ? json(device) : json(nullptr);
  doc["assumptions"] = assumption_texts(r.assumptions);
  doc["model"] = model_json(r.model);
  return doc.dump(2) + "\n";
}

namespace {

// The table's cells: the header, then the measured run, its replay and
// each target; `any_per_mb` set when a target's change is per micro-batch.
std::vector<std::vector<std::string>> whatif_cells(const WhatifReport& r, bool* any_per_mb) {
  struct Row {
    std::string kind;
    const WhatifOutcome* o;
  };
  std::vector<Row> rows = {{"measured", &r.measured}, {"replayed", &r.replayed}};
  for (size_t i = 0; i < r.predicted.size(); ++i) {
    rows.push_back({r.predicted.size() > 1 ? fmt::format("predicted #{}", i + 1) : "predicted", &r.predicted[i]});
  }
  // The memory column where the run has memory samples; the last column
  // says a target that does not fit (or an error).
  const bool memory = r.memory.present();
  std::vector<std::vector<std::string>> cells = {{"", "schedule", "period ms (mean)", "range ms", "vs measured",
                                                  "busy ms (mean)", "bubble", "micro-batches/s", "peak in flight"}};
  if (memory) cells[0].push_back("peak GiB");
  cells[0].push_back("");
  for (const Row& row : rows) {
    const WhatifOutcome& o = *row.o;
    if (o.failed()) {
      cells.push_back({row.kind, terminal_text(outcome_label(o)), "-", "-", "-", "-", "-", "-", "-"});
      if (memory) cells.back().push_back("-");
      cells.back().push_back(terminal_text(outcome_error(o, r)));
      continue;
    }
    std::string delta = "";
    if (row.o != &r.measured && !r.measured.failed() && r.measured.period_ns > 0) {
      bool per_mb = false;
      double d = relative_time(o, r.measured, &per_mb);
      delta = fmt::format("{:+.1f}%{}", d * 100, per_mb ? " per mb" : "");
      *any_per_mb = *any_per_mb || per_mb;
    }
    std::string range = row.o == &r.measured ? "" : ms_text(o.period_lo_ns) + "-" + ms_text(o.period_hi_ns);
    std::string kind = row.kind;
    for (size_t i : r.within_noise_of_best) {
      if (row.o == &r.predicted[i]) kind += " ~#1";
    }
    cells.push_back({kind, terminal_text(outcome_label(o)), ms_text(o.period_ns), range, delta, ms_text(o.busy_ns),
                     fmt::format("{:.1f}%", o.bubble_ratio * 100), fmt::format("{:.1f}", o.micro_batches_per_second),
                     peak_text(o.peak_in_flight)});
    const int64_t peak = highest_peak(o.peak_memory_bytes);
    if (memory) cells.back().push_back(peak >= 0 ? fmt::format("{:.2f}", static_cast<double>(peak) / 0x1p30) : "-");
    cells.back().push_back(fit_text(o, r.device_memory_bytes));
  }
  return cells;
}

// The cells in aligned columns: the first two and the last to the left,
// the figures to the right.
std::string aligned_table(const std::vector<std::vector<std::string>>& cells) {
  std::vector<size_t> w(cells[0].size(), 0);
  for (const auto& row : cells) {
    for (size_t c = 0; c < row.size(); ++c) w[c] = std::max(w[c], row[c].size());
  }
  std::string out;
  for (const auto& row : cells) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      const bool left = c < 2 || c + 1 == row.size();
      std::string pad(w[c] - row[c].size(), ' ');
      line += (c ? "  " : "") + (left ? row[c] + (c + 1 == row.size() ? "" : pad) : pad + row[c]);
    }
    line.erase(line.find_last_not_of(' ') + 1);  // the last column is often empty
    out += line + "\n";
  }
  return out;
}

// What the table's marks mean, the model's errors, the device memory, and
// why there is no prediction, if there is none.
std::string whatif_footnotes(const WhatifReport& r, bool any_per_mb) {
  std::string out;
  if (any_per_mb) {
    out += fmt::format(
        "\nvs measured: the period; \"per mb\" where M differs from the measured M={}: the time per micro-batch\n"
        "(period / M), as a step of more micro-batches does more work\n",
        r.measured.shape.micro_batches);
  }
  if (!r.within_noise_of_best.empty()) {
    out += "\n~#1: within #1's noise (the two ranges overlap): not a surer win than #1, nor #1 than it\n";
  }
  if (std::isfinite(r.model_error)) {
    out += fmt::format("\nmodel error (replayed against measured period): {:+.2f}%\n", r.model_error * 100);
  }
  if (std::isfinite(r.memory_model_error)) {
    out += fmt::format("memory model error (replayed against measured peak, worst on stage {}): {:+.2f}%\n",
                       r.memory_error_stage, r.memory_model_error * 100);
  }
  if (r.memory.present() && r.device_memory_bytes > 0) {
    out += fmt::format("\ndevice memory {}: a target that does not fit is ranked after those that do\n",
                       format_gib(r.device_memory_bytes));
  }
  if (r.refusal) out += "\nno prediction: " + terminal_text(refusal_text(*r.refusal)) + "\n";
  return out;
}

}  // namespace

std::string format_whatif_text(const WhatifReport& r) {
  bool any_per_mb = false;
  std::vector<std::vector<std::string>> cells = whatif_cells(r, &any_per_mb);
  std::string out = "pp-timeline whatif: the measured run, replayed with its cost model, and under the targets";
  out += r.predicted.size() > 1
             ? ",\nranked by throughput (micro-batches/s: the period's order where M is the same)\n\n"
             : "\n\n";
  out += aligned_table(cells);
  out += whatif_footnotes(r, any_per_mb);
  if (!r.warnings.empty()) {
    out += "\nwarnings (where the model does not hold):\n";
    for (const ModelWarning& w : r.warnings) out += "  - " + terminal_text(warning_text(w)) + "\n";
  }
  out += "\nassumptions:\n";
  for (const Assumption& a : r.assumptions) out += "  - " + terminal_text(assumption_text(a)) + "\n";
  return out;
}

}  // namespace ppt
