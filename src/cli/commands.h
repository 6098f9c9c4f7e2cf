// The subcommands of pp-timeline. Each has an options struct, a setup_ that
// declares its options on a CLI11 app, and a run_ that returns the exit code.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
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
// write src/cli/<name>_command.cc with setup_<name>() (through add_command),
// declare it here, add it to the list in main.cc and its exit statuses to
// exit_status_text (commands.cc).
using Runner = std::function<int()>;

// What each exit status means for `command` ("" for the conversion): the
// footer of its --help and the EXIT STATUS of its manual page, every
// command's in one table beside the codes above.
std::string_view exit_status_text(std::string_view command);

// Declares subcommand `name` on `app` with its description and its exit
// statuses; `options` are shared by the parse and the run: when it is the
// one parsed, `chosen` runs `run` on them. Returns the subcommand, for
// setup_<name> to declare its options on.
template <typename Options>
CLI::App* add_command(CLI::App& app, const char* name, const std::string& description, Runner& chosen,
                      int (*run)(const Options&), std::shared_ptr<Options> options) {
  CLI::App* sub = app.add_subcommand(name, description);
  sub->footer(std::string(exit_status_text(name)));
  sub->callback([options, &chosen, run] { chosen = [options, run] { return run(*options); }; });
  return sub;
}

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
