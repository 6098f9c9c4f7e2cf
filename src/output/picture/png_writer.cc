#include "output/picture/png_writer.h"

#include <cairo.h>
#include <fmt/format.h>
#include <librsvg/rsvg.h>

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <memory>

namespace ppt {
namespace {

// librsvg (and, through it, cairo, pango, glib and fontconfig) is loaded
// when the first .png is written, not linked: linked, its 50 shared
// libraries cost every run of every command about 9 MB of memory and some
// start-up time (scripts/bench.sh), for an output most runs never write.
// The headers still give each function's type.
struct RenderApi {
  decltype(&g_object_unref) object_unref = nullptr;
  decltype(&g_error_free) error_free = nullptr;
  decltype(&rsvg_handle_new_from_data) handle_new_from_data = nullptr;
  decltype(&rsvg_handle_get_intrinsic_size_in_pixels) intrinsic_size = nullptr;
  decltype(&rsvg_handle_render_document) render_document = nullptr;
  decltype(&cairo_image_surface_create) image_surface_create = nullptr;
  decltype(&cairo_surface_status) surface_status = nullptr;
  decltype(&cairo_status_to_string) status_to_string = nullptr;
  decltype(&cairo_create) create = nullptr;
  decltype(&cairo_set_source_rgb) set_source_rgb = nullptr;
  decltype(&cairo_paint) paint = nullptr;
  decltype(&cairo_scale) scale = nullptr;
  decltype(&cairo_surface_flush) surface_flush = nullptr;
  decltype(&cairo_surface_write_to_png_stream) write_to_png_stream = nullptr;
  decltype(&cairo_surface_destroy) surface_destroy = nullptr;
  decltype(&cairo_destroy) destroy = nullptr;
  std::string error;  // why it could not be loaded; "" when loaded
};

template <typename F>
bool bind(void* lib, const char* name, F& fn, std::string& error) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  if (!fn && error.empty()) error = fmt::format("{} not found in librsvg-2.so.2", name);
  return fn != nullptr;
}

const RenderApi& render_api() {
  static const RenderApi api = [] {
    RenderApi a;
    // Never closed: the library lives as long as the process.
    void* lib = dlopen("librsvg-2.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* why = dlerror();
      a.error = fmt::format("PNG output needs librsvg (Debian: librsvg2-2): {}", why ? why : "not found");
      return a;
    }
    // dlsym on the handle also finds the symbols of what it depends on
    // (glib, cairo).
    bind(lib, "g_object_unref", a.object_unref, a.error);
    bind(lib, "g_error_free", a.error_free, a.error);
    bind(lib, "rsvg_handle_new_from_data", a.handle_new_from_data, a.error);
    bind(lib, "rsvg_handle_get_intrinsic_size_in_pixels", a.intrinsic_size, a.error);
    bind(lib, "rsvg_handle_render_document", a.render_document, a.error);
    bind(lib, "cairo_image_surface_create", a.image_surface_create, a.error);
    bind(lib, "cairo_surface_status", a.surface_status, a.error);
    bind(lib, "cairo_status_to_string", a.status_to_string, a.error);
    bind(lib, "cairo_create", a.create, a.error);
    bind(lib, "cairo_set_source_rgb", a.set_source_rgb, a.error);
    bind(lib, "cairo_paint", a.paint, a.error);
    bind(lib, "cairo_scale", a.scale, a.error);
    bind(lib, "cairo_surface_flush", a.surface_flush, a.error);
    bind(lib, "cairo_surface_write_to_png_stream", a.write_to_png_stream, a.error);
    bind(lib, "cairo_surface_destroy", a.surface_destroy, a.error);
    bind(lib, "cairo_destroy", a.destroy, a.error);
    return a;
  }();
  return api;
}

cairo_status_t to_sink(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<ByteSink*>(closure)->write(std::string_view(reinterpret_cast<const char*>(data), length));
  return CAIRO_STATUS_SUCCESS;
}

struct GObjectUnref {
  void operator()(RsvgHandle* h) const { render_api().object_unref(h); }
};
struct SurfaceDestroy {
  void operator()(cairo_surface_t* s) const { render_api().surface_destroy(s); }
};
struct CairoDestroy {
  void operator()(cairo_t* c) const { render_api().destroy(c); }
};

}  // namespace

PngResult svg_to_png(std::string_view svg, double scale, ByteSink& out) {
  PngResult result;
  const RenderApi& api = render_api();
  if (!api.error.empty()) {
    result.error = api.error;
    return result;
  }
  GError* err = nullptr;
  std::unique_ptr<RsvgHandle, GObjectUnref> handle(
      api.handle_new_from_data(reinterpret_cast<const guint8*>(svg.data()), svg.size(), &err));
  if (!handle) {
    result.error = fmt::format("the picture could not be read back for PNG: {}", err ? err->message : "unknown error");
    if (err) api.error_free(err);
    return result;
  }
  gdouble w = 0, h = 0;
  if (!api.intrinsic_size(handle.get(), &w, &h) || w <= 0 || h <= 0) {
    result.error = "the picture has no size in pixels";
    return result;
  }
  if (!(scale > 0)) scale = 1;
  double fit = std::min(kMaxPngSide / w, kMaxPngSide / h);
  if (scale > fit) {
    result.note =
        fmt::format("PNG drawn at scale {:.2f} (not {:.2f}): a side is at most {} pixels", fit, scale, kMaxPngSide);
    scale = fit;
  }
  result.width = std::max(1, static_cast<int>(std::ceil(w * scale)));
  result.height = std::max(1, static_cast<int>(std::ceil(h * scale)));
  std::unique_ptr<cairo_surface_t, SurfaceDestroy> surface(
      api.image_surface_create(CAIRO_FORMAT_ARGB32, result.width, result.height));
  if (api.surface_status(surface.get()) != CAIRO_STATUS_SUCCESS) {
    result.error = fmt::format("no {}x{} image: {}", result.width, result.height,
                               api.status_to_string(api.surface_status(surface.get())));
    return result;
  }
  std::unique_ptr<cairo_t, CairoDestroy> cr(api.create(surface.get()));
  // White under everything: the picture has its own background, but a
  // viewer's dark theme must never show through a rounding gap at the edge.
  api.set_source_rgb(cr.get(), 1, 1, 1);
  api.paint(cr.get());
  api.scale(cr.get(), scale, scale);
  RsvgRectangle viewport{0, 0, w, h};
  if (!api.render_document(handle.get(), cr.get(), &viewport, &err)) {
    result.error = fmt::format("the picture could not be drawn: {}", err ? err->message : "unknown error");
    if (err) api.error_free(err);
    return result;
  }
  api.surface_flush(surface.get());
  cairo_status_t st = api.write_to_png_stream(surface.get(), to_sink, &out);
  if (st != CAIRO_STATUS_SUCCESS) result.error = fmt::format("PNG not written: {}", api.status_to_string(st));
  return result;
}

PngResult write_png(const Timeline& timeline, const PictureSelection& selection, const SvgOptions& options,
                    ByteSink& out) {
  StringSink svg;
  SvgOptions o = options;
  o.embedded = false;
  write_svg(timeline, selection, o, svg);
  return svg_to_png(svg.data, options.png_scale, out);
}

}  // namespace ppt
