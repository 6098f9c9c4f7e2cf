// The terminal and Markdown reports of `stats` and `diff`.
#include "output/text/stats_writers.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "output/picture/svg_writer.h"
#include "output/text/summary.h"
#include "util/escape.h"
#include "util/text.h"

namespace ppt {
namespace {

// ---------------------------------------------------------------- tables --

enum class Tone { kPlain, kGood, kWarn, kBad, kDim };

struct Cell {
  std::string text;
  Tone tone = Tone::kPlain;
};

// A table rendered either aligned (terminal) or as Markdown. The first
// `left` columns and the last `left_tail` are text (left-aligned), the
// others numbers (right-aligned).
struct Table {
  std::vector<std::string> header;
  size_t left = 1;
  size_t left_tail = 0;
  std::vector<std::vector<Cell>> rows;

  void add(std::vector<Cell> row) { rows.push_back(std::move(row)); }
  bool text_column(size_t c) const { return c < left || c + left_tail >= header.size(); }
};

const char* ansi(Tone t) {
  switch (t) {
    case Tone::kGood: return "\x1b[32m";
    case Tone::kWarn: return "\x1b[33m";
    case Tone::kBad: return "\x1b[31m";
    case Tone::kDim: return "\x1b[2m";
    case Tone::kPlain: break;
  }
  return "";
}

std::string pad(const std::string& s, size_t w, bool right) {
  size_t n = utf8_code_points(s);
  if (n >= w) return s;
  return right ? std::string(w - n, ' ') + s : s + std::string(w - n, ' ');
}

// Every cell and heading may hold input text (types, names): shown as
// terminal text (util/escape.h) before it is measured and coloured.
std::string render_text(const Table& raw, bool color) {
  Table t = raw;
  for (std::string& h : t.header) h = terminal_text(h);
  for (auto& row : t.rows) {
    for (Cell& cell : row) cell.text = terminal_text(cell.text);
  }
  std::vector<size_t> w(t.header.size(), 0);
  for (size_t c = 0; c < t.header.size(); ++c) w[c] = utf8_code_points(t.header[c]);
  for (const auto& row : t.rows) {
    for (size_t c = 0; c < row.size() && c < w.size(); ++c) w[c] = std::max(w[c], utf8_code_points(row[c].text));
  }
  std::string out;
  auto line = [&](const std::vector<Cell>& cells, bool header) {
    std::string l = " ";
    for (size_t c = 0; c < w.size(); ++c) {
      const Cell empty;
      const Cell& cell = c < cells.size() ? cells[c] : empty;
      std::string text = pad(cell.text, w[c], !t.text_column(c));
      if (c + 1 == w.size() && t.text_column(c)) text = cell.text;  // no trailing blanks
      l += c == 0 ? " " : "  ";
      if (color && header) {
        l += "\x1b[1m" + text + "\x1b[0m";
      } else if (color && cell.tone != Tone::kPlain) {
        l += std::string(ansi(cell.tone)) + text + "\x1b[0m";
      } else {
        l += text;
      }
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  std::vector<Cell> head;
  for (const std::string& h : t.header) head.push_back({h});
  line(head, true);
  for (const auto& row : t.rows) line(row, false);
  return out;
}

// Markdown text, by the one rule (util/escape.h): nothing written through it
// is markup, whatever the input held.
std::string md_escape(const std::string& s) { return markdown_text(s); }

std::string render_markdown(const Table& t) {
  std::string out = "|";
  for (const std::string& h : t.header) out += " " + md_escape(h) + " |";
  out += "\n|";
  for (size_t c = 0; c < t.header.size(); ++c) out += t.text_column(c) ? " --- |" : " ---: |";
  out += "\n";
  for (const auto& row : t.rows) {
    out += "|";
    for (size_t c = 0; c < t.header.size(); ++c) out += " " + (c < row.size() ? md_escape(row[c].text) : "") + " |";
    out += "\n";
  }
  return out;
}

// ------------------------------------------------------------ formatting --

std::string ms(double ns) { return fmt::format("{:.3f}", ns / 1e6); }
std::string ms_unit(double ns) { return fmt::format("{:.3f} ms", ns / 1e6); }
// Percentages through the one helper (util/text.h): never "-0.0%".
std::string percent(double ratio) { return format_percent(ratio * 100.0); }
std::string signed_pct(double pct) { return format_percent(pct, PercentSign::kAlways); }
std::string points(double ratio_delta) { return format_percent(ratio_delta * 100.0, PercentSign::kAlways, 1, " pt"); }

std::string paint(const std::string& s, Tone tone, bool color) {
  if (!color || tone == Tone::kPlain) return s;
  return std::string(ansi(tone)) + s + "\x1b[0m";
}

// Headings and notes hold input text too (paths, types): terminal text.
std::string bold(const std::string& s, bool color) {
  std::string t = terminal_text(s);
  return color ? "\x1b[1m" + t + "\x1b[0m" : t;
}

// How a bubble ratio compares with the schedule's promise.
Tone bubble_tone(double measured, double ideal) {
  if (ideal < 0) return Tone::kPlain;
  double over = measured - ideal;
  if (over <= 0.02) return Tone::kGood;
  if (over <= 0.10) return Tone::kWarn;
  return Tone::kBad;
}

// A positive change of a cost (time, idle) is bad.
Tone delta_tone(double pct, double noise) {
  if (pct > noise) return Tone::kBad;
  if (pct < -noise) return Tone::kGood;
  return Tone::kPlain;
}

// A rank's idle time (and bubble) per step is the step time less its busy
// time, so it moves against its busy time when the rank itself changed: a
// rank that got slower waits less, which is no good news. Such a change is
// left plain (the busy cell carries the colour); idle is coloured only when
// the busy time stayed within the noise or moved the same way, i.e. when the
// rank waits more (bad) or less (good) for the others (docs/stats.md).
Tone idle_tone(double idle_pct, double busy_pct, double noise) {
  Tone busy = delta_tone(busy_pct, noise);
  Tone idle = delta_tone(idle_pct, noise);
  if (busy != Tone::kPlain && idle != Tone::kPlain && busy != idle) return Tone::kPlain;
  return idle;
}

std::string order_label(const CriticalHop& h) {
  return h.micro_batch >= 0 ? fmt::format("{}:{}", h.type, h.micro_batch) : h.type;
}

// ------------------------------------------------------------ stats parts --

struct StatsParts {
  std::string title;
  std::vector<std::pair<std::string, std::string>> summary;  // label, text
  Table steps, ranks, stages, types, stragglers, path, memory;
  std::string steps_note, ranks_note, stragglers_note, path_title, path_note, memory_note;
  bool show_stages = false;
};

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
void fill_memory(const Stats& st, StatsParts& p);

StatsParts build_stats_parts(const Stats& st, const TextStyle& style, bool color) {
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
  std::string bubble =
      "measured " + paint(percent(st.bubble_ratio), bubble_tone(st.bubble_ratio, s.ideal_bubble_ratio), color);
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
  const StepTimeSummary& t = st.step_time;
  const StepTimeSummary& per = st.step_period;
  const StepStats* worst = slowest_step(st);
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
    for (const WhatifSuggestion& w : st.suggestions) text += (text.empty() ? "" : "; ") + w.text;
    p.summary.emplace_back("would help", text + " (predicted by pp-timeline whatif against the run replayed)");
  }
  for (const std::string& w : st.suggestion_warnings) p.summary.emplace_back("caveat", w);
  fill_memory(st, p);

  fill_steps(st, style, worst, p);
  fill_ranks(st, style, p);
  fill_stages_types_stragglers(st, p);
  fill_critical_path(st, worst, p);
  return p;
}

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

// ---------------------------------------------------------------- memory --

constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;

std::string gib(int64_t bytes) { return fmt::format("{:.2f}", static_cast<double>(bytes) / kBytesPerGiB); }

// "0.01 GiB", what one step of the samples is.
std::string memory_resolution(int64_t bytes) {
  double g = std::round(static_cast<double>(bytes) / kBytesPerGiB * 1e4) / 1e4;
  return g > 0 ? fmt::format("{:g} GiB", g) : counted(static_cast<uint64_t>(std::max<int64_t>(bytes, 1)), "byte");
}

// "rank 3, step 1, after forward, micro-batch 3, chunk 1"
std::string peak_where(const StageMemory& m) {
  std::string where = fmt::format("rank {}", m.peak_rank);
  if (m.peak_step >= 0) where += fmt::format(", step {}", m.peak_step);
  return m.peak_at.empty() ? where : where + ", " + m.peak_at;
}

// What the device leaves a stage: "fits (3.21 GiB free)", "does not fit (1.20 GiB over)".
Cell fit_cell(const StageMemory& m, int64_t device) {
  const int64_t margin = device - m.peak_allocated_bytes;
  if (margin >= 0) return {fmt::format("fits ({} GiB free)", gib(margin)), Tone::kGood};
  return {fmt::format("does not fit ({} GiB over)", gib(-margin)), Tone::kBad};
}

// The summary's line: the highest peak and, with a device size, whether
// every stage fits.
std::string memory_summary(const MemoryStats& mem) {
  const StageMemory* top = &mem.stages.front();
  for (const StageMemory& m : mem.stages) top = m.peak_allocated_bytes > top->peak_allocated_bytes ? &m : top;
  std::string text = fmt::format("peak {} GiB allocated on stage {} ({})", gib(top->peak_allocated_bytes), top->stage,
                                 peak_where(*top));
  if (mem.device_memory_bytes <= 0) return text;
  std::vector<const StageMemory*> over;
  for (const StageMemory& m : mem.stages) {
    if (m.peak_allocated_bytes > mem.device_memory_bytes) over.push_back(&m);
  }
  text += fmt::format("; on a device of {} GiB: ", gib(mem.device_memory_bytes));
  if (over.empty()) {
    return text + fmt::format("every stage fits, the least headroom {} GiB (stage {})",
                              gib(mem.device_memory_bytes - top->peak_allocated_bytes), top->stage);
  }
  std::string stages, excess;
  for (const StageMemory* m : over) {
    stages += fmt::format("{}{}", stages.empty() ? "" : ", ", m->stage);
    excess += fmt::format("{}{}", excess.empty() ? "" : ", ", gib(m->peak_allocated_bytes - mem.device_memory_bytes));
  }
  return text + fmt::format("{} {} {} not fit ({} GiB over)", over.size() == 1 ? "stage" : "stages", stages,
                            over.size() == 1 ? "does" : "do", excess);
}

// The stages' memory table, from the `[Pipeline details]` samples; nothing
// without them.
void fill_memory(const Stats& st, StatsParts& p) {
  const MemoryStats& mem = st.memory;
  if (!mem.present()) return;
  p.summary.emplace_back("memory", memory_summary(mem));
  bool chunks = std::any_of(mem.stages.begin(), mem.stages.end(),
                            [](const StageMemory& m) { return m.activation_bytes_per_chunk.size() > 1; });
  const bool device = mem.device_memory_bytes > 0;
  p.memory.header = {"stage", "peak GiB", "in flight", "static GiB", "activation GiB"};
  if (chunks) p.memory.header.push_back("per chunk GiB");
  p.memory.header.push_back("reserved GiB");
  if (device) p.memory.header.push_back(fmt::format("on {} GiB", gib(mem.device_memory_bytes)));
  p.memory.header.push_back("where");
  p.memory.left = 0;
  p.memory.left_tail = device ? 2 : 1;
  for (const StageMemory& m : mem.stages) {
    std::vector<Cell> row = {{std::to_string(m.stage)},
                             {gib(m.peak_allocated_bytes)},
                             {std::to_string(m.peak_in_flight)},
                             {gib(m.static_bytes)},
                             {gib(m.activation_bytes_per_micro_batch)}};
    if (chunks) {
      std::string per;
      for (int64_t a : m.activation_bytes_per_chunk) per += (per.empty() ? "" : " + ") + gib(a);
      row.push_back({per});
    }
    row.push_back({gib(m.peak_reserved_bytes)});
    if (device) row.push_back(fit_cell(m, mem.device_memory_bytes));
    row.push_back({peak_where(m)});
    p.memory.add(std::move(row));
  }
  p.memory_note = fmt::format(
      "to {}, from the [Pipeline details] lines; in flight: micro-batch chunks forwarded and not yet backwarded at the "
      "peak; static: before the step's first forward; activation: what one micro-batch holds",
      memory_resolution(mem.resolution_bytes));
}

}  // namespace

std::string format_stats_text(const Stats& st, const TextStyle& style) {
  bool color = style.color;
  StatsParts p = build_stats_parts(st, style, color);
  std::string out = bold(p.title, color) + "\n\n";
  for (const auto& [label, text] : p.summary) out += fmt::format("  {:<11}{}\n", label, terminal_text(text));
  auto section = [&](const std::string& title, const Table& table, const std::string& note) {
    out += "\n" + bold(title, color) + (note.empty() ? "" : "  (" + terminal_text(note) + ")") + "\n";
    out += render_text(table, color);
  };
  section("steps", p.steps, p.steps_note);
  section("ranks, per step", p.ranks, p.ranks_note);
  if (p.show_stages) section("stages, per step and rank", p.stages, "");
  if (!p.memory.rows.empty()) section("memory, per stage", p.memory, p.memory_note);
  section("job types", p.types, "");
  if (st.stragglers.empty()) {
    out += "\n" + bold("stragglers", color) + "  " + terminal_text(p.stragglers_note) + "\n";
  } else {
    section("stragglers", p.stragglers, p.stragglers_note);
  }
  if (!p.path_title.empty()) {
    out += "\n" + bold(p.path_title, color) + "\n";
    out += render_text(p.path, color);
    out += "  " + terminal_text(p.path_note) + "\n";
  }
  return out;
}

std::string format_stats_markdown(const Stats& st) {
  TextStyle style;
  StatsParts p = build_stats_parts(st, style, false);
  std::string out = "### " + md_escape(p.title) + "\n\n";
  for (const auto& [label, text] : p.summary) {
    out += label.empty() ? "  " + md_escape(text) + "\n" : "- **" + label + "**: " + md_escape(text) + "\n";
  }
  auto section = [&](const std::string& title, const Table& table, const std::string& note, bool fold) {
    std::string head = title + (note.empty() ? "" : " (" + note + ")");
    if (fold) {
      out += "\n<details><summary>" + md_escape(head) + "</summary>\n\n" + render_markdown(table) + "\n</details>\n";
    } else {
      out += "\n**" + md_escape(head) + "**\n\n" + render_markdown(table);
    }
  };
  section("Steps", p.steps, p.steps_note, p.steps.rows.size() > 10);
  section("Ranks, per step", p.ranks, p.ranks_note, p.ranks.rows.size() > 16);
  if (p.show_stages) section("Stages, per step and rank", p.stages, "", false);
  if (!p.memory.rows.empty()) section("Memory, per stage", p.memory, p.memory_note, p.memory.rows.size() > 16);
  section("Job types", p.types, "", false);
  if (st.stragglers.empty()) {
    out += "\n**Stragglers**: " + md_escape(p.stragglers_note) + "\n";
  } else {
    section("Stragglers", p.stragglers, p.stragglers_note, false);
  }
  if (!p.path_title.empty()) {
    section(p.path_title, p.path, "", true);
    out += "\n" + md_escape(p.path_note) + "\n";
  }
  return out;
}

// ------------------------------------------------------------------ diff --

namespace {

struct DiffParts {
  std::string b;  // the judged run's label (Diff::b_label)
  std::string title;
  std::vector<std::pair<std::string, std::string>> summary;
  Table steps, ranks, types, changes, stragglers;
  std::string steps_note;
};

constexpr size_t kDiffStepRows = 50;

// The judged run is called d.b_label ("B", or "C", "D"... for the later runs
// of a diff) in every sentence, heading and column.
DiffParts build_diff_parts(const Diff& d, bool color) {
  DiffParts p;
  const std::string& B = d.b_label;
  p.b = B;
  p.title =
      fmt::format("pp-timeline diff: A = {} ({}), {} = {} ({})", d.a_source, d.a_schedule, B, d.b_source, d.b_schedule);
  const StepTimeDelta& t = d.step_time;
  Tone vt = d.verdict == Verdict::kSlower ? Tone::kBad : d.verdict == Verdict::kFaster ? Tone::kGood : Tone::kPlain;
  std::string verdict = paint(std::string(verdict_name(d.verdict)), vt, color);
  p.summary.emplace_back("verdict", fmt::format("{}: {} (noise {:.1f}%; metric: {})", verdict, metric_change(d),
                                                d.noise_pct, gate_metric_name(d.metric)));
  if (!d.metric_note.empty()) p.summary.emplace_back("metric", d.metric_note);
  const StepTimeDelta& per = d.period;
  if (per.a_steps > 0 || per.b_steps > 0) {
    p.summary.emplace_back("period",
                           fmt::format("A mean {} ({} steps, median {}), {} mean {} ({} steps, median {}): {}",
                                       ms_unit(per.a_ns), per.a_steps, ms_unit(per.a_median_ns), B, ms_unit(per.b_ns),
                                       per.b_steps, ms_unit(per.b_median_ns), signed_pct(per.delta_pct)));
  }
  p.summary.emplace_back(
      "busy span", fmt::format("A mean {} ({} steps, median {}), {} mean {} ({} steps, median {}): {}", ms_unit(t.a_ns),
                               t.a_steps, ms_unit(t.a_median_ns), B, ms_unit(t.b_ns), t.b_steps, ms_unit(t.b_median_ns),
                               signed_pct(t.delta_pct)));
  const ThroughputDelta& tp = d.throughput;
  if (tp.a.steps_per_second > 0 || tp.b.steps_per_second > 0) {
    std::string text = fmt::format("A {:.3f}, {} {:.3f} steps/s ({})", tp.a.steps_per_second, B, tp.b.steps_per_second,
                                   signed_pct(tp.delta_pct));
    if (tp.a.samples_per_second > 0 && tp.b.samples_per_second > 0) {
      text += fmt::format("; A {:.2f}, {} {:.2f} samples/s", tp.a.samples_per_second, B, tp.b.samples_per_second);
    } else if (tp.a.micro_batches_per_second > 0 && tp.b.micro_batches_per_second > 0) {
      text += fmt::format("; A {:.2f}, {} {:.2f} micro-batches/s", tp.a.micro_batches_per_second, B,
                          tp.b.micro_batches_per_second);
    }
    p.summary.emplace_back("throughput", text);
  }
  if (d.bubble_a_error > 0 || d.bubble_b_error > 0) {
    // Millisecond input (dynamic-graph records): each side's bound (docs/stats.md).
    p.summary.emplace_back("bubble", fmt::format("A {} ± {}, {} {} ± {} ({}; a change within the bounds may be none)",
                                                 percent(d.bubble_a), percent(d.bubble_a_error), B, percent(d.bubble_b),
                                                 percent(d.bubble_b_error), points(d.bubble_b - d.bubble_a)));
  } else {
    p.summary.emplace_back("bubble", fmt::format("A {}, {} {} ({})", percent(d.bubble_a), B, percent(d.bubble_b),
                                                 points(d.bubble_b - d.bubble_a)));
  }
  if (d.fail_if_slower_pct >= 0) {
    p.summary.emplace_back(
        "gate", d.gate_failed ? paint(fmt::format("FAILED: {} is {:.1f}% slower ({}), more than --fail-if-slower {:g}%",
                                                  B, d.slower_pct, metric_change(d), d.fail_if_slower_pct),
                                      Tone::kBad, color)
                              : fmt::format("passed: {} is within --fail-if-slower {:g}%", metric_change(d),
                                            d.fail_if_slower_pct));
  }
  // Where: the ranks whose own work changed, with their job types.
  std::string where;
  for (size_t i = 0; i < d.changed_ranks.size() && i < 4; ++i) {
    for (const RankDelta& r : d.ranks) {
      if (r.rank != d.changed_ranks[i]) continue;
      std::string types;
      for (const TypeDelta& td : r.types) {
        if (td.count_a > 0 && td.count_b > 0 && std::fabs(td.delta_pct) >= 1.0) {
          types += fmt::format("{}{} {}", types.empty() ? "" : ", ", td.type, signed_pct(td.delta_pct));
        }
      }
      where += fmt::format("{}rank {} (stage {}) busy {} per step{}", where.empty() ? "" : "; ", r.rank, r.stage,
                           signed_pct(r.busy_delta_pct), types.empty() ? "" : " (" + types + ")");
    }
  }
  if (d.changed_ranks.size() > 4) where += fmt::format("; {} more", d.changed_ranks.size() - 4);
  p.summary.emplace_back("where", where.empty() ? "no rank's busy time changed by more than the threshold" : where);
  for (const std::string& n : d.notes) p.summary.emplace_back("note", n);

  double noise = d.noise_pct;
  p.steps.header = {"step", "period A ms", "period " + B + " ms", "period", "span A ms", "span " + B + " ms", "span"};
  p.steps.left = 0;
  for (const StepDelta& sd : d.steps) {
    if (p.steps.rows.size() == kDiffStepRows) {
      p.steps_note = fmt::format("the first {} of {} steps; --json lists all", kDiffStepRows, d.steps.size());
      break;
    }
    std::string step = !sd.in_a                 ? fmt::format("- / {}", sd.step_b)
                       : !sd.in_b               ? fmt::format("{} / -", sd.step_a)
                       : sd.step_a == sd.step_b ? std::to_string(sd.step_a)
                                                : fmt::format("{} / {}", sd.step_a, sd.step_b);
    bool both_periods = sd.in_a && sd.in_b && sd.period_a_ns >= 0 && sd.period_b_ns >= 0;
    p.steps.add({{step},
                 {sd.in_a && sd.period_a_ns >= 0 ? ms(sd.period_a_ns) : "-"},
                 {sd.in_b && sd.period_b_ns >= 0 ? ms(sd.period_b_ns) : "-"},
                 {both_periods ? signed_pct(sd.period_delta_pct) : "-", delta_tone(sd.period_delta_pct, noise)},
                 {sd.in_a ? ms(sd.span_a_ns) : "-"},
                 {sd.in_b ? ms(sd.span_b_ns) : "-"},
                 {sd.in_a && sd.in_b ? signed_pct(sd.span_delta_pct) : "-", delta_tone(sd.span_delta_pct, noise)}});
  }
  p.ranks.header = {
      "rank",     "stage",       "busy A ms", "busy " + B + " ms", "busy", "idle A ms", "idle " + B + " ms", "idle",
      "bubble A", "bubble " + B, "bubble"};
  p.ranks.left = 0;
  for (const RankDelta& r : d.ranks) {
    p.ranks.add({{std::to_string(r.rank)},
                 {std::to_string(r.stage)},
                 {r.in_a ? ms(r.busy_a_ns) : "-"},
                 {r.in_b ? ms(r.busy_b_ns) : "-"},
                 {signed_pct(r.busy_delta_pct), delta_tone(r.busy_delta_pct, noise)},
                 {r.in_a ? ms(r.idle_a_ns) : "-"},
                 {r.in_b ? ms(r.idle_b_ns) : "-"},
                 {signed_pct(r.idle_delta_pct), idle_tone(r.idle_delta_pct, r.busy_delta_pct, noise)},
                 {percent(r.bubble_a)},
                 {percent(r.bubble_b)},
                 {points(r.bubble_delta), idle_tone(r.bubble_delta * 100, r.busy_delta_pct, noise)}});
  }
  p.types.header = {"type", "count A",  "count " + B,      "mean A ms", "mean " + B + " ms",
                    "mean", "p95 A ms", "p95 " + B + " ms"};
  for (const TypeDelta& td : d.types) {
    p.types.add({{td.type},
                 {with_commas(td.count_a)},
                 {with_commas(td.count_b)},
                 {td.count_a ? ms(td.mean_a_ns) : "-"},
                 {td.count_b ? ms(td.mean_b_ns) : "-"},
                 {td.count_a && td.count_b ? signed_pct(td.delta_pct) : "-", delta_tone(td.delta_pct, noise)},
                 {td.count_a ? ms(td.p95_a_ns) : "-"},
                 {td.count_b ? ms(td.p95_b_ns) : "-"}});
  }
  p.changes.header = {"rank", "position", "A", B, "jobs A", "jobs " + B};
  p.changes.left = 0;
  for (const ScheduleChange& c : d.schedule_changes) {
    p.changes.add({{std::to_string(c.rank)},
                   {std::to_string(c.index + 1)},
                   {c.a.empty() ? "(end)" : c.a},
                   {c.b.empty() ? "(end)" : c.b},
                   {std::to_string(c.a_jobs)},
                   {std::to_string(c.b_jobs)}});
  }
  p.stragglers.header = {"rank", "stage", "type", "median ms", "others ms", "margin"};
  p.stragglers.left = 3;
  for (const Straggler& s : d.new_stragglers) {
    p.stragglers.add({{std::to_string(s.rank)},
                      {std::to_string(s.stage)},
                      {s.type},
                      {ms(s.median_ns)},
                      {ms(s.others_median_ns)},
                      {signed_pct(s.margin * 100), Tone::kBad}});
  }
  return p;
}

}  // namespace

std::string format_diff_text(const Diff& d, const TextStyle& style) {
  bool color = style.color;
  DiffParts p = build_diff_parts(d, color);
  std::string out = bold(p.title, color) + "\n\n";
  for (const auto& [label, text] : p.summary) out += fmt::format("  {:<11}{}\n", label, terminal_text(text));
  auto section = [&](const std::string& given_title, const Table& t, const std::string& none) {
    const std::string& title = given_title;
    if (t.rows.empty()) {
      out += "\n" + bold(title, color) + "  " + terminal_text(none) + "\n";
      return;
    }
    out += "\n" + bold(title, color) + "\n" + render_text(t, color);
  };
  section("steps (" + p.b + " against A" + (p.steps_note.empty() ? ")" : "; " + p.steps_note + ")"), p.steps, "none");
  section("ranks, per step (" + p.b + " against A)", p.ranks, "none");
  section("job types", p.types, "none");
  section("schedule changes (first position where " + p.b + "'s job order differs from A's)", p.changes,
          "none: every rank runs the same job order");
  section("new stragglers in " + p.b, p.stragglers, "none");
  return out;
}

std::string format_diff_markdown(const Diff& d) {
  DiffParts p = build_diff_parts(d, false);
  std::string out = "### " + md_escape(p.title) + "\n\n";
  for (const auto& [label, text] : p.summary) out += "- **" + label + "**: " + md_escape(text) + "\n";
  auto section = [&](const std::string& given_title, const Table& t, const std::string& none, bool fold) {
    const std::string& title = given_title;
    if (t.rows.empty()) {
      out += "\n**" + md_escape(title) + "**: " + md_escape(none) + "\n";
      return;
    }
    if (fold) {
      out += "\n<details><summary>" + md_escape(title) + "</summary>\n\n" + render_markdown(t) + "\n</details>\n";
    } else {
      out += "\n**" + md_escape(title) + "**\n\n" + render_markdown(t);
    }
  };
  section("Steps (" + p.b + " against A" + (p.steps_note.empty() ? ")" : "; " + p.steps_note + ")"), p.steps, "none",
          p.steps.rows.size() > 10);
  section("Ranks, per step (" + p.b + " against A)", p.ranks, "none", p.ranks.rows.size() > 16);
  section("Job types", p.types, "none", false);
  section("Schedule changes", p.changes, "none: every rank runs the same job order", p.changes.rows.size() > 16);
  section("New stragglers in " + p.b, p.stragglers, "none", false);
  return out;
}

// ------------------------------------------------------------------- html --
// The same parts as HTML fragments for the report page (html_report.h). All
// text is escaped; tones become classes (good, warn, bad, dim).

namespace {

const char* tone_class(Tone t) {
  switch (t) {
    case Tone::kGood: return "good";
    case Tone::kWarn: return "warn";
    case Tone::kBad: return "bad";
    case Tone::kDim: return "dim";
    case Tone::kPlain: break;
  }
  return "";
}

std::string render_html(const Table& t) {
  std::string out = "<table>\n<thead><tr>";
  for (size_t c = 0; c < t.header.size(); ++c) {
    out += t.text_column(c) ? "<th class=\"text\">" : "<th>";
    out += xml_escaped(t.header[c]) + "</th>";
  }
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& row : t.rows) {
    out += "<tr>";
    for (size_t c = 0; c < t.header.size(); ++c) {
      const Cell empty;
      const Cell& cell = c < row.size() ? row[c] : empty;
      std::string cls = t.text_column(c) ? "text" : "";
      if (cell.tone != Tone::kPlain) cls += std::string(cls.empty() ? "" : " ") + tone_class(cell.tone);
      out += cls.empty() ? "<td>" : "<td class=\"" + cls + "\">";
      out += xml_escaped(cell.text) + "</td>";
    }
    out += "</tr>\n";
  }
  out += "</tbody></table>\n";
  return out;
}

std::string html_summary(const std::vector<std::pair<std::string, std::string>>& summary) {
  std::string out = "<dl class=\"summary\">\n";
  for (const auto& [label, text] : summary) {
    out += "<dt>" + xml_escaped(label) + "</dt><dd>" + xml_escaped(text) + "</dd>\n";
  }
  return out + "</dl>\n";
}

// What the colours of the tables mean: one sample per tone.
std::string legend(const std::vector<std::pair<std::string, std::string>>& tones) {
  std::string out = "<p class=\"legend\">Colours:";
  for (const auto& [cls, text] : tones) {
    out += cls.empty() ? " <span>" : " <span class=\"" + cls + "\">";
    out += xml_escaped(cls.empty() ? "plain" : cls) + "</span> " + xml_escaped(text) + ";";
  }
  out.pop_back();
  return out + "</p>\n";
}

std::string html_section(const std::string& title, const std::string& note, const Table& t, bool fold,
                         const std::string& none = "") {
  std::string head = xml_escaped(title);
  if (!note.empty()) head += " <span class=\"note\">(" + xml_escaped(note) + ")</span>";
  if (t.rows.empty()) return "<h3>" + head + "</h3>\n<p>" + xml_escaped(none.empty() ? "none" : none) + "</p>\n";
  if (fold) return "<details><summary><h3>" + head + "</h3></summary>\n" + render_html(t) + "</details>\n";
  return "<h3>" + head + "</h3>\n" + render_html(t);
}

}  // namespace

std::string format_stats_html(const Stats& st) {
  TextStyle style;
  StatsParts p = build_stats_parts(st, style, false);
  std::string out = "<section class=\"stats\" id=\"stats\">\n<h2>" + xml_escaped(p.title) + "</h2>\n";
  out += html_summary(p.summary);
  out += legend({{"good", "the run's or a step's bubble within 2 points of the schedule's ideal"},
                 {"warn", "2 to 10 points above it; the slowest step"},
                 {"bad",
                  "more than 10 points above it; a straggler's busy time and margin, what the other ranks "
                  "wait for (a rank's own bubble is not coloured: the ranks waiting for a straggler have "
                  "the highest)"}});
  out += html_section("Steps", p.steps_note, p.steps, p.steps.rows.size() > 20);
  out += html_section("Ranks, per step", p.ranks_note, p.ranks, p.ranks.rows.size() > 32);
  if (p.show_stages) out += html_section("Stages, per step and rank", "", p.stages, false);
  if (!p.memory.rows.empty()) {
    out += html_section("Memory, per stage", p.memory_note, p.memory, p.memory.rows.size() > 32);
  }
  out += html_section("Job types", "", p.types, false);
  out += html_section("Stragglers", st.stragglers.empty() ? "" : p.stragglers_note, p.stragglers, false,
                      p.stragglers_note);
  if (!p.path_title.empty()) {
    out += html_section(p.path_title, "", p.path, true);
    out += "<p>" + xml_escaped(p.path_note) + "</p>\n";
  }
  return out + "</section>\n";
}

std::string format_diff_html(const Diff& d) {
  DiffParts p = build_diff_parts(d, false);
  std::string out = "<section class=\"stats diff\" id=\"diff\">\n<h2>" + xml_escaped(p.title) + "</h2>\n";
  out += html_summary(p.summary);
  out += legend({{"good", "better for the run: less time, or a rank waiting less for the others"},
                 {"bad", "worse for the run: more time, or a rank waiting more for the others"},
                 {"", "within the noise, or a rank's idle time moving against its own busy time"}});
  out += html_section("Steps (" + p.b + " against A)", p.steps_note, p.steps, p.steps.rows.size() > 20);
  out += html_section("Ranks, per step (" + p.b + " against A)", "", p.ranks, p.ranks.rows.size() > 32);
  out += html_section("Job types", "", p.types, false);
  out += html_section("Schedule changes", "", p.changes, p.changes.rows.size() > 32,
                      "none: every rank runs the same job order");
  out += html_section("New stragglers in " + p.b, "", p.stragglers, false);
  return out + "</section>\n";
}

}  // namespace ppt
