// The PNG image: the SVG picture rasterized, decoded back here with cairo to
// check its size and that the jobs' colours are where the jobs are.
#include <cairo.h>

#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <regex>

#include "app/picture.h"
#include "output/outputs.h"
#include "output/picture/palette.h"
#include "output/picture/png_writer.h"
#include "passes/timeline_builder.h"
#include "support/test_support.h"

using namespace ppt;
using ppt::testing::job_line;
using ppt::testing::parser;
using ppt::testing::TempDir;

namespace {

Timeline one_rank(const std::string& log) {
  std::vector<SourceFile> files{{"logs/workerlog.0", "", 0, 0, 0}};
  std::vector<FileScan> scans;
  scans.push_back(scan_buffer(log, 0, parser()));
  return build_from_scans(files, {""}, std::move(scans));
}

struct Image {
  int width = 0, height = 0;
  std::vector<uint32_t> pixels;  // 0xAARRGGBB
  Rgb at(int x, int y) const {
    uint32_t p = pixels[static_cast<size_t>(y) * width + x];
    return {static_cast<uint8_t>(p >> 16), static_cast<uint8_t>(p >> 8), static_cast<uint8_t>(p)};
  }
};

struct Reader {
  const std::string* data;
  size_t pos = 0;
};

cairo_status_t read_chunk(void* closure, unsigned char* out, unsigned int length) {
  Reader* r = static_cast<Reader*>(closure);
  if (r->pos + length > r->data->size()) return CAIRO_STATUS_READ_ERROR;
  std::memcpy(out, r->data->data() + r->pos, length);
  r->pos += length;
  return CAIRO_STATUS_SUCCESS;
}

Image decode(const std::string& png) {
  Reader r{&png};
  cairo_surface_t* s = cairo_image_surface_create_from_png_stream(read_chunk, &r);
  Image img;
  bool ok =
      cairo_surface_status(s) == CAIRO_STATUS_SUCCESS && (cairo_image_surface_get_format(s) == CAIRO_FORMAT_ARGB32 ||
                                                          cairo_image_surface_get_format(s) == CAIRO_FORMAT_RGB24);
  if (ok) {
    img.width = cairo_image_surface_get_width(s);
    img.height = cairo_image_surface_get_height(s);
    int stride = cairo_image_surface_get_stride(s);
    const unsigned char* data = cairo_image_surface_get_data(s);
    for (int y = 0; y < img.height; ++y) {
      const uint32_t* row = reinterpret_cast<const uint32_t*>(data + static_cast<size_t>(y) * stride);
      img.pixels.insert(img.pixels.end(), row, row + img.width);
    }
  }
  cairo_surface_destroy(s);
  return img;
}

// The columns of row `y` whose colour is `c`.
std::vector<int> columns_of(const Image& img, int y, Rgb c) {
  std::vector<int> xs;
  for (int x = 0; x < img.width; ++x) {
    if (img.at(x, y) == c) xs.push_back(x);
  }
  return xs;
}

double svg_number(const std::string& svg, const std::string& pattern) {
  std::smatch m;
  REQUIRE(std::regex_search(svg, m, std::regex(pattern)));
  return std::stod(m[1]);
}

}  // namespace

TEST_CASE("the PNG is the SVG picture, its size times the scale, jobs in their colours", "[png]") {
  // A forward 0-400 us, idle, a backward 600-1000 us: on a 1000 px axis,
  // forward on the first 40 %, backward on the last 40 %.
  Timeline tl = one_rank(job_line("forward", 0, 0, 400) + job_line("backward", 0, 600, 1000));
  SvgOptions opt;
  opt.plot_width = 1000;
  opt.png_scale = 1;
  PictureSelection sel = select_picture(tl, {});
  StringSink svg;
  write_svg(tl, sel, opt, svg);
  double w = svg_number(svg.data, "<svg [^>]*width=\"([0-9.]+)\"");
  double h = svg_number(svg.data, "<svg [^>]*height=\"([0-9.]+)\"");
  double plot_x = svg_number(svg.data, "data-plot-x=\"([0-9.]+)\"");

  StringSink png;
  PngResult res = write_png(tl, sel, opt, png);
  REQUIRE(res.error == "");
  CHECK(png.data.rfind("\x89PNG", 0) == 0);
  Image img = decode(png.data);
  CHECK(img.width == static_cast<int>(std::ceil(w)));
  CHECK(img.height == static_cast<int>(std::ceil(h)));
  CHECK(res.width == img.width);

  // Find the row: the first line with the forward's colour.
  Rgb fwd = type_fill("forward"), bwd = type_fill("backward");
  int row = -1;
  for (int y = 0; y < img.height && row < 0; ++y) {
    if (columns_of(img, y, fwd).size() > 300) row = y + 4;  // a few lines into the block
  }
  REQUIRE(row >= 0);
  std::vector<int> f = columns_of(img, row, fwd), b = columns_of(img, row, bwd);
  REQUIRE(f.size() > 350);
  REQUIRE(b.size() > 350);
  CHECK(std::abs(f.front() - plot_x) <= 2);
  CHECK(std::abs(f.back() - (plot_x + 400)) <= 3);
  CHECK(std::abs(b.front() - (plot_x + 600)) <= 3);
  CHECK(std::abs(b.back() - (plot_x + 1000)) <= 3);
  // The idle middle is the row background, not a job colour.
  CHECK(!(img.at(static_cast<int>(plot_x + 500), row) == fwd));
  CHECK(!(img.at(static_cast<int>(plot_x + 500), row) == bwd));
  // The micro-batch label is drawn in the forward block: some dark pixels.
  int dark = 0;
  for (int x = static_cast<int>(plot_x); x < plot_x + 400; ++x) {
    for (int y = row - 4; y < row + 12; ++y) {
      Rgb c = img.at(x, y);
      dark += c.r < 80 && c.g < 80 && c.b < 80;
    }
  }
  CHECK(dark > 10);

  // Scale 2: twice as many pixels each way.
  opt.png_scale = 2;
  StringSink png2;
  res = write_png(tl, sel, opt, png2);
  REQUIRE(res.error == "");
  Image img2 = decode(png2.data);
  CHECK(img2.width == static_cast<int>(std::ceil(w * 2)));
  CHECK(img2.height == static_cast<int>(std::ceil(h * 2)));
}

TEST_CASE("a .png output is chosen by extension and written whole", "[png]") {
  std::string error;
  CHECK(format_for_path("t.png", &error) == OutputFormat::kPng);
  TempDir t;
  Timeline tl = one_rank(job_line("forward", 0, 0, 400) + job_line("optimizer", 0, 400, 500));
  WriteOptions w;
  PictureSelection picture = select_picture(tl, {});
  w.picture = &picture;
  w.svg.png_scale = 1;
  std::string path = t.path() + "/t.png";
  size_t bytes = 0;
  CHECK(write_output(tl, {path, OutputFormat::kPng}, w, &bytes) == "");
  std::string data = testing::slurp(path);
  CHECK(data.size() == bytes);
  Image img = decode(data);
  CHECK(img.width > 1000);
  size_t forward = 0;
  for (int y = 0; y < img.height; ++y) forward += columns_of(img, y, type_fill("forward")).size();
  CHECK(forward > 1000);
}

TEST_CASE("a picture too big for one image is drawn at the largest scale that fits", "[png]") {
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"20000\" height=\"10\"/>";
  StringSink png;
  PngResult res = svg_to_png(svg, 4, png);
  CHECK(res.error == "");
  CHECK(res.width == kMaxPngSide);
  CHECK(res.note.find("PNG drawn at scale 1.60 (not 4.00)") == 0);
  StringSink bad;
  CHECK(!svg_to_png("not xml", 1, bad).error.empty());
}
