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
  if (c >= 0 && !name.empty() && parts.chunk < 0)
    parts.chunk = c;
  else if (c >= 0 && name.empty())
    name = std::string(type);
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

}  // namespace ppt
