// Output formats, chosen by file extension, and writing one output whole.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "output/svg_writer.h"
#include "model/timeline.h"

namespace ppt {

struct Dependencies;

// kSvg: a static picture (svg_writer.h); kHtmlReport: the self-contained
// report page (html_report.h); kPerfettoTrace: Perfetto's protobuf trace
// (.pftrace, .perfetto-trace; perfetto_writer.h).
enum class OutputFormat { kChromeJson, kPerfettoJson, kSvg, kHtmlReport, kPerfettoTrace };

struct OutputSpec {
  std::string path;
  OutputFormat format;
};

struct WriteOptions {
  bool absolute = false;
  SvgOptions svg;           // .svg and .html: steps to draw, size cap
  std::string source;       // .html: what was read, shown under the heading
  std::vector<std::string> notes;  // .html: layout notes
  const Dependencies* dependencies = nullptr;  // JSON and .pftrace: flow arrows; null: none
  unsigned threads = 0;     // .pftrace: encoders (0: one per core)
};

// The format that `path`'s extension asks for, or nullopt with a message.
std::optional<OutputFormat> format_for_path(const std::string& path, std::string* error);

// Refuses an output that is one of the inputs. Returns an error or "".
std::string check_not_an_input(const std::string& output, const std::vector<SourceFile>& inputs);

// Writes one output through a temporary file; returns "" or an error line.
// `bytes` (optional) receives the size written.
std::string write_output(const Timeline& timeline, const OutputSpec& spec, const WriteOptions& options,
                         size_t* bytes = nullptr);

}  // namespace ppt
