// pp-timeline: turns PaddlePaddle pipeline-parallel launch logs into
// timelines. main() only parses, runs the chosen command and returns its code.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "commands.h"
#include "output/output_file.h"

int main(int argc, char** argv) {
  using namespace ppt::cli;
  // Interrupted runs leave no half-written output; a closed pipe or a full
  // quota is an error message, not a death by SIGPIPE/SIGXFSZ.
  ppt::install_output_signal_handlers();
  CLI::App app{
      "pp-timeline: turn a pipeline-parallel training run's launch logs into a timeline.\n"
      "  pp-timeline --log_dir logs/ -o trace.json\n"};
  app.footer(
      "Exit status: 0 done; 1 input problems under --strict, nothing usable found, or an output\n"
      "could not be written; 2 usage error (bad option, missing path).");
  app.set_version_flag("--version", "pp-timeline 0.1.0");
  ConvertOptions convert;
  setup_convert(app, convert);
  Runner chosen;
  // Subcommands (each sets `chosen` when parsed):
  setup_stats(app, chosen);
  setup_diff(app, chosen);
  setup_report(app, chosen);
  setup_batch(app, chosen);
  (void)chosen;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }
  if (chosen) return chosen();
  return run_convert(convert);
}
