// pp-timeline whatif: what the measured run would do under another schedule,
// micro-batch count or cost, from a cost model fitted to its own jobs
// (analysis/whatif.h).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <memory>

#include "analysis/diff.h"
#include "analysis/whatif.h"
#include "app/driver.h"
#include "app/picture.h"
#include "cli/finite_range.h"
#include "commands.h"
#include "output/outputs.h"
#include "output/report/html_report.h"
#include "output/sink/output_file.h"
#include "output/text/whatif_writers.h"
#include "passes/schedule.h"
#include "reporter.h"
#include "util/escape.h"
#include "util/text.h"

namespace ppt::cli {
namespace {

struct WhatifCommandOptions {
  InputOptions input;
  RunOptions run;
  SelectionOptions selection;
  std::vector<std::string> schedules;
  std::vector<int32_t> micro_batches;
  int32_t chunks = 0;
  double w_share = -1;
  bool balance = false;
  std::vector<std::string> stage_scale;
  double link_scale = 1;
  int64_t device_memory_bytes = 0;
  bool json = false;
  std::vector<std::string> outputs;
};

// The changes of the options; "" or the usage error.
std::string parse_changes(const WhatifCommandOptions& o, WhatifChanges* ch) {
  for (const std::string& s : o.schedules) {
    // Every spelling of a schedule, as every command reads it (schedule.h).
    std::optional<ScheduleKind> k = parse_schedule_name(s);
    if (!k) {
      return fmt::format("--schedule {}: {}", terminal_text(s), schedule_name_error(s, planned_schedules()));
    }
    ch->schedules.push_back(*k);
  }
  ch->micro_batches = o.micro_batches;
  ch->chunks = o.chunks;
  ch->w_share = o.w_share;
  ch->balance = o.balance;
  ch->link_scale = o.link_scale;
  for (const std::string& s : o.stage_scale) {
    size_t colon = s.find(':');
    char* end = nullptr;
    long stage = colon == std::string::npos ? -1 : std::strtol(s.c_str(), &end, 10);
    if (colon == std::string::npos || end != s.c_str() + colon || stage < 0 || stage > INT32_MAX) {
      return fmt::format("--stage-scale {}: give STAGE:FACTOR, e.g. 2:0.8", s);
    }
    std::string f = s.substr(colon + 1);
    double factor = std::strtod(f.c_str(), &end);
    // At most --link-scale's 1000: a factor past it would carry a job's
    // nanoseconds past 64 bits.
    if (f.empty() || end != f.c_str() + f.size() || !std::isfinite(factor) || factor < 0 || factor > 1000) {
      return fmt::format("--stage-scale {}: the factor must be a number from 0 to 1000", s);
    }
    ch->stage_scale.emplace_back(static_cast<int32_t>(stage), factor);
  }
  return "";
}

int run_whatif_command(const WhatifCommandOptions& o) {
  Reporter say("whatif", o.run.quiet);
  DriverRequest request;
  if (std::string error = decide_run("whatif", o.input, o.run, o.selection, &request); !error.empty()) {
    say.error(error);
    return kExitUsage;
  }
  WhatifChanges changes;
  if (std::string error = parse_changes(o, &changes); !error.empty()) {
    say.error(error);
    return kExitUsage;
  }
  std::vector<OutputSpec> outputs;
  if (std::string error = resolve_outputs(OutputCommand::kConvert, o.outputs, OutputFormat::kChromeJson, &outputs);
      !error.empty()) {
    say.error(error);
    return kExitUsage;
  }
  request.stats = true;
  request.stats_options.critical_paths = false;
  request.device_memory_bytes = o.device_memory_bytes;
  for (const OutputSpec& out : outputs) request.outputs.push_back(out.path);
  // The page shows the measured run above the prediction: both need pictures.
  const bool page = std::any_of(outputs.begin(), outputs.end(),
                                [](const OutputSpec& out) { return out.format == OutputFormat::kHtmlReport; });
  if (page) request.picture = PictureRequest{};
  DriverResult run = run_driver(request);
  if (int code = say.load(run, false); code != kExitOk) return code;
  for (auto [stage, factor] : changes.stage_scale) {
    if (stage >= run.pipeline.schedule.pp_degree) {
      say.error(fmt::format("--stage-scale {}: the run has stages 0-{}", stage, run.pipeline.schedule.pp_degree - 1));
      return kExitUsage;
    }
  }
  WhatifReport report = timed(
      run, "whatif", [&] { return run_whatif(*run.timeline, run.pipeline, run.dependencies, *run.stats, changes); });
  if (!report.refusal.empty()) {
    say.warning("no prediction: " + report.refusal);
  } else {
    for (const WhatifOutcome& p : report.predicted) {
      if (!p.error.empty()) say.warning(fmt::format("{}: {}", p.label, p.error));
    }
  }
  if (!report.replayed.error.empty()) say.note("no replay of the measured plan: " + report.replayed.error);
  if (o.device_memory_bytes > 0 && !report.memory.present()) {
    say.note(
        "--device-memory: the run has no memory samples (Paddle's [Pipeline details] lines, logged with "
        "FLAGS_profile_pipeline_details_steps): no peak to check against it");
  }
  std::string text = o.json ? format_whatif_json(report) : format_whatif_text(report);
  if (std::string error = write_standard_output(text); !error.empty()) {
    say.error(error);
    return kExitInput;
  }

  int code = kExitOk;
  if (!outputs.empty()) {
    // The best-ranked target: one that fits where any does (the ranking
    // puts those first).
    const WhatifOutcome* best = nullptr;
    for (const WhatifOutcome& p : report.predicted) {
      if (p.error.empty()) {
        best = &p;
        break;
      }
    }
    if (!best) {
      say.error("no target could be predicted: nothing to write");
      return kExitInput;
    }
    if (!best->fits) {
      say.warning(fmt::format("no target fits in {} of device memory: writing {}, which does not",
                              format_gib(report.device_memory_bytes), best->label));
    }
    // The prediction goes through the passes and writers as a measured run does.
    DriverResult predicted;
    // One predicted step per measured step replayed, numbered as those are.
    predicted.timeline = replay_timeline(best->replay, run.timeline->origin_ns, report.first_replayed_step);
    predicted.source = fmt::format("{} (predicted: {})", run.source, best->label);
    predicted.timeline->prediction = fmt::format("predicted ({})", best->label);
    add_predicted_memory(*predicted.timeline, best->replay, report.memory, report.first_replayed_step);
    DriverRequest passes;
    passes.threads = o.run.threads;
    passes.stats = draws(outputs);
    if (page && run.picture && run.stats) {
      // Both sides of the page draw the same steps: the ones the measured
      // picture chose, within the steps the prediction replays (it has no
      // others), else the last of those.
      const int32_t first = report.first_replayed_step;
      const int32_t last = first + static_cast<int32_t>(best->replay.steps.size()) - 1;
      StepRange same{last, last};
      if (const PictureRun* drawn = run.picture->find(run.stats->run)) {
        const int32_t a = std::max(drawn->first_step, first), b = std::min(drawn->last_step, last);
        if (a <= b) same = StepRange{a, b};
      }
      PictureRequest both;
      both.steps = same;
      run.picture = select_picture(*run.timeline, both);
      passes.picture = both;
    }
    run_passes(passes, predicted);
    // The .html page compares the two, as diff's page does: the deltas, then
    // the measured timeline above the predicted one on one time scale. The
    // other outputs are the prediction alone.
    std::vector<OutputSpec> alone;
    std::vector<WrittenOutput> written(outputs.size());
    for (const OutputSpec& out : outputs) {
      if (out.format != OutputFormat::kHtmlReport) alone.push_back(out);
    }
    WriteOptions wopt;
    wopt.threads = o.run.threads;
    std::vector<WrittenOutput> alone_written = write_outputs(predicted, alone, wopt);
    const Diff diff = page ? diff_stats(*run.stats, *predicted.stats) : Diff{};
    for (size_t i = 0, k = 0; i < outputs.size(); ++i) {
      if (outputs[i].format != OutputFormat::kHtmlReport) {
        written[i] = alone_written[k++];
        continue;
      }
      DiffReportInput in{&*run.timeline, &*predicted.timeline, run.source, predicted.source, &diff};
      in.a_picture = &*run.picture;
      in.b_picture = &*predicted.picture;
      in.a_role = "measured";
      in.b_role = "predicted";
      ReportOptions ropt;
      ropt.title = "pp-timeline whatif: measured and predicted";
      written[i].error = write_spec(
          outputs[i], input_paths(run.timeline->files), [&](ByteSink& sink) { write_diff_report(in, ropt, sink); },
          &written[i].bytes);
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (!written[i].error.empty()) {
        say.error(written[i].error);
        code = kExitInput;
      } else if (!is_stdout_path(outputs[i].path)) {
        say.info(fmt::format(
            "wrote {} ({}): {} {}", outputs[i].path, format_size(written[i].bytes),
            outputs[i].format == OutputFormat::kHtmlReport ? "the measured run and the predicted" : "the predicted",
            best->label));
      }
    }
  }
  if (o.run.timings) say.timings(run.timings);
  if (int unread = say.unread_status(*run.timeline); code == kExitOk) code = unread;
  return code;
}

// The table's schedule names joined with `sep` (schedules.h): every one, or
// the chunked ones in lower case.
std::string schedule_names(std::string_view sep, bool chunked_only = false) {
  std::string out;
  for (const ScheduleRow& r : schedule_rows()) {
    if (chunked_only && !r.chunked) continue;
    if (!out.empty()) out += sep;
    for (char c : r.name) out += chunked_only ? static_cast<char>(std::tolower(static_cast<unsigned char>(c))) : c;
  }
  return out;
}

}  // namespace

void setup_whatif(CLI::App& app, Runner& chosen) {
  auto o = std::make_shared<WhatifCommandOptions>();
  CLI::App* sub = app.add_subcommand(
      "whatif",
      "Predict what the measured run would do under another schedule, micro-batch count or stage costs: a cost "
      "model fitted to the run's own jobs (docs/whatif.md), checked by replaying the measured schedule, then "
      "replayed under each target; several targets are ranked by predicted throughput (micro-batches per second).\n"
      "  pp-timeline whatif --log_dir logs/ --schedule 1f1b,zbh1,vpp --micro-batches 8,16 [--json]");
  add_input_options(*sub, o->input);
  add_selection_options(*sub, o->selection);
  sub->add_option("--schedule", o->schedules,
                  fmt::format("target schedules, a comma list of {}, in any case, with or without '-' or '_' (ZB-H1, "
                              "zbh1) (default: the measured one)",
                              schedule_names(", ")))
      ->delimiter(',');
  sub->add_option("--micro-batches", o->micro_batches, "target micro-batch counts M, a comma list (default: measured)")
      ->delimiter(',')
      ->check(CLI::Range(1, 100000));
  sub->add_option("--chunks", o->chunks,
                  fmt::format("model chunks V of {} (default: the measured V, else 2); a chunk costs its stage's "
                              "time / V unless that V was measured",
                              schedule_names(" and ", true)))
      ->check(CLI::Range(1, 64));
  sub->add_option("--w-share", o->w_share,
                  "backward_w's share of a backward for the zero-bubble schedules (default: measured from "
                  "backward_b/backward_w when the run has them, else 0.5)")
      ->check(finite_range(0.0, 1.0));
  sub->add_flag("--balance", o->balance, "every stage at the median stage's costs: what the straggler costs");
  sub->add_option("--stage-scale", o->stage_scale,
                  "STAGE:FACTOR multiplies every job cost of that stage (0.8: 20% faster); may be repeated");
  sub->add_option("--link-scale", o->link_scale, "multiplies every stage-to-stage link lag")
      ->check(finite_range(0.0, 1000.0));
  add_device_memory_option(*sub, o->device_memory_bytes);
  sub->add_flag("--json", o->json, "JSON (docs/schemas/whatif.v1.json) instead of the table");
  sub->add_option("-o,--output", o->outputs,
                  "write the best-ranked predicted timeline here, as convert writes a run (.json, .pftrace, .svg, "
                  ".png, .html, ...); may be repeated");
  add_run_options(*sub, o->run);
  sub->footer(
      "Exit status: 0 done; 1 nothing usable found, --strict and input problems, or an output could\n"
      "not be written; 2 usage error; 3 internal error.");
  sub->callback([o, &chosen] { chosen = [o] { return run_whatif_command(*o); }; });
}

}  // namespace ppt::cli
