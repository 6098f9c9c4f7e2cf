#include "output/report/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "output/report/report_assets.h"
#include "output/text/stats_writers.h"
#include "output/text/summary.h"
#include "output/trace/chrome_json_writer.h"
#include "util/text.h"

namespace ppt {

// The script and the style sheet are files of the source tree
// (src/output/report/), embedded with the script's hash by the build.
const std::string& report_script() {
  static const std::string script(report_script_text());
  return script;
}

std::string report_script_csp_source() { return fmt::format("'sha256-{}'", report_script_sha256()); }

std::string html_page_head(const std::string& title) {
  std::string out;
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out +=
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src "
      "data:; script-src ";
  out += report_script_csp_source();
  out += "; base-uri 'none'; form-action 'none'\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>";
  append_xml_escaped(out, title);
  out += "</title>\n<style>";
  out += report_style_text();
  out += "</style>\n</head>\n<body>\n";
  return out;
}

std::string html_page_tail() {
  static constexpr std::pair<const char*, const char*> kFields[] = {
      {"job", "job"},   {"rank", "rank"},   {"id", "job id"},    {"type", "type"}, {"mb", "micro-batch"},
      {"step", "step"}, {"start", "start"}, {"dur", "duration"}, {"src", "source"}};
  std::string out;
  out += "<div id=\"ppt-card\" class=\"card\" hidden><dl>";
  for (auto [name, label] : kFields) out += fmt::format("<dt>{}</dt><dd data-field=\"{}\"></dd>", label, name);
  out += "</dl></div>\n";
  // The pinned card (a click on a job): the same fields and the count of
  // the jobs of its micro-batch that the picture marks.
  out +=
      "<div id=\"ppt-pin\" class=\"card pinned\" hidden role=\"dialog\" aria-label=\"pinned job\">"
      "<button type=\"button\" data-pin-close title=\"unpin (Esc)\">&#215;</button><dl>";
  for (auto [name, label] : kFields) out += fmt::format("<dt>{}</dt><dd data-field=\"{}\"></dd>", label, name);
  out += "<dt>marked</dt><dd data-field=\"peers\"></dd></dl></div>\n<script>";
  out += report_script();
  out += "</script>\n</body>\n</html>\n";
  return out;
}

namespace {

std::string toolbar() {
  return "<div class=\"toolbar\"><button type=\"button\" data-zoom=\"in\" title=\"zoom in (+)\">+</button>"
         "<button type=\"button\" data-zoom=\"out\" title=\"zoom out (-)\">&#8722;</button>"
         "<button type=\"button\" data-zoom=\"reset\" title=\"show all (0)\">reset</button>"
         "<button type=\"button\" data-toggle=\"critical-path\" aria-pressed=\"true\" "
         "title=\"show or hide the critical path (c)\">critical path</button>"
         "<span class=\"hint\">Ctrl+wheel or double-click: zoom &#183; drag: pan &#183; hover a job for "
         "details, click to pin it and its micro-batch on every rank</span></div>\n";
}

// Warnings and errors found in the input (notes such as zero-time jobs are
// not problems), and everything the problems section lists.
struct ProblemCounts {
  uint64_t problems = 0;
  uint64_t notes = 0;
};
ProblemCounts count_problems(const Timeline& tl) {
  ProblemCounts c;
  for (size_t k = 0; k < kIssueKindCount; ++k) {
    IssueKind kind = static_cast<IssueKind>(k);
    uint64_t n = tl.diagnostics.count_of(kind);
    (issue_info(kind).severity == Severity::kInfo ? c.notes : c.problems) += n;
  }
  return c;
}

void append_problems(std::string& out, const Timeline& tl) {
  std::vector<DiagnosticLine> lines = format_diagnostics(tl);
  if (lines.empty()) return;
  out += fmt::format(
      "<section id=\"problems\"><h2>Input problems</h2><details><summary>{} line{} of "
      "messages</summary><pre>",
      lines.size(), lines.size() == 1 ? "" : "s");
  for (const DiagnosticLine& l : lines) {
    append_xml_escaped(out, diagnostic_text(l));
    out += "\n";
  }
  out += "</pre></details></section>\n";
}

std::string ms_text(double ns) { return fmt::format("{:.3f} ms", ns / 1e6); }
std::string percent_text(double ratio) { return fmt::format("{:.1f}%", ratio * 100.0); }

// One figure of the summary card: a name, the value, a line under it. All
// three are markup already escaped by the caller.
void append_figure(std::string& out, const char* id, const char* name, const std::string& value, const std::string& sub,
                   const char* tone = "") {
  out += fmt::format("<div class=\"figure{}{}\" data-figure=\"{}\"><div class=\"name\">{}</div><div class=\"value\">",
                     *tone ? " " : "", tone, id, name);
  out += value;
  out += "</div><div class=\"sub\">";
  out += sub;
  out += "</div></div>";
}

// The highest allocated memory sample of the timeline (Track::memory), and
// the highest reserved; nothing without samples.
void append_memory_figure(std::string& out, const Timeline& tl) {
  const Track* where = nullptr;
  const MemorySample* peak = nullptr;
  int64_t reserved = 0;
  for (const Track& t : tl.tracks) {
    for (const MemorySample& m : t.memory) {
      if (!peak || m.allocated_bytes > peak->allocated_bytes) peak = &m, where = &t;
      reserved = std::max(reserved, m.reserved_bytes);
    }
  }
  if (!peak) return;
  std::string value, sub;
  append_gib(value, peak->allocated_bytes);
  value += " GiB";
  sub = fmt::format("allocated, rank {} step {} &#183; reserved ", where->rank, peak->step);
  append_gib(sub, reserved);
  sub += " GiB";
  append_figure(out, "memory", "peak memory", value, sub);
}

// The summary card: what a reader wants before scrolling (docs/report.md).
void append_overview(std::string& out, const Timeline& tl, const Stats* st) {
  out += "<section id=\"overview\" class=\"overview\" aria-label=\"summary\">";
  if (st) {
    const ScheduleInfo& s = st->schedule;
    std::string variant = s.variant.empty() ? "" : xml_escaped(s.variant);
    append_figure(
        out, "schedule", "schedule", xml_escaped(schedule_name(s.kind)),
        variant.empty() ? (s.replicas > 1 ? fmt::format("{} data-parallel replicas", s.replicas) : "&#160;") : variant);
    bool pipeline = s.kind != ScheduleKind::kNoPipeline;
    append_figure(out, "pp", "P (stages)", pipeline ? std::to_string(s.pp_degree) : "&#8211;",
                  pipeline ? "from " + xml_escaped(s.pp_degree_source) : "no pipeline");
    append_figure(out, "mb", "M (micro-batches)", pipeline ? std::to_string(s.micro_batches) : "&#8211;",
                  s.chunks > 1 ? fmt::format("V = {} chunks", s.chunks) : "per step");
    std::string bubble = percent_text(st->bubble_ratio);
    if (st->resolution_ns > 1) bubble += " &#177; " + percent_text(st->bubble_ratio_error);
    std::string ideal = s.ideal_formula.empty() ? std::string("no ideal: schedule not recognised")
                                                : "no ideal: " + xml_escaped(s.ideal_formula);
    const char* tone = "";
    if (s.ideal_bubble_ratio >= 0) {
      double over = st->bubble_ratio - s.ideal_bubble_ratio;
      ideal = fmt::format("ideal {} ({}): {}", percent_text(s.ideal_bubble_ratio), xml_escaped(s.ideal_formula),
                          format_percent(over * 100, PercentSign::kAlways, 1, " points"));
      tone = over > 0.05 ? "bad" : over > 0.01 ? "warn" : "good";
    }
    append_figure(out, "bubble", "bubble, measured", bubble, ideal, tone);
    // The step period as stats measures it (start to the next step's start),
    // headlined as its mean: the figure diff's and batch's gate compare and
    // whatif predicts, so one run shows one number everywhere; the median
    // beside it, named.
    const StepTimeSummary& p = st->step_period;
    append_figure(out, "period", "step period (mean)", p.count > 0 ? ms_text(p.mean_ns) : "&#8211;",
                  p.count > 0 ? fmt::format("mean of {} period{}, start to next start; median {}", p.count,
                                            p.count == 1 ? "" : "s", ms_text(p.median_ns))
                              : "needs two steps");
    const StepTimeSummary& t = st->step_time;
    append_figure(out, "step-time", "step time (mean)", t.count > 0 ? ms_text(t.mean_ns) : "&#8211;",
                  t.count > 0 ? fmt::format("mean of {} step{}; median {}, max {}", t.count, t.count == 1 ? "" : "s",
                                            ms_text(t.median_ns), ms_text(static_cast<double>(t.max_ns)))
                              : "no step");
    const Straggler* worst = nullptr;
    for (const Straggler& g : st->stragglers) {
      if (!worst || g.margin > worst->margin) worst = &g;
    }
    if (worst) {
      std::string sub =
          fmt::format("{} {:+.0f}% over the others' median", xml_escaped(worst->type), worst->margin * 100);
      if (st->stragglers.size() > 1) sub += fmt::format(" &#183; {} more", st->stragglers.size() - 1);
      append_figure(out, "straggler", "straggler", fmt::format("<a href=\"#stats\">rank {}</a>", worst->rank), sub,
                    "warn");
    } else {
      append_figure(out, "straggler", "straggler", "none",
                    fmt::format("no rank {:.0f}% slower", st->straggler_margin * 100));
    }
  }
  append_memory_figure(out, tl);
  ProblemCounts pc = count_problems(tl);
  bool listed = !format_diagnostics(tl).empty();
  std::string value = std::to_string(pc.problems);
  if (listed) value = "<a href=\"#problems\">" + value + "</a>";
  append_figure(out, "problems", "input problems", value,
                pc.notes > 0 ? fmt::format("{} note{}", with_commas(pc.notes), pc.notes == 1 ? "" : "s")
                             : (pc.problems > 0 ? "warnings and errors" : "every line read"),
                pc.problems > 0 ? "bad" : "");
  out += "</section>\n";
}

}  // namespace

void write_html_report(const Timeline& tl, const ReportOptions& opt, ByteSink& out) {
  if (!opt.picture) throw std::logic_error("write_html_report: the driver's picture selection is missing");
  std::string title = opt.title.empty() ? std::string("pp-timeline report") : opt.title;
  std::string page = html_page_head(title);
  if (opt.refresh_seconds > 0) {
    page.insert(page.find("<head>\n") + 7,
                fmt::format("<meta http-equiv=\"refresh\" content=\"{}\">\n", opt.refresh_seconds));
  }
  page += "<header><h1>";
  append_xml_escaped(page, title);
  page += "</h1>\n";
  if (!opt.source.empty()) {
    page += "<p class=\"meta source\">";
    append_xml_escaped(page, opt.source);
    page += "</p>\n";
  }
  page += "<p class=\"meta summary\">";
  append_xml_escaped(page, format_summary(tl));
  page += "</p>\n";
  for (const std::string& n : opt.notes) {
    page += "<p class=\"meta notes\">";
    append_xml_escaped(page, n);
    page += "</p>\n";
  }
  page += "</header>\n";
  append_overview(page, tl, opt.stats);
  page += "<section id=\"timeline\"><h2>Timeline</h2>\n";
  page += toolbar();
  page += "<div class=\"svg-wrap\">\n";
  out.write(page);
  page.clear();

  SvgOptions svg = opt.svg;
  svg.embedded = true;
  write_svg(tl, *opt.picture, svg, out);

  page += "</div></section>\n";
  if (opt.stats && opt.stats->source.empty() && !opt.source.empty()) {
    // Stats computed without a name of their own: the page's heading names what was read.
    Stats named = *opt.stats;
    named.source = opt.source;
    page += format_stats_html(named);
  } else if (opt.stats) {
    page += format_stats_html(*opt.stats);
  }
  append_problems(page, tl);
  page += html_page_tail();
  out.write(page);
}

void write_diff_report(const DiffReportInput& in, const ReportOptions& opt, ByteSink& out) {
  std::string title = opt.title.empty() ? std::string("pp-timeline diff report") : opt.title;
  std::string page = html_page_head(title);
  page += "<header><h1>";
  append_xml_escaped(page, title);
  const std::string a_name = "A (" + in.a_role + ")", b_name = "B (" + in.b_role + ")";
  page += "</h1>\n<p class=\"meta source\">";
  append_xml_escaped(page, a_name + ": ");
  append_xml_escaped(page, in.a_source);
  page += "<br>";
  append_xml_escaped(page, b_name + ": ");
  append_xml_escaped(page, in.b_source);
  page += "</p>\n";
  for (const std::string& n : opt.notes) {
    page += "<p class=\"meta notes\">";
    append_xml_escaped(page, n);
    page += "</p>\n";
  }
  page += "<p class=\"meta\"><a href=\"#timeline\">";
  append_xml_escaped(page, fmt::format("the two timelines, {} above {}", in.a_role, in.b_role));
  page += "</a></p>\n</header>\n";
  if (in.diff) page += format_diff_html(*in.diff);
  page += in.steps_html;

  // One time scale for both pictures: the longer of the two drawn ranges.
  SvgOptions svg = opt.svg;
  svg.embedded = true;
  if ((in.a && !in.a_picture) || (in.b && !in.b_picture)) {
    throw std::logic_error("write_diff_report: a side's picture selection is missing");
  }
  int64_t span = 0;
  for (const PictureSelection* sel : {in.a_picture, in.b_picture}) {
    if (!sel) continue;
    for (const PictureRun& r : sel->runs) span = std::max(span, r.end_ns - r.start_ns);
  }
  svg.span_ns = std::max<int64_t>(span, 1000);
  // One memory scale too: the higher of the two runs' highest reserved.
  for (const Timeline* tl : {in.a, in.b}) {
    if (!tl) continue;
    for (const Track& t : tl->tracks) {
      for (const MemorySample& m : t.memory) svg.memory_top_bytes = std::max(svg.memory_top_bytes, m.reserved_bytes);
    }
  }
  page += "<section id=\"timeline\"><h2>";
  append_xml_escaped(page, fmt::format("Timelines, {} above {}, one time scale", in.a_role, in.b_role));
  page += "</h2>\n";
  page += toolbar();
  out.write(page);
  page.clear();
  int side = 0;
  for (const Timeline* tl : {in.a, in.b}) {
    const std::string& src = side == 0 ? in.a_source : in.b_source;
    page += fmt::format("<h3 class=\"side\" data-side=\"{}\">{}: ", side == 0 ? "a" : "b",
                        xml_escaped(side == 0 ? a_name : b_name));
    append_xml_escaped(page, src);
    page += "</h3>\n<div class=\"svg-wrap\" data-side=\"";
    page += side == 0 ? "a" : "b";
    page += "\">\n";
    out.write(page);
    page.clear();
    if (tl) {
      svg.id_prefix = side == 0 ? "ppt-a" : "ppt-b";
      svg.title = fmt::format("{}: {}", side == 0 ? a_name : b_name, src);
      svg.sync = "diff";
      write_svg(*tl, side == 0 ? *in.a_picture : *in.b_picture, svg, out);
    }
    page += "</div>\n";
    ++side;
  }
  page += "</section>\n";
  page += html_page_tail();
  out.write(page);
}

}  // namespace ppt
