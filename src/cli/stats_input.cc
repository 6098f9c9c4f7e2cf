#include "stats_input.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

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
                     bool summary) {
  // The same times as the trace: machines' clocks aligned as convert does,
  // so the steps are the spans of the trace's Step track.
  request.stats = true;
  DriverResult result = run_driver(request);
  if (int code = say.load(result, draws, label); code != kExitOk) return code;
  // The summary accounts for the problems listed; with none shown, none.
  std::vector<DiagnosticLine> lines = format_diagnostics(*result.timeline);
  if (summary && std::any_of(lines.begin(), lines.end(), [&](const DiagnosticLine& l) { return say.shows(l); })) {
    say.line(format_summary(*result.timeline));
  }
  out->stats = *result.stats;
  out->run = std::move(result);
  return kExitOk;
}

int load_stats_or_json(const std::string& path, DriverRequest request, const Reporter& say, std::string_view label,
                       StatsInput* out) {
  namespace fs = std::filesystem;
  request.input.log_dir.clear();
  request.input.files.clear();
  if (is_stdin_path(path)) {
    // One rank's log on standard input (a stats JSON must be named as a file).
    request.input.files = {path};
    return load_stats_input(request, say, label, false, out);
  }
  std::error_code ec;
  fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) {
    say.error(fmt::format("{}{}: no such file or directory", label, path));
    return kExitUsage;
  }
  if (fs::is_directory(st)) {
    request.input.log_dir = path;
    return load_stats_input(request, say, label, false, out);
  }
  std::ifstream in(path, std::ios::binary);
  char head[256] = {};
  in.read(head, sizeof head);
  if (!looks_like_json(std::string_view(head, static_cast<size_t>(in.gcount())))) {
    request.input.files = {path};
    return load_stats_input(request, say, label, false, out);
  }
  for (const std::string& o : request.outputs) {
    if (same_file(o, path)) {
      say.error(fmt::format("{}: refusing to write onto an input", o));
      return kExitUsage;
    }
  }
  in.clear();
  in.seekg(0);
  std::stringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) {
    say.error(fmt::format("{}{}: cannot read", label, path));
    return kExitInput;
  }
  std::string error;
  bool bad_value = false;
  std::optional<Stats> stats = parse_stats_json(text.str(), &error, &bad_value);
  if (!stats) {
    say.error(fmt::format("{}{}: {}", label, path, error));
    // A value its schema does not allow: the file given is not a baseline
    // this version can use (exit 2, like any argument that is wrong).
    return bad_value ? kExitUsage : kExitInput;
  }
  out->stats = std::move(*stats);
  if (out->stats.source.empty()) out->stats.source = path;
  out->stats.source = fmt::format("{} (stats of {})", path, out->stats.source);
  return kExitOk;
}

}  // namespace ppt::cli
