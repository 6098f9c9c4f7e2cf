// Output formats, chosen by file extension, and writing one output whole.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "output/svg_writer.h"
#include "model/timeline.h"

namespace ppt {

struct Dependencies;
struct Stats;
class OutputFile;

// kSvg: a static picture (svg_writer.h); kHtmlReport: the self-contained
// report page (html_report.h); kPerfettoTrace: Perfetto's protobuf trace
// (.pftrace, .perfetto-trace; perfetto_writer.h); kPng: the same picture as
// kSvg, rasterized (png_writer.h).
enum class OutputFormat { kChromeJson, kPerfettoJson, kSvg, kHtmlReport, kPerfettoTrace, kPng };

struct OutputSpec {
  std::string path;
  OutputFormat format;
};

struct WriteOptions {
  bool absolute = false;
  SvgOptions svg;           // .svg, .png and .html: steps to draw, size cap
  std::string title;        // .html: <title> and heading ("pp-timeline report" when empty)
  std::string source;       // .html: what was read, shown under the heading
  std::vector<std::string> notes;  // .html: layout notes
  const Dependencies* dependencies = nullptr;  // JSON and .pftrace: flow arrows; null: none
  unsigned threads = 0;     // .pftrace: encoders (0: one per core)
  const Stats* stats = nullptr;  // .html: the stats tables (the driver's); none when null
};

// The format that `path`'s extension asks for, or nullopt with a message.
std::optional<OutputFormat> format_for_path(const std::string& path, std::string* error);

// "-" and /dev/stdout: standard output (descriptor 1, output_file.h).
bool is_stdout_path(const std::string& path);

// The paths of the files read, standard input left out.
std::vector<std::string> input_paths(const std::vector<SourceFile>& files);

// Refuses an output that is one of the inputs (the same file, by device and
// inode: a link or another spelling of the path is caught). Returns an error
// or "".
std::string check_not_an_input(const std::string& output, const std::vector<std::string>& inputs);
std::string check_not_an_input(const std::string& output, const std::vector<SourceFile>& inputs);

// Every output of every command is opened here: standard output for "-" or
// /dev/stdout, else whole or nothing through a temporary file (OutputFile),
// and never onto one of `inputs`. Returns "" or an error line.
std::string open_output(OutputFile& file, const std::string& path, const std::vector<std::string>& inputs);

// Writes `text` to `path` through open_output(); returns "" or an error line.
std::string write_text_output(const std::string& path, std::string_view text,
                              const std::vector<std::string>& inputs = {});

// Writes one output through open_output() (the timeline's files are its
// inputs); returns "" or an error line.
// `bytes` (optional) receives the size written.
std::string write_output(const Timeline& timeline, const OutputSpec& spec, const WriteOptions& options,
                         size_t* bytes = nullptr);

}  // namespace ppt
