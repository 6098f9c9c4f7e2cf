#include "app/picture.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "util/text.h"

namespace ppt {
namespace {

struct StepPick {
  uint32_t run = 0;
  int32_t step = 0;
  int64_t ns = 0;
};

// The slowest step when the median job of the whole timeline, drawn across
// the plot width, is too narrow to read; nullopt when it is readable or has
// one step.
std::optional<StepPick> dense_pick(const Timeline& tl, const PictureRequest& req, size_t steps) {
  std::vector<double> widths;
  widths.reserve(tl.job_count());
  StepPick pick;
  bool found = false;
  double plot_w = std::max(100.0, req.plot_width);
  for (const Run& run : tl.runs) {
    int64_t span = std::max<int64_t>(run.last_ns - run.first_ns, 1000);
    for (uint32_t ti : run.tracks) {
      for (const Job& j : tl.tracks[ti].jobs) {
        widths.push_back(static_cast<double>(j.end_ns - j.start_ns) * plot_w / static_cast<double>(span));
      }
    }
    for (const StepSpan& s : run.steps) {
      if (s.ranks == 0) continue;
      if (!found || s.end_ns - s.start_ns > pick.ns) {
        found = true;
        pick.run = run.index;
        pick.step = s.number;
        pick.ns = s.end_ns - s.start_ns;
      }
    }
  }
  if (!found || steps < 2 || widths.empty()) return std::nullopt;
  auto mid = widths.begin() + static_cast<std::ptrdiff_t>(widths.size() / 2);
  std::nth_element(widths.begin(), mid, widths.end());
  if (*mid >= kReadablePx) return std::nullopt;
  return pick;
}

// One step of one run holds more than `max_jobs` jobs: the start time
// before which its first `max_jobs` jobs (by start) lie, and how many start
// before it and when the last of them ends. Jobs that share the cut's start
// are all left out, so fewer than `max_jobs` may be drawn, never more.
struct StepCut {
  int64_t until_ns = INT64_MAX;
  size_t jobs = 0;
  int64_t end_ns = INT64_MIN;
};

StepCut cut_step(const Timeline& tl, const Run& run, int32_t step, size_t max_jobs) {
  std::vector<int64_t> starts;
  for (uint32_t ti : run.tracks) {
    for (const Job& j : tl.tracks[ti].jobs) {
      if (j.step == step) starts.push_back(j.start_ns);
    }
  }
  StepCut cut;
  if (starts.size() <= max_jobs) return cut;
  auto nth = starts.begin() + static_cast<std::ptrdiff_t>(max_jobs);
  std::nth_element(starts.begin(), nth, starts.end());
  cut.until_ns = *nth;
  for (uint32_t ti : run.tracks) {
    for (const Job& j : tl.tracks[ti].jobs) {
      if (j.step != step || j.start_ns >= cut.until_ns) continue;
      ++cut.jobs;
      cut.end_ns = std::max(cut.end_ns, j.end_ns);
    }
  }
  return cut;
}

struct StepInfo {
  size_t jobs = 0;
  int64_t first = INT64_MAX, last = INT64_MIN;
};

// The jobs of each step of `run` within `range` (none when `skip`); widens
// [*any_min, *any_max] to every job's step, for the note of an empty range.
std::map<int32_t, StepInfo> steps_in_range(const Timeline& tl, const Run& run, const StepRange& range, bool skip,
                                           int32_t* any_min, int32_t* any_max) {
  std::map<int32_t, StepInfo> steps;
  for (uint32_t ti : run.tracks) {
    for (const Job& j : tl.tracks[ti].jobs) {
      *any_min = std::min(*any_min, j.step);
      *any_max = std::max(*any_max, j.step);
      if (skip || !range.contains(j.step)) continue;
      StepInfo& s = steps[j.step];
      ++s.jobs;
      s.first = std::min(s.first, j.start_ns);
      s.last = std::max(s.last, j.end_ns);
    }
  }
  return steps;
}

// The runs' steps drawn so far, and where the cap stopped them.
struct Filling {
  bool stop = false, capped = false;
  std::string part;                // a step cut short, for the note
  std::vector<std::string> shown;  // "steps 3-5 of run 2", per run drawn
};

// Adds the steps of `run` to `sel` while they fit under the cap; the first
// step alone over it is cut (cut_step).
void fill_run(const Timeline& tl, const Run& run, const std::map<int32_t, StepInfo>& steps, const PictureRequest& req,
              PictureSelection& sel, Filling& f) {
  PictureRun r;
  r.run = run.index;
  r.first_step = steps.begin()->first;
  r.start_ns = INT64_MAX;
  r.end_ns = INT64_MIN;
  for (const auto& [n, s] : steps) {
    if (sel.jobs > 0 && sel.jobs + s.jobs > req.max_jobs) {
      f.capped = f.stop = true;
      break;
    }
    if (s.jobs > req.max_jobs) {
      // The first step alone is over the cap: its first jobs are drawn.
      StepCut cut = cut_step(tl, run, n, req.max_jobs);
      r.until_ns = cut.until_ns;
      sel.jobs += cut.jobs;
      r.jobs += cut.jobs;
      r.last_step = n;
      r.start_ns = std::min(r.start_ns, s.first);
      r.end_ns = std::max(r.end_ns, cut.jobs > 0 ? cut.end_ns : s.first);
      f.part =
          fmt::format("the first {} of step {}'s {} jobs, those starting in its first {:.3f} ms", with_commas(cut.jobs),
                      n, with_commas(s.jobs), static_cast<double>(cut.until_ns - s.first) / 1e6);
      f.capped = f.stop = true;
      break;
    }
    sel.jobs += s.jobs;
    r.jobs += s.jobs;
    r.last_step = n;
    r.start_ns = std::min(r.start_ns, s.first);
    r.end_ns = std::max(r.end_ns, s.last);
  }
  if (r.jobs == 0) return;
  sel.runs.push_back(r);
  f.shown.push_back(tl.runs.size() > 1 ? fmt::format("steps {}-{} of run {}", r.first_step, r.last_step, run.index + 1)
                                       : fmt::format("steps {}-{}", r.first_step, r.last_step));
}

// Why the picture shows what it does, and the note that says so.
void explain(const Timeline& tl, const PictureRequest& req, const StepRange& range, const std::optional<StepPick>& pick,
             const Filling& f, int32_t any_min, int32_t any_max, PictureSelection& sel) {
  if (pick) {
    sel.why = PictureReason::kSlowest;
    std::string where = tl.runs.size() > 1 ? fmt::format(" of run {}", pick->run + 1) : std::string();
    sel.note = fmt::format(
        "drawing step {}{}, the slowest of {} steps ({:.3f} ms): all of them would be too dense "
        "to read; choose steps with --steps A:B",
        pick->step, where, sel.steps_total, static_cast<double>(pick->ns) / 1e6);
    if (!f.part.empty()) {
      sel.note += fmt::format("; of it, {}: a picture holds at most {} jobs", f.part, with_commas(req.max_jobs));
    }
  } else if (!f.part.empty()) {
    sel.why = PictureReason::kCapped;
    sel.note = fmt::format("showing {}: a picture holds at most {} jobs; the traces hold every job", f.part,
                           with_commas(req.max_jobs));
  } else if (f.capped) {
    sel.why = PictureReason::kCapped;
    sel.note = fmt::format("showing {} ({} of {} jobs): a picture holds at most {} jobs; choose steps with --steps A:B",
                           fmt::join(f.shown, ", "), with_commas(sel.jobs), with_commas(sel.jobs_in_range),
                           with_commas(req.max_jobs));
  } else if (sel.runs.empty() && tl.job_count() > 0) {
    sel.why = PictureReason::kNothing;
    sel.note = fmt::format("no job in steps {}:{} (the timeline has steps {} to {})",
                           range.first == INT32_MIN ? std::string() : std::to_string(range.first),
                           range.last == INT32_MAX ? std::string() : std::to_string(range.last), any_min, any_max);
  } else if (req.steps) {
    sel.why = PictureReason::kChosen;
  }
}

}  // namespace

PictureSelection select_picture(const Timeline& tl, const PictureRequest& req) {
  PictureSelection sel;
  for (const Run& run : tl.runs) {
    size_t steps = 0;
    for (const StepSpan& s : run.steps) steps += s.ranks > 0;
    sel.steps_total += steps;
    sel.steps_logged += run.steps_before_selection > 0 ? run.steps_before_selection : steps;
  }
  StepRange range = req.steps.value_or(StepRange{});
  std::optional<StepPick> pick;
  if (!req.steps) pick = dense_pick(tl, req, sel.steps_total);
  if (pick) range = {pick->step, pick->step};
  Filling f;
  int32_t any_min = INT32_MAX, any_max = INT32_MIN;
  for (const Run& run : tl.runs) {
    const bool skip_run = pick && run.index != pick->run;
    std::map<int32_t, StepInfo> steps = steps_in_range(tl, run, range, skip_run, &any_min, &any_max);
    for (const auto& [n, s] : steps) sel.jobs_in_range += s.jobs;
    if (!f.stop && !steps.empty()) fill_run(tl, run, steps, req, sel, f);
  }
  explain(tl, req, range, pick, f, any_min, any_max, sel);
  return sel;
}

}  // namespace ppt
