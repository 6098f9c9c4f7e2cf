// The tables of the stats and diff reports (stats_writers.h) and their
// cells: one table rendered aligned for a terminal (ANSI colours), as Markdown
// or as HTML, and the formatting every cell and sentence of them shares
// (milliseconds, percentages, tones). Internal to output/text.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace ppt::stats_text {

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

// Aligned for a terminal, coloured by tone when `color`. Every cell and
// heading may hold input text (types, names): shown as terminal text
// (util/escape.h) before it is measured and coloured.
std::string render_text(const Table& t, bool color);
// A Markdown table.
std::string render_markdown(const Table& t);
// An HTML <table>, text escaped, tones as classes (good, warn, bad, dim).
std::string render_html(const Table& t);

// Markdown text, by the one rule (util/escape.h): nothing written through it
// is markup, whatever the input held.
std::string md_escape(const std::string& s);
// `s` in its tone's colour when `color`.
std::string paint(const std::string& s, Tone tone, bool color);
// Headings and notes hold input text too (paths, types): terminal text, bold
// when `color`.
std::string bold(const std::string& s, bool color);

// A span of a summary line painted on a terminal: the parts keep the text
// plain (the Markdown and the page escape it as any text), and the terminal
// writer escapes it, then colours the span, so input text in the line is
// escaped and the colour is not.
struct SummarySpan {
  size_t line = 0;  // index into the summary
  size_t from = 0;  // the span of that line's text
  size_t length = 0;
  Tone tone = Tone::kPlain;
};

// The summary as terminal lines: "  label      text", each text terminal
// text (util/escape.h), its span painted when `color`.
std::string text_summary(const std::vector<std::pair<std::string, std::string>>& summary,
                         const std::vector<SummarySpan>& painted, bool color);

// The report page's parts (html_report.h): the summary as a <dl>, what the
// colours mean, a titled table (folded, or "none" when empty).
std::string html_summary(const std::vector<std::pair<std::string, std::string>>& summary);
std::string html_legend(const std::vector<std::pair<std::string, std::string>>& tones);
std::string html_section(const std::string& title, const std::string& note, const Table& t, bool fold,
                         const std::string& none = "");

// Nanoseconds as milliseconds, three decimals: "12.345", "12.345 ms".
std::string ms(double ns);
std::string ms_unit(double ns);
// Percentages through the one helper (util/text.h): never "-0.0%".
std::string percent(double ratio);
std::string signed_pct(double pct);
std::string points(double ratio_delta);  // "+1.5 pt"

// How a bubble ratio compares with the schedule's promise.
Tone bubble_tone(double measured, double ideal);
// A positive change of a cost (time, idle) is bad.
Tone delta_tone(double pct, double noise);
// A rank's idle time, judged against its busy time (stats_table.cc says how).
Tone idle_tone(double idle_pct, double busy_pct, double noise);

}  // namespace ppt::stats_text
