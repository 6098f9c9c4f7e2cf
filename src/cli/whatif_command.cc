// pp-timeline whatif: what the measured run would do under another schedule,
// micro-batch count or cost, from a cost model fitted to its own jobs
// (analysis/whatif.h).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <memory>

#include "analysis/whatif.h"
#include "app/driver.h"
#include "app/picture.h"
#include "app/whatif_run.h"
#include "cli/finite_range.h"
#include "commands.h"
#include "output/outputs.h"
#include "output/sink/output_file.h"
#include "output/text/advice_text.h"
#include "output/text/whatif_writers.h"
#include "passes/schedule.h"
#include "reporter.h"
#include "util/escape.h"
#include "util/kept_at_exit.h"
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

// What the prediction left to say: no prediction and why, each target that
// failed, the measured plan not replayed, memory asked of a run without it.
void report_prediction(const Reporter& say, const WhatifReport& report, int64_t device_memory_bytes) {
  if (report.refusal) {
    say.warning("no prediction: " + refusal_text(*report.refusal));
  } else {
    for (const WhatifOutcome& p : report.predicted) {
      if (!p.error.empty()) say.warning(fmt::format("{}: {}", outcome_label(p), p.error));
    }
  }
  if (!report.replayed.error.empty()) say.note("no replay of the measured plan: " + report.replayed.error);
  if (device_memory_bytes > 0 && !report.memory.present()) {
    say.note(
        "--device-memory: the run has no memory samples (Paddle's [Pipeline details] lines, logged with "
        "FLAGS_profile_pipeline_details_steps): no peak to check against it");
  }
}

// -o: the best-ranked target `best` written as convert writes a run
// (app/whatif_run.h).
int write_prediction(const Reporter& say, DriverResult& measured, const WhatifReport& report, const WhatifOutcome* best,
                     const std::vector<OutputSpec>& outputs) {
  if (!best->fits) {
    say.warning(fmt::format("no target fits in {} of device memory: writing {}, which does not",
                            format_gib(report.device_memory_bytes), outcome_label(*best)));
  }
  DriverResult predicted = predicted_run(measured, report, *best, outputs);
  std::vector<WrittenOutput> written = write_whatif_outputs(measured, predicted, outputs);
  int code = kExitOk;
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!written[i].error.empty()) {
      say.error(written[i].error);
      code = kExitInput;
    } else if (!is_stdout_path(outputs[i].path)) {
      say.info(fmt::format(
          "wrote {} ({}): {} {}", outputs[i].path, format_size(written[i].bytes),
          outputs[i].format == OutputFormat::kHtmlReport ? "the measured run and the predicted" : "the predicted",
          outcome_label(*best)));
    }
  }
  return code;
}

int run_whatif_command(const WhatifCommandOptions& o) {
  Reporter say("whatif", o.run.quiet);
  begin_one_shot_command(/*reuse_freed=*/true);
  DriverRequest request;
  WhatifChanges changes;
  std::vector<OutputSpec> outputs;
  auto decide_outputs = [&](const LayoutRequest&, std::vector<OutputSpec>* out) {
    if (std::string error = parse_changes(o, &changes); !error.empty()) return error;
    return resolve_outputs(OutputCommand::kConvert, o.outputs, OutputFormat::kChromeJson, out);
  };
  if (std::string error = decide_run("whatif", o.input, o.run, o.selection, decide_outputs, &request, &outputs);
      !error.empty()) {
    say.error(error);
    return kExitUsage;
  }
  request.stats = true;
  request.fit_model = true;  // the model, fitted beside the stats
  request.stats_options.critical_paths = false;
  request.device_memory_bytes = o.device_memory_bytes;
  // The page shows the measured run above the prediction: both need pictures.
  const bool page = std::any_of(outputs.begin(), outputs.end(),
                                [](const OutputSpec& out) { return out.format == OutputFormat::kHtmlReport; });
  if (page) request.picture = PictureRequest{};
  DriverResult run = run_driver(request);
  KeptAtExit keep(run);
  if (int code = say.load(run, false); code != kExitOk) return code;
  if (std::string error = check_stage_scale(changes, run); !error.empty()) {
    say.error(error);
    return kExitUsage;
  }
  WhatifReport report = predict_run(run, changes);
  report_prediction(say, report, o.device_memory_bytes);
  std::string text = o.json ? format_whatif_json(report) : format_whatif_text(report);
  if (std::string error = write_standard_output(text); !error.empty()) {
    say.error(error);
    return kExitInput;
  }
  const WhatifOutcome* best = best_target(report);
  if (!outputs.empty() && !best) {
    say.error("no target could be predicted: nothing to write");
    return kExitInput;
  }
  int code = outputs.empty() ? kExitOk : write_prediction(say, run, report, best, outputs);
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
  CLI::App* sub = add_command(
      app, "whatif",
      "Predict what the measured run would do under another schedule, micro-batch count or stage costs: a cost "
      "model fitted to the run's own jobs (docs/whatif.md), checked by replaying the measured schedule, then "
      "replayed under each target; several targets are ranked by predicted throughput (micro-batches per second).\n"
      "  pp-timeline whatif --log_dir logs/ --schedule 1f1b,zbh1,vpp --micro-batches 8,16 [--json]",
      chosen, run_whatif_command, o);
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
}

}  // namespace ppt::cli
