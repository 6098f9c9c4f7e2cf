// Writes the timeline as a static SVG picture, fit for a PR comment or a wiki
// page, and the same picture for the HTML report to embed.
//
// What the picture shows, per run (one section each, stacked): a time axis
// (milliseconds or seconds since the timeline's origin, the same numbers as
// the JSON traces), one row per rank (a rank with overlapping jobs gets one
// lane per overlap, inside its row), each job a rectangle coloured by type, a
// legend of the types drawn, and a line at every step boundary. Idle time is
// the grey row background between rectangles.
//
// Every element a script may look for carries data attributes:
//   <g class="rank" data-rank="3" data-lanes="1" data-label="GPU:3" data-src="logs/workerlog.3">
//   <rect class="job" data-type="forward" data-mb="2" data-step="5" data-line="120"
//         data-start-us="1234.5" data-dur-us="980" .../>
//   <g class="run" data-run="0" data-first-step="0" data-last-step="9" ...>
// Everything that comes from a log (types, paths, machine names) is escaped.
//
// Size: a picture is meant to be looked at, so it holds at most
// SvgOptions::max_jobs job rectangles. When the chosen steps hold more, the
// first steps that fit are drawn and the picture says which steps are shown
// (SvgSelection::note says the same for the command line).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "output/byte_sink.h"
#include "model/timeline.h"

namespace ppt {

// Steps `first` to `last`, both included, as numbered in the timeline.
struct StepRange {
  int32_t first = INT32_MIN;
  int32_t last = INT32_MAX;
  bool contains(int32_t step) const { return step >= first && step <= last; }
};

// "A:B" (A to B included), "A:" (from A), ":B" (up to B) or "A" (only A).
// nullopt and a message when the text is not one of those.
std::optional<StepRange> parse_step_range(std::string_view text, std::string* error);

struct SvgOptions {
  std::optional<StepRange> steps;  // all steps when empty
  size_t max_jobs = 20000;         // job rectangles at most (see above); at least one step is always drawn
  double plot_width = 1200;        // pixels for the time axis
  // Inside an HTML page: no XML prolog, ids prefixed with `id_prefix` so two
  // pictures can share a page.
  bool embedded = false;
  std::string id_prefix = "ppt";
  // Nanoseconds across the plot width; 0 fits each run. Two pictures drawn
  // with the same value share one scale (the diff report does this).
  int64_t span_ns = 0;
  // Pictures of a page with the same `sync` zoom and pan together (data-sync).
  std::string sync;
  std::string title;               // first line of the picture; a default when empty
};

// What will be drawn: the steps of each run that fit the options.
struct SvgRunSelection {
  uint32_t run = 0;
  int32_t first_step = 0;   // drawn steps, included
  int32_t last_step = -1;
  int64_t start_ns = 0;     // time range of the drawn jobs
  int64_t end_ns = 0;
  size_t jobs = 0;
};
struct SvgSelection {
  std::vector<SvgRunSelection> runs;  // runs with at least one drawn job, in run order
  size_t jobs = 0;                    // drawn
  size_t jobs_in_range = 0;           // in the chosen steps (more than `jobs` when capped)
  bool capped = false;
  std::string note;                   // for the user when capped or nothing matched; "" otherwise
};

SvgSelection select_for_svg(const Timeline& timeline, const SvgOptions& options);

// Writes the picture; returns the selection it drew.
SvgSelection write_svg(const Timeline& timeline, const SvgOptions& options, ByteSink& out);

// Appends `s` escaped for XML and HTML text and attribute values (& < > " ');
// bytes that are not valid UTF-8, and control characters XML forbids, become
// U+FFFD.
void append_xml_escaped(std::string& out, std::string_view s);
std::string xml_escaped(std::string_view s);

}  // namespace ppt
