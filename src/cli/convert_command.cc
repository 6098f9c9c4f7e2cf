// The conversion: logs in, traces, pictures and report pages out.
#include <fmt/format.h>

#include <filesystem>

#include "app/driver.h"
#include "cli/finite_range.h"
#include "commands.h"
#include "input/log_layout.h"
#include "reporter.h"
#include "util/kept_at_exit.h"

namespace ppt::cli {

void setup_convert(CLI::App& app, ConvertOptions& o) {
  add_input_options(app, o.input);
  app.add_option("-o,--output", o.outputs,
                 "output file, format by extension (.json: Chrome trace, .json.gz: the same gzipped, "
                 ".pftrace/.perfetto-trace: Perfetto's protobuf trace, .svg: picture, .png: the same picture as an "
                 "image, .html: report; - : Chrome JSON on standard output); may be repeated");
  add_selection_options(app, o.selection);
  app.add_option("--width", o.width,
                 "width of the .svg/.png picture in pixels (default: a 1200-pixel time axis plus the row labels)")
      ->check(finite_range(300.0, 30000.0));
  app.add_option("--scale", o.scale, "pixels of the .png image per picture pixel (default 2, sharp on dense screens)")
      ->check(finite_range(0.25, 8.0));
  app.add_option("--perfetto-json", o.perfetto_json,
                 "write the Perfetto-flavoured JSON trace here (gzipped when the name ends with .gz)");
  app.add_flag("--absolute", o.absolute, "epoch timestamps instead of rebasing to the earliest job");
  app.add_flag("--no-flows", o.no_flows,
               "no flow arrows from each job to the job it feeds (same micro-batch, next stage)");
  app.add_flag("--plain-pftrace", o.plain_pftrace,
               ".pftrace: plain packets, for `protoc --decode`, instead of deflated in compressed_packets (the "
               "default, which Perfetto inflates as it reads; about 40% of the size, the same trace)");
  add_run_options(app, o.run);
}

namespace {

// The outputs of -o and --perfetto-json; with neither, the Chrome and the
// Perfetto JSON beside the log directory (for files, and standard input, in
// the current folder).
std::string convert_outputs(const ConvertOptions& o, const LayoutRequest& input, std::vector<OutputSpec>* outputs) {
  if (std::string error = resolve_outputs(OutputCommand::kConvert, o.outputs, OutputFormat::kChromeJson, outputs);
      !error.empty()) {
    return error;
  }
  for (const std::string& path : o.perfetto_json) {
    if (std::string error = check_output_path(path, *outputs); !error.empty()) return error;
    outputs->push_back(spec_with_format(path, OutputFormat::kPerfettoJson));
  }
  if (outputs->empty()) {
    std::filesystem::path dir =
        input.log_dir.empty() ? std::filesystem::path(".") : std::filesystem::path(input.log_dir);
    outputs->push_back({(dir / "pipeline_profile.json").string(), OutputFormat::kChromeJson});
    outputs->push_back({(dir / "pipeline_profile_perfetto.json").string(), OutputFormat::kPerfettoJson});
  }
  return "";
}

}  // namespace

int run_convert(const ConvertOptions& o) {
  Reporter say("", o.run.quiet);
  begin_one_shot_command();
  DriverRequest request;
  std::vector<OutputSpec> outputs;
  auto decide_outputs = [&](const LayoutRequest& input, std::vector<OutputSpec>* out) {
    return convert_outputs(o, input, out);
  };
  if (std::string error = decide_run("", o.input, o.run, o.selection, decide_outputs, &request, &outputs);
      !error.empty()) {
    say.error(error);
    return kExitUsage;
  }
  request.stats = needs_stats(outputs);  // the report page's tables
  request.suggest = request.stats;       // and what would help, as report's page says
  if (draws(outputs)) request.picture = PictureRequest{};
  DriverResult result = run_driver(request);
  KeptAtExit keep(result);
  if (int code = say.load(result, true); code != kExitOk) return code;

  WriteOptions wopt;
  wopt.absolute = o.absolute;
  wopt.compress_pftrace = !o.plain_pftrace;
  wopt.svg.width = o.width;
  wopt.svg.png_scale = o.scale;
  // Every picture shows the steps the driver chose (app/picture.h).
  if (result.picture && !result.picture->note.empty()) say.note(result.picture->note);
  std::vector<WrittenOutput> written = write_outputs(result, outputs, wopt, o.no_flows);
  std::string list;
  int code = kExitOk;
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!written[i].error.empty()) {
      say.error(written[i].error);
      code = kExitInput;
      continue;
    }
    list += fmt::format("{}{} ({})", list.empty() ? "" : ", ", outputs[i].path, format_size(written[i].bytes));
  }
  std::string summary = format_summary(*result.timeline) + format_pipeline_summary(result);
  if (!list.empty()) summary += " -> " + list;
  say.line(summary);
  if (o.run.timings) say.timings(result.timings);
  if (int unread = say.unread_status(*result.timeline); code == kExitOk) code = unread;
  return code;
}

}  // namespace ppt::cli
