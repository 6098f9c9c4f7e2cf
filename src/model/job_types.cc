#include "model/job_types.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace ppt {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Reads trailing digits of `s` as a chunk and removes them.
int32_t take_trailing_number(std::string& s) {
  size_t i = s.size();
  while (i > 0 && is_digit(s[i - 1])) --i;
  if (i == s.size() || s.size() - i > 6) return -1;
  int32_t v = std::stoi(s.substr(i));
  s.resize(i);
  return v;
}

// How each kind is drawn: a hue, saturation and lightness for SVG/HTML, and
// catapult's reserved colour name for the JSON traces.
struct KindStyle {
  double hue, saturation, lightness;
  const char* chrome_name;
};

constexpr KindStyle style_of(JobKind kind) {
  switch (kind) {
    case JobKind::kForward: return {212, 0.40, 0.48, "thread_state_running"};
    case JobKind::kBackward: return {30, 0.88, 0.56, "rail_idle"};
    case JobKind::kBackwardWeight: return {295, 0.30, 0.58, "rail_animation"};
    case JobKind::kOptimizer: return {110, 0.38, 0.45, "rail_response"};
    case JobKind::kLr: return {175, 0.32, 0.55, "rail_load"};
    case JobKind::kCommunication: return {0, 0, 0.62, "thread_state_iowait"};
    case JobKind::kNoPipeline: return {48, 0.80, 0.55, "thread_state_unknown"};
    case JobKind::kOther: break;
  }
  return {0, 0.55, 0.50, "thread_state_unknown"};  // hue from the base's hash
}

std::string hsl_hex(double h, double s, double l) {
  l = std::clamp(l, 0.15, 0.85);
  double c = (1 - std::fabs(2 * l - 1)) * s;
  double hp = std::fmod(h, 360.0) / 60.0;
  double x = c * (1 - std::fabs(std::fmod(hp, 2.0) - 1));
  double r = 0, g = 0, b = 0;
  if (hp < 1) r = c, g = x;
  else if (hp < 2) r = x, g = c;
  else if (hp < 3) g = c, b = x;
  else if (hp < 4) g = x, b = c;
  else if (hp < 5) r = x, b = c;
  else r = c, b = x;
  double m = l - c / 2;
  auto byte = [&](double v) { return static_cast<int>(std::lround(std::clamp(v + m, 0.0, 1.0) * 255)); };
  return fmt::format("#{:02x}{:02x}{:02x}", byte(r), byte(g), byte(b));
}

uint32_t fnv1a(std::string_view s) {
  uint32_t h = 2166136261u;
  for (unsigned char c : s) h = (h ^ c) * 16777619u;
  return h;
}

}  // namespace

bool is_first_chunk_forward(std::string_view type) { return type == "forward" || type == "forward0"; }

bool is_job_piece(std::string_view type) { return type.find('(') != std::string_view::npos; }

TypeParts split_type(std::string_view type) {
  TypeParts parts;
  std::string name(type);
  // `forward(chunk0)`, `backward(1)`
  size_t open = name.find('(');
  if (open != std::string::npos && !name.empty() && name.back() == ')') {
    std::string inside = name.substr(open + 1, name.size() - open - 2);
    name.resize(open);
    int32_t c = take_trailing_number(inside);
    if (c >= 0) parts.chunk = c;
  }
  for (std::string_view base : {std::string_view("forward"), std::string_view("backward")}) {
    if (name.compare(0, base.size(), base) != 0) continue;
    std::string rest = name.substr(base.size());
    if (!rest.empty() && !is_digit(rest[0]) && rest[0] != '_') break;  // `forwarder`
    parts.base = std::string(base);
    // rest: "", "1", "_b", "_w1", "_w1_reduce", "1_reduce"
    std::string suffix;
    std::string tail;
    size_t i = 0;
    if (i < rest.size() && rest[i] == '_') {
      ++i;
      while (i < rest.size() && !is_digit(rest[i]) && rest[i] != '_') suffix.push_back(rest[i++]);
    }
    std::string digits;
    while (i < rest.size() && is_digit(rest[i])) digits.push_back(rest[i++]);
    tail = rest.substr(i);  // "_reduce"
    if (!digits.empty() && digits.size() <= 6 && parts.chunk < 0) parts.chunk = std::stoi(digits);
    parts.suffix = suffix + tail;
    if (!parts.suffix.empty() && parts.suffix[0] == '_') parts.suffix.erase(0, 1);
    return parts;
  }
  int32_t c = take_trailing_number(name);
  if (c >= 0 && !name.empty() && parts.chunk < 0) parts.chunk = c;
  else if (c >= 0 && name.empty()) name = std::string(type);
  parts.base = name.empty() ? std::string(type) : name;
  return parts;
}

JobKind job_kind(const TypeParts& p) {
  if (p.base == "forward") return JobKind::kForward;
  if (p.base == "backward") return p.suffix.rfind('w', 0) == 0 ? JobKind::kBackwardWeight : JobKind::kBackward;
  if (p.base == "optimizer") return JobKind::kOptimizer;
  if (p.base == "lr") return JobKind::kLr;
  if (p.base.find("send") != std::string::npos || p.base.find("recv") != std::string::npos) {
    return JobKind::kCommunication;
  }
  if (p.base == "default") return JobKind::kNoPipeline;
  return JobKind::kOther;
}

int legend_rank(const TypeParts& parts) {
  switch (job_kind(parts)) {
    case JobKind::kLr: return 0;
    case JobKind::kForward: return 1;
    case JobKind::kBackward:
    case JobKind::kBackwardWeight: return 2;
    case JobKind::kOptimizer: return 3;
    default: return 4;
  }
}

std::string type_color(std::string_view type) {
  TypeParts p = split_type(type);
  JobKind kind = job_kind(p);
  KindStyle st = style_of(kind);
  double h = kind == JobKind::kOther ? fnv1a(p.base) % 360 : st.hue;
  double l = st.lightness;
  if (p.suffix.find("reduce") != std::string::npos) l -= 0.1;
  static constexpr double kChunkShade[] = {0, -0.12, 0.10, -0.20, 0.17, -0.06, 0.05};
  if (p.chunk > 0) l += kChunkShade[p.chunk % 7];
  return hsl_hex(h, st.saturation, l);
}

const char* chrome_color_name(std::string_view type) { return style_of(job_kind(type)).chrome_name; }

}  // namespace ppt
