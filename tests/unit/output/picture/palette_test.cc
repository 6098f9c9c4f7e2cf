// The one colour scheme: the pictures' fills are the legacy viewer's colours
// for the JSON traces' cname, families are far apart, chunks are shades one
// can tell apart.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <regex>

#include "output/picture/palette.h"

using namespace ppt;

namespace {

// catapult tracing/tracing/base/color_scheme.html, the reserved names used.
const std::map<std::string, Rgb> kCatapult = {
    {"thread_state_running", {126, 200, 148}},
    {"rail_idle", {238, 142, 0}},
    {"rail_animation", {244, 74, 63}},
    {"rail_response", {67, 135, 253}},
    {"rail_load", {13, 168, 97}},
    {"generic_work", {125, 125, 125}},
    {"thread_state_unknown", {199, 155, 125}},
    {"thread_state_uninterruptible", {182, 125, 143}},
};

double distance(Rgb a, Rgb b) {
  double dr = a.r - b.r, dg = a.g - b.g, db = a.b - b.b;
  return std::sqrt(dr * dr + dg * dg + db * db);
}

}  // namespace

TEST_CASE("a job's fill is the legacy viewer's colour for its JSON cname", "[palette]") {
  for (const char* t : {"forward", "backward", "backward_b", "backward_w", "optimizer", "lr", "recv_forward",
                        "send_backward", "default"}) {
    INFO(t);
    auto it = kCatapult.find(chrome_color_name(t));
    REQUIRE(it != kCatapult.end());
    CHECK(type_fill(t) == it->second);
  }
  CHECK(type_color("forward") == "#7ec894");
}

TEST_CASE("the JSON traces name the legacy viewer's colour by family", "[palette]") {
  CHECK(std::string(chrome_color_name("forward1")) == "thread_state_running");
  CHECK(std::string(chrome_color_name("backward")) == "rail_idle");
  CHECK(std::string(chrome_color_name("backward_b")) == "thread_state_uninterruptible");
  CHECK(std::string(chrome_color_name("backward_w")) == "rail_animation");
  CHECK(std::string(chrome_color_name("optimizer")) == "rail_response");
  CHECK(std::string(chrome_color_name("lr")) == "rail_load");
  CHECK(std::string(chrome_color_name("recv_forward")) == "generic_work");
  CHECK(std::string(chrome_color_name("default")) == "thread_state_unknown");
  CHECK(std::string(chrome_color_name("something_new")) == "thread_state_unknown");
}

TEST_CASE("families are far apart and chunks are shades one can tell apart", "[palette]") {
  const char* families[] = {"forward", "backward", "backward_b", "backward_w", "optimizer"};
  for (const char* a : families) {
    for (const char* b : families) {
      if (a != b) CHECK(distance(type_fill(a), type_fill(b)) > 80);
    }
  }
  CHECK(type_fill("forward0") == type_fill("forward"));
  CHECK(type_fill("forward(chunk0)") == type_fill("forward"));
  for (const char* base : {"forward", "backward", "backward_w"}) {
    std::string t = base;
    for (int a = 0; a < 4; ++a) {
      for (int b = a + 1; b < 4; ++b) {
        INFO(t << a << " vs " << t << b);
        CHECK(distance(type_fill(t + std::to_string(a)), type_fill(t + std::to_string(b))) > 60);
      }
    }
  }
  CHECK(type_fill("backward_w_reduce") != type_fill("backward_w"));
  CHECK(type_color("recv_forward") == type_color("send_backward"));
  CHECK(type_color("something_new") == type_color("something_new"));
  for (const char* t : {"forward", "backward_b1", "optimizer", "lr", "default", "forward(chunk0)", "x"}) {
    CHECK(std::regex_match(type_color(t), std::regex("#[0-9a-f]{6}")));
  }
}

TEST_CASE("backward and backward_b have colours of their own, in every chunk", "[palette]") {
  CHECK(type_fill("backward_b") != type_fill("backward"));
  CHECK(type_fill("backward_b1") != type_fill("backward1"));
  CHECK(type_fill("backward_b") != type_fill("backward_w"));
  CHECK(palette_css().find(".ppt-fam-backward-b { fill: #b67d8f;") != std::string::npos);
}

TEST_CASE("labels are dark on light fills and white on dark ones", "[palette]") {
  CHECK(label_color(Rgb{255, 255, 255}) == "#1a1a1a");
  CHECK(label_color(Rgb{0, 0, 0}) == "#ffffff");
  CHECK(label_color(type_fill("forward")) == "#1a1a1a");
  CHECK(palette_css().find(".ppt-fam-forward { fill: #7ec894;") != std::string::npos);
}
