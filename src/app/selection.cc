#include "app/selection.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "input/log_layout.h"
#include "passes/steps.h"
#include "util/text.h"

namespace ppt {
namespace {

std::string range_text(const StepRange& r) {
  std::string a = r.first == INT32_MIN ? "" : std::to_string(r.first);
  std::string b = r.last == INT32_MAX ? "" : std::to_string(r.last);
  return r.first == r.last ? a : a + ":" + b;
}

std::vector<int32_t> numbers_of(const Run& run) {
  std::vector<int32_t> n;
  for (const StepSpan& s : run.steps) n.push_back(s.number);
  return n;  // Run::steps is sorted by number
}

}  // namespace

std::optional<StepRange> parse_step_range(std::string_view text, std::string* error) {
  StepRange r;
  size_t colon = text.find(':');
  bool ok;
  if (colon == std::string_view::npos) {
    ok = parse_whole_number(text, &r.first);
    r.last = r.first;
  } else {
    std::string_view a = text.substr(0, colon), b = text.substr(colon + 1);
    ok = !(a.empty() && b.empty());
    if (ok && !a.empty()) ok = parse_whole_number(a, &r.first);
    if (ok && !b.empty()) ok = parse_whole_number(b, &r.last);
  }
  if (!ok) {
    *error = fmt::format("'{}': give steps as A:B (A to B included), A:, :B or A", text);
    return std::nullopt;
  }
  if (r.first > r.last) {
    *error = fmt::format("'{}': the first step is after the last", text);
    return std::nullopt;
  }
  return r;
}

std::string step_list(const std::vector<int32_t>& v) {
  // The one range formatter (log_layout.h), for ranks and steps alike.
  return v.empty() ? "none" : format_rank_ranges(v);
}

std::string Selection::options_text() const {
  std::string s;
  if (run > 0) s += fmt::format("--run {}", run);
  if (steps) s += fmt::format("{}--steps {}", s.empty() ? "" : " ", range_text(*steps));
  if (skip_warmup > 0) s += fmt::format("{}--skip-warmup {}", s.empty() ? "" : " ", skip_warmup);
  return s;
}

namespace {

// The step numbers kept in each run (empty: the run is left out).
using KeptSteps = std::vector<std::set<int32_t>>;

KeptSteps kept_steps(const Timeline& tl, const Selection& sel) {
  KeptSteps kept(tl.runs.size());
  for (size_t r = 0; r < tl.runs.size(); ++r) {
    if (sel.run > 0 && r + 1 != sel.run) continue;
    const std::vector<int32_t> numbers = numbers_of(tl.runs[r]);
    for (size_t k = sel.skip_warmup; k < numbers.size(); ++k) {
      if (!sel.steps || sel.steps->contains(numbers[k])) kept[r].insert(numbers[k]);
    }
  }
  return kept;
}

// Nothing kept: the usage error, naming the steps that exist (per run when
// there are several).
std::string nothing_left(const Timeline& tl, const Selection& sel) {
  const size_t runs = tl.runs.size();
  std::string have;
  for (size_t r = 0; r < runs; ++r) {
    if (sel.run > 0 && r + 1 != sel.run) continue;
    std::string list = step_list(numbers_of(tl.runs[r]));
    have += runs > 1 ? fmt::format("{}run {} has steps {}", have.empty() ? "" : ", ", r + 1, list)
                     : fmt::format("the run has steps {}", list);
  }
  return fmt::format("{}: no step is left; {}", sel.options_text(), have);
}

// What is kept, for the summary and the reports: Timeline::selection.
std::string kept_text(const Timeline& tl, const Selection& sel, const KeptSteps& kept) {
  const size_t runs = tl.runs.size();
  std::string text;
  for (size_t r = 0; r < runs; ++r) {
    if (kept[r].empty()) continue;
    std::vector<int32_t> k(kept[r].begin(), kept[r].end());
    std::vector<int32_t> all = numbers_of(tl.runs[r]);
    std::string part = runs > 1 ? fmt::format("run {} of {}", r + 1, runs) : std::string();
    if (k.size() != all.size()) {
      part += fmt::format("{}steps {} of {}", part.empty() ? "" : ", ", step_list(k), step_list(all));
    }
    if (!part.empty()) text += (text.empty() ? "" : "; ") + part;
  }
  return text.empty() ? sel.options_text() : fmt::format("{} ({})", text, sel.options_text());
}

// Run `run` with only the steps `kept` (renumbered `index`): its tracks
// moved out of `tl` into `tracks`, those left without a job dropped; the
// jobs left out are added to `*left_out`.
Run kept_run(Timeline& tl, const Run& run, uint32_t index, const std::set<int32_t>& kept, std::vector<Track>& tracks,
             uint64_t* left_out) {
  Run nr = run;
  nr.index = index;
  nr.tracks.clear();
  nr.steps.clear();
  if (nr.steps_before_selection == 0) {
    for (const StepSpan& s : run.steps) nr.steps_before_selection += s.ranks > 0;
  }
  for (const StepSpan& s : run.steps) {
    if (kept.count(s.number)) nr.steps.push_back(s);
  }
  nr.first_ns = INT64_MAX;
  nr.last_ns = INT64_MIN;
  for (uint32_t ti : run.tracks) {
    Track t = std::move(tl.tracks[ti]);
    const size_t before = t.jobs.size();
    std::erase_if(t.jobs, [&](const Job& j) { return !kept.count(j.step); });
    std::erase_if(t.memory, [&](const MemorySample& m) { return !kept.count(m.step); });
    *left_out += before - t.jobs.size();
    if (t.jobs.empty()) continue;
    uint32_t lanes = 1, overlapping = 0;
    for (const Job& j : t.jobs) {
      lanes = std::max(lanes, j.lane + 1);
      overlapping += j.lane > 0 ? 1 : 0;
      nr.first_ns = std::min(nr.first_ns, j.start_ns);
      nr.last_ns = std::max(nr.last_ns, j.end_ns);
    }
    t.lanes = lanes;
    t.overlapping_jobs = overlapping;
    t.run = nr.index;
    nr.tracks.push_back(static_cast<uint32_t>(tracks.size()));
    tracks.push_back(std::move(t));
  }
  return nr;
}

}  // namespace

std::string apply_selection(Timeline& tl, const Selection& sel) {
  if (sel.empty()) return "";
  const size_t runs = tl.runs.size();
  if (sel.run > runs) {
    return fmt::format("--run {}: the logs hold {} run{}{}", sel.run, runs, runs == 1 ? "" : "s",
                       runs > 1 ? fmt::format(" (1-{})", runs) : std::string());
  }
  const KeptSteps kept = kept_steps(tl, sel);
  if (std::all_of(kept.begin(), kept.end(), [](const std::set<int32_t>& k) { return k.empty(); })) {
    return nothing_left(tl, sel);
  }
  const std::string selection = kept_text(tl, sel, kept);
  // Rebuild the tracks and runs with only what is kept.
  std::vector<Track> tracks;
  std::vector<Run> out_runs;
  uint64_t left_out = 0;
  for (size_t r = 0; r < runs; ++r) {
    const Run& run = tl.runs[r];
    if (kept[r].empty()) {
      for (uint32_t ti : run.tracks) left_out += tl.tracks[ti].jobs.size();
      continue;
    }
    out_runs.push_back(kept_run(tl, run, static_cast<uint32_t>(out_runs.size()), kept[r], tracks, &left_out));
  }
  tl.tracks = std::move(tracks);
  tl.runs = std::move(out_runs);
  set_origin(tl);
  tl.unselected_jobs += left_out;
  tl.selection = selection;
  return "";
}

}  // namespace ppt
