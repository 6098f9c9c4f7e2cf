// pp-timeline stats: how big the bubbles of a run are, from its logs.
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "commands.h"
#include "output/output_file.h"
#include "output/stats_writers.h"
#include "stats_input.h"

namespace ppt::cli {
namespace {

struct StatsCommandOptions {
  std::string log_dir;
  std::vector<std::string> files;
  std::vector<int> devices;
  bool multi_machine = false;
  unsigned threads = 0;
  int32_t pp_degree = 0;
  double straggler_margin_pct = 10;
  bool json = false;
  bool markdown = false;
  std::string output;
  std::string color = "auto";
  std::string align_clocks = "auto";
  bool strict = false;
  bool quiet = false;
};

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Writes `text` to stdout, or to `path` whole (temporary file + rename).
int emit(const std::string& text, const std::string& path) {
  if (path.empty() || path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return std::fflush(stdout) == 0 ? kExitOk : kExitInput;
  }
  OutputFile file;
  if (!file.open(path)) {
    print_error("pp-timeline: error: " + file.error());
    return kExitInput;
  }
  file.write(text);
  if (!file.commit()) {
    print_error("pp-timeline: error: " + file.error());
    return kExitInput;
  }
  return kExitOk;
}

int run_stats(const StatsCommandOptions& o) {
  if (o.log_dir.empty() && o.files.empty()) {
    print_error("pp-timeline stats: error: give --log_dir DIR or log files (see pp-timeline stats --help)");
    return kExitUsage;
  }
  bool json = o.json || (!o.markdown && ends_with(o.output, ".json"));
  bool markdown = o.markdown || (!o.json && ends_with(o.output, ".md"));
  StatsInputOptions in;
  in.devices = o.devices;
  in.threads = o.threads;
  in.pp_degree = o.pp_degree;
  in.straggler_margin = o.straggler_margin_pct / 100.0;
  in.strict = o.strict;
  in.align_clocks = o.align_clocks != "off";
  in.quiet = o.quiet;
  StatsInput input;
  int code = load_stats_input({o.log_dir, o.files, o.devices}, in, &input);
  if (code != kExitOk) return code;
  std::string text;
  if (json) {
    text = format_stats_json(input.stats, input.timeline ? input.timeline->origin_ns : 0);
  } else if (markdown) {
    text = format_stats_markdown(input.stats);
  } else {
    TextStyle style;
    style.color = use_color(o.color, o.output.empty() || o.output == "-");
    text = format_stats_text(input.stats, style);
  }
  return emit(text, o.output);
}

}  // namespace

void setup_stats(CLI::App& app, Runner& chosen) {
  auto o = std::make_shared<StatsCommandOptions>();
  CLI::App* sub = app.add_subcommand(
      "stats",
      "Measure a run from its logs: step times, each rank's busy and idle time and bubble ratio, job "
      "durations, the schedule and its ideal bubble ratio, stragglers and each step's critical path.\n"
      "  pp-timeline stats --log_dir logs/ [--json | --markdown]");
  add_log_input_options(*sub, o->log_dir, o->files, o->devices, o->multi_machine);
  add_threads_option(*sub, o->threads);
  sub->add_option("--pp-degree", o->pp_degree,
                  "pipeline depth P: rank = replica*P + stage (default: inferred from the job order)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--straggler-margin", o->straggler_margin_pct,
                  "percent above the other ranks' median that makes a straggler")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1000.0));
  auto* json = sub->add_flag("--json", o->json, "JSON with the keys documented in docs/stats.md");
  auto* md = sub->add_flag("--markdown", o->markdown, "Markdown, for a CI comment");
  json->excludes(md);
  sub->add_option("-o,--output", o->output,
                  "write the report here instead of stdout (.json: JSON, .md: Markdown, unless a flag says)");
  sub->add_option("--color", o->color, "colour the table: auto (on a terminal), always, never")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "always", "never"}));
  sub->add_option("--align-clocks", o->align_clocks,
                  "auto: shift each machine's times as convert does, so steps match the trace's; off: times as "
                  "logged")
      ->check(CLI::IsMember({"auto", "off"}))
      ->capture_default_str();
  sub->add_flag("--strict", o->strict, "exit 1 if any line was rejected");
  sub->add_flag("-q,--quiet", o->quiet, "print only errors besides the report");
  sub->footer("Exit status: 0 done; 1 nothing usable found, --strict and input problems, or the report could\n"
              "not be written; 2 usage error.");
  sub->callback([o, &chosen] { chosen = [o] { return run_stats(*o); }; });
}

}  // namespace ppt::cli
