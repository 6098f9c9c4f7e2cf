// The subcommands of pp-timeline. Each has an options struct, a setup_ that
// declares its options on a CLI11 app, and a run_ that returns the exit code.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "options.h"

namespace ppt::cli {

// Exit codes, documented in --help, README.md and docs/cli.md.
inline constexpr int kExitOk = 0;
inline constexpr int kExitInput = 1;     // input problems (with --strict), nothing usable, an output failed
inline constexpr int kExitUsage = 2;     // bad options or paths, an output that is an input
inline constexpr int kExitInternal = 3;  // a bug: an unexpected exception (main.cc)

struct ConvertOptions {
  InputOptions input;
  RunOptions run;
  std::vector<std::string> outputs;
  std::vector<std::string> perfetto_json;
  bool absolute = false;
  SelectionOptions selection;  // --run, --steps, --skip-warmup: every output
  bool no_flows = false;       // no arrows between dependent jobs
  bool plain_pftrace = false;  // .pftrace: packets not deflated (for protoc --decode)
  double width = 0;            // .svg/.png: the picture's width in pixels (0: the default)
  double scale = 2;            // .png: device pixels per picture pixel
};

// The conversion is the main job: its options live on the top-level app.
void setup_convert(CLI::App& app, ConvertOptions& options);
int run_convert(const ConvertOptions& options);

// A subcommand registers itself on the app and, when it is the one parsed,
// puts its runner into `chosen`; main() runs it after parsing. To add one:
// write src/cli/<name>_command.cc with setup_<name>(), declare it here and
// add it to the list in main.cc.
using Runner = std::function<int()>;

// stats_command.cc, diff_command.cc: bubbles of a run, and comparing two runs.
void setup_stats(CLI::App& app, Runner& chosen);
void setup_diff(CLI::App& app, Runner& chosen);
// report_command.cc, batch_command.cc: an HTML page of a run, and many runs at once.
void setup_report(CLI::App& app, Runner& chosen);
void setup_batch(CLI::App& app, Runner& chosen);
// watch_command.cc: follows a run's growing logs, step by step.
void setup_watch(CLI::App& app, Runner& chosen);
// whatif_command.cc: the run under another schedule, from a fitted cost model.
void setup_whatif(CLI::App& app, Runner& chosen);

}  // namespace ppt::cli
