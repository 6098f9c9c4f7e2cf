#include "app/diff_run.h"

#include <algorithm>

#include "output/report/html_report.h"
#include "output/sink/output_file.h"
#include "output/text/stats_json.h"

namespace ppt {
namespace {

// diff's page: the deltas, the steps, then both timelines on one scale.
void write_page(const DiffRuns& runs, ByteSink& sink) {
  const StatsInput& a = runs.sides[0];
  const StatsInput& b = runs.sides[1];
  DiffReportInput report{a.timeline(), b.timeline(), runs.paths[0], runs.paths[1], &runs.diffs.front()};
  report.a_picture = a.run->picture ? &*a.run->picture : nullptr;
  report.b_picture = b.run->picture ? &*b.run->picture : nullptr;
  write_diff_report(report, ReportOptions{}, sink);
}

// The text or Markdown of each comparison, a blank line between two.
template <typename Format>
void write_each(const std::vector<Diff>& diffs, ByteSink& sink, Format&& format) {
  for (size_t i = 0; i < diffs.size(); ++i) {
    if (i > 0) sink.write("\n");
    sink.write(format(diffs[i]));
  }
}

}  // namespace

std::string run_letter(size_t i) { return std::string(1, char('A' + std::min<size_t>(i, 25))); }

void compare_runs(DiffRuns& runs, DiffOptions options) {
  runs.diffs.clear();
  for (size_t i = 1; i < runs.sides.size(); ++i) {
    options.b_label = run_letter(i);  // B, C, D...: the load's labels
    runs.diffs.push_back(diff_stats(runs.sides[0].stats, runs.sides[i].stats, options));
  }
}

bool holds_two_runs(const OutputSpec& out) {
  return out.format == OutputFormat::kDiffTrace || out.format == OutputFormat::kDiffReport;
}

std::vector<std::string> diff_inputs(const DiffRuns& runs) {
  std::vector<std::string> inputs;
  for (const StatsInput& side : runs.sides) {
    if (side.timeline()) {
      for (const std::string& p : input_paths(side.timeline()->files)) inputs.push_back(p);
    }
  }
  return inputs;
}

std::string write_diff_output(const OutputSpec& out, const DiffRuns& runs, const TextStyle& style,
                              DiffTraceInfo* info) {
  const std::vector<Diff>& diffs = runs.diffs;
  return write_spec(out, diff_inputs(runs), [&](ByteSink& sink) {
    switch (out.format) {
      case OutputFormat::kDiffTrace:
        *info =
            write_diff_trace(*runs.sides[0].timeline(), runs.paths[0], *runs.sides[1].timeline(), runs.paths[1], sink);
        break;
      case OutputFormat::kDiffReport: write_page(runs, sink); break;
      case OutputFormat::kReportJson:
        sink.write(diffs.size() == 1 ? format_diff_json(diffs.front()) : format_diff_set_json(diffs));
        break;
      case OutputFormat::kReportMarkdown:
        write_each(diffs, sink, [](const Diff& d) { return format_diff_markdown(d); });
        break;
      default: write_each(diffs, sink, [&](const Diff& d) { return format_diff_text(d, style); }); break;
    }
  });
}

}  // namespace ppt
