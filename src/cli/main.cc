// pp-timeline: turns PaddlePaddle pipeline-parallel launch logs into
// timelines. main() only parses, runs the chosen command and returns its code.
#include <CLI/CLI.hpp>

#include <exception>

#include "commands.h"
#include "output/output_file.h"
#include "reporter.h"

namespace {

int run(int argc, char** argv) {
  using namespace ppt::cli;
  CLI::App app{
      "pp-timeline: turn a pipeline-parallel training run's launch logs into a timeline.\n"
      "  pp-timeline --log_dir logs/ -o trace.json\n"};
  app.footer(
      "Exit status: 0 done; 1 input problems under --strict, nothing usable found, or an output\n"
      "could not be written; 2 usage error (bad option, missing path, an output that is an input);\n"
      "3 internal error (a bug: one line 'pp-timeline: internal error: ...', no output left behind).");
  app.set_version_flag("--version", "pp-timeline 0.1.0");
  ConvertOptions convert;
  setup_convert(app, convert);
  Runner chosen;
  // Subcommands (each sets `chosen` when parsed):
  setup_stats(app, chosen);
  setup_diff(app, chosen);
  setup_report(app, chosen);
  setup_batch(app, chosen);
  setup_watch(app, chosen);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }
  if (chosen) return chosen();
  return run_convert(convert);
}

}  // namespace

int main(int argc, char** argv) {
  // Interrupted runs leave no half-written output; a closed pipe or a full
  // quota is an error message, not a death by SIGPIPE/SIGXFSZ.
  ppt::install_output_signal_handlers();
  // A bug is one line and exit status 3, never an abort: the exception is
  // caught here, after the stack has unwound, so every OutputFile on the way
  // has removed its temporary file.
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    ppt::cli::report_internal_error(e.what());
  } catch (...) {
    ppt::cli::report_internal_error("an exception of unknown type");
  }
  return ppt::cli::kExitInternal;
}
