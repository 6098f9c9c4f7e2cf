// pp-timeline diff A B: did a change make the schedule worse, and where?
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>

#include "analysis/diff.h"
#include "app/driver.h"
#include "cli/finite_range.h"
#include "commands.h"
#include "input/log_layout.h"
#include "output/outputs.h"
#include "output/report/html_report.h"
#include "output/sink/output_file.h"
#include "output/text/stats_writers.h"
#include "output/trace/diff_trace.h"
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

int run_diff(const DiffCommandOptions& o) {
  Reporter say("diff", o.run.quiet);
  if (o.runs.size() < 2) {
    say.error("give the baseline A and at least one run B to compare with it (see pp-timeline diff --help)");
    return kExitUsage;
  }
  const std::string& a_path = o.runs[0];
  std::vector<OutputSpec> outputs;
  if (std::string error = resolve_report_outputs(OutputCommand::kDiff, o.outputs, o.json, o.markdown, &outputs);
      !error.empty()) {
    say.error(error);
    return kExitUsage;
  }
  if (!o.trace.empty()) {
    std::string error;
    std::optional<OutputSpec> trace =
        resolve_output(OutputCommand::kDiffTrace, o.trace, OutputFormat::kDiffTrace, &error);
    if (trace) error = check_output_path(o.trace, outputs);
    if (!error.empty()) {
      say.error("--trace " + error);
      return kExitUsage;
    }
    outputs.insert(outputs.begin(), *trace);
  }
  // A trace or a page holds two runs: A and one B.
  for (const OutputSpec& out : outputs) {
    const bool two_runs = out.format == OutputFormat::kDiffTrace || out.format == OutputFormat::kDiffReport;
    if (two_runs && o.runs.size() > 2) {
      say.error(
          fmt::format("{}: a trace or page holds two runs; compare one run with the baseline to write it", out.path));
      return kExitUsage;
    }
  }
  // The verdict is the command's answer: on standard output also when the
  // outputs are files (a CI log shows it), as text.
  if (std::none_of(outputs.begin(), outputs.end(), [](const OutputSpec& s) { return is_stdout_path(s.path); })) {
    outputs.push_back({"-", OutputFormat::kReportText});
  }
  size_t stdin_runs = 0;
  for (const std::string& r : o.runs) stdin_runs += r == "-" ? 1 : 0;
  if (stdin_runs > 1) {
    say.error("-: standard input is one run's log, read once; name '-' for A or B only");
    return kExitUsage;
  }
  std::optional<GateMetric> metric = gate_metric_from_name(o.gate);
  if (!metric) {
    say.error("--gate " + o.gate + ": period, busy or throughput");
    return kExitUsage;
  }
  // Every side through the same driver, with the same options.
  DriverRequest request = driver_request(LayoutRequest{"", {}, o.devices}, o.run);
  if (std::string error = parse_selection(o.selection, &request.selection); !error.empty()) {
    say.error(error);
    return kExitUsage;
  }
  request.stats_options.straggler_margin = o.straggler_margin_pct / 100.0;
  request.stats_options.critical_paths = false;
  request.stats_options.micro_batch_size = o.micro_batch_size;
  for (const OutputSpec& out : outputs) request.outputs.push_back(out.path);
  for (const OutputSpec& out : outputs) {
    if (out.format == OutputFormat::kDiffReport) request.picture = PictureRequest{};
  }
  std::vector<StatsInput> sides(o.runs.size());
  for (size_t i = 0; i < o.runs.size(); ++i) {
    std::string label =
        o.runs.size() == 2 ? (i == 0 ? "A: " : "B: ") : fmt::format("{}: ", char('A' + std::min<size_t>(i, 25)));
    if (int code = load_stats_or_json(o.runs[i], request, say, label, &sides[i]); code != kExitOk) return code;
    if (!sides[i].run && !request.selection.empty()) {
      // A stats JSON holds figures, not jobs: its selection was made when it was written.
      say.note(fmt::format("{}{} is a stats JSON: {} applies to the logs only; it was written with {}", label,
                           o.runs[i], request.selection.options_text(),
                           sides[i].stats.selection.empty() ? std::string("no selection") : sides[i].stats.selection));
    }
    // A baseline read back from JSON takes this run's --micro-batch-size too.
    if (!sides[i].run && o.micro_batch_size > 0) {
      Stats& st = sides[i].stats;
      st.throughput = compute_throughput(st.step_period, st.schedule, o.micro_batch_size);
    }
  }

  DiffOptions dopt;
  dopt.noise_floor_pct = o.noise_pct;
  dopt.rank_change_pct = o.rank_change_pct;
  dopt.fail_if_slower_pct = o.fail_if_slower_pct;
  dopt.metric = *metric;
  dopt.metric_chosen = o.gate_given;
  std::vector<Diff> diffs;
  for (size_t i = 1; i < sides.size(); ++i) {
    dopt.b_label = std::string(1, char('A' + std::min<size_t>(i, 25)));  // B, C, D...: the load's labels
    diffs.push_back(diff_stats(sides[0].stats, sides[i].stats, dopt));
    if (!diffs.back().gate_error.empty()) {
      say.error(fmt::format("{}{}", o.runs.size() > 2 ? fmt::format("{}: ", o.runs[i]) : "", diffs.back().gate_error));
      return kExitUsage;
    }
  }
  const Diff& d = diffs.front();
  const StatsInput& a = sides[0];
  const StatsInput& b = sides[1];

  std::vector<std::string> inputs;
  for (const StatsInput& side : sides) {
    if (side.timeline()) {
      for (const std::string& p : input_paths(side.timeline()->files)) inputs.push_back(p);
    }
  }
  int code = kExitOk;
  for (const OutputSpec& out : outputs) {
    const bool two_runs = out.format == OutputFormat::kDiffTrace || out.format == OutputFormat::kDiffReport;
    if (two_runs && (!a.timeline() || !b.timeline())) {
      say.error(fmt::format("{}: the {} needs the logs of both runs, not a stats JSON; not written", out.path,
                            out.format == OutputFormat::kDiffTrace ? "trace" : "page"));
      code = kExitInput;
      continue;
    }
    DiffTraceInfo info;
    std::string error = write_spec(out, inputs, [&](ByteSink& sink) {
      switch (out.format) {
        case OutputFormat::kDiffTrace:
          info = write_diff_trace(*a.timeline(), a_path, *b.timeline(), o.runs[1], sink);
          break;
        case OutputFormat::kDiffReport: {
          // The report page: the deltas, the steps, then both timelines on one scale.
          DiffReportInput report{a.timeline(), b.timeline(), a_path, o.runs[1], &d};
          report.a_picture = a.run->picture ? &*a.run->picture : nullptr;
          report.b_picture = b.run->picture ? &*b.run->picture : nullptr;
          write_diff_report(report, ReportOptions{}, sink);
          break;
        }
        case OutputFormat::kReportJson:
          sink.write(diffs.size() == 1 ? format_diff_json(d) : format_diff_set_json(diffs));
          break;
        case OutputFormat::kReportMarkdown:
          for (size_t i = 0; i < diffs.size(); ++i) {
            if (i > 0) sink.write("\n");
            sink.write(format_diff_markdown(diffs[i]));
          }
          break;
        default: {
          TextStyle style;
          style.color = use_color(o.color, is_stdout_path(out.path));
          for (size_t i = 0; i < diffs.size(); ++i) {
            if (i > 0) sink.write("\n");
            sink.write(format_diff_text(diffs[i], style));
          }
          break;
        }
      }
    });
    if (!error.empty()) {
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
  if (o.run.timings) {
    for (const StatsInput& side : sides) {
      if (side.run) say.timings(side.run->timings);
    }
  }
  bool failed = false;
  for (size_t i = 0; i < diffs.size(); ++i) {
    if (!diffs[i].gate_failed) continue;
    failed = true;
    say.line(fmt::format("{}: {} ({}) is {} slower than A ({}), more than --fail-if-slower {:g}% (metric: {})",
                         say.prefix(), diffs[i].b_label, o.runs[i + 1],
                         format_percent(diffs[i].slower_pct, PercentSign::kNegativeOnly), metric_change(diffs[i]),
                         o.fail_if_slower_pct, gate_metric_name(diffs[i].metric)));
  }
  for (const StatsInput& side : sides) {
    if (!side.run || !side.run->timeline) continue;
    if (int unread = say.unread_status(*side.run->timeline); code == kExitOk) code = unread;
  }
  return failed ? kExitInput : code;
}

}  // namespace

void setup_diff(CLI::App& app, Runner& chosen) {
  auto o = std::make_shared<DiffCommandOptions>();
  CLI::App* sub = app.add_subcommand(
      "diff",
      "Compare two runs: step time, each rank's busy and idle time and bubble ratio, job durations, job order; "
      "a verdict and a CI gate.\n"
      "  pp-timeline diff base_logs/ new_logs/ [--fail-if-slower 5] [--gate period|busy|throughput]\n"
      "  pp-timeline diff base_logs/ new1/ new2/ --fail-if-slower 3   (each against the first)\n"
      "  pp-timeline stats --log_dir base_logs/ --json -o base.json; pp-timeline diff base.json new_logs/");
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
  sub->footer(
      "Exit status: 0 done (and the gate, if any, passed); 1 B is slower than --fail-if-slower allows,\n"
      "an input has nothing usable, or an output failed; 2 usage error (bad option, missing path, an output\n"
      "that is an input); 3 internal error.");
  sub->callback([o, &chosen] { chosen = [o] { return run_diff(*o); }; });
}

}  // namespace ppt::cli
