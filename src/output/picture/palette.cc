#include "output/picture/palette.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace ppt {
namespace {

struct FamilyStyle {
  Rgb fill;
  const char* chrome_name;
  const char* name;
};

constexpr FamilyStyle style_of(JobKind kind) {
  switch (kind) {
    case JobKind::kForward: return {{126, 200, 148}, "thread_state_running", "forward"};
    case JobKind::kBackward: return {{238, 142, 0}, "rail_idle", "backward"};
    case JobKind::kBackwardWeight: return {{244, 74, 63}, "rail_animation", "backward-w"};
    case JobKind::kOptimizer: return {{67, 135, 253}, "rail_response", "optimizer"};
    case JobKind::kLr: return {{13, 168, 97}, "rail_load", "lr"};
    case JobKind::kCommunication: return {{125, 125, 125}, "generic_work", "comm"};
    case JobKind::kNoPipeline: return {{199, 155, 125}, "thread_state_unknown", "default"};
    case JobKind::kOther: break;
  }
  return {{150, 150, 150}, "thread_state_unknown", "other"};
}

// The input-gradient half of a split backward (`backward_b`, ZB-H1 and
// ZB-VPP plans) is kind kBackward but has a colour of its own, so that it
// reads apart from a whole backward and from its weight half (`backward_w`).
constexpr FamilyStyle kBackwardB = {{182, 125, 143}, "thread_state_uninterruptible", "backward-b"};

bool is_backward_b(const TypeParts& p) {
  return job_kind(p) == JobKind::kBackward && !p.suffix.empty() && p.suffix[0] == 'b';
}

FamilyStyle style_of(const TypeParts& p) { return is_backward_b(p) ? kBackwardB : style_of(job_kind(p)); }

Rgb hsl(double h, double s, double l) {
  double c = (1 - std::fabs(2 * l - 1)) * s;
  double hp = std::fmod(h, 360.0) / 60.0;
  double x = c * (1 - std::fabs(std::fmod(hp, 2.0) - 1));
  double r = 0, g = 0, b = 0;
  if (hp < 1)
    r = c, g = x;
  else if (hp < 2)
    r = x, g = c;
  else if (hp < 3)
    g = c, b = x;
  else if (hp < 4)
    g = x, b = c;
  else if (hp < 5)
    r = x, b = c;
  else
    r = c, b = x;
  double m = l - c / 2;
  auto byte = [&](double v) { return static_cast<uint8_t>(std::lround(std::clamp(v + m, 0.0, 1.0) * 255)); };
  return {byte(r), byte(g), byte(b)};
}

uint32_t fnv1a(std::string_view s) {
  uint32_t h = 2166136261u;
  for (unsigned char c : s) h = (h ^ c) * 16777619u;
  return h;
}

// Towards black (f < 0) or white (f > 0) by |f|.
Rgb mix(Rgb c, double f) {
  auto one = [&](uint8_t v) {
    double t = f < 0 ? v * (1 + f) : v + (255 - v) * f;
    return static_cast<uint8_t>(std::lround(std::clamp(t, 0.0, 255.0)));
  };
  return {one(c.r), one(c.g), one(c.b)};
}

}  // namespace

std::string hex(Rgb c) { return fmt::format("#{:02x}{:02x}{:02x}", c.r, c.g, c.b); }

Rgb family_fill(JobKind kind) { return style_of(kind).fill; }

Rgb type_fill(std::string_view type) {
  TypeParts p = split_type(type);
  JobKind kind = job_kind(p);
  Rgb c = kind == JobKind::kOther ? hsl(fnv1a(p.base) % 360, 0.55, 0.55) : style_of(p).fill;
  if (p.suffix.find("reduce") != std::string::npos) c = mix(c, -0.18);
  // Chunk 1 darker, 2 lighter, 3 darkest, 4 lightest, then around again.
  static constexpr double kChunkShade[] = {0, -0.42, 0.45, -0.65, 0.7, -0.22, 0.25};
  if (p.chunk > 0) c = mix(c, kChunkShade[p.chunk % 7]);
  return c;
}

std::string_view label_color(Rgb c) {
  // Relative luminance, roughly (sRGB weights without the curve).
  double y = 0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b;
  return y > 140 ? "#1a1a1a" : "#ffffff";
}

const char* chrome_color_name(std::string_view type) { return style_of(split_type(type)).chrome_name; }

}  // namespace ppt
