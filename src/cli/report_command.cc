// pp-timeline report: one self-contained HTML page of a run (html_report.h):
// the timeline with zoom, pan and hover, and the stats tables.
#include <fmt/format.h>

#include <memory>

#include "app/driver.h"
#include "app/picture.h"
#include "commands.h"
#include "output/outputs.h"
#include "reporter.h"

namespace ppt::cli {
namespace {

struct ReportCommandOptions {
  InputOptions input;
  RunOptions run;
  std::vector<std::string> outputs;
  SelectionOptions selection;
  size_t max_jobs = PictureRequest{}.max_jobs;
};

int run_report(const ReportCommandOptions& o) {
  Reporter say("report", o.run.quiet);
  DriverRequest request;
  std::vector<OutputSpec> outputs;
  auto decide_outputs = [&](const LayoutRequest&, std::vector<OutputSpec>* out) {
    return resolve_outputs(OutputCommand::kReport, o.outputs, OutputFormat::kHtmlReport, out);
  };
  if (std::string error = decide_run("report", o.input, o.run, o.selection, decide_outputs, &request, &outputs);
      !error.empty()) {
    say.error(error);
    return kExitUsage;
  }
  // Drawn as `convert` draws an .html output: the same driver, the same page.
  request.stats = true;
  request.suggest = true;
  request.picture = PictureRequest{};
  request.picture->max_jobs = o.max_jobs;
  DriverResult result = run_driver(request);
  if (int code = say.load(result, true); code != kExitOk) return code;
  const PictureSelection& sel = *result.picture;
  if (!sel.note.empty()) say.note(sel.note);
  std::vector<WrittenOutput> written = write_outputs(result, outputs, WriteOptions{});
  if (o.run.timings) say.timings(result.timings);
  int code = kExitOk;
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!written[i].error.empty()) {
      say.error(written[i].error);
      code = kExitInput;
    } else if (!is_stdout_path(outputs[i].path)) {
      say.info(
          fmt::format("wrote {} ({} KB): {} jobs drawn", outputs[i].path, (written[i].bytes + 1023) / 1024, sel.jobs));
    }
  }
  if (int unread = say.unread_status(*result.timeline); code == kExitOk) code = unread;
  return code;
}

}  // namespace

void setup_report(CLI::App& app, Runner& chosen) {
  auto o = std::make_shared<ReportCommandOptions>();
  CLI::App* sub = add_command(
      app, "report",
      "Write one self-contained HTML page of a run: the timeline (zoom, pan, a card per job on hover) and the "
      "stats tables. No network, no external file: it opens anywhere. The same page as convert's .html output.\n"
      "  pp-timeline report --log_dir logs/ -o report.html [--steps 10:20]",
      chosen, run_report, o);
  add_input_options(*sub, o->input);
  sub->add_option("-o,--output", o->outputs, "the HTML file to write (.html or .htm; - for stdout); may be repeated")
      ->required();
  add_selection_options(*sub, o->selection);
  add_max_jobs_option(*sub, o->max_jobs);
  add_run_options(*sub, o->run);
}

}  // namespace ppt::cli
