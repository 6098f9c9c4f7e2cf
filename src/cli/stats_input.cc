#include "stats_input.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "app/driver.h"
#include "app/stats_input.h"
#include "commands.h"
#include "output/sink/output_file.h"
#include "output/text/stats_writers.h"

namespace ppt::cli {

bool use_color(const std::string& when, bool to_stdout) {
  if (when == "always") return true;
  if (when == "never" || !to_stdout) return false;
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  if (no_color && *no_color) return false;
  if (term && std::strcmp(term, "dumb") == 0) return false;
  return isatty(STDOUT_FILENO) == 1;
}

std::string resolve_report_outputs(OutputCommand command, const std::vector<std::string>& paths, bool json,
                                   bool markdown, std::vector<OutputSpec>* out) {
  const OutputFormat chosen = json       ? OutputFormat::kReportJson
                              : markdown ? OutputFormat::kReportMarkdown
                                         : OutputFormat::kReportText;
  if (std::string error = resolve_outputs(command, paths, chosen, out); !error.empty()) return error;
  if (out->empty()) {
    out->push_back({"-", chosen});
    return "";
  }
  bool to_stdout = false, flag_named = false;
  for (const OutputSpec& o : *out) {
    to_stdout = to_stdout || is_stdout_path(o.path);
    flag_named = flag_named || o.format == chosen;
  }
  if ((json || markdown) && !to_stdout && !flag_named) {
    const char* flag = json ? "--json" : "--markdown";
    return fmt::format(
        "{} chooses the format of standard output, and -o names files only, each written in the "
        "format of its extension; add -o - to print it too, or drop {}",
        flag, flag);
  }
  return "";
}

int load_stats_input(DriverRequest request, const Reporter& say, std::string_view label, bool draws, StatsInput* out,
                     bool summary, LaterSuggestions* later) {
  // The same times as the trace: machines' clocks aligned as convert does,
  // so the steps are the spans of the trace's Step track.
  request.stats = true;
  request.suggest_later = request.suggest && later;
  DriverResult result = run_driver(request);
  if (int code = say.load(result, draws, label); code != kExitOk) return code;
  // The summary accounts for the problems listed; with none shown, none.
  std::vector<DiagnosticLine> lines = format_diagnostics(*result.timeline);
  if (summary && std::any_of(lines.begin(), lines.end(), [&](const DiagnosticLine& l) { return say.shows(l); })) {
    say.line(format_summary(*result.timeline));
  }
  out->run = std::move(result);
  // Where the run stays: its suggestions are finished from here on, beside
  // the copy below and the command's writing.
  if (later) later->start(*out->run);
  out->stats = *out->run->stats;
  return kExitOk;
}

int load_stats_or_json(const std::string& path, DriverRequest request, const Reporter& say, std::string_view label,
                       StatsInput* out) {
  const RunPathKind kind = classify_run_path(path);
  if (kind == RunPathKind::kMissing) {
    say.error(fmt::format("{}{}: no such file or directory", label, path));
    return kExitUsage;
  }
  if (kind != RunPathKind::kStatsJson) {
    return load_stats_input(request_for_path(std::move(request), path, kind), say, label, false, out);
  }
  for (const std::string& o : request.outputs) {
    if (same_file(o, path)) {
      say.error(fmt::format("{}: refusing to write onto an input", o));
      return kExitUsage;
    }
  }
  std::string error;
  bool usage = false;
  if (!read_stats_file(path, out, &error, &usage)) {
    say.error(fmt::format("{}{}", label, error));
    return usage ? kExitUsage : kExitInput;
  }
  return kExitOk;
}

}  // namespace ppt::cli
