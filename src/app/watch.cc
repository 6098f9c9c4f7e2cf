#include "app/watch.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "input/file_scanner.h"
#include "input/line_parser.h"
#include "input/pipeline_details.h"
#include "passes/clock_align.h"
#include "passes/timeline_builder.h"
#include "pp_timeline/log_line.h"

namespace ppt {
namespace {

bool is_start_line(std::string_view line) { return line.find(log_line::kProcessStartMarker) != line.npos; }

// The schedule marker's window ("start at step X and end at step Y"), or "".
std::string_view marker_window(std::string_view line) {
  size_t p = line.find(log_line::kScheduleMarker);
  if (p == line.npos) return {};
  std::string_view rest = line.substr(p);
  while (!rest.empty() && (rest.back() == '\n' || rest.back() == '\r')) rest.remove_suffix(1);
  return rest;
}

// The lines the scanner looks at: job lines, schedule markers (both hold
// log_line::kProfilerLiteral), start-up lines. Every other line is noise to
// every pass.
// Job lines and markers, start-up lines, and the dynamic-graph details lines
// (memory samples, and the jobs of logs without job lines).
bool kept_line(std::string_view line) {
  return line.find(log_line::kProfilerLiteral) != line.npos || is_start_line(line) ||
         line.find(kDetailsLiteral) != line.npos;
}

size_t count_lines(std::string_view s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

bool before(uint32_t run_a, int32_t step_a, uint32_t run_b, int32_t step_b) {
  return run_a != run_b ? run_a < run_b : step_a < step_b;
}

}  // namespace

Watcher::Watcher(WatchOptions options) : options_(std::move(options)), parser_(std::make_unique<LineParser>()) {
  options_.keep_steps = std::max<size_t>(options_.keep_steps, 2);
}

Watcher::~Watcher() = default;

Watcher::FileState& Watcher::file(const std::string& path) {
  for (FileState& f : files_) {
    if (f.source.path == path) return f;
  }
  files_.emplace_back();
  files_.back().source.path = path;
  return files_.back();
}

std::string Watcher::set_layout(const Layout& layout) {
  DriverRequest checked = options_.passes;
  checked.outputs.clear();  // the command checks its outputs as it writes them
  if (std::string error = check_request(checked, layout); !error.empty()) return error;
  machines_ = layout.machines;
  world_ranks_ = layout.world_ranks;
  for (const SourceFile& s : layout.files) {
    if (s.standard_input || s.dygraph_profile || s.companion) continue;
    file(s.path).source = s;
  }
  // The analysis takes files in rank order, as the layout lists them.
  std::stable_sort(files_.begin(), files_.end(), [](const FileState& a, const FileState& b) {
    return std::tie(a.source.machine, a.source.global_rank) < std::tie(b.source.machine, b.source.global_rank);
  });
  return "";
}

void Watcher::add_lines(const std::string& path, std::string_view lines, WatchClock::time_point now) {
  FileState& f = file(path);
  if (!lines.empty()) f.last_data = now;
  size_t pos = 0;
  while (pos < lines.size()) {
    size_t nl = lines.find('\n', pos);
    size_t end = nl == lines.npos ? lines.size() : nl + 1;
    std::string_view line = lines.substr(pos, end - pos);
    pos = end;
    if (!kept_line(line)) {
      // An empty line in its place keeps the line numbers of the source.
      if (options_.keep_all && line.back() == '\n') f.all += '\n';
      continue;
    }
    f.line_starts.push_back(static_cast<uint32_t>(f.text.size()));
    f.text += line;
    if (options_.keep_all) f.all += line;
    if (line.find(kDetailsLiteral) != line.npos && line.find(log_line::kProfilerLiteral) == line.npos) {
      account_details(f, line);
    } else if (is_start_line(line)) {
      if (f.details.close()) reject_details(IssueKind::kUnmatchedDetailsBefore);
    }
    if (line.find(log_line::kJobMarker) != line.npos) {
      f.job_lines = true;
      ++jobs_seen_;
      // The window is re-read on every update and later cut, so its counts
      // are of the window only; the running total is kept here, a line at
      // a time (O(new bytes)).
      std::string_view whole = line.substr(0, line.size() - (line.back() == '\n' ? 1 : 0));
      LineResult judged = parser_->parse(whole);
      if (judged.kind == LineKind::kRejected) {
        ++rejected_seen_;
        ++rejected_by_kind_[static_cast<size_t>(judged.issue)];
      }
    }
  }
}

void Watcher::reject_details(IssueKind kind) {
  ++jobs_seen_;
  ++rejected_seen_;
  ++rejected_by_kind_[static_cast<size_t>(kind)];
}

// A details line, judged once as it arrives, as the reader does
// (file_scanner.cc): a bad line or an unmatched half is a job seen and
// rejected; a pair is a job of a file without job lines. A Before still open
// when the watch ends is not counted (its After may be on its way).
void Watcher::account_details(FileState& f, std::string_view line) {
  DetailsLine d;
  std::string why;
  if (!parse_details_line(line, &d, &why)) {
    reject_details(IssueKind::kBadDetailsLine);
    return;
  }
  DetailsPairing::Step step = f.details.feed(d, 0, {});
  if (step.unmatched) reject_details(IssueKind::kUnmatchedDetailsBefore);
  if (step.unmatched_after) reject_details(IssueKind::kUnmatchedDetailsAfter);
  if (step.pair && step.end_before_start) reject_details(IssueKind::kEndBeforeStart);
  if (step.pair && !step.end_before_start) ++f.details_pairs;
}

uint64_t Watcher::jobs_seen() const {
  uint64_t n = jobs_seen_;
  for (const FileState& f : files_) n += f.job_lines ? 0 : f.details_pairs;
  return n;
}

void Watcher::add_unterminated(const std::string& path, std::string_view line) {
  if (line.empty() || !kept_line(line)) return;
  FileState& f = file(path);
  f.line_starts.push_back(static_cast<uint32_t>(f.text.size()));
  f.text += line;
  if (options_.keep_all) f.all += line;
}

void Watcher::add_skipped_line(bool has_marker) {
  // The follower put an empty line in its place (add_lines keeps the line
  // numbers with it); here it is only counted.
  if (!has_marker) return;
  ++jobs_seen_;
  ++rejected_seen_;
  ++rejected_by_kind_[static_cast<size_t>(IssueKind::kLineTooLong)];
}

int32_t Watcher::window_anchor(const Timeline& tl) const {
  for (const Track& t : tl.tracks) {
    if (t.run != 0 || !files_[t.file].cut_at_anchor) continue;
    const FileState& f = files_[t.file];
    const size_t context = count_lines(f.context_start) + count_lines(f.context_marker);
    for (const Job& j : t.jobs) {
      if (j.line == context + 1) return j.step;
    }
  }
  if (!tl.runs.empty() && !tl.runs[0].steps.empty()) return tl.runs[0].steps[0].number;
  return anchor_step_;
}

void Watcher::renumber(Timeline& tl) const {
  if (!cut_ || tl.runs.empty()) return;
  const int32_t shift = anchor_step_ - window_anchor(tl);
  if (shift == 0) return;
  Run& first = tl.runs[0];
  for (StepSpan& s : first.steps) s.number += shift;
  first.marker_start_step += shift;
  for (uint32_t k : first.tracks) {
    for (Job& j : tl.tracks[k].jobs) {
      if (j.step >= 0) j.step += shift;
    }
    for (MemorySample& m : tl.tracks[k].memory) {
      if (m.step >= 0) m.step += shift;
    }
  }
}

std::optional<DriverResult> Watcher::analyze(bool whole, bool with_stats, const Selection& selection) const {
  std::vector<SourceFile> sources;
  std::vector<FileScan> scans;
  LineParser parser;
  for (const FileState& f : files_) {
    uint32_t index = static_cast<uint32_t>(sources.size());
    sources.push_back(f.source);
    if (whole) {
      scans.push_back(scan_buffer(f.all, index, parser));
    } else {
      std::string text = f.context_start + f.context_marker + f.text;
      scans.push_back(scan_buffer(text, index, parser));
    }
  }
  if (sources.empty()) return std::nullopt;
  DriverResult r;
  r.timeline = build_from_scans(std::move(sources), machines_, std::move(scans), options_.passes.threads);
  r.timeline->world_ranks = world_ranks_;
  if (r.timeline->job_count() == 0) return std::nullopt;
  if (!whole) renumber(*r.timeline);
  DriverRequest request = options_.passes;
  request.pipeline_of_last_run = false;
  request.stats = with_stats;
  request.selection = selection;
  run_passes(request, r);
  if (r.failure == DriverFailure::kNoJobs) return std::nullopt;
  return r;
}

std::optional<DriverResult> Watcher::window() const {
  if (!emitted_any_) return std::nullopt;
  // The current run's last keep_steps reported steps, through the selection
  // every command has (selection.h); the steps still open are left out.
  Selection last;
  last.run = (cut_ ? last_run_ - anchor_run_ : last_run_) + 1;
  last.steps = StepRange{last_step_ - static_cast<int32_t>(options_.keep_steps) + 1, last_step_};
  std::optional<DriverResult> r = analyze(false, true, last);
  // The window is not the run: the page counts the steps it shows.
  if (r && r->timeline) {
    for (Run& run : r->timeline->runs) run.steps_before_selection = 0;
  }
  return r;
}

std::optional<DriverResult> Watcher::whole_run(bool stats) const {
  if (!options_.keep_all) return std::nullopt;
  return analyze(true, stats, {});
}

namespace {

// Whether a step of the window is complete: each track of its run has a
// job of a later step, or its file went on to a later run, or fell quiet
// (`quiet`, by file: nothing written for the idle timeout).
class StepCompleteness {
 public:
  StepCompleteness(const Timeline& tl, std::vector<bool> quiet)
      : tl_(tl), last_step_(tl.tracks.size(), -1), last_run_of_file_(quiet.size(), 0), quiet_(std::move(quiet)) {
    for (size_t k = 0; k < tl.tracks.size(); ++k) {
      for (const Job& j : tl.tracks[k].jobs) last_step_[k] = std::max(last_step_[k], j.step);
      last_run_of_file_[tl.tracks[k].file] = std::max(last_run_of_file_[tl.tracks[k].file], tl.tracks[k].run);
    }
  }
  bool complete(const Run& run, int32_t number) const {
    for (uint32_t k : run.tracks) {
      const Track& t = tl_.tracks[k];
      if (last_step_[k] > number) continue;
      if (last_run_of_file_[t.file] > run.index) continue;
      if (quiet_[t.file]) continue;
      return false;
    }
    return true;
  }

 private:
  const Timeline& tl_;
  std::vector<int32_t> last_step_;
  std::vector<uint32_t> last_run_of_file_;
  std::vector<bool> quiet_;
};

// stats measures one run at a time (never pooled): the window's other runs
// (a run that ended, the next one starting) are measured on their own, once.
class StatsByRun {
 public:
  StatsByRun(const DriverResult& window, StatsOptions options) : window_(window), options_(std::move(options)) {}
  const Stats& of(uint32_t index) {
    if (window_.stats->run == index) return *window_.stats;
    auto it = others_.find(index);
    if (it == others_.end()) {
      StatsOptions so = options_;
      so.run = static_cast<int32_t>(index);
      it = others_.emplace(index, compute_stats(*window_.timeline, window_.pipeline, &window_.dependencies, so)).first;
    }
    return it->second;
  }

 private:
  const DriverResult& window_;
  StatsOptions options_;
  std::map<uint32_t, Stats> others_;
};

// Each rank's busy share of the step, and the slowest rank with the type
// that took most of its time.
void add_rank_shares(const Timeline& tl, const Run& run, const StepSpan& span, WatchStep& w) {
  int64_t best = -1;
  const int64_t span_ns = std::max<int64_t>(span.end_ns - span.start_ns, 1);
  for (uint32_t k : run.tracks) {
    const Track& t = tl.tracks[k];
    std::vector<std::pair<int64_t, int64_t>> iv;
    std::map<uint32_t, int64_t> by_type;
    for (const Job& j : t.jobs) {
      if (j.step != span.number) continue;
      iv.emplace_back(j.start_ns, j.end_ns);
      by_type[j.type] += j.end_ns - j.start_ns;
    }
    if (iv.empty()) continue;
    int64_t busy = union_length(iv, span.start_ns, span.end_ns);
    w.ranks.push_back({t.rank, static_cast<double>(busy) / static_cast<double>(span_ns)});
    if (busy > best) {
      best = busy;
      w.slowest_rank = t.rank;
      auto top = std::max_element(by_type.begin(), by_type.end(),
                                  [](const auto& x, const auto& y) { return x.second < y.second; });
      w.slowest_type = tl.types[top->first];
    }
  }
}

}  // namespace

uint32_t Watcher::global_run(uint32_t run) const { return cut_ ? anchor_run_ + run : run; }

void Watcher::mark_steps(const Timeline& tl) {
  // The window's first lines of each file, to map its lines to the file's.
  std::vector<size_t> context_lines(files_.size());
  for (size_t i = 0; i < files_.size(); ++i) {
    context_lines[i] = count_lines(files_[i].context_start) + count_lines(files_[i].context_marker);
  }
  for (FileState& f : files_) f.marks.clear();
  std::vector<std::map<std::pair<uint32_t, int32_t>, uint32_t>> firsts(files_.size());
  for (const Track& t : tl.tracks) {
    auto& m = firsts[t.file];
    for (const Job& j : t.jobs) {
      if (j.step < 0 || j.line <= context_lines[t.file]) continue;
      uint32_t line = static_cast<uint32_t>(j.line - 1 - context_lines[t.file]);
      auto key = std::make_pair(global_run(t.run), j.step);
      auto [it, inserted] = m.emplace(key, line);
      if (!inserted) it->second = std::min(it->second, line);
    }
  }
  for (size_t i = 0; i < files_.size(); ++i) {
    for (const auto& [key, line] : firsts[i]) files_[i].marks.push_back({key.first, key.second, line});
  }
}

void Watcher::bound_window() {
  if (!emitted_any_ || reported_since_cut_ == 0) return;
  int32_t target = last_step_ - static_cast<int32_t>(options_.keep_steps) + 1;
  if (!cut_ || before(anchor_run_, anchor_step_, last_run_, target)) cut(last_run_, target);
}

std::vector<WatchStep> Watcher::update(WatchClock::time_point now, bool finishing) {
  std::vector<WatchStep> out;
  std::optional<DriverResult> a = analyze(false, true, {});
  if (!a) return out;
  if (!a->ok()) {
    failure_ = a->failure;
    return out;
  }
  const Timeline& tl = *a->timeline;
  // Each file's steps' first lines, in the run's numbers (the window's
  // steps carry them, renumber; its runs count from the anchor's).
  mark_steps(tl);
  std::vector<bool> quiet(files_.size());
  for (size_t i = 0; i < files_.size(); ++i) quiet[i] = now - files_[i].last_data >= options_.idle_timeout;
  const StepCompleteness done(tl, std::move(quiet));
  StatsByRun stats(*a, options_.passes.stats_options);
  const uint64_t problems = rejected_seen_;
  for (const Run& run : tl.runs) {
    for (const StepSpan& span : run.steps) {
      uint32_t grun = global_run(run.index);
      int32_t gstep = span.number;
      if (cut_ && before(grun, gstep, anchor_run_, anchor_step_)) continue;
      if (emitted_any_ && !before(last_run_, last_step_, grun, gstep)) continue;
      // The first step not complete ends the report: the later ones wait.
      if (!finishing && !done.complete(run, span.number)) {
        bound_window();
        return out;
      }
      const Stats& rs = stats.of(run.index);
      auto found = std::find_if(rs.steps.begin(), rs.steps.end(),
                                [&](const StepStats& s) { return s.run == run.index && s.step == span.number; });
      if (found == rs.steps.end()) continue;
      if (!origin_set_) {
        origin_ns_ = tl.origin_ns;
        origin_set_ = true;
      }
      WatchStep w;
      w.stats = *found;
      w.stats.run = grun;
      w.stats.step = gstep;
      w.schedule = schedule_label(rs.schedule);
      w.ideal_bubble_ratio = rs.schedule.ideal_bubble_ratio;
      w.stragglers = rs.stragglers;
      w.problems = problems;
      add_rank_shares(tl, run, span, w);
      emitted_any_ = true;
      last_run_ = grun;
      last_step_ = gstep;
      ++reported_since_cut_;
      out.push_back(std::move(w));
    }
  }
  // Keep the window bounded: cut each file at the step keep_steps back.
  bound_window();
  return out;
}

void Watcher::cut(uint32_t run, int32_t step) {
  // The anchor must be a step some file has, or numbers could not be mapped.
  bool any = false;
  uint32_t arun = run;
  int32_t astep = step;
  for (const FileState& f : files_) {
    for (const StepMark& m : f.marks) {
      if (!before(m.run, m.step, run, step) && (!any || before(m.run, m.step, arun, astep))) {
        arun = m.run;
        astep = m.step;
        any = true;
      }
    }
  }
  if (!any) return;
  for (FileState& f : files_) {
    if (f.marks.empty()) continue;  // nothing of it was understood yet: keep it whole
    size_t cut_line = f.line_starts.size();
    f.cut_at_anchor = false;
    for (const StepMark& m : f.marks) {
      if (!before(m.run, m.step, arun, astep)) {
        cut_line = m.line;
        f.cut_at_anchor = m.run == arun && m.step == astep;
        break;
      }
    }
    if (cut_line == 0) continue;
    size_t cut_byte = cut_line < f.line_starts.size() ? f.line_starts[cut_line] : f.text.size();
    // What the runs need from the lines cut off: the run's start-up line and marker.
    for (size_t l = 0; l < cut_line; ++l) {
      size_t b = f.line_starts[l];
      size_t e = l + 1 < f.line_starts.size() ? f.line_starts[l + 1] : f.text.size();
      std::string_view line(f.text.data() + b, e - b);
      if (is_start_line(line)) {
        f.context_start = std::string(line);
        f.context_marker.clear();
      } else if (std::string_view w = marker_window(line); !w.empty()) {
        if (f.context_marker.empty() || marker_window(f.context_marker) != w) f.context_marker = std::string(line);
      }
    }
    f.text.erase(0, cut_byte);
    f.line_starts.erase(f.line_starts.begin(), f.line_starts.begin() + static_cast<ptrdiff_t>(cut_line));
    for (uint32_t& s : f.line_starts) s -= static_cast<uint32_t>(cut_byte);
    f.text.shrink_to_fit();
  }
  cut_ = true;
  anchor_run_ = arun;
  anchor_step_ = astep;
  reported_since_cut_ = 0;
}

}  // namespace ppt
