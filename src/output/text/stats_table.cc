#include "output/text/stats_table.h"

#include <fmt/format.h>

#include <algorithm>

#include "output/picture/xml_escape.h"
#include "util/escape.h"
#include "util/text.h"

namespace ppt::stats_text {

namespace {

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

}  // namespace

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

std::string md_escape(const std::string& s) { return markdown_text(s); }

std::string paint(const std::string& s, Tone tone, bool color) {
  if (!color || tone == Tone::kPlain) return s;
  return std::string(ansi(tone)) + s + "\x1b[0m";
}

std::string text_summary(const std::vector<std::pair<std::string, std::string>>& summary,
                         const std::vector<SummarySpan>& painted, bool color) {
  std::string out;
  for (size_t i = 0; i < summary.size(); ++i) {
    const std::string& text = summary[i].second;
    std::string line;
    size_t at = 0;
    for (const SummarySpan& s : painted) {
      if (s.line != i || s.from < at || s.from > text.size()) continue;
      const size_t length = std::min(s.length, text.size() - s.from);
      line += terminal_text(std::string_view(text).substr(at, s.from - at));
      line += paint(terminal_text(std::string_view(text).substr(s.from, length)), s.tone, color);
      at = s.from + length;
    }
    line += terminal_text(std::string_view(text).substr(at));
    out += fmt::format("  {:<11}{}\n", summary[i].first, line);
  }
  return out;
}

std::string bold(const std::string& s, bool color) {
  std::string t = terminal_text(s);
  return color ? "\x1b[1m" + t + "\x1b[0m" : t;
}

std::string html_summary(const std::vector<std::pair<std::string, std::string>>& summary) {
  std::string out = "<dl class=\"summary\">\n";
  for (const auto& [label, text] : summary) {
    out += "<dt>" + xml_escaped(label) + "</dt><dd>" + xml_escaped(text) + "</dd>\n";
  }
  return out + "</dl>\n";
}

std::string html_legend(const std::vector<std::pair<std::string, std::string>>& tones) {
  std::string out = "<p class=\"legend\">Colours:";
  for (const auto& [cls, text] : tones) {
    out += cls.empty() ? " <span>" : " <span class=\"" + cls + "\">";
    out += xml_escaped(cls.empty() ? "plain" : cls) + "</span> " + xml_escaped(text) + ";";
  }
  out.pop_back();
  return out + "</p>\n";
}

std::string html_section(const std::string& title, const std::string& note, const Table& t, bool fold,
                         const std::string& none) {
  std::string head = xml_escaped(title);
  if (!note.empty()) head += " <span class=\"note\">(" + xml_escaped(note) + ")</span>";
  if (t.rows.empty()) return "<h3>" + head + "</h3>\n<p>" + xml_escaped(none.empty() ? "none" : none) + "</p>\n";
  if (fold) return "<details><summary><h3>" + head + "</h3></summary>\n" + render_html(t) + "</details>\n";
  return "<h3>" + head + "</h3>\n" + render_html(t);
}

std::string ms(double ns) { return fmt::format("{:.3f}", ns / 1e6); }
std::string ms_unit(double ns) { return fmt::format("{:.3f} ms", ns / 1e6); }
std::string percent(double ratio) { return format_percent(ratio * 100.0); }
std::string signed_pct(double pct) { return format_percent(pct, PercentSign::kAlways); }
std::string points(double ratio_delta) { return format_percent(ratio_delta * 100.0, PercentSign::kAlways, 1, " pt"); }

Tone bubble_tone(double measured, double ideal) {
  if (ideal < 0) return Tone::kPlain;
  double over = measured - ideal;
  if (over <= 0.02) return Tone::kGood;
  if (over <= 0.10) return Tone::kWarn;
  return Tone::kBad;
}

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

}  // namespace ppt::stats_text
