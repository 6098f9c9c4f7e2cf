// The options several commands share, each declared once with one help text.
// A command's own options struct embeds the common structs below and adds
// what is its own.
//
// It declares only: the types of the library it names (the driver's request,
// a layout, a selection) are declared here and defined in their own headers,
// which options.cc and each command include where they use them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace ppt {
struct DriverRequest;  // app/driver.h
struct LayoutRequest;  // input/log_layout.h
struct Selection;      // app/selection.h
struct OutputSpec;     // output/outputs.h
}  // namespace ppt

namespace ppt::cli {

// Where a run's logs are: --log_dir, the positional files, --devices,
// --multi_machine.
struct InputOptions {
  std::string log_dir;
  std::vector<std::string> files;
  std::vector<int> devices;
  bool multi_machine = false;  // accepted for compatibility; layouts are detected

  LayoutRequest request() const;  // {log_dir, files, devices}
  bool empty() const { return log_dir.empty() && files.empty(); }
};

// How a run is read and what the passes do: every command that reads logs.
struct RunOptions {
  unsigned threads = 0;
  int32_t pp_degree = 0;              // 0: inferred (pipeline.h)
  std::string align_clocks = "auto";  // "auto" or "off" (clock_align.h)
  bool strict = false;
  bool quiet = false;
  bool timings = false;
};

// What part of the run a command looks at (app/selection.h), the same three
// options on convert, stats, report and diff.
struct SelectionOptions {
  uint32_t run = 0;          // --run N, 1-based; 0: every run (stats: the last)
  std::string steps;         // --steps A:B
  uint32_t skip_warmup = 0;  // --skip-warmup N
};

void add_input_options(CLI::App& app, InputOptions& input);
// --run, --steps and --skip-warmup.
void add_selection_options(CLI::App& app, SelectionOptions& selection);
// The Selection of those options; on a bad --steps the error line, else "".
std::string parse_selection(const SelectionOptions& options, Selection* out);
void add_devices_option(CLI::App& app, std::vector<int>& devices);
void add_threads_option(CLI::App& app, unsigned& threads);
void add_pp_degree_option(CLI::App& app, int32_t& pp_degree);
void add_align_clocks_option(CLI::App& app, std::string& align_clocks);
void add_strict_option(CLI::App& app, bool& strict);
void add_quiet_option(CLI::App& app, bool& quiet);
// --micro-batch-size: samples per micro-batch, for samples per second.
void add_micro_batch_size_option(CLI::App& app, uint32_t& micro_batch_size);
// --device-memory SIZE (util/text.h parse_byte_size: 80GiB, 81920MiB, 80GB):
// each stage's measured and predicted peak memory is compared to it; 0 when
// not given.
void add_device_memory_option(CLI::App& app, int64_t& device_memory_bytes);
// --max-jobs: the cap on job rectangles of a picture or page.
void add_max_jobs_option(CLI::App& app, size_t& max_jobs);
// The report options of stats and diff: --straggler-margin, --json,
// --markdown (exclusive with --json) and --color.
void add_report_format_options(CLI::App& app, double& straggler_margin_pct, bool& json, bool& markdown,
                               std::string& color);
// --threads, --pp-degree, --align-clocks, --strict, -q and --timings.
void add_run_options(CLI::App& app, RunOptions& run);

// The driver's request for these options (without outputs or stats).
DriverRequest driver_request(const LayoutRequest& input, const RunOptions& run);

// A command's outputs from its options, given the input as decided (a
// positional directory resolved, where it is one: convert writes beside
// it): "" or the usage error.
using OutputsDecision = std::function<std::string(const LayoutRequest& input, std::vector<OutputSpec>* outputs)>;

// A run as every command that reads logs decides it, once, into the one
// value the command and the driver then read: the input (or "give --log_dir
// DIR or log files (see pp-timeline <command> --help)"), the selection, the
// outputs (`outputs`, their paths also in the request, so that one that is
// an input is refused), a directory named among the files moved to
// --log_dir, and the passes and threads of `run`. The stats, picture and
// what-if parts of `*request` are the command's own. The first usage error,
// in that order, else "".
std::string decide_run(std::string_view command, const InputOptions& input, const RunOptions& run,
                       const SelectionOptions& selection, const OutputsDecision& outputs, DriverRequest* request,
                       std::vector<OutputSpec>* specs);

}  // namespace ppt::cli
