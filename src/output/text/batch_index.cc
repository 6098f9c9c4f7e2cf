#include "output/text/batch_index.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "output/picture/xml_escape.h"
#include "output/report/html_report.h"
#include "output/text/stats_json.h"
#include "output/text/stats_writers.h"
#include "util/escape.h"
#include "util/text.h"

namespace ppt {

namespace {

std::string pct_text(double ratio) { return fmt::format("{:.1f}%", ratio * 100.0); }

size_t count_ok(const BatchResult& r) {
  size_t n = 0;
  for (const BatchRun& run : r.runs) n += run.status == BatchStatus::kOk ? 1 : 0;
  return n;
}

// Markdown table cell and code span text: the shared rules (util/escape.h).
std::string md_cell(std::string_view s) { return markdown_text(s); }
std::string md_code(std::string_view s) { return markdown_table_code(s); }

// The baseline run's name, "" without one.
std::string baseline_name(const BatchResult& r) {
  return r.has_baseline && !r.runs.empty() && r.runs[0].is_baseline ? r.runs[0].name : std::string();
}

// The step column: the gate's metric, as its mean. Named once in the
// heading when every run has the same, else in each cell.
std::string step_metric_words(const std::string& metric) {
  return metric == "period" ? "step period" : metric == "busy" ? "step busy span" : metric;
}
bool one_step_metric(const BatchResult& r, std::string* metric) {
  metric->clear();
  for (const BatchRun& run : r.runs) {
    if (run.status != BatchStatus::kOk) continue;
    if (metric->empty())
      *metric = run.step_metric;
    else if (*metric != run.step_metric)
      return false;
  }
  if (metric->empty()) *metric = "period";
  return true;
}
std::string step_heading(const BatchResult& r) {
  std::string metric;
  return one_step_metric(r, &metric) ? step_metric_words(metric) + " (mean)" : std::string("step (mean)");
}
std::string step_cell(const BatchResult& r, const BatchRun& run) {
  std::string metric;
  std::string ms = fmt::format("{:.3f} ms", run.step_metric_us / 1000.0);
  return one_step_metric(r, &metric) ? ms : ms + " " + run.step_metric;
}
size_t count_gate_failed(const BatchResult& r) {
  size_t n = 0;
  for (const BatchRun& run : r.runs) n += run.change && run.change->gate_failed ? 1 : 0;
  return n;
}
// "3 runs, 3 ok, 0 failed" and, when the gate failed, how many runs it failed.
std::string batch_title(const BatchResult& result) {
  size_t ok = count_ok(result);
  std::string title = fmt::format("pp-timeline batch: {} run{}, {} ok, {} failed", result.runs.size(),
                                  result.runs.size() == 1 ? "" : "s", ok, result.runs.size() - ok);
  if (size_t slow = count_gate_failed(result)) {
    title += fmt::format("; gate failed: {} run{} slower than the baseline by more than {:g}%", slow,
                         slow == 1 ? "" : "s", result.fail_if_slower_pct);
  } else if (result.has_baseline && result.fail_if_slower_pct >= 0) {
    title +=
        fmt::format("; gate passed: no run slower than the baseline by more than {:g}%", result.fail_if_slower_pct);
  }
  return title;
}

std::string change_text(const BatchRun::Change& c) {
  return fmt::format("{} {} ({}){}", c.metric, format_percent(c.step_time_delta_pct, PercentSign::kAlways),
                     verdict_name(c.verdict), c.gate_failed ? ", gate" : "");
}

}  // namespace

// Keys and types: docs/schemas/batch-index.v1.json (a test validates against
// it); ratios and percentages rounded as stats --json rounds them.
std::string batch_index_json(const BatchResult& result) {
  nlohmann::ordered_json doc;
  doc["schema"] = "pp-timeline-batch/1";
  doc["version"] = 1;
  doc["ok"] = count_ok(result);
  doc["failed"] = result.runs.size() - count_ok(result);
  std::string base = baseline_name(result);
  doc["baseline"] = result.has_baseline ? nlohmann::ordered_json(base) : nlohmann::ordered_json(nullptr);
  doc["fail_if_slower_pct"] = result.fail_if_slower_pct >= 0 ? nlohmann::ordered_json(result.fail_if_slower_pct)
                                                             : nlohmann::ordered_json(nullptr);
  doc["gate_failed"] = result.gate_failed();
  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  for (const BatchRun& r : result.runs) {
    nlohmann::ordered_json j;
    j["name"] = r.name;
    j["source"] = r.source;
    j["role"] = r.is_baseline ? "baseline" : "run";
    j["status"] = batch_status_name(r.status);
    j["error"] = r.error.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.error);
    j["steps"] = r.steps;
    j["step_time_us"] = round3(r.step_time_us);
    j["step_metric"] = r.step_metric.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.step_metric);
    j["step_metric_us"] = round3(r.step_metric_us);
    j["bubble_ratio"] = round6(r.bubble_ratio);
    j["outputs"] = nlohmann::ordered_json::object();
    for (const auto& [kind, path] : r.outputs) j["outputs"][kind] = path;
    j["ranks"] = r.ranks;
    j["jobs"] = r.jobs;
    j["rejected_lines"] = r.rejected_lines;
    j["schedule"] = r.schedule;
    if (r.change) {
      j["baseline"] = {{"step_time_delta_pct", round3(r.change->step_time_delta_pct)},
                       {"noise_pct", round3(r.change->noise_pct)},
                       {"metric", r.change->metric},
                       {"bubble_delta", round6(r.change->bubble_delta)},
                       {"verdict", verdict_name(r.change->verdict)},
                       {"gate_failed", r.change->gate_failed}};
    } else {
      j["baseline"] = nullptr;
    }
    j["warnings"] = r.warnings;
    runs.push_back(std::move(j));
  }
  doc["runs"] = std::move(runs);
  // Paths and messages may hold bytes that are not UTF-8: replaced, never thrown on.
  return doc.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

namespace {

// The gate's verdict (the runs slower than allowed, or that it passed, on
// what) and the steps measured.
std::string summary_gate(const BatchResult& result) {
  std::string out;
  const bool with_baseline = result.has_baseline;
  if (with_baseline && result.gate_failed()) {
    out += fmt::format("**Slower than the baseline by more than {:g}%:**", result.fail_if_slower_pct);
    for (const BatchRun& r : result.runs) {
      if (r.change && r.change->gate_failed) out += " " + md_cell(r.name);
    }
    out += "\n\n";
  } else if (with_baseline && result.fail_if_slower_pct >= 0) {
    // A gate that passed says so, and on what: the metric and its steps.
    std::string metric;
    one_step_metric(result, &metric);
    size_t compared = 0;
    for (const BatchRun& r : result.runs) compared += r.change ? 1 : 0;
    out += fmt::format(
        "**Gate passed:** {} run{} compared with the baseline, none slower by more than {:g}% "
        "(the mean {}{}).\n\n",
        compared, compared == 1 ? "" : "s", result.fail_if_slower_pct, step_metric_words(metric),
        result.selection.empty() ? std::string(", every step") : ", the steps of " + md_code(result.selection));
  }
  if (!result.selection.empty() && !(with_baseline && result.fail_if_slower_pct >= 0 && !result.gate_failed())) {
    out += "Steps measured: " + md_code(result.selection) + ".\n\n";
  }
  return out;
}

// A run's name in the table, linked to its report: through the links' base,
// else named as a file of the artifact (`name_files`), else relative.
std::string summary_run_name(const BatchRun& r, const BatchLinks& links, bool name_files) {
  std::string name = r.name.empty() ? "-" : md_cell(r.name);
  if (!r.outputs.count("report")) return name;
  const std::string& rel = r.outputs.at("report");
  if (!links.base.empty()) {
    std::string base = links.base;
    while (!base.empty() && base.back() == '/') base.pop_back();
    return "[" + name + "](" + base + "/" + rel + ")";
  }
  if (name_files) return name + " (" + md_code(rel) + ")";
  return "[" + name + "](" + rel + ")";
}

// The table of runs, one row each.
std::string summary_table(const BatchResult& result, bool name_files) {
  const bool with_baseline = result.has_baseline;
  std::string base_name = baseline_name(result);
  std::string change_head =
      with_baseline ? " vs " + (base_name.empty() ? std::string("baseline") : md_cell(base_name)) + " |" : "";
  std::string out =
      "| run | status | steps | " + step_heading(result) + " |" + change_head + " bubble | schedule | source |\n";
  out += std::string("| --- | --- | ---: | ---: |") + (with_baseline ? " ---: |" : "") + " ---: | --- | --- |\n";
  for (const BatchRun& r : result.runs) {
    bool good = r.status == BatchStatus::kOk;
    std::string change;
    if (with_baseline) {
      change = " " +
               (r.is_baseline ? std::string("baseline")
                : r.change    ? change_text(*r.change)
                              : std::string("-")) +
               " |";
    }
    out += fmt::format("| {} | {} | {} | {} |{} {} | {} | {} |\n", summary_run_name(r, result.links, name_files),
                       good ? "ok" : "**" + std::string(batch_status_name(r.status)) + "**",
                       good ? std::to_string(r.steps) : "-", good ? step_cell(result, r) : "-", change,
                       good ? pct_text(r.bubble_ratio) : "-", good ? md_cell(r.schedule) : "-", md_cell(r.source));
  }
  return out;
}

}  // namespace

std::string batch_summary_markdown(const BatchResult& result) {
  size_t ok = count_ok(result);
  size_t failed = result.runs.size() - ok;
  std::string out = "## " + batch_title(result) + "\n\n";
  const BatchLinks& links = result.links;
  // summary.md is read away from the files (a step summary, a PR comment):
  // links are relative only when no base is known, and in a CI run whose
  // artifact files have no address of their own, the run page and the
  // artifact are named instead.
  bool name_files = links.base.empty() && !links.run_page.empty();
  if (name_files) {
    out += fmt::format(
        "The reports are in the artifact {} of [this workflow run]({}): download it and open "
        "`<run>/report.html`.\n\n",
        links.artifact.empty() ? std::string("uploaded from the output directory") : md_code(links.artifact),
        links.run_page);
  }
  out += summary_gate(result);
  out += summary_table(result, name_files);
  if (failed > 0) {
    out += "\n### Failed\n\n";
    for (const BatchRun& r : result.runs) {
      if (r.status == BatchStatus::kOk) continue;
      // The error names the artifact; a run's name is added when it has one.
      out += fmt::format("- **{}**: {}{}\n", batch_status_name(r.status), r.name.empty() ? "" : md_cell(r.name) + ": ",
                         md_cell(r.error));
    }
  }
  return out;
}

std::string batch_index_html(const BatchResult& result) {
  std::string title = batch_title(result);
  std::string out = html_page_head(title);
  out += "<h1>" + xml_escaped(title) +
         "</h1>\n<table class=\"batch\">\n<thead><tr><th class=\"text\">run</th>"
         "<th class=\"text\">status</th><th>steps</th><th>" +
         xml_escaped(step_heading(result)) + "</th>" + std::string(result.has_baseline ? "<th>vs baseline</th>" : "") +
         "<th>bubble</th>"
         "<th class=\"text\">schedule</th><th class=\"text\">outputs</th><th class=\"text\">source</th>"
         "<th class=\"text\">error</th></tr></thead>\n<tbody>\n";
  for (const BatchRun& r : result.runs) {
    bool good = r.status == BatchStatus::kOk;
    // A run past the gate is marked as such (and tinted), not only "ok".
    bool slow = r.change && r.change->gate_failed;
    out += fmt::format("<tr class=\"{}\" data-status=\"{}\"{}>", good ? (slow ? "ok slow" : "ok") : "bad",
                       batch_status_name(r.status), slow ? " data-gate=\"failed\" style=\"background:#fde2e2\"" : "");
    out += "<td class=\"text run-name\">";
    if (r.outputs.count("report")) {
      out += "<a href=\"" + xml_escaped(r.outputs.at("report")) + "\">" + xml_escaped(r.name) + "</a>";
    } else {
      out += xml_escaped(r.name.empty() ? "-" : r.name);
    }
    out += fmt::format("</td><td class=\"text {}\">{}</td>", good ? "status-ok" : "status-bad",
                       batch_status_name(r.status));
    std::string change;
    if (result.has_baseline) {
      change = "<td>" +
               xml_escaped(r.is_baseline ? std::string("baseline")
                           : r.change    ? change_text(*r.change)
                                         : "-") +
               "</td>";
    }
    out += good ? fmt::format("<td>{}</td><td>{}</td>{}<td>{}</td>", r.steps, xml_escaped(step_cell(result, r)), change,
                              pct_text(r.bubble_ratio))
                : "<td>-</td><td>-</td>" + (result.has_baseline ? change : "") + "<td>-</td>";
    out += "<td class=\"text\">" + xml_escaped(r.schedule) + "</td><td class=\"text\">";
    bool first = true;
    for (const auto& [kind, path] : r.outputs) {
      if (!first) out += " ";
      first = false;
      out += "<a href=\"" + xml_escaped(path) + "\">" + xml_escaped(kind) + "</a>";
    }
    out += "</td><td class=\"text\">" + xml_escaped(r.source) + "</td><td class=\"text\">" + xml_escaped(r.error) +
           "</td></tr>\n";
  }
  out += "</tbody></table>\n</body>\n</html>\n";
  return out;
}

}  // namespace ppt
