// pp-timeline report: one self-contained HTML page of a run (html_report.h):
// the timeline with zoom, pan and hover, and the stats tables.
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "commands.h"
#include "output/html_report.h"
#include "output/output_file.h"
#include "output/outputs.h"
#include "stats_input.h"

namespace ppt::cli {
namespace {

struct ReportCommandOptions {
  std::string log_dir;
  std::vector<std::string> files;
  std::vector<int> devices;
  bool multi_machine = false;
  std::string output;
  std::string steps;
  size_t max_jobs = SvgOptions{}.max_jobs;
  unsigned threads = 0;
  int32_t pp_degree = 0;
  std::string align_clocks = "auto";
  bool strict = false;
  bool quiet = false;
};

int run_report(const ReportCommandOptions& o) {
  if (o.log_dir.empty() && o.files.empty()) {
    print_error("pp-timeline report: error: give --log_dir DIR or log files (see pp-timeline report --help)");
    return kExitUsage;
  }
  ReportOptions ropt;
  ropt.svg.max_jobs = o.max_jobs;
  if (!o.steps.empty()) {
    std::string error;
    ropt.svg.steps = parse_step_range(o.steps, &error);
    if (!ropt.svg.steps) {
      print_error("pp-timeline report: error: --steps " + error);
      return kExitUsage;
    }
  }
  StatsInputOptions in;
  in.devices = o.devices;
  in.threads = o.threads;
  in.pp_degree = o.pp_degree;
  in.strict = o.strict;
  in.quiet = o.quiet;
  // Drawn as `convert` draws it: clocks aligned where the dependencies
  // between machines say a clock was off (the stats follow the same times).
  in.align_clocks = o.align_clocks != "off";
  StatsInput input;
  LayoutRequest request{o.log_dir, o.files, o.devices};
  if (int code = load_stats_input(request, in, &input); code != kExitOk) return code;
  Timeline& tl = *input.timeline;
  for (const SourceFile& f : tl.files) {
    if (!f.standard_input && same_file(o.output, f.path)) {
      print_error(fmt::format("pp-timeline report: error: {}: refusing to write onto an input log", o.output));
      return kExitUsage;
    }
  }
  ropt.title = "pp-timeline report";
  ropt.source = input.stats.source;
  ropt.stats = &input.stats;
  SvgSelection sel = select_for_svg(tl, ropt.svg);
  if (!sel.note.empty()) print_error("pp-timeline report: note: " + sel.note);

  OutputFile file;
  bool opened = o.output == "-" ? file.open_stdout() : file.open(o.output);
  if (!opened) {
    print_error("pp-timeline report: error: " + file.error());
    return kExitInput;
  }
  write_html_report(tl, ropt, file);
  size_t bytes = file.bytes_written();
  if (!file.commit()) {
    print_error("pp-timeline report: error: " + file.error());
    return kExitInput;
  }
  if (!o.quiet && o.output != "-") {
    print_error(fmt::format("pp-timeline report: wrote {} ({} KB): {} jobs drawn", o.output, (bytes + 1023) / 1024,
                            sel.jobs));
  }
  return kExitOk;
}

}  // namespace

void setup_report(CLI::App& app, Runner& chosen) {
  auto o = std::make_shared<ReportCommandOptions>();
  CLI::App* sub = app.add_subcommand(
      "report",
      "Write one self-contained HTML page of a run: the timeline (zoom, pan, a card per job on hover) and the "
      "stats tables. No network, no external file: it opens anywhere.\n"
      "  pp-timeline report --log_dir logs/ -o report.html [--steps 10:20]");
  add_log_input_options(*sub, o->log_dir, o->files, o->devices, o->multi_machine);
  sub->add_option("-o,--output", o->output, "the HTML file to write (- for stdout)")->required();
  sub->add_option("--steps", o->steps, "steps to draw: A:B (A to B included), A:, :B or A (default: all that fit)");
  sub->add_option("--max-jobs", o->max_jobs,
                  "job rectangles at most; beyond, the first steps that fit are drawn and the page says so")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1}, size_t{10'000'000}));
  add_threads_option(*sub, o->threads);
  sub->add_option("--pp-degree", o->pp_degree,
                  "pipeline depth P: rank = replica*P + stage (default: inferred from the job order)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--align-clocks", o->align_clocks,
                  "auto: shift a machine's times when the dependencies say its clock was off; off: as logged")
      ->check(CLI::IsMember({"auto", "off"}))
      ->capture_default_str();
  sub->add_flag("--strict", o->strict, "exit 1 (and write nothing) if any line was rejected");
  sub->add_flag("-q,--quiet", o->quiet, "print only errors");
  sub->footer("Exit status: 0 done; 1 nothing usable found, --strict and input problems, or the page could\n"
              "not be written; 2 usage error.");
  sub->callback([o, &chosen] { chosen = [o] { return run_report(*o); }; });
}

}  // namespace ppt::cli
