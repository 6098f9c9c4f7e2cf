// pp-timeline diff A B: did a change make the schedule worse, and where?
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>

#include "commands.h"
#include "analysis/diff.h"
#include "output/diff_trace.h"
#include "output/html_report.h"
#include "output/output_file.h"
#include "output/outputs.h"
#include "output/stats_writers.h"
#include "reporter.h"
#include "stats_input.h"

namespace ppt::cli {
namespace {

struct DiffCommandOptions {
  std::string a, b;
  std::vector<int> devices;
  RunOptions run;
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
  std::vector<OutputSpec> outputs;
  if (std::string error = resolve_report_outputs(OutputCommand::kDiff, o.outputs, o.json, o.markdown, &outputs);
      !error.empty()) {
    say.error(error);
    return kExitUsage;
  }
  if (!o.trace.empty()) {
    std::string error;
    std::optional<OutputSpec> trace = resolve_output(OutputCommand::kDiffTrace, o.trace, OutputFormat::kDiffTrace, &error);
    if (trace) error = check_output_path(o.trace, outputs);
    if (!error.empty()) {
      say.error("--trace " + error);
      return kExitUsage;
    }
    outputs.insert(outputs.begin(), *trace);
  }
  // The verdict is the command's answer: on standard output also when the
  // outputs are files (a CI log shows it), as text.
  if (std::none_of(outputs.begin(), outputs.end(), [](const OutputSpec& s) { return is_stdout_path(s.path); })) {
    outputs.push_back({"-", OutputFormat::kReportText});
  }
  if (o.a == "-" && o.b == "-") {
    say.error("-: standard input is one run's log, read once; name '-' for A or B only");
    return kExitUsage;
  }
  // Both sides through the same driver, with the same options.
  DriverRequest request = driver_request(LayoutRequest{"", {}, o.devices}, o.run);
  request.stats_options.straggler_margin = o.straggler_margin_pct / 100.0;
  request.stats_options.critical_paths = false;
  for (const OutputSpec& out : outputs) request.outputs.push_back(out.path);
  StatsInput a, b;
  if (int code = load_stats_or_json(o.a, request, say, "A: ", &a); code != kExitOk) return code;
  if (int code = load_stats_or_json(o.b, request, say, "B: ", &b); code != kExitOk) return code;

  DiffOptions dopt;
  dopt.noise_floor_pct = o.noise_pct;
  dopt.rank_change_pct = o.rank_change_pct;
  dopt.fail_if_slower_pct = o.fail_if_slower_pct;
  Diff d = diff_stats(a.stats, b.stats, dopt);

  std::vector<std::string> inputs;
  for (const StatsInput* side : {&a, &b}) {
    if (side->timeline()) {
      for (const std::string& p : input_paths(side->timeline()->files)) inputs.push_back(p);
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
          info = write_diff_trace(*a.timeline(), o.a, *b.timeline(), o.b, sink);
          break;
        case OutputFormat::kDiffReport: {
          // The report page: the deltas, then both timelines on one scale.
          DiffReportInput report{a.timeline(), b.timeline(), o.a, o.b, &d};
          write_diff_report(report, ReportOptions{}, sink);
          break;
        }
        case OutputFormat::kReportJson:
          sink.write(format_diff_json(d));
          break;
        case OutputFormat::kReportMarkdown:
          sink.write(format_diff_markdown(d));
          break;
        default: {
          TextStyle style;
          style.color = use_color(o.color, is_stdout_path(out.path));
          sink.write(format_diff_text(d, style));
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
                   : fmt::format("wrote {}: no step number in common; aligned A's step {} with B's step {}",
                                 out.path, info.step, info.step_b));
    } else if (!is_stdout_path(out.path)) {
      say.info(fmt::format("wrote {}", out.path));
    }
  }
  if (o.run.timings) {
    for (const StatsInput* side : {&a, &b}) {
      if (side->run) say.timings(side->run->timings);
    }
  }
  if (d.gate_failed) {
    say.line(fmt::format("{}: B's mean step time is {} against A's, more than --fail-if-slower {:g}%",
                         say.prefix(), format_percent(d.step_time.delta_pct, PercentSign::kAlways),
                         o.fail_if_slower_pct));
    return kExitInput;
  }
  return code;
}

}  // namespace

void setup_diff(CLI::App& app, Runner& chosen) {
  auto o = std::make_shared<DiffCommandOptions>();
  CLI::App* sub = app.add_subcommand(
      "diff",
      "Compare two runs: step time, each rank's busy and idle time and bubble ratio, job durations, job order; "
      "a verdict and a CI gate.\n"
      "  pp-timeline diff base_logs/ new_logs/ [--fail-if-slower 5]\n"
      "  pp-timeline stats --log_dir base_logs/ --json -o base.json; pp-timeline diff base.json new_logs/");
  sub->add_option("A", o->a, "the baseline: a log directory, a log file ('-': one rank's log on standard input), or a `stats --json` file")->required();
  sub->add_option("B", o->b, "the run to judge: the same kinds")->required();
  add_devices_option(*sub, o->devices);
  add_report_format_options(*sub, o->straggler_margin_pct, o->json, o->markdown, o->color);
  sub->add_option("--fail-if-slower", o->fail_if_slower_pct,
                  "exit 1 when B's mean step time is more than PCT % above A's (a CI gate)")
      ->check(CLI::Range(0.0, 1e6));
  sub->add_option("--noise", o->noise_pct,
                  "smallest change in percent that is not called `same` (the noise of the step times is used "
                  "when larger)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e6));
  sub->add_option("--rank-change", o->rank_change_pct,
                  "name the ranks whose busy time per step changed by more than PCT %")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e6));
  sub->add_option("-o,--output", o->outputs,
                  "write the comparison in the format of the name's extension (.txt: text, .json: the diff JSON, "
                  ".md: Markdown, .html: a page with the deltas and both timelines one above the other; - : "
                  "standard output); may be repeated. The verdict is printed as text too, unless - is named");
  sub->add_option("--trace", o->trace,
                  "write one trace (.json, or .json.gz gzipped) holding both runs, aligned at their first common "
                  "step");
  add_run_options(*sub, o->run);
  sub->footer("Exit status: 0 done (and the gate, if any, passed); 1 B is slower than --fail-if-slower allows,\n"
              "an input has nothing usable, or an output failed; 2 usage error (bad option, missing path, an output\n"
              "that is an input); 3 internal error.");
  sub->callback([o, &chosen] { chosen = [o] { return run_diff(*o); }; });
}

}  // namespace ppt::cli
