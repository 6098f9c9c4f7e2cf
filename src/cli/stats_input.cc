#include "stats_input.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "commands.h"
#include "passes/clock_align.h"
#include "passes/dependencies.h"
#include "passes/pipeline_stage.h"
#include "output/stats_writers.h"
#include "output/summary.h"
#include "input/timeline_builder.h"

namespace ppt::cli {

void print_error(const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); }

bool use_color(const std::string& when, bool to_stdout) {
  if (when == "always") return true;
  if (when == "never" || !to_stdout) return false;
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  if (no_color && *no_color) return false;
  if (term && std::strcmp(term, "dumb") == 0) return false;
  return isatty(STDOUT_FILENO) == 1;
}

int load_stats_input(const LayoutRequest& request, const StatsInputOptions& o, StatsInput* out) {
  BuildOptions build;
  build.threads = o.threads;
  LoadResult loaded = load_timeline(request, build);
  if (!loaded.timeline) {
    print_error("pp-timeline: error: " + o.label + loaded.error);
    return loaded.usage_error ? kExitUsage : kExitInput;
  }
  Timeline& tl = *loaded.timeline;
  if (o.pp_degree > 0) {
    // The whole run's ranks: a subset (--devices) keeps the run's stages.
    std::string error = check_pp_degree(o.pp_degree, static_cast<size_t>(tl.rank_count()));
    if (!error.empty()) {
      print_error("pp-timeline: error: " + o.label + error);
      return kExitUsage;
    }
  }
  // The same times as the trace: machines' clocks aligned as convert does,
  // so the steps are the spans of the trace's Step track (a shifted machine
  // is reported among the diagnostics below).
  Dependencies deps = find_dependencies(tl, DependencyOptions{o.pp_degree, o.threads});
  ClockAlignment alignment;
  if (o.align_clocks) alignment = align_clocks(tl, deps);
  report_dependencies(tl, deps);
  if (!o.quiet) {
    for (const std::string& note : loaded.notes) print_error("pp-timeline: note: " + o.label + note);
  }
  std::vector<std::string> problems = format_diagnostics(tl);
  for (const std::string& line : problems) {
    if (o.quiet && line.rfind("  ", 0) != 0) continue;
    print_error(line);
  }
  if (!problems.empty()) print_error(format_summary(tl));
  if (tl.job_count() == 0) {
    print_error("pp-timeline: error: " + o.label +
                "no job found. Paddle prints 'Profiler Info: Job' lines only when the job schedule profiler "
                "is on (FLAGS_auto_parallel_profiler=1 or the front-end's pipeline profiler option, CUDA "
                "builds) and GLOG_v >= 0.");
    return kExitInput;
  }
  if (o.strict && has_input_errors(tl)) {
    print_error("pp-timeline: error: " + o.label + "input problems found and --strict given");
    return kExitInput;
  }
  StatsOptions so;
  so.pp_degree = o.pp_degree;
  so.straggler_margin = o.straggler_margin;
  so.critical_paths = o.critical_paths;
  so.dependencies = &deps;
  out->stats = compute_stats(tl, so);
  LayoutRequest shown = request;
  resolve_positional_dir(shown);
  for (std::string& f : shown.files) {
    if (is_stdin_path(f)) f = std::string(kStdinName);
  }
  out->stats.source = shown.log_dir.empty() ? fmt::format("{}", fmt::join(shown.files, " ")) : shown.log_dir;
  out->timeline = std::move(tl);
  return kExitOk;
}

int load_stats_or_json(const std::string& path, const StatsInputOptions& o, StatsInput* out) {
  namespace fs = std::filesystem;
  LayoutRequest request;
  request.devices = o.devices;
  if (is_stdin_path(path)) {
    // One rank's log on standard input (a stats JSON must be named as a file).
    request.files = {path};
    return load_stats_input(request, o, out);
  }
  std::error_code ec;
  fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) {
    print_error(fmt::format("pp-timeline: error: {}{}: no such file or directory", o.label, path));
    return kExitUsage;
  }
  if (fs::is_directory(st)) {
    request.log_dir = path;
    return load_stats_input(request, o, out);
  }
  std::ifstream in(path, std::ios::binary);
  char head[256] = {};
  in.read(head, sizeof head);
  if (!looks_like_json(std::string_view(head, static_cast<size_t>(in.gcount())))) {
    request.files = {path};
    return load_stats_input(request, o, out);
  }
  in.clear();
  in.seekg(0);
  std::stringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) {
    print_error(fmt::format("pp-timeline: error: {}{}: cannot read", o.label, path));
    return kExitInput;
  }
  std::string error;
  std::optional<Stats> stats = parse_stats_json(text.str(), &error);
  if (!stats) {
    print_error(fmt::format("pp-timeline: error: {}{}: {}", o.label, path, error));
    return kExitInput;
  }
  out->stats = std::move(*stats);
  if (out->stats.source.empty()) out->stats.source = path;
  out->stats.source = fmt::format("{} (stats of {})", path, out->stats.source);
  return kExitOk;
}

}  // namespace ppt::cli
