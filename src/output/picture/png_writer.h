// Writes the timeline as a PNG image, for the places that take no SVG (pull
// request comments, chat): the SVG picture of svg_writer.h, with the same
// options and the same selection, rasterized by librsvg onto a cairo image surface. One drawing, two
// encodings: whatever the SVG shows, the PNG shows.
//
// Size: the SVG's width and height (SvgOptions::width or plot_width decide
// them) times SvgOptions::png_scale device pixels (2 by default, sharp on
// high-density screens and still sharp when a page scales it down). A side
// is at most kMaxPngSide pixels (cairo's limit): a bigger picture is drawn at
// the largest scale that fits, and `note` says so.
#pragma once

#include <string>
#include <string_view>

#include "output/picture/svg_writer.h"
#include "output/sink/byte_sink.h"

namespace ppt {

inline constexpr int kMaxPngSide = 32000;

struct PngResult {
  int width = 0;  // pixels of the image written
  int height = 0;
  std::string note;   // the scale was lowered to fit; "" otherwise
  std::string error;  // "" when written
};

// The picture of the steps `selection` names (the driver's decision).
PngResult write_png(const Timeline& timeline, const PictureSelection& selection, const SvgOptions& options,
                    ByteSink& out);

// Rasterizes `svg` (a document librsvg reads) at `scale`; the width and
// height written, or an error.
PngResult svg_to_png(std::string_view svg, double scale, ByteSink& out);

}  // namespace ppt
