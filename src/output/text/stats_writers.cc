// The reports of `stats`: the terminal table, the Markdown and the report
// page's section, each written from one set of parts (stats_parts.h). The
// diff's are diff_writers.cc; the tables they share stats_table.h.
#include "output/text/stats_writers.h"

#include <fmt/format.h>

#include "output/picture/xml_escape.h"
#include "output/text/stats_parts.h"
#include "output/text/stats_table.h"
#include "util/escape.h"

namespace ppt {

using namespace stats_text;

std::string format_stats_text(const Stats& st, const TextStyle& style) {
  bool color = style.color;
  StatsParts p = build_stats_parts(st, style);
  std::string out = bold(p.title, color) + "\n\n";
  out += text_summary(p.summary, p.painted, color);
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
  StatsParts p = build_stats_parts(st, style);
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

std::string format_stats_html(const Stats& st) {
  TextStyle style;
  StatsParts p = build_stats_parts(st, style);
  std::string out = "<section class=\"stats\" id=\"stats\">\n<h2>" + xml_escaped(p.title) + "</h2>\n";
  out += html_summary(p.summary);
  out += html_legend({{"good", "the run's or a step's bubble within 2 points of the schedule's ideal"},
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

}  // namespace ppt
