// The SVG picture's options (svg_writer.h says what the picture shows), apart
// from its writer so that the modules drawing its parts (svg_parts.h) need not
// include the writer's entry point.
#pragma once

#include <cstdint>
#include <string>

namespace ppt {

struct Stats;

struct SvgOptions {
  double plot_width = 1200;  // pixels for the time axis
  double width = 0;          // the whole picture's width in pixels; when > 0 it decides the plot width
  double png_scale = 2;      // .png: device pixels per picture pixel
  bool labels = true;        // labels in the blocks wide enough for them (block_label.h)
  // The pipeline's schedule, P, M and bubbles for the title, stages and
  // replicas for the rows, the critical paths to draw; none when null.
  const Stats* stats = nullptr;
  // Inside an HTML page: no XML prolog, ids prefixed with `id_prefix` so two
  // pictures can share a page.
  bool embedded = false;
  std::string id_prefix = "ppt";
  // Nanoseconds across the plot width; 0 fits each run. Two pictures drawn
  // with the same value share one scale (the diff report does this).
  int64_t span_ns = 0;
  // Pictures of a page with the same `sync` zoom and pan together (data-sync).
  std::string sync;
  std::string title;  // first line of the picture; a default when empty
  // The memory strips' top, in bytes: 0 takes each run's highest reserved
  // sample. Two pictures drawn with the same value share one memory scale
  // (the diff report does this).
  int64_t memory_top_bytes = 0;
};

}  // namespace ppt
