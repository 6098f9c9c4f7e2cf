// pp-timeline: turns PaddlePaddle pipeline-parallel launch logs into
// timelines. main() only parses, runs the chosen command and returns its code.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <new>
#include <string>
#include <vector>

#include "commands.h"
#include "help_docs.h"
#include "output/sink/output_file.h"
#include "parse_errors.h"
#include "reporter.h"
#include "util/kept_at_exit.h"

namespace {

// The subcommand that `word` (the first log file named, which does not
// exist) was probably meant to be: a prefix of its name, or within two
// edits of it. "" when none is close.
std::string close_subcommand(CLI::App& app, const std::string& word) {
  if (word.empty() || word.find('/') != std::string::npos || word.find('.') != std::string::npos) return "";
  std::error_code ec;
  if (std::filesystem::exists(word, ec)) return "";
  std::string best;
  size_t best_distance = 3;
  for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    const std::string& name = sub->get_name();
    size_t d = word.size() >= 3 && name.rfind(word, 0) == 0 ? 1 : ppt::cli::edit_distance(word, name);
    if (d < best_distance) best = name, best_distance = d;
  }
  return best;
}

int run(int argc, char** argv) {
  using namespace ppt::cli;
  CLI::App app{
      "pp-timeline: turn a pipeline-parallel training run's launch logs into a timeline.\n"
      "  pp-timeline --log_dir logs/ -o trace.json\n"};
  app.footer(std::string(exit_status_text("")));
  const std::string version = "pp-timeline " PPT_VERSION;
  app.set_version_flag("--version", version);
  // Hidden: the build writes the manual page and the completions from this
  // App (help_docs.h), so that they list exactly the options parsed here.
  bool help_man = false;
  std::string completion;
  app.add_flag("--help-man", help_man, "print the manual page (roff)")->group("");
  app.add_option("--completion", completion, "print the completion script for SHELL (bash, zsh)")
      ->check(CLI::IsMember({"bash", "zsh"}))
      ->group("");
  ConvertOptions convert;
  setup_convert(app, convert);
  Runner chosen;
  // Subcommands (each sets `chosen` when parsed):
  setup_stats(app, chosen);
  setup_diff(app, chosen);
  setup_report(app, chosen);
  setup_batch(app, chosen);
  setup_watch(app, chosen);
  setup_whatif(app, chosen);
  // Every command answers --version.
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) sub->set_version_flag("--version", version);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;  // --help, --version
  } catch (const CLI::ParseError& e) {
    std::string line = parse_error_line(app, e, argc, argv);
    std::fprintf(stderr, "%s\n", line.c_str());
    return kExitUsage;
  }
  if (help_man || !completion.empty()) {
    std::string text = help_man               ? man_page(app, version)
                       : completion == "bash" ? bash_completion(app)
                                              : zsh_completion(app);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return std::fflush(stdout) == 0 && !std::ferror(stdout) ? kExitOk : kExitInput;
  }
  if (chosen) return chosen();
  // `pp-timeline stat`: a subcommand misspelt, not a log file to read.
  if (!convert.input.files.empty()) {
    if (std::string name = close_subcommand(app, convert.input.files.front()); !name.empty()) {
      Reporter().error(fmt::format("{}: no such file or directory, nor a command; did you mean 'pp-timeline {}'?",
                                   convert.input.files.front(), name));
      return kExitUsage;
    }
  }
  return run_convert(convert);
}

// "1.2 GB": a size for people.
std::string size_text(double bytes) {
  if (bytes >= 1e9) return fmt::format("{:.1f} GB", bytes / 1e9);
  if (bytes >= 1e6) return fmt::format("{:.1f} MB", bytes / 1e6);
  return fmt::format("{:.0f} kB", bytes / 1e3);
}

// Memory ran out (an address-space limit, a container's cap, or input that
// holds far more jobs than memory does). The stack has unwound, so what the
// run held is free again: enough to say how far it got and what helps. How
// much was read is the kernel's count of bytes this process read
// (/proc/self/io rchar: every log and archive goes through read()).
void report_out_of_memory() {
  double read_bytes = -1;
  if (std::FILE* f = std::fopen("/proc/self/io", "r")) {
    unsigned long long rchar = 0;
    if (std::fscanf(f, "rchar: %llu", &rchar) == 1) read_bytes = static_cast<double>(rchar);
    std::fclose(f);
  }
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  std::string read = read_bytes >= 0 ? fmt::format(" after reading {} of input", size_text(read_bytes)) : "";
  ppt::cli::Reporter().error(fmt::format(
      "out of memory{} (at most {} in use); nothing written. Fewer steps (--steps A:B) or a .pftrace output "
      "instead of .json need less memory; so does one run or machine at a time (--log_dir of one machine's "
      "folder, --devices)",
      read, size_text(static_cast<double>(usage.ru_maxrss) * 1024.0)));
}

}  // namespace

int main(int argc, char** argv) {
  // Interrupted runs leave no half-written output; a closed pipe or a full
  // quota is an error message, not a death by SIGPIPE/SIGXFSZ.
  ppt::install_output_signal_handlers();
  // One command, then exit: a one-shot command's large results are left for
  // the exit to free (util/kept_at_exit.h).
  ppt::set_exits_after_command(true);
  // A bug is one line and exit status 3, never an abort: the exception is
  // caught here, after the stack has unwound, so every OutputFile on the way
  // has removed its temporary file.
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc&) {
    // Not a bug: the input needs more memory than there is.
    report_out_of_memory();
    return ppt::cli::kExitInput;
  } catch (const std::exception& e) {
    ppt::cli::report_internal_error(e.what());
  } catch (...) {
    ppt::cli::report_internal_error("an exception of unknown type");
  }
  return ppt::cli::kExitInternal;
}
