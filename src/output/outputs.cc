#include "output/outputs.h"

#include <fmt/format.h>

#include "output/chrome_json_writer.h"
#include "output/html_report.h"
#include "output/output_file.h"
#include "output/perfetto_writer.h"
#include "output/png_writer.h"

namespace ppt {

std::optional<OutputFormat> format_for_path(const std::string& path, std::string* error) {
  if (path.ends_with(".json")) return OutputFormat::kChromeJson;
  if (path.ends_with(".svg")) return OutputFormat::kSvg;
  if (path.ends_with(".png")) return OutputFormat::kPng;
  if (path.ends_with(".html") || path.ends_with(".htm")) return OutputFormat::kHtmlReport;
  if (path.ends_with(".pftrace") || path.ends_with(".perfetto-trace")) return OutputFormat::kPerfettoTrace;
  if (path == "-" || path == "/dev/stdout") return OutputFormat::kChromeJson;
  *error = fmt::format("{}: unknown output format (use a .json, .pftrace, .svg, .png or .html name, or --perfetto-json FILE)", path);
  return std::nullopt;
}

bool is_stdout_path(const std::string& path) { return path == "-" || path == "/dev/stdout"; }

std::vector<std::string> input_paths(const std::vector<SourceFile>& files) {
  std::vector<std::string> out;
  for (const SourceFile& f : files) {
    if (!f.standard_input) out.push_back(f.path);
  }
  return out;
}

std::string check_not_an_input(const std::string& output, const std::vector<std::string>& inputs) {
  if (is_stdout_path(output)) return "";
  for (const std::string& in : inputs) {
    if (same_file(output, in)) return fmt::format("{}: refusing to write onto an input log", output);
  }
  return "";
}

std::string check_not_an_input(const std::string& output, const std::vector<SourceFile>& inputs) {
  return check_not_an_input(output, input_paths(inputs));
}

std::string open_output(OutputFile& file, const std::string& path, const std::vector<std::string>& inputs) {
  if (std::string error = check_not_an_input(path, inputs); !error.empty()) return error;
  // Standard output is descriptor 1 itself (output_file.h says why not a path).
  bool opened = is_stdout_path(path) ? file.open_stdout() : file.open(path);
  return opened ? std::string() : file.error();
}

std::string write_text_output(const std::string& path, std::string_view text, const std::vector<std::string>& inputs) {
  OutputFile file;
  if (std::string error = open_output(file, path, inputs); !error.empty()) return error;
  file.write(text);
  return file.commit() ? std::string() : file.error();
}

std::string write_output(const Timeline& timeline, const OutputSpec& spec, const WriteOptions& options,
                         size_t* bytes) {
  OutputFile file;
  if (std::string error = open_output(file, spec.path, input_paths(timeline.files)); !error.empty()) return error;
  // Pictures carry the stats (title, stages, critical paths); a lone picture
  // draws its slowest step when the whole run would be too dense to read.
  SvgOptions svg = options.svg;
  if (!svg.stats) svg.stats = options.stats;
  SvgOptions picture = svg;
  picture.slowest_step_when_dense = true;
  switch (spec.format) {
    case OutputFormat::kChromeJson:
    case OutputFormat::kPerfettoJson: {
      JsonWriteOptions o;
      o.flavor = spec.format == OutputFormat::kChromeJson ? JsonFlavor::kChrome : JsonFlavor::kPerfetto;
      o.absolute = options.absolute;
      o.dependencies = options.dependencies;
      write_chrome_json(timeline, o, file);
      break;
    }
    case OutputFormat::kPerfettoTrace: {
      PerfettoWriteOptions o;
      o.absolute = options.absolute;
      o.dependencies = options.dependencies;
      o.threads = options.threads;
      write_perfetto_trace(timeline, o, file);
      break;
    }
    case OutputFormat::kSvg:
      write_svg(timeline, picture, file);
      break;
    case OutputFormat::kPng: {
      PngResult png = write_png(timeline, picture, file);
      if (!png.error.empty()) return fmt::format("{}: {}", spec.path, png.error);
      break;
    }
    case OutputFormat::kHtmlReport: {
      ReportOptions r;
      r.svg = svg;
      r.title = options.title;
      r.source = options.source;
      r.stats = options.stats;
      r.notes = options.notes;
      write_html_report(timeline, r, file);
      break;
    }
  }
  if (bytes) *bytes = file.bytes_written();
  if (!file.commit()) return file.error();
  return "";
}

}  // namespace ppt
