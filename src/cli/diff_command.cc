// pp-timeline diff A B: did a change make the schedule worse, and where?
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>

#include "analysis/diff.h"
#include "app/diff_run.h"
#include "app/driver.h"
#include "app/stats_input.h"
#include "cli/finite_range.h"
#include "commands.h"
#include "input/log_layout.h"
#include "output/outputs.h"
#include "output/sink/output_file.h"
#include "output/text/stats_writers.h"
#include "reporter.h"
#include "stats_input.h"

namespace ppt::cli {
namespace {

struct DiffCommandOptions {
  std::vector<std::string> runs;  // A, then B, C...: each compared with A
  std::vector<int> devices;
  RunOptions run;
  SelectionOptions selection;
  uint32_t micro_batch_size = 0;
  std::string gate = "period";
  bool gate_given = false;
  double straggler_margin_pct = 10;
  double fail_if_slower_pct = -1;
  double noise_pct = 1.0;
  double rank_change_pct = 5.0;
  bool json = false;
  bool markdown = false;
  std::vector<std::string> outputs;
  std::string trace;
  std::string color = "auto";
};

// The outputs of -o and --trace, and the verdict on standard output also
// when they are files (a CI log shows it), as text; "" or the usage error.
std::string diff_outputs(const DiffCommandOptions& o, std::vector<OutputSpec>* outputs) {
  if (std::string error = resolve_report_outputs(OutputCommand::kDiff, o.outputs, o.json, o.markdown, outputs);
      !error.empty()) {
    return error;
  }
  if (!o.trace.empty()) {
    std::string error;
    std::optional<OutputSpec> trace =
        resolve_output(OutputCommand::kDiffTrace, o.trace, OutputFormat::kDiffTrace, &error);
    if (trace) error = check_output_path(o.trace, *outputs);
    if (!error.empty()) return "--trace " + error;
    outputs->insert(outputs->begin(), *trace);
  }
  // A trace or a page holds two runs: A and one B.
  for (const OutputSpec& out : *outputs) {
    if (holds_two_runs(out) && o.runs.size() > 2) {
      return fmt::format("{}: a trace or page holds two runs; compare one run with the baseline to write it", out.path);
    }
  }
  if (std::none_of(outputs->begin(), outputs->end(), [](const OutputSpec& s) { return is_stdout_path(s.path); })) {
    outputs->push_back({"-", OutputFormat::kReportText});
  }
  return "";
}

// The runs, the outputs and the gate's metric as the options give them; ""
// or the usage error.
std::string decide_diff(const DiffCommandOptions& o, std::vector<OutputSpec>* outputs, GateMetric* metric,
                        DriverRequest* request) {
  if (o.runs.size() < 2) {
    return "give the baseline A and at least one run B to compare with it (see pp-timeline diff --help)";
  }
  if (std::string error = diff_outputs(o, outputs); !error.empty()) return error;
  if (std::count(o.runs.begin(), o.runs.end(), "-") > 1) {
    return "-: standard input is one run's log, read once; name '-' for A or B only";
  }
  std::optional<GateMetric> gate = gate_metric_from_name(o.gate);
  if (!gate) return "--gate " + o.gate + ": period, busy or throughput";
  *metric = *gate;
  // Every side through the same driver, with the same options.
  *request = driver_request(LayoutRequest{"", {}, o.devices}, o.run);
  if (std::string error = parse_selection(o.selection, &request->selection); !error.empty()) return error;
  request->stats_options.straggler_margin = o.straggler_margin_pct / 100.0;
  request->stats_options.critical_paths = false;
  request->stats_options.micro_batch_size = o.micro_batch_size;
  for (const OutputSpec& out : *outputs) {
    request->outputs.push_back(out.path);
    if (out.format == OutputFormat::kDiffReport) request->picture = PictureRequest{};
  }
  return "";
}

// Each run read (app/stats_input.h decides whether from logs or a stats
// JSON), its problems reported under its label; 0 or the exit status.
int load_runs(const DiffCommandOptions& o, const DriverRequest& request, const Reporter& say, DiffRuns* runs) {
  runs->paths = o.runs;
  runs->sides.resize(o.runs.size());
  for (size_t i = 0; i < o.runs.size(); ++i) {
    StatsInput& side = runs->sides[i];
    std::string label = o.runs.size() == 2 ? (i == 0 ? "A: " : "B: ") : run_letter(i) + ": ";
    if (int code = load_stats_or_json(o.runs[i], request, say, label, &side); code != kExitOk) return code;
    if (!side.run && !request.selection.empty()) {
      // A stats JSON holds figures, not jobs: its selection was made when it was written.
      say.note(fmt::format("{}{} is a stats JSON: {} applies to the logs only; it was written with {}", label,
                           o.runs[i], request.selection.options_text(),
                           side.stats.selection.empty() ? std::string("no selection") : side.stats.selection));
    }
    // A baseline read back from JSON takes this run's --micro-batch-size too.
    if (!side.run && o.micro_batch_size > 0) {
      side.stats.throughput = compute_throughput(side.stats.step_period, side.stats.schedule, o.micro_batch_size);
    }
  }
  return kExitOk;
}

// Every output written, each said; 0, or 1 when one failed.
int write_diff_outputs(const DiffCommandOptions& o, const std::vector<OutputSpec>& outputs, const DiffRuns& runs,
                       const Reporter& say) {
  int code = kExitOk;
  for (const OutputSpec& out : outputs) {
    if (holds_two_runs(out) && (!runs.sides[0].timeline() || !runs.sides[1].timeline())) {
      say.error(fmt::format("{}: the {} needs the logs of both runs, not a stats JSON; not written", out.path,
                            out.format == OutputFormat::kDiffTrace ? "trace" : "page"));
      code = kExitInput;
      continue;
    }
    TextStyle style;
    style.color = use_color(o.color, is_stdout_path(out.path));
    DiffTraceInfo info;
    if (std::string error = write_diff_output(out, runs, style, &info); !error.empty()) {
      // A closed or full standard output is an error too, not a silent exit 0.
      say.error(error);
      code = kExitInput;
    } else if (out.format == OutputFormat::kDiffTrace && !is_stdout_path(out.path)) {
      say.info(info.common_step
                   ? fmt::format("wrote {}: both runs aligned at step {}", out.path, info.step)
                   : fmt::format("wrote {}: no step number in common; aligned A's step {} with B's step {}", out.path,
                                 info.step, info.step_b));
    } else if (!is_stdout_path(out.path)) {
      say.info(fmt::format("wrote {}", out.path));
    }
  }
  return code;
}

// Each run slower than --fail-if-slower allows, said; whether any was.
bool report_gate(const DiffCommandOptions& o, const DiffRuns& runs, const Reporter& say) {
  bool failed = false;
  for (size_t i = 0; i < runs.diffs.size(); ++i) {
    const Diff& d = runs.diffs[i];
    if (!d.gate_failed) continue;
    failed = true;
    say.line(fmt::format("{}: {} ({}) is {} slower than A ({}), more than --fail-if-slower {:g}% (metric: {})",
                         say.prefix(), d.b_label, o.runs[i + 1],
                         format_percent(d.slower_pct, PercentSign::kNegativeOnly), metric_change(d),
                         o.fail_if_slower_pct, gate_metric_name(d.metric)));
  }
  return failed;
}

int run_diff(const DiffCommandOptions& o) {
  Reporter say("diff", o.run.quiet);
  std::vector<OutputSpec> outputs;
  GateMetric metric{};
  DriverRequest request;
  if (std::string error = decide_diff(o, &outputs, &metric, &request); !error.empty()) {
    say.error(error);
    return kExitUsage;
  }
  DiffRuns runs;
  if (int code = load_runs(o, request, say, &runs); code != kExitOk) return code;
  DiffOptions dopt;
  dopt.noise_floor_pct = o.noise_pct;
  dopt.rank_change_pct = o.rank_change_pct;
  dopt.fail_if_slower_pct = o.fail_if_slower_pct;
  dopt.metric = metric;
  dopt.metric_chosen = o.gate_given;
  compare_runs(runs, dopt);
  for (size_t i = 0; i < runs.diffs.size(); ++i) {
    if (runs.diffs[i].gate_error.empty()) continue;
    say.error(
        fmt::format("{}{}", o.runs.size() > 2 ? fmt::format("{}: ", o.runs[i + 1]) : "", runs.diffs[i].gate_error));
    return kExitUsage;
  }
  int code = write_diff_outputs(o, outputs, runs, say);
  if (o.run.timings) {
    for (const StatsInput& side : runs.sides) {
      if (side.run) say.timings(side.run->timings);
    }
  }
  const bool failed = report_gate(o, runs, say);
  for (const StatsInput& side : runs.sides) {
    if (!side.run || !side.run->timeline) continue;
    if (int unread = say.unread_status(*side.run->timeline); code == kExitOk) code = unread;
  }
  return failed ? kExitInput : code;
}

}  // namespace

void setup_diff(CLI::App& app, Runner& chosen) {
  auto o = std::make_shared<DiffCommandOptions>();
  CLI::App* sub = add_command(
      app, "diff",
      "Compare two runs: step time, each rank's busy and idle time and bubble ratio, job durations, job order; "
      "a verdict and a CI gate.\n"
      "  pp-timeline diff base_logs/ new_logs/ [--fail-if-slower 5] [--gate period|busy|throughput]\n"
      "  pp-timeline diff base_logs/ new1/ new2/ --fail-if-slower 3   (each against the first)\n"
      "  pp-timeline stats --log_dir base_logs/ --json -o base.json; pp-timeline diff base.json new_logs/",
      chosen, run_diff, o);
  sub->add_option("runs", o->runs,
                  "A, the baseline, then B (C...), the runs to judge against it: each a log directory, a log file "
                  "('-': one rank's log on standard input), or a `stats --json` file")
      ->required()
      ->type_name("RUN")
      ->expected(2, CLI::detail::expected_max_vector_size);  // A B [C ...]: help shows "RUN ..."
  add_devices_option(*sub, o->devices);
  add_report_format_options(*sub, o->straggler_margin_pct, o->json, o->markdown, o->color);
  sub->add_option("--fail-if-slower", o->fail_if_slower_pct,
                  "exit 1 when B (or any of B, C...) is more than PCT % slower than A in the --gate metric (a CI "
                  "gate)")
      ->check(finite_range(0.0, 1e6));
  sub->add_option("--gate", o->gate,
                  "what the verdict and the gate compare: period (a step's start to the next one's, the time "
                  "between steps included), busy (first job start to last job end) or throughput (steps per second)")
      ->capture_default_str()
      ->check(CLI::IsMember({"period", "busy", "throughput"}))
      ->each([o](const std::string&) { o->gate_given = true; });
  add_selection_options(*sub, o->selection);
  add_micro_batch_size_option(*sub, o->micro_batch_size);
  sub->add_option("--noise", o->noise_pct,
                  "smallest change in percent that is not called `same` (the noise of the step times is used "
                  "when larger)")
      ->capture_default_str()
      ->check(finite_range(0.0, 1e6));
  sub->add_option("--rank-change", o->rank_change_pct,
                  "name the ranks whose busy time per step changed by more than PCT %")
      ->capture_default_str()
      ->check(finite_range(0.0, 1e6));
  sub->add_option("-o,--output", o->outputs,
                  "write the comparison in the format of the name's extension (.txt: text, .json: the diff JSON, "
                  ".md: Markdown, .html: a page with the deltas, the steps and both timelines one above the other; "
                  "- : standard output); may be repeated. The verdict is printed as text too, unless - is named");
  sub->add_option("--trace", o->trace,
                  "write one trace (.json, or .json.gz gzipped) holding both runs, aligned at their first common "
                  "step");
  add_run_options(*sub, o->run);
}

}  // namespace ppt::cli
