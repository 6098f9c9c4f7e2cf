#include "schedule/schedules.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>

#include "schedule/plan_builders.h"
#include "util/edit_distance.h"

namespace ppt {

namespace {

namespace pb = plan_builders;

bool zbvpp_refuses(const PlanShape& s) { return s.micro_batches > s.stages; }

// The table, one row a schedule. Columns: kind, name, other spellings;
// chunked, split backward, split_backward attribute, V-shaped chunks, M < P
// taken; shape rule and plan (plan_builders.h); an assertion of Paddle's the
// plan leaves out (when it refuses, what it asserts, where).
// clang-format off
constexpr std::array<ScheduleRow, 6> kRows = {{
    {ScheduleKind::kFThenB,    "FThenB",    {"F-then-B", "GPipe"},
     false, false, false, false, true,  pb::any_shape,             pb::fthenb,            nullptr, "", ""},
    {ScheduleKind::k1F1B,      "1F1B",      {"", ""},
     false, false, false, false, false, pb::m_at_least_p,          pb::one_f_one_b,       nullptr, "", ""},
    {ScheduleKind::kEager1F1B, "Eager1F1B", {"Eager-1F1B", ""},
     false, false, false, false, false, pb::m_at_least_2p_minus_1, pb::eager_one_f_one_b, nullptr, "", ""},
    {ScheduleKind::kVPP,       "VPP",       {"interleaved-1F1B", "interleaved"},
     true,  false, true,  false, false, pb::m_at_least_p,          pb::vpp,               nullptr, "", ""},
    {ScheduleKind::kZBH1,      "ZBH1",      {"ZB-H1", ""},
     false, true,  false, false, false, pb::m_at_least_p,          pb::zbh1,              nullptr, "", ""},
    {ScheduleKind::kZBVPP,     "ZBVPP",     {"ZB-VPP", ""},
     true,  true,  false, true,  false, pb::zbvpp_shape,           pb::zbvpp,
     zbvpp_refuses, "Paddle's ZB-VPP asserts M <= P", "pipeline_zero_bubble.py"},
}};
// clang-format on

constexpr std::string_view kNoneName = "none";

// The spelling without case and separators: "ZB-H1" -> "zbh1".
std::string spelling_key(std::string_view text) {
  std::string key;
  for (char c : text) {
    if (c == '-' || c == '_' || c == '.' || c == ' ') continue;
    key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return key;
}

}  // namespace

std::span<const ScheduleRow> schedule_rows() { return kRows; }

// The rows are in the order of ScheduleKind, from kFThenB: a row is found by
// its kind's value (virtual_stage asks for every job of a replay).
constexpr bool rows_in_kind_order() {
  for (size_t i = 0; i < kRows.size(); ++i) {
    if (static_cast<size_t>(kRows[i].kind) != static_cast<size_t>(ScheduleKind::kFThenB) + i) return false;
  }
  return true;
}
static_assert(rows_in_kind_order(), "the table's rows follow ScheduleKind");

const ScheduleRow* schedule_row(ScheduleKind kind) {
  const size_t i = static_cast<size_t>(kind) - static_cast<size_t>(ScheduleKind::kFThenB);
  return static_cast<size_t>(kind) >= static_cast<size_t>(ScheduleKind::kFThenB) && i < kRows.size() ? &kRows[i]
                                                                                                     : nullptr;
}

std::vector<ScheduleKind> planned_schedules() {
  std::vector<ScheduleKind> out;
  for (const ScheduleRow& r : kRows) out.push_back(r.kind);
  return out;
}

bool schedule_chunked(ScheduleKind kind) {
  const ScheduleRow* r = schedule_row(kind);
  return r && r->chunked;
}

bool schedule_split_backward(ScheduleKind kind) {
  const ScheduleRow* r = schedule_row(kind);
  return r && r->split_backward;
}

const ScheduleRow* paddle_refuses(const PlanShape& shape) {
  const ScheduleRow* r = schedule_row(shape.schedule);
  return r && r->refuses && r->refuses(shape) ? r : nullptr;
}

std::string_view schedule_name(ScheduleKind kind) {
  if (kind == ScheduleKind::kNoPipeline) return kNoneName;
  const ScheduleRow* r = schedule_row(kind);
  return r ? r->name : "unknown";
}

std::optional<ScheduleKind> schedule_from_name(std::string_view name) {
  if (name == kNoneName) return ScheduleKind::kNoPipeline;
  if (name == schedule_name(ScheduleKind::kUnknown)) return ScheduleKind::kUnknown;
  for (const ScheduleRow& r : kRows) {
    if (r.name == name) return r.kind;
  }
  return std::nullopt;
}

std::optional<ScheduleKind> parse_schedule_name(std::string_view text) {
  std::string key = spelling_key(text);
  if (key.empty()) return std::nullopt;
  for (const ScheduleRow& r : kRows) {
    if (spelling_key(r.name) == key) return r.kind;
    for (std::string_view other : r.spellings) {
      if (!other.empty() && spelling_key(other) == key) return r.kind;
    }
  }
  return std::nullopt;
}

std::string schedule_name_error(std::string_view text, const std::vector<ScheduleKind>& accepted) {
  std::vector<std::string> names;
  for (ScheduleKind k : accepted) names.emplace_back(schedule_name(k));
  std::string list = fmt::format("{}", fmt::join(names, ", "));
  std::optional<ScheduleKind> kind = parse_schedule_name(text);
  if (kind) {
    return fmt::format("{} is not one of the schedules here: {} (any case, with or without '-' or '_')",
                       schedule_name(*kind), list);
  }
  // The nearest accepted spelling, when it is a slip away.
  std::string key = spelling_key(text);
  std::string_view nearest;
  size_t best = 3;
  for (const ScheduleRow& r : kRows) {
    if (std::find(accepted.begin(), accepted.end(), r.kind) == accepted.end()) continue;
    for (std::string_view spelled : {r.name, r.spellings[0], r.spellings[1]}) {
      if (spelled.empty()) continue;
      size_t d = edit_distance(key, spelling_key(spelled));
      if (d < best && d <= std::max<size_t>(1, key.size() / 3)) {
        best = d;
        nearest = r.name;
      }
    }
  }
  std::string out =
      fmt::format("not a schedule; give one of {} (any case, with or without '-' or '_': ZB-H1 is ZBH1)", list);
  if (!nearest.empty()) out += fmt::format("; did you mean {}?", nearest);
  return out;
}

}  // namespace ppt
