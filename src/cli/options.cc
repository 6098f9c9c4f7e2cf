#include "options.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "app/driver.h"
#include "app/selection.h"
#include "cli/finite_range.h"
#include "input/log_layout.h"
#include "model/step_range.h"
#include "output/outputs.h"
#include "util/text.h"

namespace ppt::cli {

LayoutRequest InputOptions::request() const { return {log_dir, files, devices}; }

void add_input_options(CLI::App& app, InputOptions& in) {
  app.add_option("--log_dir,--log-dir", in.log_dir,
                 "launch log directory: DIR/workerlog.<i>, or DIR/<machine>/workerlog.<i> with one folder per "
                 "machine (machine0/, 10.0.0.2/, node-a/)");
  app.add_option("files", in.files,
                 "log files, one per rank in rank order, '-' for standard input; or one log directory (as "
                 "--log_dir)");
  add_devices_option(app, in.devices);
  app.add_flag("--multi_machine,--multi-machine", in.multi_machine,
               "accepted for compatibility: machine folders are found by themselves");
}

void add_devices_option(CLI::App& app, std::vector<int>& devices) {
  app.add_option("--devices", devices,
                 "only these local indices (the i of workerlog.<i>), e.g. 1,2,3; ranks keep the whole run's numbers")
      ->delimiter(',');
}

void add_threads_option(CLI::App& app, unsigned& threads) {
  app.add_option("--threads", threads,
                 "threads for the work done per file, per rank and per run: reading, the passes, .pftrace pieces "
                 "(default: all cores)")
      ->check(CLI::Range(0u, 1024u));
}

void add_pp_degree_option(CLI::App& app, int32_t& pp_degree) {
  app.add_option("--pp-degree", pp_degree,
                 "pipeline stages P when the ranks hold data-parallel replicas (rank = replica*P + stage); "
                 "default: inferred from the job order, else all ranks form one pipeline")
      ->check(CLI::PositiveNumber);
}

void add_align_clocks_option(CLI::App& app, std::string& align_clocks) {
  app.add_option("--align-clocks", align_clocks,
                 "auto: shift each machine's times so that no job starts before the job feeding it from "
                 "another machine ended (only when some does); off: times as logged")
      ->check(CLI::IsMember({"auto", "off"}))
      ->capture_default_str();
}

void add_strict_option(CLI::App& app, bool& strict) {
  app.add_flag("--strict", strict, "exit 1 (and write nothing) if any line was rejected");
}

void add_quiet_option(CLI::App& app, bool& quiet) {
  app.add_flag("-q,--quiet", quiet, "print only errors, the summary line and the count of each kind of input problem");
}

namespace {

void add_timings_option(CLI::App& app, bool& timings) {
  app.add_flag("--timings", timings,
               "print the wall time of each phase (layout, scan, build, pipeline, dependencies, clocks, stats, "
               "write) at the end");
}

// Parses --steps text ("" leaves `out` empty). On a bad range returns the
// error line ("--steps ..."), else "".
std::string parse_steps_option(const std::string& text, std::optional<StepRange>* out) {
  out->reset();
  if (text.empty()) return "";
  std::string error;
  *out = parse_step_range(text, &error);
  return *out ? "" : "--steps " + error;
}

}  // namespace

void add_selection_options(CLI::App& app, SelectionOptions& sel) {
  app.add_option("--run", sel.run,
                 "only run N (1 = the first) of a log that holds several appended runs; stats and diff measure the "
                 "last one by default")
      ->check(CLI::Range(1u, 1000000u));
  app.add_option("--steps", sel.steps,
                 "only these steps, in every output and figure: A:B (A to B included), A:, :B or A; a range with no "
                 "step is a usage error that names the steps there are");
  app.add_option("--skip-warmup", sel.skip_warmup,
                 "leave out the first N steps of each run (warm-up); --steps then picks among the rest")
      ->check(CLI::Range(0u, 1000000u));
}

std::string parse_selection(const SelectionOptions& o, Selection* out) {
  *out = Selection{};
  out->run = o.run;
  out->skip_warmup = o.skip_warmup;
  return parse_steps_option(o.steps, &out->steps);
}

void add_micro_batch_size_option(CLI::App& app, uint32_t& micro_batch_size) {
  app.add_option("--micro-batch-size", micro_batch_size,
                 "samples per micro-batch (the logs do not say it; Paddle's trainers print it at start-up), for "
                 "samples per second beside steps and micro-batches per second")
      ->check(CLI::Range(1u, 100000000u));
}

void add_device_memory_option(CLI::App& app, int64_t& device_memory_bytes) {
  app.add_option_function<std::string>(
         "--device-memory",
         [&device_memory_bytes](const std::string& text) {
           std::string why;
           parse_byte_size(text, &device_memory_bytes, &why);  // checked below, before this runs
         },
         "the device's memory, e.g. 80GiB, 81920MiB, 80GB (= 80e9 bytes) or whole bytes: each stage's peak "
         "allocated memory, measured and predicted, is checked against it (needs the [Pipeline details] lines)")
      ->type_name("SIZE")
      ->check(CLI::Validator(
          [](std::string& text) {
            int64_t bytes = 0;
            std::string why;
            return parse_byte_size(text, &bytes, &why) ? std::string() : why;
          },
          ""));
}

void add_max_jobs_option(CLI::App& app, size_t& max_jobs) {
  app.add_option("--max-jobs", max_jobs,
                 "job rectangles at most per picture or page; beyond, the first steps that fit are drawn and the "
                 "output says so")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1}, size_t{10'000'000}));
}

void add_report_format_options(CLI::App& app, double& straggler_margin_pct, bool& json, bool& markdown,
                               std::string& color) {
  app.add_option("--straggler-margin", straggler_margin_pct,
                 "percent above the other ranks' median that makes a straggler")
      ->capture_default_str()
      ->check(finite_range(0.0, 1000.0));
  auto* json_flag = app.add_flag("--json", json, "JSON with the keys documented in docs/stats.md");
  auto* md_flag = app.add_flag("--markdown", markdown, "Markdown, for a CI comment");
  json_flag->excludes(md_flag);
  app.add_option("--color", color, "colour the table: auto (on a terminal), always, never")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "always", "never"}));
}

void add_run_options(CLI::App& app, RunOptions& run) {
  add_threads_option(app, run.threads);
  add_pp_degree_option(app, run.pp_degree);
  add_align_clocks_option(app, run.align_clocks);
  add_strict_option(app, run.strict);
  add_quiet_option(app, run.quiet);
  add_timings_option(app, run.timings);
}

DriverRequest driver_request(const LayoutRequest& input, const RunOptions& run) {
  DriverRequest r;
  r.input = input;
  r.threads = run.threads;
  r.pp_degree = run.pp_degree;
  r.align_clocks = run.align_clocks != "off";
  r.strict = run.strict;
  return r;
}

namespace {

// "" when `input` names logs; `command` is "" for the conversion.
std::string missing_input_error(std::string_view command, const InputOptions& input) {
  if (!input.empty()) return "";
  if (command.empty()) return "give --log_dir DIR or log files (see --help)";
  return fmt::format("give --log_dir DIR or log files (see pp-timeline {} --help)", command);
}

}  // namespace

std::string decide_run(std::string_view command, const InputOptions& input, const RunOptions& run,
                       const SelectionOptions& selection, const OutputsDecision& outputs, DriverRequest* request,
                       std::vector<OutputSpec>* specs) {
  if (std::string error = missing_input_error(command, input); !error.empty()) return error;
  LayoutRequest logs = input.request();
  // Said after the outputs' errors, as the layout would say it.
  const std::string positional_error = resolve_positional_dir(logs);
  *request = driver_request(logs, run);
  if (std::string error = parse_selection(selection, &request->selection); !error.empty()) return error;
  if (std::string error = outputs(logs, specs); !error.empty()) return error;
  if (!positional_error.empty()) return positional_error;
  for (const OutputSpec& out : *specs) request->outputs.push_back(out.path);
  return "";
}

}  // namespace ppt::cli
