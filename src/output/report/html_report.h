// One self-contained HTML page per run (or per comparison of two runs): the
// SVG timeline (svg_writer.h) with zoom, pan and a hover card per job, the
// stats tables, and the input problems.
//
// Self-contained means: no network, no external script, style or font. The
// page's Content-Security-Policy says so to the browser (default-src 'none';
// the one inline script is allowed by its SHA-256 hash, which the build
// computes from the script's file: report_assets.h), so even text that
// escaped our escaping could neither load nor run anything. Everything that
// comes from a log is escaped (append_xml_escaped) and the script only ever
// sets textContent, never markup.
//
// The script is small and needs nothing else: Ctrl+wheel (or a pinch, or
// double-click, or the +/- buttons and keys) zooms the time axis around the
// pointer, dragging pans, and the axis and step labels follow. When it has
// run, <body> carries data-ready="1" and data-job-rects="<count>".
#pragma once

#include <string>
#include <vector>

#include "analysis/diff.h"
#include "analysis/stats.h"
#include "model/timeline.h"
#include "output/picture/svg_writer.h"
#include "output/sink/byte_sink.h"

namespace ppt {

struct ReportOptions {
  SvgOptions svg;
  // The steps the picture shows: the driver's decision (app/picture.h), required.
  const PictureSelection* picture = nullptr;
  std::string title;               // <title> and heading; "pp-timeline report" when empty
  std::string source;              // what was read (a log directory), shown under the heading
  std::vector<std::string> notes;  // things the user should know (layout notes)
  const Stats* stats = nullptr;    // the stats tables (the driver's); none when null
  int refresh_seconds = 0;         // > 0: the page reloads itself (`watch --report`)
};

// Writes the report of one timeline.
void write_html_report(const Timeline& timeline, const ReportOptions& options, ByteSink& out);

// The comparison of two runs (`diff A B -o report.html`, and whatif's measured
// run against its prediction): the deltas, then A's
// and B's timelines one above the other on one time scale (each aligned at
// its first drawn step), zoomed and panned together. `options.svg` applies to
// both; `options.stats` and `options.picture` are not used: each side has its
// own picture selection (its driver's).
struct DiffReportInput {
  const Timeline* a = nullptr;
  const Timeline* b = nullptr;
  std::string a_source, b_source;
  const Diff* diff = nullptr;
  // The per-step comparison, as escaped markup (a <section>): placed between
  // the deltas and the pictures; nothing when empty.
  std::string steps_html = {};
  const PictureSelection* a_picture = nullptr;  // required with `a`
  const PictureSelection* b_picture = nullptr;  // required with `b`
  // What each side is, in the headings: "A (base)", "the two timelines, base
  // above new". whatif's page is "measured" above "predicted".
  std::string a_role = "base";
  std::string b_role = "new";
};
void write_diff_report(const DiffReportInput& input, const ReportOptions& options, ByteSink& out);

// Pieces shared with other pages (the diff report, the batch index).

// "<!DOCTYPE html>...<body>": charset, the CSP allowing only the page script,
// the shared style sheet and the escaped <title>.
std::string html_page_head(const std::string& title);
// The hover card, the script and "</body></html>".
std::string html_page_tail();

// The script the pages carry, and the CSP source for it ('sha256-...').
const std::string& report_script();
std::string report_script_csp_source();

}  // namespace ppt
