// The reports of `diff` (stats_writers.h): its text, Markdown and HTML, from
// one set of parts: the summary's lines and the tables of steps, ranks, job
// types, schedule changes and new stragglers, B against A.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "output/picture/xml_escape.h"
#include "output/text/stats_table.h"
#include "output/text/stats_writers.h"
#include "output/text/summary.h"
#include "util/escape.h"
#include "util/text.h"

namespace ppt {

using namespace stats_text;

namespace {

struct DiffParts {
  std::string b;  // the judged run's label (Diff::b_label)
  std::string title;
  std::vector<std::pair<std::string, std::string>> summary;  // label, text (plain)
  std::vector<SummarySpan> painted;                          // what a terminal colours in it
  Table steps, ranks, types, changes, stragglers;
  std::string steps_note;
};

constexpr size_t kDiffStepRows = 50;

// The summary's first lines: the verdict and the metric it was judged on.
void add_verdict(const Diff& d, DiffParts& p) {
  Tone vt = d.verdict == Verdict::kSlower ? Tone::kBad : d.verdict == Verdict::kFaster ? Tone::kGood : Tone::kPlain;
  std::string verdict(verdict_name(d.verdict));
  p.painted.push_back({p.summary.size(), 0, verdict.size(), vt});
  p.summary.emplace_back("verdict", fmt::format("{}: {} (noise {:.1f}%; metric: {})", verdict, metric_change(d),
                                                d.noise_pct, gate_metric_name(d.metric)));
  if (!d.metric_note.empty()) p.summary.emplace_back("metric", d.metric_note);
}

// The summary's period, busy span and throughput, A against B.
void add_times(const Diff& d, DiffParts& p) {
  const std::string& B = p.b;
  const StepTimeDelta& t = d.step_time;
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
}

// The summary's bubble (with each side's bound on coarse input) and the gate.
void add_bubble_and_gate(const Diff& d, DiffParts& p) {
  const std::string& B = p.b;
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
    std::string gate =
        d.gate_failed
            ? fmt::format("FAILED: {} is {:.1f}% slower ({}), more than --fail-if-slower {:g}%", B, d.slower_pct,
                          metric_change(d), d.fail_if_slower_pct)
            : fmt::format("passed: {} is within --fail-if-slower {:g}%", metric_change(d), d.fail_if_slower_pct);
    if (d.gate_failed) p.painted.push_back({p.summary.size(), 0, gate.size(), Tone::kBad});
    p.summary.emplace_back("gate", gate);
  }
}

// Where: the ranks whose own work changed, with their job types.
std::string where_text(const Diff& d) {
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
  return where.empty() ? "no rank's busy time changed by more than the threshold" : where;
}

// The steps' table: the first kDiffStepRows.
void fill_steps(const Diff& d, DiffParts& p) {
  const std::string& B = p.b;
  const double noise = d.noise_pct;
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
}

// The ranks' table, per step.
void fill_ranks(const Diff& d, DiffParts& p) {
  const std::string& B = p.b;
  const double noise = d.noise_pct;
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
}

// The job types' table.
void fill_types(const Diff& d, DiffParts& p) {
  const std::string& B = p.b;
  const double noise = d.noise_pct;
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
}

// The schedule changes' and the new stragglers' tables.
void fill_changes_and_stragglers(const Diff& d, DiffParts& p) {
  const std::string& B = p.b;
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
}

// The judged run is called d.b_label ("B", or "C", "D"... for the later runs
// of a diff) in every sentence, heading and column.
DiffParts build_diff_parts(const Diff& d) {
  DiffParts p;
  const std::string& B = d.b_label;
  p.b = B;
  p.title =
      fmt::format("pp-timeline diff: A = {} ({}), {} = {} ({})", d.a_source, d.a_schedule, B, d.b_source, d.b_schedule);
  add_verdict(d, p);
  add_times(d, p);
  add_bubble_and_gate(d, p);
  p.summary.emplace_back("where", where_text(d));
  for (const std::string& n : d.notes) p.summary.emplace_back("note", n);

  fill_steps(d, p);
  fill_ranks(d, p);
  fill_types(d, p);
  fill_changes_and_stragglers(d, p);
  return p;
}

}  // namespace

std::string format_diff_text(const Diff& d, const TextStyle& style) {
  bool color = style.color;
  DiffParts p = build_diff_parts(d);
  std::string out = bold(p.title, color) + "\n\n";
  out += text_summary(p.summary, p.painted, color);
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
  DiffParts p = build_diff_parts(d);
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

std::string format_diff_html(const Diff& d) {
  DiffParts p = build_diff_parts(d);
  std::string out = "<section class=\"stats diff\" id=\"diff\">\n<h2>" + xml_escaped(p.title) + "</h2>\n";
  out += html_summary(p.summary);
  out += html_legend({{"good", "better for the run: less time, or a rank waiting less for the others"},
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
