#include "output/outputs.h"

#include <fmt/format.h>

#include "output/chrome_json_writer.h"
#include "output/html_report.h"
#include "output/output_file.h"
#include "output/perfetto_writer.h"

namespace ppt {

std::optional<OutputFormat> format_for_path(const std::string& path, std::string* error) {
  if (path.ends_with(".json")) return OutputFormat::kChromeJson;
  if (path.ends_with(".svg")) return OutputFormat::kSvg;
  if (path.ends_with(".html") || path.ends_with(".htm")) return OutputFormat::kHtmlReport;
  if (path.ends_with(".pftrace") || path.ends_with(".perfetto-trace")) return OutputFormat::kPerfettoTrace;
  if (path == "-" || path == "/dev/stdout") return OutputFormat::kChromeJson;
  *error = fmt::format("{}: unknown output format (use a .json, .pftrace, .svg or .html name, or --perfetto-json FILE)", path);
  return std::nullopt;
}

std::string check_not_an_input(const std::string& output, const std::vector<SourceFile>& inputs) {
  for (const SourceFile& f : inputs) {
    if (!f.standard_input && same_file(output, f.path)) {
      return fmt::format("{}: refusing to write onto an input log", output);
    }
  }
  return "";
}

std::string write_output(const Timeline& timeline, const OutputSpec& spec, const WriteOptions& options,
                         size_t* bytes) {
  OutputFile file;
  // Standard output is descriptor 1 itself (output_file.h says why not a path).
  bool opened = spec.path == "-" || spec.path == "/dev/stdout" ? file.open_stdout() : file.open(spec.path);
  if (!opened) return file.error();
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
      write_svg(timeline, options.svg, file);
      break;
    case OutputFormat::kHtmlReport: {
      ReportOptions r;
      r.svg = options.svg;
      r.source = options.source;
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
