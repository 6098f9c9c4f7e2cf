// Writes the timeline as a static SVG picture, fit for a PR comment or a wiki
// page (png_writer.h rasterizes it), and the same picture for the HTML report
// to embed.
//
// What the picture shows: a title with the schedule, P, M (V, replicas), the
// steps drawn and the bubble, measured and ideal (the stats' own figures,
// SvgOptions::stats: the drawn step's when one is drawn, else the run's; the
// rank count without stats); a legend of the types
// drawn; then per run (one section each, stacked) a time axis (milliseconds
// or seconds since the timeline's origin, the same numbers as the JSON
// traces) and one row per rank (a rank with overlapping jobs gets one lane
// per overlap, inside its row). Rows are grouped by replica, in stage order,
// under a heading naming the replica and its machines (by machine when the
// stages are unknown), and labelled short: "s0 · GPU 0", "GPU 3". Each job is
// a rectangle in its type's colour (palette.h, the JSON traces' colours),
// parted from the next by a white hairline, labelled with the longest form
// of its label that fits (block_label.h: "F12", else "12"; "B0c1", "0c1",
// "0"; "opt"), and
// carrying a <title> tooltip (not when embedded: the report shows its own
// card). Idle time is the grey row background. A dashed line marks every
// step boundary; each drawn step's critical path
// (analysis/critical_path.h) is drawn over the rows as outlined hops and the
// links between them (dashed when the hop crosses ranks). A rank with
// memory samples (Track::memory) gets a strip under its lanes: allocated as a
// filled step area, reserved as a step line, on the run's scale (0 to its
// highest reserved sample, or SvgOptions::memory_top_bytes), a tick at its
// peak allocated and "peak 12.34 GiB" in the label column; a picture without
// samples has no strip and is what it was.
//
// Every element a script may look for carries data attributes:
//   <svg class="ppt-timeline" id="ppt" data-jobs="204" data-jobs-in-range="204" data-sync="diff">
//   <g class="run" data-run="0" data-first-step="0" data-last-step="9" data-t0-us="0"
//      data-span-us="1234.5" data-plot-x="96" data-plot-w="1200">   (the report zooms `g.zoom` inside)
//   <g class="group" data-replica="1">                              (a heading band)
//   <g class="rank" data-rank="3" data-machine="0" data-stage="1" data-replica="1" data-lanes="1"
//      data-label="GPU:3" data-src="logs/workerlog.3">             (stage/replica when known)
//   <rect class="job" data-name="forward mb2" data-job="2" data-type="forward" data-mb="2"
//         data-chunk="1" data-step="5" data-line="120" data-start-us="1234.5" data-dur-us="980"
//         data-lane="1" data-label="F2"/>   (chunk, lane when there is one; label when embedded:
//                                            its longest form, for the page to relabel on zoom)
//   <g class="job-labels">  the blocks' labels, over the rectangles of a row
//   <text class="step-label" data-step="5" data-x="12.5">, <line class="step-line" data-step="5">
//   <g class="critical-path">  <g class="critical-step" data-step="5" data-hops="9" data-job-us=".."
//      data-wait-us="..">  <rect class="cp-hop" data-rank="0" data-mb="3" data-wait-us="..">
//      <line class="cp-link">  (a page hides the overlay by hiding g.critical-path)
//   <g class="memory" data-peak-allocated-bytes=".." data-peak-reserved-bytes=".." data-peak-step="3"
//      data-scale-bytes=".." data-samples="18">  (the strip, in the row's plot layer)
//      <path class="memory-allocated">, <path class="memory-reserved">, <line class="memory-peak">
//   <text class="memory-label">  (the peak, in the label column)
//   <g class="legend-item" data-legend-type="forward">, <g class="legend-critical">
//   <g class="legend-memory-allocated">, <g class="legend-memory-reserved">  (with strips)
// Everything that comes from a log (types, paths, machine names) is escaped.
//
// What is drawn is the driver's decision (output/picture/picture_selection.h,
// app/picture.h): the writer draws the steps it names and shows its note.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/step_range.h"
#include "model/timeline.h"
#include "output/picture/picture_selection.h"
#include "output/picture/svg_options.h"
#include "output/picture/xml_escape.h"
#include "output/sink/byte_sink.h"

namespace ppt {

// Writes the picture of the steps `selection` names.
void write_svg(const Timeline& timeline, const PictureSelection& selection, const SvgOptions& options, ByteSink& out);

}  // namespace ppt
