#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "commands.h"
#include "passes/clock_align.h"
#include "passes/dependencies.h"
#include "input/log_layout.h"
#include "output/outputs.h"
#include "util/parallel.h"
#include "passes/pipeline_stage.h"
#include "output/summary.h"
#include "input/timeline_builder.h"

namespace ppt::cli {

void add_log_input_options(CLI::App& app, std::string& log_dir, std::vector<std::string>& files,
                           std::vector<int>& devices, bool& multi_machine) {
  app.add_option("--log_dir,--log-dir", log_dir,
                 "launch log directory: DIR/workerlog.<i>, or DIR/<machine>/workerlog.<i> with one folder per "
                 "machine (machine0/, 10.0.0.2/, node-a/)");
  app.add_option("files", files,
                 "log files, one per rank in rank order, '-' for standard input; or one log directory (as "
                 "--log_dir)");
  app.add_option("--devices", devices,
                 "only these local indices (the i of workerlog.<i>), e.g. 1,2,3; ranks keep the whole run's numbers")
      ->delimiter(',');
  app.add_flag("--multi_machine,--multi-machine", multi_machine,
               "accepted for compatibility: machine folders are found by themselves");
}

void add_threads_option(CLI::App& app, unsigned& threads) {
  app.add_option("--threads", threads,
                 "threads for the work done per file and per rank: reading, the passes, .pftrace pieces "
                 "(default: all cores)")
      ->check(CLI::Range(0u, 1024u));
}

void setup_convert(CLI::App& app, ConvertOptions& o) {
  add_log_input_options(app, o.log_dir, o.files, o.devices, o.multi_machine);
  app.add_option("-o,--output", o.outputs,
                 "output file, format by extension (.json: Chrome trace, .pftrace/.perfetto-trace: Perfetto's "
                 "protobuf trace, .svg: picture, .html: report); "
                 "may be repeated");
  app.add_option("--steps", o.steps, "steps to draw in .svg/.html outputs: A:B (A to B included), A:, :B or A");
  app.add_option("--perfetto-json", o.perfetto_json, "write the Perfetto-flavoured JSON trace here");
  app.add_flag("--absolute", o.absolute, "epoch timestamps instead of rebasing to the earliest job");
  add_threads_option(app, o.threads);
  app.add_flag("--no-flows", o.no_flows,
               "no flow arrows from each job to the job it feeds (same micro-batch, next stage)");
  app.add_option("--pp-degree", o.pp_degree,
                 "pipeline stages P when the ranks hold data-parallel replicas (rank = replica*P + stage); "
                 "default: inferred from the job order, else all ranks form one pipeline")
      ->check(CLI::PositiveNumber);
  app.add_option("--align-clocks", o.align_clocks,
                 "auto: shift each machine's times so that no job starts before the job feeding it from "
                 "another machine ended (only when some does); off: times as logged")
      ->check(CLI::IsMember({"auto", "off"}))
      ->capture_default_str();
  app.add_flag("--strict", o.strict, "exit 1 (and write nothing) if any line was rejected");
  app.add_flag("-q,--quiet", o.quiet, "print only the summary line and errors");
  app.add_flag("--timings", o.timings, "print the wall time of each phase (read, model passes, writing) at the end");
}

namespace {

void print_err(const std::string& s) { std::fprintf(stderr, "%s\n", s.c_str()); }

std::string human_bytes(size_t n) {
  if (n >= (size_t{1} << 20)) return fmt::format("{:.1f} MB", n / 1048576.0);
  if (n >= 1024) return fmt::format("{:.1f} KB", n / 1024.0);
  return fmt::format("{} B", n);
}

}  // namespace

int run_convert(const ConvertOptions& o) {
  if (o.log_dir.empty() && o.files.empty()) {
    print_err("pp-timeline: error: give --log_dir DIR or log files (see --help)");
    return kExitUsage;
  }
  LayoutRequest request{o.log_dir, o.files, o.devices};
  // `pp-timeline logs/`: the directory is the log directory (its default
  // outputs go there too).
  if (std::string error = resolve_positional_dir(request); !error.empty()) {
    print_err("pp-timeline: error: " + error);
    return kExitUsage;
  }
  LayoutResult found = discover_layout(request);
  if (!found.layout) {
    print_err("pp-timeline: error: " + found.error);
    return found.usage_error ? kExitUsage : kExitInput;
  }
  const Layout& layout = *found.layout;

  // Outputs are checked before any work.
  std::optional<StepRange> steps;
  if (!o.steps.empty()) {
    std::string error;
    steps = parse_step_range(o.steps, &error);
    if (!steps) {
      print_err("pp-timeline: error: --steps " + error);
      return kExitUsage;
    }
  }
  std::vector<OutputSpec> outputs;
  for (const std::string& path : o.outputs) {
    std::string error;
    auto format = format_for_path(path, &error);
    if (!format) {
      print_err("pp-timeline: error: " + error);
      return kExitUsage;
    }
    outputs.push_back({path, *format});
  }
  for (const std::string& path : o.perfetto_json) outputs.push_back({path, OutputFormat::kPerfettoJson});
  if (outputs.empty()) {
    // Beside the log directory; for files (and standard input) in the current folder.
    std::filesystem::path dir =
        request.log_dir.empty() ? std::filesystem::path(".") : std::filesystem::path(request.log_dir);
    outputs.push_back({(dir / "pipeline_profile.json").string(), OutputFormat::kChromeJson});
    outputs.push_back({(dir / "pipeline_profile_perfetto.json").string(), OutputFormat::kPerfettoJson});
  }
  for (const OutputSpec& out : outputs) {
    std::string error = check_not_an_input(out.path, layout.files);
    if (!error.empty()) {
      print_err("pp-timeline: error: " + error);
      return kExitUsage;
    }
  }
  if (o.pp_degree > 0) {
    // The whole run's ranks: a subset (--devices) keeps the run's stages.
    std::string error = check_pp_degree(o.pp_degree, static_cast<size_t>(layout.world_ranks));
    if (!error.empty()) {
      print_err("pp-timeline: error: " + error);
      return kExitUsage;
    }
  }

  using Clock = std::chrono::steady_clock;
  std::vector<PhaseTime> timings;
  BuildOptions build;
  build.threads = o.threads;
  build.timings = &timings;  // the build's own phases
  Timeline timeline = build_timeline(layout, build);
  Clock::time_point mark = Clock::now();
  auto lap = [&](const char* name) {
    Clock::time_point now = Clock::now();
    timings.push_back({name, std::chrono::duration<double>(now - mark).count()});
    mark = now;
  };

  // Which job feeds which, then the clocks that those dependencies contradict.
  Dependencies deps = find_dependencies(timeline, DependencyOptions{o.pp_degree, o.threads});
  lap("dependencies");
  ClockAlignment alignment;
  if (o.align_clocks != "off") alignment = align_clocks(timeline, deps);
  lap("clocks");
  report_dependencies(timeline, deps);

  if (!o.quiet) {
    for (const std::string& note : layout.notes) print_err("pp-timeline: note: " + note);
  }
  for (const std::string& line : format_diagnostics(timeline)) {
    if (o.quiet && line.rfind("  ", 0) != 0) continue;
    print_err(line);
  }
  if (timeline.job_count() == 0) {
    print_err(format_summary(timeline));
    print_err(
        "pp-timeline: error: no job to draw. Paddle prints 'Profiler Info: Job' lines only when the "
        "job schedule profiler is on (FLAGS_auto_parallel_profiler=1 or the front-end's "
        "pipeline profiler option, CUDA builds) and GLOG_v >= 0.");
    return kExitInput;
  }
  if (o.strict && has_input_errors(timeline)) {
    print_err(format_summary(timeline));
    print_err("pp-timeline: error: input problems found and --strict given; nothing written");
    return kExitInput;
  }

  WriteOptions wopt;
  wopt.absolute = o.absolute;
  wopt.dependencies = o.no_flows ? nullptr : &deps;
  // One output gets every thread; several are written side by side.
  wopt.threads = outputs.size() == 1 ? o.threads : 1;
  wopt.svg.steps = steps;
  wopt.source = request.log_dir.empty() ? fmt::format("{}", fmt::join(o.files, " ")) : request.log_dir;
  wopt.notes = layout.notes;
  bool draws = false;
  for (const OutputSpec& out : outputs) {
    draws = draws || out.format == OutputFormat::kSvg || out.format == OutputFormat::kHtmlReport;
  }
  if (draws) {
    std::string note = select_for_svg(timeline, wopt.svg).note;
    if (!note.empty()) print_err("pp-timeline: note: " + note);
  }
  std::vector<std::string> errors(outputs.size());
  std::vector<size_t> sizes(outputs.size(), 0);
  parallel_for(outputs.size(), o.threads, [&](size_t i) {
    errors[i] = write_output(timeline, outputs[i], wopt, &sizes[i]);
  });
  lap("write");
  std::string written;
  int code = kExitOk;
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!errors[i].empty()) {
      print_err("pp-timeline: error: " + errors[i]);
      code = kExitInput;
      continue;
    }
    written += fmt::format("{}{} ({})", written.empty() ? "" : ", ", outputs[i].path, human_bytes(sizes[i]));
  }
  std::string summary = format_summary(timeline);
  const int32_t run_ranks = timeline.rank_count();
  if (deps.pp_degree > 1 && deps.pp_degree < run_ranks) {
    summary += fmt::format(", {} stages x {} replicas ({})", deps.pp_degree, run_ranks / deps.pp_degree,
                           deps.pp_degree_source);
  }
  std::string clocks = format_clock_alignment(timeline, alignment);
  if (!clocks.empty()) summary += "; " + clocks;
  if (deps.contradicted > 0) {
    summary += fmt::format("; {} of {} dependencies contradicted by the times", with_commas(deps.contradicted),
                           with_commas(deps.edges.size()));
  }
  if (!written.empty()) summary += " -> " + written;
  print_err(summary);
  if (o.timings) {
    std::string line = "pp-timeline: timings:";
    double total = 0;
    for (const PhaseTime& p : timings) {
      line += fmt::format(" {} {:.3f} s,", p.name, p.seconds);
      total += p.seconds;
    }
    print_err(line + fmt::format(" total {:.3f} s", total));
  }
  return code;
}

}  // namespace ppt::cli
