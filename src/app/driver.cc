#include "app/driver.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <optional>

#include "analysis/whatif.h"
#include "output/text/summary.h"
#include "passes/pipeline_stage.h"
#include "util/parallel.h"

namespace ppt {
namespace {

using Clock = std::chrono::steady_clock;

// Appends the wall time since the last lap under `name`.
class PhaseTimer {
 public:
  explicit PhaseTimer(std::vector<PhaseTime>& out) : out_(out), mark_(Clock::now()) {}
  void lap(const char* name) {
    Clock::time_point now = Clock::now();
    out_.push_back({name, std::chrono::duration<double>(now - mark_).count()});
    mark_ = now;
  }

 private:
  std::vector<PhaseTime>& out_;
  Clock::time_point mark_;
};

std::string source_of(const LayoutRequest& request) {
  if (!request.log_dir.empty()) return request.log_dir;
  std::vector<std::string> shown = request.files;
  for (std::string& f : shown) {
    if (is_stdin_path(f)) f = std::string(kStdinName);
  }
  return fmt::format("{}", fmt::join(shown, " "));
}

}  // namespace

bool draws(const std::vector<OutputSpec>& outputs) {
  for (const OutputSpec& o : outputs) {
    // The report's tables; the pictures' title, stages and critical paths.
    if (o.format == OutputFormat::kHtmlReport || o.format == OutputFormat::kSvg || o.format == OutputFormat::kPng) {
      return true;
    }
  }
  return false;
}

DriverResult run_driver(const DriverRequest& req) {
  DriverResult r;
  PhaseTimer timer(r.timings);

  // load: layout (a directory among the files is the log directory: the
  // command decided it, else the layout does)
  r.source = source_of(req.input);
  LayoutResult found = discover_layout(req.input);
  if (!found.layout) {
    r.failure = DriverFailure::kLayout;
    r.error = found.error;
    r.usage_error = found.usage_error;
    return r;
  }
  r.layout = std::move(*found.layout);
  const Layout& layout = *r.layout;
  // Outputs and P are checked before any work.
  if (std::string error = check_request(req, layout); !error.empty()) {
    r.failure = DriverFailure::kUsage;
    r.error = error;
    return r;
  }
  // An output that cannot be created is said before the input is read.
  for (const std::string& out : req.outputs) {
    if (std::string error = check_output_writable(out); !error.empty()) {
      r.failure = DriverFailure::kOutput;
      r.error = error;
      return r;
    }
  }
  timer.lap("layout");

  // load: scan, build (timed by the builder)
  BuildOptions build;
  build.threads = req.threads;
  build.timings = &r.timings;
  r.timeline = build_timeline(layout, build);
  run_passes(req, r);
  return r;
}

std::string check_request(const DriverRequest& req, const Layout& layout) {
  std::vector<std::string> inputs = input_paths(layout.files);
  inputs.insert(inputs.end(), req.other_inputs.begin(), req.other_inputs.end());
  for (const std::string& out : req.outputs) {
    if (std::string error = check_not_an_input(out, inputs); !error.empty()) return error;
  }
  // The whole run's ranks: a subset (--devices) keeps the run's stages.
  if (req.pp_degree > 0) return check_pp_degree(req.pp_degree, static_cast<size_t>(layout.world_ranks));
  return "";
}

void run_passes(const DriverRequest& req, DriverResult& r) {
  PhaseTimer timer(r.timings);
  r.threads = req.threads;
  Timeline& tl = *r.timeline;
  if (!req.selection.empty() && tl.job_count() > 0) {
    if (std::string error = apply_selection(tl, req.selection); !error.empty()) {
      r.failure = DriverFailure::kUsage;
      r.error = error;
      return;
    }
    timer.lap("select");
  }

  // passes
  r.pipeline = decide_pipeline(tl, req.pp_degree, req.threads, req.pipeline_of_last_run);
  timer.lap("pipeline");
  r.dependencies = find_dependencies(tl, r.pipeline, req.threads);
  timer.lap("dependencies");
  if (req.align_clocks) r.clocks = align_clocks(tl, r.dependencies);
  report_dependencies(tl, r.dependencies);
  timer.lap("clocks");

  if (tl.job_count() == 0) {
    r.failure = DriverFailure::kNoJobs;
    return;
  }
  if (req.strict && has_input_errors(tl)) {
    r.failure = DriverFailure::kStrict;
    return;
  }

  // analysis
  if (req.stats) {
    // The suggestions' replays and whatif's cost model read the run alone,
    // not its stats: they run beside compute_stats (tasks on the run's
    // threads), and what needs the stats is done after.
    std::optional<SuggestionReplays> replays;
    const uint32_t run = measured_run_index(tl, req.stats_options);
    enum class Task { kStats, kSuggestions, kFit };
    std::vector<Task> tasks{Task::kStats};
    if (req.suggest) tasks.push_back(Task::kSuggestions);
    if (req.fit_model) tasks.push_back(Task::kFit);
    parallel_for(tasks.size(), req.threads, [&](size_t k) {
      switch (tasks[k]) {
        case Task::kStats: r.stats = compute_stats(tl, r.pipeline, &r.dependencies, req.stats_options); break;
        case Task::kSuggestions:
          if (req.suggest_later) {
            r.suggestion_replays = begin_suggestion_replays(tl, r.pipeline, r.dependencies, run, req.threads);
          } else {
            replays = replay_suggestions(tl, r.pipeline, r.dependencies, run, req.threads);
          }
          break;
        case Task::kFit: r.model = fit_cost_model(tl, r.pipeline, r.dependencies, run, req.threads); break;
      }
    });
    r.stats->source = r.source;
    r.stats->memory.device_memory_bytes = req.device_memory_bytes;
    timer.lap(!req.suggest ? "stats" : req.suggest_later ? "stats and the model" : "stats and replays");
    if (replays) {
      r.stats->suggestions = suggest_changes(*replays, tl, *r.stats, 3, &r.stats->suggestion_warnings);
      timer.lap("whatif");
    }
  }
  if (req.picture) {
    PictureRequest picture = *req.picture;
    if (req.selection.steps) picture.steps = req.selection.steps;
    r.picture = select_picture(tl, picture);
    timer.lap("picture");
  }
}

LaterSuggestions::~LaterSuggestions() {
  if (made_.valid()) made_.wait();
}

void LaterSuggestions::start(DriverResult& result) {
  if (!result.suggestion_replays || !result.stats || !result.timeline) return;
  result_ = &result;
  // What the work reads (the timeline, plan, stats) is read, never written,
  // by the command meanwhile; what it makes is its own until finish().
  made_ = std::async(std::launch::async, [&result] {
    const Timeline& tl = *result.timeline;
    const Stats& stats = *result.stats;
    SuggestionReplays& replays = *result.suggestion_replays;
    finish_suggestion_replays(replays, tl, result.pipeline, stats.run, result.threads);
    Made m;
    m.suggestions = suggest_changes(replays, tl, stats, 3, &m.warnings);
    return m;
  });
}

void LaterSuggestions::finish(Stats* copy) {
  if (!made_.valid()) return;
  Made m = made_.get();
  if (copy) {
    copy->suggestions = m.suggestions;
    copy->suggestion_warnings = m.warnings;
  }
  result_->stats->suggestions = std::move(m.suggestions);
  result_->stats->suggestion_warnings = std::move(m.warnings);
}

std::vector<WrittenOutput> write_outputs(DriverResult& r, const std::vector<OutputSpec>& outputs, WriteOptions options,
                                         bool no_flows) {
  PhaseTimer timer(r.timings);
  std::vector<WrittenOutput> written(outputs.size());
  if (!r.timeline) return written;
  options.dependencies = no_flows ? nullptr : &r.dependencies;
  options.stats = r.stats ? &*r.stats : nullptr;
  // A request that drew without asking for the picture phase gets its
  // default decision here: still one for every output.
  if (!r.picture && draws(outputs)) r.picture = select_picture(*r.timeline, PictureRequest{});
  options.picture = r.picture ? &*r.picture : nullptr;
  if (options.source.empty()) options.source = r.source;
  if (options.notes.empty() && r.layout) options.notes = r.layout->notes;
  // One output gets every thread; several are written side by side.
  const unsigned threads = r.threads;
  options.threads = outputs.size() > 1 ? 1 : threads;
  parallel_for(outputs.size(), threads,
               [&](size_t i) { written[i].error = write_output(*r.timeline, outputs[i], options, &written[i].bytes); });
  timer.lap("write");
  return written;
}

std::string format_pipeline_summary(const DriverResult& r) {
  if (!r.timeline) return "";
  std::string s;
  const Timeline& tl = *r.timeline;
  const PipelineShape& shape = r.pipeline.shape;
  // The replicas the pipeline decision counted (one is no news).
  if (shape.pp_degree > 1 && shape.replicas > 1) {
    s += fmt::format(", {} x {} ({})", counted(shape.pp_degree, "stage"), counted(shape.replicas, "replica"),
                     shape.source);
  }
  std::string clocks = format_clock_alignment(tl, r.clocks);
  if (!clocks.empty()) s += "; " + clocks;
  if (r.dependencies.contradicted > 0) {
    s += fmt::format("; {} of {} contradicted by the times", with_commas(r.dependencies.contradicted),
                     counted(r.dependencies.edges.size(), "dependency", "dependencies"));
  }
  return s;
}

}  // namespace ppt
