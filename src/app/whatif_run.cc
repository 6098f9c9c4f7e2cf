#include "app/whatif_run.h"

#include <fmt/format.h>

#include <algorithm>

#include "analysis/diff.h"
#include "output/report/html_report.h"
#include "output/sink/output_file.h"
#include "output/text/advice_text.h"
#include "schedule/replay.h"

namespace ppt {
namespace {

bool is_page(const OutputSpec& out) { return out.format == OutputFormat::kHtmlReport; }

// The steps both sides of the page draw: the measured picture's, within
// [first, last] (the steps the prediction replays), else `last` alone.
StepRange same_steps(const DriverResult& measured, int32_t first, int32_t last) {
  StepRange same{last, last};
  if (const PictureRun* drawn = measured.picture->find(measured.stats->run)) {
    const int32_t a = std::max(drawn->first_step, first), b = std::min(drawn->last_step, last);
    if (a <= b) same = StepRange{a, b};
  }
  return same;
}

}  // namespace

std::string check_stage_scale(const WhatifChanges& changes, const DriverResult& measured) {
  const int32_t stages = measured.pipeline.schedule.pp_degree;
  for (auto [stage, factor] : changes.stage_scale) {
    if (stage >= stages) return fmt::format("--stage-scale {}: the run has stages 0-{}", stage, stages - 1);
  }
  return "";
}

WhatifReport predict_run(DriverResult& m, const WhatifChanges& changes) {
  return timed(m, "whatif", [&] {
    // The model fitted beside the stats is the report's from here on.
    std::optional<CostModel> fitted = std::move(m.model);
    m.model.reset();
    return run_whatif(*m.timeline, m.pipeline, m.dependencies, *m.stats, changes, 3, m.threads, std::move(fitted));
  });
}

const WhatifOutcome* best_target(const WhatifReport& report) {
  for (const WhatifOutcome& p : report.predicted) {
    if (!p.failed()) return &p;
  }
  return nullptr;
}

DriverResult predicted_run(DriverResult& measured, const WhatifReport& report, const WhatifOutcome& best,
                           const std::vector<OutputSpec>& outputs) {
  DriverResult predicted;
  predicted.timeline = replay_timeline(best.replay, measured.timeline->origin_ns, report.first_replayed_step);
  predicted.source = fmt::format("{} (predicted: {})", measured.source, outcome_label(best));
  predicted.timeline->prediction = fmt::format("predicted ({})", outcome_label(best));
  add_predicted_memory(*predicted.timeline, best.replay, report.memory, report.first_replayed_step);
  DriverRequest passes;
  passes.threads = measured.threads;
  passes.stats = draws(outputs);
  if (std::any_of(outputs.begin(), outputs.end(), is_page) && measured.picture && measured.stats) {
    const int32_t first = report.first_replayed_step;
    const int32_t last = first + static_cast<int32_t>(best.replay.steps.size()) - 1;
    PictureRequest both;
    both.steps = same_steps(measured, first, last);
    measured.picture = select_picture(*measured.timeline, both);
    passes.picture = both;
  }
  run_passes(passes, predicted);
  return predicted;
}

std::vector<WrittenOutput> write_whatif_outputs(DriverResult& measured, DriverResult& predicted,
                                                const std::vector<OutputSpec>& outputs) {
  std::vector<OutputSpec> alone;
  for (const OutputSpec& out : outputs) {
    if (!is_page(out)) alone.push_back(out);
  }
  std::vector<WrittenOutput> alone_written = write_outputs(predicted, alone, WriteOptions{});
  const bool page = alone.size() < outputs.size();
  const Diff diff = page ? diff_stats(*measured.stats, *predicted.stats) : Diff{};
  std::vector<WrittenOutput> written(outputs.size());
  for (size_t i = 0, k = 0; i < outputs.size(); ++i) {
    if (!is_page(outputs[i])) {
      written[i] = alone_written[k++];
      continue;
    }
    DiffReportInput in{&*measured.timeline, &*predicted.timeline, measured.source, predicted.source, &diff};
    in.a_picture = &*measured.picture;
    in.b_picture = &*predicted.picture;
    in.a_role = "measured";
    in.b_role = "predicted";
    ReportOptions ropt;
    ropt.title = "pp-timeline whatif: measured and predicted";
    written[i].error = write_spec(
        outputs[i], input_paths(measured.timeline->files), [&](ByteSink& sink) { write_diff_report(in, ropt, sink); },
        &written[i].bytes);
  }
  return written;
}

}  // namespace ppt
