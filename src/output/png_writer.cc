#include "output/png_writer.h"

#include <cairo.h>
#include <fmt/format.h>
#include <librsvg/rsvg.h>

#include <algorithm>
#include <cmath>
#include <memory>

namespace ppt {
namespace {

cairo_status_t to_sink(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<ByteSink*>(closure)->write(std::string_view(reinterpret_cast<const char*>(data), length));
  return CAIRO_STATUS_SUCCESS;
}

struct GObjectUnref {
  void operator()(RsvgHandle* h) const { g_object_unref(h); }
};
struct SurfaceDestroy {
  void operator()(cairo_surface_t* s) const { cairo_surface_destroy(s); }
};
struct CairoDestroy {
  void operator()(cairo_t* c) const { cairo_destroy(c); }
};

}  // namespace

PngResult svg_to_png(std::string_view svg, double scale, ByteSink& out) {
  PngResult result;
  GError* err = nullptr;
  std::unique_ptr<RsvgHandle, GObjectUnref> handle(
      rsvg_handle_new_from_data(reinterpret_cast<const guint8*>(svg.data()), svg.size(), &err));
  if (!handle) {
    result.error = fmt::format("the picture could not be read back for PNG: {}", err ? err->message : "unknown error");
    if (err) g_error_free(err);
    return result;
  }
  gdouble w = 0, h = 0;
  if (!rsvg_handle_get_intrinsic_size_in_pixels(handle.get(), &w, &h) || w <= 0 || h <= 0) {
    result.error = "the picture has no size in pixels";
    return result;
  }
  if (!(scale > 0)) scale = 1;
  double fit = std::min(kMaxPngSide / w, kMaxPngSide / h);
  if (scale > fit) {
    result.note = fmt::format("PNG drawn at scale {:.2f} (not {:.2f}): a side is at most {} pixels", fit, scale,
                              kMaxPngSide);
    scale = fit;
  }
  result.width = std::max(1, static_cast<int>(std::ceil(w * scale)));
  result.height = std::max(1, static_cast<int>(std::ceil(h * scale)));
  std::unique_ptr<cairo_surface_t, SurfaceDestroy> surface(
      cairo_image_surface_create(CAIRO_FORMAT_ARGB32, result.width, result.height));
  if (cairo_surface_status(surface.get()) != CAIRO_STATUS_SUCCESS) {
    result.error = fmt::format("no {}x{} image: {}", result.width, result.height,
                               cairo_status_to_string(cairo_surface_status(surface.get())));
    return result;
  }
  std::unique_ptr<cairo_t, CairoDestroy> cr(cairo_create(surface.get()));
  // White under everything: the picture has its own background, but a
  // viewer's dark theme must never show through a rounding gap at the edge.
  cairo_set_source_rgb(cr.get(), 1, 1, 1);
  cairo_paint(cr.get());
  cairo_scale(cr.get(), scale, scale);
  RsvgRectangle viewport{0, 0, w, h};
  if (!rsvg_handle_render_document(handle.get(), cr.get(), &viewport, &err)) {
    result.error = fmt::format("the picture could not be drawn: {}", err ? err->message : "unknown error");
    if (err) g_error_free(err);
    return result;
  }
  cairo_surface_flush(surface.get());
  cairo_status_t st = cairo_surface_write_to_png_stream(surface.get(), to_sink, &out);
  if (st != CAIRO_STATUS_SUCCESS) result.error = fmt::format("PNG not written: {}", cairo_status_to_string(st));
  return result;
}

PngResult write_png(const Timeline& timeline, const SvgOptions& options, ByteSink& out) {
  StringSink svg;
  SvgOptions o = options;
  o.embedded = false;
  SvgSelection sel = write_svg(timeline, o, svg);
  PngResult result = svg_to_png(svg.data, options.png_scale, out);
  result.selection = std::move(sel);
  return result;
}

}  // namespace ppt
