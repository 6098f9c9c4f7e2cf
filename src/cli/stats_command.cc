// pp-timeline stats: how big the bubbles of a run are, from its logs.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>

#include "app/driver.h"
#include "app/stats_input.h"
#include "commands.h"
#include "output/outputs.h"
#include "output/sink/output_file.h"
#include "output/text/stats_writers.h"
#include "reporter.h"
#include "stats_input.h"
#include "util/kept_at_exit.h"

namespace ppt::cli {
namespace {

struct StatsCommandOptions {
  InputOptions input;
  RunOptions run;
  SelectionOptions selection;
  uint32_t micro_batch_size = 0;
  int64_t device_memory_bytes = 0;
  double straggler_margin_pct = 10;
  bool json = false;
  bool markdown = false;
  bool no_suggestions = false;
  std::vector<std::string> outputs;
  std::string color = "auto";
};

// What stats writes: the errors, and "base.json (12.0 KB), ...", the files
// written (standard output is not listed).
struct StatsWritten {
  std::vector<std::string> errors;
  std::string list;

  void add(const OutputSpec& out, const std::string& error, size_t bytes) {
    if (!error.empty())
      errors.push_back(error);
    else if (!is_stdout_path(out.path))
      list += fmt::format("{}{} ({})", list.empty() ? "" : ", ", out.path, format_size(bytes));
  }
};

// The report of `out`'s format as text, or nullopt for a page (written by
// the writers phase).
// The suggestions are finished (`later`) before a report reads them: the
// JSON's after the fields before them are written.
std::optional<std::string> stats_report(const StatsCommandOptions& o, StatsInput& input, const OutputSpec& out,
                                        LaterSuggestions& later) {
  const std::function<void()> finish = [&] { later.finish(&input.stats); };
  if (out.format == OutputFormat::kReportMarkdown || out.format == OutputFormat::kReportText) finish();
  switch (out.format) {
    case OutputFormat::kReportJson: return format_stats_json(input.stats, input.timeline()->origin_ns, finish);
    case OutputFormat::kReportMarkdown: return format_stats_markdown(input.stats);
    case OutputFormat::kReportText: {
      TextStyle style;
      style.color = use_color(o.color, is_stdout_path(out.path));
      return format_stats_text(input.stats, style);
    }
    default: return std::nullopt;
  }
}

// One analysis, every output from it: the reports here, the page through
// the writers phase (as report and convert write it).
StatsWritten write_stats_outputs(const StatsCommandOptions& o, const std::vector<OutputSpec>& outputs,
                                 StatsInput& input, LaterSuggestions& later, const Reporter& say) {
  DriverResult& run = *input.run;
  const std::vector<std::string> inputs = input_paths(run.timeline->files);
  std::vector<OutputSpec> pages;
  StatsWritten written;
  timed(run, "write", [&] {
    for (const OutputSpec& out : outputs) {
      std::optional<std::string> text = stats_report(o, input, out, later);
      if (!text) {
        pages.push_back(out);
        continue;
      }
      size_t bytes = 0;
      std::string error = write_spec(
          out, inputs, [&](ByteSink& sink) { sink.write(*text); }, &bytes);
      written.add(out, error, bytes);
    }
    return 0;
  });
  if (pages.empty()) return written;
  later.finish(&input.stats);  // the page's stats are the run's
  if (run.picture && !run.picture->note.empty()) say.note(run.picture->note);
  std::vector<WrittenOutput> page_written = write_outputs(run, pages, WriteOptions{});
  for (size_t i = 0; i < pages.size(); ++i) written.add(pages[i], page_written[i].error, page_written[i].bytes);
  return written;
}

int run_stats(const StatsCommandOptions& o) {
  Reporter say("stats", o.run.quiet);
  begin_one_shot_command(/*reuse_freed=*/true);
  DriverRequest request;
  std::vector<OutputSpec> outputs;
  auto decide_outputs = [&](const LayoutRequest&, std::vector<OutputSpec>* out) {
    return resolve_report_outputs(OutputCommand::kStats, o.outputs, o.json, o.markdown, out);
  };
  if (std::string error = decide_run("stats", o.input, o.run, o.selection, decide_outputs, &request, &outputs);
      !error.empty()) {
    say.error(error);
    return kExitUsage;
  }
  request.stats_options.straggler_margin = o.straggler_margin_pct / 100.0;
  request.stats_options.micro_batch_size = o.micro_batch_size;
  request.suggest = !o.no_suggestions;
  request.device_memory_bytes = o.device_memory_bytes;
  if (draws(outputs)) request.picture = PictureRequest{};
  // Files written are listed at the end, in the summary line, as convert does.
  const bool writes_files =
      std::any_of(outputs.begin(), outputs.end(), [](const OutputSpec& s) { return !is_stdout_path(s.path); });
  StatsInput input;
  KeptAtExit keep(input);
  LaterSuggestions later;  // finished by the reports, or waited for here before `input` goes
  if (int code = load_stats_input(request, say, "", draws(outputs), &input, !writes_files, &later); code != kExitOk) {
    return code;
  }
  DriverResult& run = *input.run;
  if (o.device_memory_bytes > 0 && !input.stats.memory.present()) {
    say.note(
        "--device-memory: the run has no memory samples (Paddle's [Pipeline details] lines, logged with "
        "FLAGS_profile_pipeline_details_steps): no peak to check against it");
  }
  StatsWritten written = write_stats_outputs(o, outputs, input, later, say);
  for (const std::string& e : written.errors) say.error(e);
  if (writes_files) {
    std::string summary = format_summary(*run.timeline) + format_pipeline_summary(run);
    say.line(written.list.empty() ? summary : summary + " -> " + written.list);
  }
  if (o.run.timings) say.timings(run.timings);
  int unread = say.unread_status(*run.timeline);
  return !written.errors.empty() ? kExitInput : unread;
}

}  // namespace

void setup_stats(CLI::App& app, Runner& chosen) {
  auto o = std::make_shared<StatsCommandOptions>();
  CLI::App* sub =
      add_command(app, "stats",
                  "Measure a run from its logs: step times, each rank's busy and idle time and bubble ratio, job "
                  "durations, the schedule and its ideal bubble ratio, stragglers and each step's critical path.\n"
                  "  pp-timeline stats --log_dir logs/ [--json | --markdown]",
                  chosen, run_stats, o);
  add_input_options(*sub, o->input);
  add_selection_options(*sub, o->selection);
  add_micro_batch_size_option(*sub, o->micro_batch_size);
  add_device_memory_option(*sub, o->device_memory_bytes);
  add_report_format_options(*sub, o->straggler_margin_pct, o->json, o->markdown, o->color);
  sub->add_flag("--no-suggestions", o->no_suggestions,
                "leave out what would help (the what-if replays of other schedules, 2M and balanced stages, and "
                "their caveats): the stats alone, sooner");
  sub->add_option("-o,--output", o->outputs,
                  "write the report here instead of standard output, in the format of the name's extension "
                  "(.txt: text, .json: JSON, .md: Markdown, .html: the report page; - : standard output); may be "
                  "repeated");
  add_run_options(*sub, o->run);
}

}  // namespace ppt::cli
