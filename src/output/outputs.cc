#include "output/outputs.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <stdexcept>

#include "output/picture/png_writer.h"
#include "output/report/html_report.h"
#include "output/sink/gzip_sink.h"
#include "output/sink/output_file.h"
#include "output/trace/chrome_json_writer.h"
#include "output/trace/perfetto_writer.h"

namespace ppt {
namespace {

// The rows of `command`'s table (a longer extension before its tail:
// .json.gz before .json).
std::vector<OutputExtension> output_extensions(OutputCommand command) {
  using F = OutputFormat;
  switch (command) {
    case OutputCommand::kConvert:
      return {
          {".json.gz", F::kChromeJson, true, "Chrome trace JSON, gzipped"},
          {".json", F::kChromeJson, false, "Chrome trace JSON"},
          {".pftrace", F::kPerfettoTrace, false, "Perfetto protobuf trace"},
          {".perfetto-trace", F::kPerfettoTrace, false, "Perfetto protobuf trace"},
          {".svg", F::kSvg, false, "picture"},
          {".png", F::kPng, false, "the picture as an image"},
          {".html", F::kHtmlReport, false, "report page"},
          {".htm", F::kHtmlReport, false, "report page"},
      };
    case OutputCommand::kStats:
      return {
          {".txt", F::kReportText, false, "text"},        {".json", F::kReportJson, false, "stats JSON"},
          {".md", F::kReportMarkdown, false, "Markdown"}, {".html", F::kHtmlReport, false, "report page"},
          {".htm", F::kHtmlReport, false, "report page"},
      };
    case OutputCommand::kDiff:
      return {
          {".txt", F::kReportText, false, "text"},
          {".json", F::kReportJson, false, "diff JSON"},
          {".md", F::kReportMarkdown, false, "Markdown"},
          {".html", F::kDiffReport, false, "page of both runs"},
          {".htm", F::kDiffReport, false, "page of both runs"},
      };
    case OutputCommand::kDiffTrace:
      return {
          {".json.gz", F::kDiffTrace, true, "trace of both runs, gzipped"},
          {".json", F::kDiffTrace, false, "trace of both runs"},
      };
    case OutputCommand::kReport:
      return {
          {".html", F::kHtmlReport, false, "report page"},
          {".htm", F::kHtmlReport, false, "report page"},
      };
  }
  return {};
}

// "convert", "stats", ... as in messages.
std::string_view command_name(OutputCommand command) {
  switch (command) {
    case OutputCommand::kConvert: return "convert";
    case OutputCommand::kStats: return "stats";
    case OutputCommand::kDiff: return "diff";
    case OutputCommand::kDiffTrace: return "diff --trace";
    case OutputCommand::kReport: return "report";
  }
  return "";
}

bool names_a_directory(const std::string& path) {
  if (path.ends_with('/')) return true;
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

// ".json (Chrome trace JSON), .html/.htm (report page)": the rows of a
// command's table, the names of one format together.
std::string list_extensions(OutputCommand command) {
  std::vector<OutputExtension> rows = output_extensions(command);
  std::string list;
  for (size_t i = 0; i < rows.size();) {
    size_t k = i + 1;
    std::string names(rows[i].extension);
    while (k < rows.size() && rows[k].format == rows[i].format && rows[k].gzip == rows[i].gzip &&
           rows[k].what == rows[i].what) {
      names += fmt::format("/{}", rows[k].extension);
      ++k;
    }
    list += fmt::format("{}{} ({})", list.empty() ? "" : ", ", names, rows[i].what);
    i = k;
  }
  return list;
}

// Whether two output paths name one file as the file system resolves them:
// one inode where both exist; otherwise one path once the part that exists
// is resolved (links, ".", "..") and the rest is normalised, so that
// "n.json", "./n.json" and "sub/../n.json" are one output before any exists.
bool same_output_path(const std::string& a, const std::string& b) {
  if (a == b || same_file(a, b)) return true;
  std::error_code ea, eb;
  const std::filesystem::path ra = std::filesystem::weakly_canonical(std::filesystem::absolute(a, ea), ea);
  const std::filesystem::path rb = std::filesystem::weakly_canonical(std::filesystem::absolute(b, eb), eb);
  return !ea && !eb && ra == rb;
}

}  // namespace

std::string check_output_path(const std::string& path, const std::vector<OutputSpec>& earlier) {
  if (path.empty()) return "-o needs a file name";
  if (!is_stdout_path(path) && names_a_directory(path)) {
    return fmt::format("{}: is a directory; an output is a file", path);
  }
  for (const OutputSpec& e : earlier) {
    bool both_stdout = is_stdout_path(e.path) && is_stdout_path(path);
    bool same = !is_stdout_path(path) && !is_stdout_path(e.path) && same_output_path(e.path, path);
    if (both_stdout || same) return fmt::format("{}: named twice as an output", both_stdout ? "standard output" : path);
  }
  return "";
}

std::optional<OutputSpec> resolve_output(OutputCommand command, const std::string& path, OutputFormat stdout_format,
                                         std::string* error) {
  if (is_stdout_path(path)) return OutputSpec{path, stdout_format, false};
  if (std::string e = check_output_path(path, {}); !e.empty()) {
    *error = e;
    return std::nullopt;
  }
  // Extensions in any case: trace.JSON is a .json (the name is kept as given).
  std::string lower = path;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const OutputExtension& row : output_extensions(command)) {
    const size_t n = row.extension.size();
    // A name, not only an extension: "x.json", never ".json" or "dir/.json".
    if (lower.ends_with(row.extension) && path.size() > n && path[path.size() - n - 1] != '/') {
      return OutputSpec{path, row.format, row.gzip};
    }
  }
  *error = fmt::format("{}: {} writes {}, told by the name's extension, or - for standard output", path,
                       command_name(command), list_extensions(command));
  return std::nullopt;
}

std::string resolve_outputs(OutputCommand command, const std::vector<std::string>& paths, OutputFormat stdout_format,
                            std::vector<OutputSpec>* out) {
  for (const std::string& path : paths) {
    std::string error;
    std::optional<OutputSpec> spec = resolve_output(command, path, stdout_format, &error);
    if (!spec) return error;
    if (error = check_output_path(path, *out); !error.empty()) return error;
    out->push_back(std::move(*spec));
  }
  return "";
}

std::optional<OutputFormat> format_for_path(const std::string& path, std::string* error) {
  std::optional<OutputSpec> spec = resolve_output(OutputCommand::kConvert, path, OutputFormat::kChromeJson, error);
  if (!spec) return std::nullopt;
  return spec->format;
}

OutputSpec spec_with_format(const std::string& path, OutputFormat format) {
  std::string tail = path.size() >= 3 ? path.substr(path.size() - 3) : path;
  std::transform(tail.begin(), tail.end(), tail.begin(), [](unsigned char c) { return std::tolower(c); });
  return OutputSpec{path, format, !is_stdout_path(path) && tail == ".gz"};
}

std::string check_output_writable(const std::string& path) {
  if (is_stdout_path(path)) return "";
  return OutputFile::check_can_create(path);
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

std::string open_output(OutputFile& file, const std::string& path, const std::vector<std::string>& inputs,
                        const std::string& confine) {
  if (std::string error = check_not_an_input(path, inputs); !error.empty()) return error;
  if (!confine.empty()) file.refuse_links_below(confine);
  // Standard output is descriptor 1 itself (output_file.h says why not a path).
  bool opened = is_stdout_path(path) ? file.open_stdout() : file.open(path);
  return opened ? std::string() : file.error();
}

std::string write_text_output(const std::string& path, std::string_view text, const std::vector<std::string>& inputs,
                              const std::string& confine) {
  OutputFile file;
  if (std::string error = open_output(file, path, inputs, confine); !error.empty()) return error;
  file.write(text);
  return file.commit() ? std::string() : file.error();
}

std::string write_spec(const OutputSpec& spec, const std::vector<std::string>& inputs,
                       const std::function<void(ByteSink&)>& write, size_t* bytes, const std::string& confine) {
  OutputFile file;
  if (std::string error = open_output(file, spec.path, inputs, confine); !error.empty()) return error;
  if (spec.gzip) {
    GzipSink gz(file);
    write(gz);
    if (!gz.finish()) return fmt::format("{}: gzip compression failed", spec.path);
  } else {
    write(file);
  }
  if (bytes) *bytes = file.bytes_written();
  if (!file.commit()) return file.error();
  return "";
}

std::string write_output(const Timeline& timeline, const OutputSpec& spec, const WriteOptions& options, size_t* bytes) {
  // Pictures carry the stats (title, stages, critical paths) and draw the
  // steps the driver chose for every picture of the run (app/picture.h).
  SvgOptions svg = options.svg;
  if (!svg.stats) svg.stats = options.stats;
  bool drawn = spec.format == OutputFormat::kSvg || spec.format == OutputFormat::kPng ||
               spec.format == OutputFormat::kHtmlReport;
  if (drawn && !options.picture) throw std::logic_error("write_output: a picture needs the driver's selection");
  std::string png_error;
  std::string error = write_spec(
      spec, input_paths(timeline.files),
      [&](ByteSink& out) {
        switch (spec.format) {
          case OutputFormat::kChromeJson:
          case OutputFormat::kPerfettoJson: {
            JsonWriteOptions o;
            o.flavor = spec.format == OutputFormat::kChromeJson ? JsonFlavor::kChrome : JsonFlavor::kPerfetto;
            o.absolute = options.absolute;
            o.dependencies = options.dependencies;
            write_chrome_json(timeline, o, out);
            break;
          }
          case OutputFormat::kPerfettoTrace: {
            PerfettoWriteOptions o;
            o.absolute = options.absolute;
            o.dependencies = options.dependencies;
            o.threads = options.threads;
            o.compress = options.compress_pftrace;
            write_perfetto_trace(timeline, o, out);
            break;
          }
          case OutputFormat::kSvg: write_svg(timeline, *options.picture, svg, out); break;
          case OutputFormat::kPng: png_error = write_png(timeline, *options.picture, svg, out).error; break;
          case OutputFormat::kHtmlReport: {
            ReportOptions r;
            r.svg = svg;
            r.picture = options.picture;
            r.title = options.title;
            r.source = options.source;
            r.stats = options.stats;
            r.notes = options.notes;
            write_html_report(timeline, r, out);
            break;
          }
          case OutputFormat::kReportText:
          case OutputFormat::kReportJson:
          case OutputFormat::kReportMarkdown:
          case OutputFormat::kDiffReport:
          case OutputFormat::kDiffTrace:
            // Written by their command, which has the stats or both runs.
            throw std::logic_error("write_output: a report format is the command's to write");
        }
      },
      bytes, options.confine);
  if (error.empty() && !png_error.empty()) return fmt::format("{}: {}", spec.path, png_error);
  return error;
}

}  // namespace ppt
