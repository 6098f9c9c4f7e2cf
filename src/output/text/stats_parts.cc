#include "output/text/stats_parts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "output/text/advice_text.h"
#include "output/text/stats_memory.h"
#include "output/text/summary.h"
#include "util/text.h"

namespace ppt::stats_text {

namespace {

std::string order_label(const CriticalHop& h) {
  return h.micro_batch >= 0 ? fmt::format("{}:{}", h.type, h.micro_batch) : h.type;
}

const StepStats* slowest_step(const Stats& st) {
  const StepStats* worst = nullptr;
  for (const StepStats& s : st.steps) {
    if (!worst || s.time_ns() > worst->time_ns()) worst = &s;
  }
  return worst;
}

// "3", or "3 of run 2" when the logs hold several runs.
std::string step_label(const Stats& st, const StepStats& s) {
  return st.runs > 1 ? fmt::format("{} of run {}", s.step, s.run + 1) : std::to_string(s.step);
}

// The tables of build_stats_parts, filled in after its summary (below it).
void fill_steps(const Stats& st, const TextStyle& style, const StepStats* worst, StatsParts& p);
void fill_ranks(const Stats& st, const TextStyle& style, StatsParts& p);
void fill_stages_types_stragglers(const Stats& st, StatsParts& p);
void fill_critical_path(const Stats& st, const StepStats* worst, StatsParts& p);

// The summary's bubble: measured (with its bound on coarse input, over the
// complete rank-steps) against the schedule's ideal.
void add_bubble(const Stats& st, StatsParts& p) {
  const ScheduleInfo& s = st.schedule;
  std::string bubble = "measured " + percent(st.bubble_ratio);
  p.painted.push_back({p.summary.size(), bubble.size() - percent(st.bubble_ratio).size(),
                       percent(st.bubble_ratio).size(), bubble_tone(st.bubble_ratio, s.ideal_bubble_ratio)});
  // Coarse input times (dynamic-graph records: whole ms): the bound on the
  // measured figure (docs/stats.md).
  if (st.resolution_ns > 1) bubble += fmt::format(" ± {}", percent(st.bubble_ratio_error));
  if (st.complete_rank_steps < st.rank_steps) {
    bubble += fmt::format(" (over the {} complete rank-steps of {}: short ranks' incomplete steps left out)",
                          st.complete_rank_steps, st.rank_steps);
  }
  if (s.ideal_bubble_ratio >= 0) {
    double over = st.bubble_ratio - s.ideal_bubble_ratio;
    bubble +=
        fmt::format(", ideal {} ({}): {} {} the schedule's promise", percent(s.ideal_bubble_ratio), s.ideal_formula,
                    fmt::format("{:.1f} points", std::fabs(over) * 100), over >= 0 ? "above" : "below");
  } else {
    bubble += s.ideal_formula.empty() ? std::string(" (no ideal: the schedule is not recognised)")
                                      : fmt::format(" (no ideal: {})", s.ideal_formula);
  }
  p.summary.emplace_back("bubble", bubble);
}

// The summary's period and busy span.
void add_times(const Stats& st, const StepStats* worst, StatsParts& p) {
  const StepTimeSummary& t = st.step_time;
  const StepTimeSummary& per = st.step_period;
  if (per.count > 0) {
    p.summary.emplace_back(
        "period", fmt::format("mean {}, median {}, min {}, max {}: a step's start to the next one's, over {} step{} "
                              "(the last has no next)",
                              ms_unit(per.mean_ns), ms_unit(per.median_ns), ms_unit(per.min_ns), ms_unit(per.max_ns),
                              per.count, per.count == 1 ? "" : "s"));
  } else {
    p.summary.emplace_back("period", t.count > 0 ? "none: one step has no next start" : "no step");
  }
  if (t.count > 0) {
    p.summary.emplace_back("busy span",
                           fmt::format("mean {}, median {}, min {}, max {}{}: first job start to last job end",
                                       ms_unit(t.mean_ns), ms_unit(t.median_ns), ms_unit(t.min_ns), ms_unit(t.max_ns),
                                       worst ? fmt::format(" (step {})", step_label(st, *worst)) : ""));
  } else {
    p.summary.emplace_back("busy span", "no step");
  }
}

// The summary's throughput, and what whatif predicts would help.
void add_throughput_and_suggestions(const Stats& st, StatsParts& p) {
  const ScheduleInfo& s = st.schedule;
  const Throughput& tp = st.throughput;
  if (tp.steps_per_second > 0) {
    std::string text = fmt::format("{:.3f} steps/s", tp.steps_per_second);
    if (tp.micro_batches_per_second > 0) {
      text += fmt::format(", {:.2f} micro-batches/s (M={}{})", tp.micro_batches_per_second, s.micro_batches,
                          s.replicas > 1 ? fmt::format(" x {} replicas", s.replicas) : "");
      text += tp.samples_per_second > 0 ? fmt::format(", {:.2f} samples/s (--micro-batch-size {})",
                                                      tp.samples_per_second, tp.micro_batch_size)
                                        : std::string(", samples/s with --micro-batch-size N");
    }
    p.summary.emplace_back("throughput", text);
  }
  if (!st.suggestions.empty()) {
    std::string text;
    for (const WhatifSuggestion& w : st.suggestions) text += (text.empty() ? "" : "; ") + suggestion_text(w);
    p.summary.emplace_back("would help", text + " (predicted by pp-timeline whatif against the run replayed)");
  }
  for (const ModelWarning& w : st.suggestion_warnings) p.summary.emplace_back("caveat", warning_text(w));
}

}  // namespace

StatsParts build_stats_parts(const Stats& st, const TextStyle& style) {
  StatsParts p;
  size_t ranks = st.ranks.size();
  p.title = fmt::format("pp-timeline stats{}{} ({}, {}, {}, {})", st.source.empty() ? "" : ": ", st.source,
                        counted(ranks, "rank"), counted(st.runs, "run"), counted(st.steps.size(), "step"),
                        counted(st.jobs, "job"));
  const ScheduleInfo& s = st.schedule;
  const std::string sched = schedule_label(s, ScheduleLabel::kLong);
  if (!st.partial.empty()) {
    p.summary.emplace_back("loaded", st.partial + ": ranks, stages and P are the whole run's");
  }
  if (!st.selection.empty()) p.summary.emplace_back("selection", st.selection);
  for (const std::string& n : st.notes) p.summary.emplace_back("note", n);
  if (st.resolution_ns > 1) {
    p.summary.emplace_back("times", fmt::format("to {} (the input's resolution): a job's edges may each be off by "
                                                "that much; bubble figures carry the bound",
                                                format_resolution(st.resolution_ns)));
  }
  p.summary.emplace_back("schedule", sched);
  if (!s.evidence.empty()) p.summary.emplace_back("", s.evidence);
  add_bubble(st, p);
  const StepStats* worst = slowest_step(st);
  add_times(st, worst, p);
  add_throughput_and_suggestions(st, p);
  fill_memory(st, p.summary, p.memory, p.memory_note);

  fill_steps(st, style, worst, p);
  fill_ranks(st, style, p);
  fill_stages_types_stragglers(st, p);
  fill_critical_path(st, worst, p);
  return p;
}

namespace {

// The steps' table: the slowest first when they are more than the style's rows.
void fill_steps(const Stats& st, const TextStyle& style, const StepStats* worst, StatsParts& p) {
  const ScheduleInfo& s = st.schedule;
  bool runs = st.runs > 1;
  p.steps.header = runs ? std::vector<std::string>{"run", "step", "period ms", "span ms", "ranks", "bubble"}
                        : std::vector<std::string>{"step", "period ms", "span ms", "ranks", "bubble"};
  p.steps.left = 0;
  std::vector<const StepStats*> steps;
  for (const StepStats& ss : st.steps) steps.push_back(&ss);
  if (steps.size() > style.max_step_rows) {
    std::stable_sort(steps.begin(), steps.end(),
                     [](const StepStats* a, const StepStats* b) { return a->time_ns() > b->time_ns(); });
    steps.resize(style.max_step_rows);
    p.steps_note = fmt::format("the {} slowest of {} steps; --json lists all", style.max_step_rows, st.steps.size());
  }
  for (const StepStats* ss : steps) {
    std::vector<Cell> row;
    if (runs) row.push_back({std::to_string(ss->run + 1)});
    row.push_back({std::to_string(ss->step)});
    row.push_back({ss->period_ns >= 0 ? ms(ss->period_ns) : "-"});
    row.push_back({ms(ss->time_ns()), ss == worst && st.steps.size() > 1 ? Tone::kWarn : Tone::kPlain});
    row.push_back({ss->incomplete_ranks > 0 ? fmt::format("{} ({} incomplete)", ss->ranks, ss->incomplete_ranks)
                                            : std::to_string(ss->ranks),
                   ss->incomplete_ranks > 0 ? Tone::kWarn : Tone::kPlain});
    row.push_back({percent(ss->bubble_ratio), bubble_tone(ss->bubble_ratio, s.ideal_bubble_ratio)});
    p.steps.add(std::move(row));
  }
}

// The ranks' table, per step: the largest bubbles first when they are more
// than the style's rows.
void fill_ranks(const Stats& st, const TextStyle& style, StatsParts& p) {
  p.ranks.header = {"rank", "stage", "steps", "busy ms", "idle ms", "bubble", "warm-up ms", "gaps ms", "cool-down ms"};
  p.ranks.left = 0;
  std::vector<const RankStats*> rs;
  for (const RankStats& r : st.ranks) rs.push_back(&r);
  if (rs.size() > style.max_rank_rows) {
    std::stable_sort(rs.begin(), rs.end(),
                     [](const RankStats* a, const RankStats* b) { return a->bubble_ratio > b->bubble_ratio; });
    rs.resize(style.max_rank_rows);
    p.ranks_note = fmt::format("the {} ranks with the largest bubbles of {}; --json lists all", style.max_rank_rows,
                               st.ranks.size());
  }
  // A rank is coloured for what it costs the step: a straggler's busy time
  // (the others wait for it). Its bubble is not toned against the ideal: a
  // slow rank waits least and the healthy ones waiting for it most, so that
  // tone would praise the straggler and blame its victims.
  auto straggles = [&](int32_t rank) {
    return std::any_of(st.stragglers.begin(), st.stragglers.end(), [&](const Straggler& g) { return g.rank == rank; });
  };
  for (const RankStats* r : rs) {
    double n = std::max<uint32_t>(r->steps, 1);
    p.ranks.add({{std::to_string(r->rank)},
                 {std::to_string(r->stage)},
                 {r->short_rank() ? fmt::format("{} short", r->steps) : std::to_string(r->steps),
                  r->short_rank() ? Tone::kBad : Tone::kPlain},
                 {ms(r->busy_ns / n), straggles(r->rank) ? Tone::kBad : Tone::kPlain},
                 {ms(r->idle_ns / n)},
                 {percent(r->bubble_ratio)},
                 {ms(r->warmup_ns / n)},
                 {ms(r->gaps_ns / n)},
                 {ms(r->cooldown_ns / n)}});
  }
}

// The stages', the job types' and the stragglers' tables.
void fill_stages_types_stragglers(const Stats& st, StatsParts& p) {
  const ScheduleInfo& s = st.schedule;
  p.show_stages = s.replicas > 1 && st.stages.size() > 1;
  p.stages.header = {"stage", "ranks", "busy ms", "idle ms", "bubble"};
  p.stages.left = 0;
  for (const StageStats& sg : st.stages) {
    double n = sg.rank_steps;
    if (n == 0) {
      for (const RankStats& r : st.ranks) n += r.stage == sg.stage ? r.steps : 0;
    }
    n = std::max(n, 1.0);
    // As the ranks': a stage is coloured for its straggler's busy time.
    bool slow = std::any_of(st.stragglers.begin(), st.stragglers.end(),
                            [&](const Straggler& g) { return g.stage == sg.stage; });
    p.stages.add({{std::to_string(sg.stage)},
                  {std::to_string(sg.ranks)},
                  {ms(sg.busy_ns / n), slow ? Tone::kBad : Tone::kPlain},
                  {ms(sg.idle_ns / n)},
                  {percent(sg.bubble_ratio)}});
  }

  p.types.header = {"type", "count", "mean ms", "p50 ms", "p95 ms", "max ms"};
  for (const TypeDurations& td : st.types) {
    p.types.add(
        {{td.type}, {with_commas(td.count)}, {ms(td.mean_ns)}, {ms(td.p50_ns)}, {ms(td.p95_ns)}, {ms(td.max_ns)}});
  }

  p.stragglers.header = {"rank", "stage", "type", "median ms", "others ms", "margin", "jobs above"};
  p.stragglers.left = 3;
  for (const Straggler& sg : st.stragglers) {
    p.stragglers.add({{std::to_string(sg.rank)},
                      {std::to_string(sg.stage)},
                      {sg.type},
                      {ms(sg.median_ns)},
                      {ms(sg.others_median_ns)},
                      {signed_pct(sg.margin * 100), Tone::kBad},
                      {fmt::format("{:.0f}% of {}", sg.consistency * 100, sg.jobs)}});
  }
  p.stragglers_note =
      st.stragglers.empty()
          ? fmt::format(
                "none: no rank's jobs of a type are consistently more than {:.0f}% above the other ranks' median",
                st.straggler_margin * 100)
          : fmt::format("jobs of a type consistently more than {:.0f}% above the other ranks' median",
                        st.straggler_margin * 100);
}

// The critical path of the slowest step, one row per stretch on one rank,
// and where the paths of all steps spend their time.
void fill_critical_path(const Stats& st, const StepStats* worst, StatsParts& p) {
  if (worst && !worst->critical_path.hops.empty()) {
    const CriticalPath& cp = worst->critical_path;
    int64_t cross = 0;
    for (const CriticalHop& h : cp.hops) cross += h.from_other_rank ? h.wait_ns : 0;
    p.path_title = fmt::format(
        "critical path of step {} ({}, {}): {} hops cover {} of it: {} in jobs, {} waiting ({} for other ranks)",
        step_label(st, *worst), st.steps.size() > 1 ? "the slowest" : "the only step", ms_unit(worst->time_ns()),
        cp.hops.size(), percent(cp.share), ms_unit(cp.job_ns), ms_unit(cp.wait_ns), ms_unit(cross));
    p.path.header = {"rank", "from", "to", "jobs", "busy ms", "waited ms before"};
    p.path.left = 3;
    for (size_t i = 0; i < cp.hops.size();) {
      size_t k = i;
      int64_t busy = 0;
      while (k < cp.hops.size() && cp.hops[k].rank == cp.hops[i].rank)
        busy += cp.hops[k].end_ns - cp.hops[k].start_ns, ++k;
      int64_t waited = 0;
      for (size_t x = i; x < k; ++x) waited += cp.hops[x].wait_ns;
      p.path.add({{std::to_string(cp.hops[i].rank)},
                  {order_label(cp.hops[i])},
                  {order_label(cp.hops[k - 1])},
                  {std::to_string(k - i)},
                  {ms(busy)},
                  {ms(waited)}});
      i = k;
    }
    // A long path keeps its first and last stretches; --json has every hop.
    constexpr size_t kEnds = 20;
    size_t stretches = p.path.rows.size();
    if (stretches > 2 * kEnds + 1) {
      std::vector<Cell> gap(p.path.header.size());
      gap[0].text = "...";
      gap[1].text = fmt::format("({} more)", stretches - 2 * kEnds);
      p.path.rows.erase(p.path.rows.begin() + kEnds, p.path.rows.end() - kEnds);
      p.path.rows.insert(p.path.rows.begin() + kEnds, std::move(gap));
      p.path_title +=
          fmt::format("; the first and last {} of {} stretches on one rank (--json has every hop)", kEnds, stretches);
    }
    // Where the critical path spends its time over all steps, by rank.
    std::map<int32_t, int64_t> by_rank;
    int64_t total = 0;
    for (const StepStats& ss : st.steps) {
      for (const CriticalHop& h : ss.critical_path.hops) {
        by_rank[h.rank] += h.end_ns - h.start_ns;
        total += h.end_ns - h.start_ns;
      }
    }
    std::vector<std::pair<int64_t, int32_t>> share;
    for (auto [r, v] : by_rank) share.emplace_back(v, r);
    std::stable_sort(share.begin(), share.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::string note = "job time on the critical paths of all steps, by rank:";
    for (size_t i = 0; i < share.size() && i < 8; ++i) {
      note += fmt::format("{}rank {} {}", i ? ", " : " ", share[i].second,
                          percent(total > 0 ? static_cast<double>(share[i].first) / total : 0));
    }
    if (share.size() > 8) note += ", ...";
    p.path_note = note;
  }
}

}  // namespace

}  // namespace ppt::stats_text
