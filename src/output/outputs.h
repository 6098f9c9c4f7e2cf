// Output formats, chosen by file extension, and writing one output whole.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/timeline.h"
#include "output/picture/svg_writer.h"
#include "output/sink/byte_sink.h"

namespace ppt {

struct Dependencies;
struct Stats;
class OutputFile;

// What a file holds. The first five and kPng are a run's timeline
// (write_output below); the report formats are what `stats` or `diff` says, written by the
// command (stats_writers.h); the diff formats hold two runs (html_report.h,
// diff_trace.h). kSvg: a static picture (svg_writer.h); kHtmlReport: the
// self-contained report page (html_report.h); kPerfettoTrace: Perfetto's
// protobuf trace (perfetto_writer.h); kPng: the kSvg picture rasterized
// (png_writer.h).
enum class OutputFormat {
  kChromeJson,
  kPerfettoJson,
  kSvg,
  kHtmlReport,
  kPerfettoTrace,
  kPng,
  kReportText,
  kReportJson,
  kReportMarkdown,
  kDiffReport,
  kDiffTrace,
};

struct OutputSpec {
  std::string path;
  OutputFormat format;
  bool gzip = false;  // .gz: gzipped as it is written (gzip_sink.h)
};

struct WriteOptions {
  bool absolute = false;
  SvgOptions svg;                              // .svg, .png and .html: the picture's size and look
  const PictureSelection* picture = nullptr;   // .svg, .png and .html: the steps drawn (the driver's); required
  std::string title;                           // .html: <title> and heading ("pp-timeline report" when empty)
  std::string source;                          // .html: what was read, shown under the heading
  std::vector<std::string> notes;              // .html: layout notes
  const Dependencies* dependencies = nullptr;  // JSON and .pftrace: flow arrows; null: none
  unsigned threads = 0;                        // .pftrace: encoders (0: one per core)
  bool compress_pftrace = true;                // .pftrace: packets deflated (PerfettoWriteOptions::compress)
  const Stats* stats = nullptr;                // .html: the stats tables (the driver's); none when null
  // Not empty: every file lies inside this folder and is never written
  // through a symbolic link below it (OutputFile::refuse_links_below; batch's --out).
  std::string confine;
};

// The commands' tables of outputs. kDiffTrace is `diff --trace FILE`.
enum class OutputCommand { kConvert, kStats, kDiff, kDiffTrace, kReport };

// One row of a command's table: a file whose name ends with `extension` is
// written as `format` (gzipped when `gzip`). Documented in docs/cli.md,
// "Outputs".
struct OutputExtension {
  std::string_view extension;
  OutputFormat format;
  bool gzip = false;
  std::string_view what;  // for messages: "Chrome trace JSON"
};

// The spec for one -o PATH of `command`: by extension, in any case (.JSON
// is .json); "-" and /dev/stdout
// are standard output in `stdout_format`. Nullopt and a message (usage, exit
// 2) for an extension the command does not write (the message lists the
// ones it does) and for a directory (a trailing '/' or an existing one).
std::optional<OutputSpec> resolve_output(OutputCommand command, const std::string& path, OutputFormat stdout_format,
                                         std::string* error);

// Every -o of a command, resolved and appended to `out`, each path named
// once over `out` (standard output too). Returns "" or the message of the
// first that is refused (usage, exit 2).
std::string resolve_outputs(OutputCommand command, const std::vector<std::string>& paths, OutputFormat stdout_format,
                            std::vector<OutputSpec>* out);

// "" when `path` may be written after `earlier`: not a directory, not named
// before; else the message.
std::string check_output_path(const std::string& path, const std::vector<OutputSpec>& earlier);

// convert's table (resolve_output for OutputCommand::kConvert).
std::optional<OutputFormat> format_for_path(const std::string& path, std::string* error);

// A spec for a file whose format is given by an option (--perfetto-json):
// gzipped when the name ends with ".gz".
OutputSpec spec_with_format(const std::string& path, OutputFormat format);

// "" when `path` can be written as far as can be told before any work: its
// folder exists, is a folder and takes a new file (OutputFile::
// check_can_create); standard output always. Else the error line.
std::string check_output_writable(const std::string& path);

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
// `confine`: as WriteOptions'.
std::string open_output(OutputFile& file, const std::string& path, const std::vector<std::string>& inputs,
                        const std::string& confine = {});

// Writes `text` to `path` through open_output(); returns "" or an error line.
std::string write_text_output(const std::string& path, std::string_view text,
                              const std::vector<std::string>& inputs = {}, const std::string& confine = {});

// Opens `spec` through open_output() and hands `write` the sink to write
// to: the file, or a gzip stream into it (spec.gzip); then commits. Returns
// "" or an error line. `bytes` (optional) receives the size of the file.
// `confine`: as WriteOptions'.
std::string write_spec(const OutputSpec& spec, const std::vector<std::string>& inputs,
                       const std::function<void(ByteSink&)>& write, size_t* bytes = nullptr,
                       const std::string& confine = {});

// Writes one output through open_output() (the timeline's files are its
// inputs); returns "" or an error line.
// `bytes` (optional) receives the size written.
std::string write_output(const Timeline& timeline, const OutputSpec& spec, const WriteOptions& options,
                         size_t* bytes = nullptr);

}  // namespace ppt
