// pp-timeline stats: how big the bubbles of a run are, from its logs.
#include <fmt/format.h>

#include <memory>

#include "commands.h"
#include "output/output_file.h"
#include "output/outputs.h"
#include "output/stats_writers.h"
#include "stats_input.h"

namespace ppt::cli {
namespace {

struct StatsCommandOptions {
  InputOptions input;
  RunOptions run;
  SelectionOptions selection;
  uint32_t micro_batch_size = 0;
  double straggler_margin_pct = 10;
  bool json = false;
  bool markdown = false;
  std::string output;
  std::string color = "auto";
};

int run_stats(const StatsCommandOptions& o) {
  Reporter say("stats", o.run.quiet);
  if (o.input.empty()) {
    say.error("give --log_dir DIR or log files (see pp-timeline stats --help)");
    return kExitUsage;
  }
  bool json = o.json || (!o.markdown && o.output.ends_with(".json"));
  bool markdown = o.markdown || (!o.json && o.output.ends_with(".md"));
  const std::string output = o.output.empty() ? std::string("-") : o.output;
  DriverRequest request = driver_request(o.input.request(), o.run);
  if (std::string error = parse_selection(o.selection, &request.selection); !error.empty()) {
    say.error(error);
    return kExitUsage;
  }
  request.stats_options.straggler_margin = o.straggler_margin_pct / 100.0;
  request.stats_options.micro_batch_size = o.micro_batch_size;
  request.outputs = {output};
  StatsInput input;
  if (int code = load_stats_input(request, say, "", false, &input); code != kExitOk) return code;
  std::string text;
  if (json) {
    text = format_stats_json(input.stats, input.timeline()->origin_ns);
  } else if (markdown) {
    text = format_stats_markdown(input.stats);
  } else {
    TextStyle style;
    style.color = use_color(o.color, is_stdout_path(output));
    text = format_stats_text(input.stats, style);
  }
  DriverResult& run = *input.run;
  std::string error =
      timed(run, "write", [&] { return write_text_output(output, text, input_paths(run.timeline->files)); });
  if (o.run.timings) say.timings(run.timings);
  if (!error.empty()) {
    say.error(error);
    return kExitInput;
  }
  return kExitOk;
}

}  // namespace

void setup_stats(CLI::App& app, Runner& chosen) {
  auto o = std::make_shared<StatsCommandOptions>();
  CLI::App* sub = app.add_subcommand(
      "stats",
      "Measure a run from its logs: step times, each rank's busy and idle time and bubble ratio, job "
      "durations, the schedule and its ideal bubble ratio, stragglers and each step's critical path.\n"
      "  pp-timeline stats --log_dir logs/ [--json | --markdown]");
  add_input_options(*sub, o->input);
  add_selection_options(*sub, o->selection);
  add_micro_batch_size_option(*sub, o->micro_batch_size);
  add_report_format_options(*sub, o->straggler_margin_pct, o->json, o->markdown, o->color);
  sub->add_option("-o,--output", o->output,
                  "write the report here instead of stdout (.json: JSON, .md: Markdown, unless a flag says)");
  add_run_options(*sub, o->run);
  sub->footer("Exit status: 0 done; 1 nothing usable found, --strict and input problems, or the report could\n"
              "not be written; 2 usage error (an output that is an input among them); 3 internal error.");
  sub->callback([o, &chosen] { chosen = [o] { return run_stats(*o); }; });
}

}  // namespace ppt::cli
