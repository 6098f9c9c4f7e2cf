// The table of schedules (schedule/schedules.h): the one source of every
// schedule's names, flags, shape rule and plan. The names and spellings read
// back; each row's flags agree with what its plan builder builds.
#include "schedule/schedules.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "schedule/plan.h"
#include "schedule/replay.h"
#include "schedule/virtual_stage.h"

using namespace ppt;

namespace {

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Every shape the row's rule accepts, over a small grid (split_backward only
// where the row takes it).
std::vector<PlanShape> accepted_shapes(const ScheduleRow& row) {
  std::vector<PlanShape> out;
  for (int32_t p = 1; p <= 4; ++p) {
    for (int32_t m = 1; m <= 8; ++m) {
      for (int32_t v = 1; v <= 3; ++v) {
        for (bool split : {false, true}) {
          PlanShape s{row.kind, p, m, v, split};
          if (check_plan_shape(s).empty()) out.push_back(s);
        }
      }
    }
  }
  return out;
}

}  // namespace

TEST_CASE("the table of schedules: every row parses from its name and each of its spellings", "[schedule]") {
  REQUIRE(schedule_rows().size() == planned_schedules().size());
  std::map<std::string, ScheduleKind> keys;  // folded spellings: no two rows share one
  for (const ScheduleRow& row : schedule_rows()) {
    INFO(row.name);
    CHECK(schedule_row(row.kind) == &row);
    CHECK(schedule_name(row.kind) == row.name);
    CHECK(schedule_from_name(row.name) == row.kind);
    std::vector<std::string_view> spelled = {row.name};
    for (std::string_view other : row.spellings) {
      if (!other.empty()) spelled.push_back(other);
    }
    for (std::string_view text : spelled) {
      INFO(text);
      CHECK(parse_schedule_name(text) == row.kind);
      CHECK(parse_schedule_name(upper(text)) == row.kind);
      CHECK(parse_schedule_name(lower(text)) == row.kind);
      std::string folded;
      for (char c : lower(text)) {
        if (c != '-' && c != '_' && c != '.' && c != ' ') folded += c;
      }
      CHECK(parse_schedule_name(folded) == row.kind);
      CHECK(keys.emplace(folded, row.kind).first->second == row.kind);
      // A slip from a spelling is refused with the row's name as the hint.
      CHECK(schedule_name_error(std::string(text) + "x", planned_schedules())
                .find("did you mean " + std::string(row.name) + "?") != std::string::npos);
    }
  }
  CHECK(schedule_row(ScheduleKind::kUnknown) == nullptr);
  CHECK(schedule_row(ScheduleKind::kNoPipeline) == nullptr);
  CHECK_FALSE(schedule_chunked(ScheduleKind::kUnknown));
  CHECK_FALSE(schedule_split_backward(ScheduleKind::kNoPipeline));
}

TEST_CASE("the table of schedules: each row's chunked, split and M < P flags agree with its plan builder's output",
          "[schedule]") {
  for (const ScheduleRow& row : schedule_rows()) {
    INFO(row.name);
    const std::vector<PlanShape> shapes = accepted_shapes(row);
    REQUIRE_FALSE(shapes.empty());
    bool some_split = false, some_chunk = false, some_split_option = false, some_m_below_p = false;
    for (const PlanShape& s : shapes) {
      INFO("P=" << s.stages << " M=" << s.micro_batches << " V=" << s.chunks << " split=" << s.split_backward);
      CHECK((s.chunks == 1 || row.chunked));
      CHECK((!s.split_backward || row.split_option));
      some_split_option = some_split_option || s.split_backward;
      some_m_below_p = some_m_below_p || s.micro_batches < s.stages;
      const std::vector<std::vector<PlanJob>> plans = pipeline_plan(s);
      REQUIRE(plans.size() == static_cast<size_t>(s.stages));
      std::set<int32_t> chunks;
      bool split = false;
      for (const std::vector<PlanJob>& stage : plans) {
        for (const PlanJob& j : stage) {
          chunks.insert(j.chunk);
          split = split || j.role == PlanRole::kBackwardB || j.role == PlanRole::kBackwardW;
          // The type carries the chunk exactly when the row is chunked.
          const std::string type = plan_job_type(s, j);
          CHECK(std::isdigit(static_cast<unsigned char>(type.back())) == row.chunked);
        }
      }
      CHECK(chunks.size() == static_cast<size_t>(s.chunks));  // every chunk runs, no other
      if (!row.split_backward && !s.split_backward) CHECK_FALSE(split);
      some_split = some_split || split;
      some_chunk = some_chunk || s.chunks > 1;
      // The table's virtual-stage rule and the plan agree: it runs to its end
      // (Paddle's VPP plans for M not a multiple of P may deadlock:
      // docs/schedules.md, plan_test.cc).
      ReplayCosts costs;
      costs.duration_ns = [](int32_t, const PlanJob&) -> int64_t { return 1; };
      if (s.micro_batches % s.stages == 0) CHECK(replay_plans(s, plans, costs).error.empty());
    }
    CHECK(some_split == (row.split_backward || row.split_option));
    CHECK(some_chunk == row.chunked);
    CHECK(some_split_option == row.split_option);
    CHECK(some_m_below_p == row.m_below_p);  // a plan of M < P is built exactly where the row takes it
  }
}

TEST_CASE("the table of schedules: the shape rules are its rows' own limits, named by the row", "[schedule]") {
  for (const ScheduleRow& row : schedule_rows()) {
    INFO(row.name);
    // A one-chunk schedule refuses chunks; a chunked one takes them.
    const std::string two_chunks = check_plan_shape({row.kind, 2, 8, 2});
    if (row.chunked) {
      CHECK(two_chunks.empty());
    } else {
      CHECK(two_chunks == std::string(row.name) + " has one chunk: V=2");
    }
    // What the row's rule says is what check_plan_shape says.
    for (int32_t m = 1; m <= 6; ++m) {
      const PlanShape s{row.kind, 3, m, row.chunked ? 2 : 1};
      PlanCache cache;
      std::string rule = row.shape_rule(row.name, s, cache);
      CHECK(check_plan_shape(s) == rule);
      if (!rule.empty()) CHECK(rule.find(row.name) != std::string::npos);
      if (!rule.empty()) CHECK(pipeline_plan(s).empty());
    }
  }
  CHECK(check_plan_shape({ScheduleKind::kUnknown, 2, 2, 1}) == "no plan for the schedule unknown");
  // Paddle's assertions its plans leave out: only where a row holds one.
  for (const ScheduleRow& row : schedule_rows()) {
    const PlanShape many{row.kind, 2, 4, row.chunked ? 2 : 1};
    CHECK((paddle_refuses(many) != nullptr) == (row.refuses != nullptr));
    if (row.refuses) {
      CHECK(paddle_refuses({row.kind, 4, 4, 2}) == nullptr);
      CHECK_FALSE(row.assertion.empty());
    }
  }
}

TEST_CASE("schedule names read back", "[schedule]") {
  for (ScheduleKind k : {ScheduleKind::kUnknown, ScheduleKind::kNoPipeline, ScheduleKind::kFThenB, ScheduleKind::k1F1B,
                         ScheduleKind::kEager1F1B, ScheduleKind::kVPP, ScheduleKind::kZBH1, ScheduleKind::kZBVPP}) {
    CHECK(schedule_from_name(schedule_name(k)) == k);
  }
  CHECK_FALSE(schedule_from_name("2F2B").has_value());
}

TEST_CASE("one reading of every spelling of a schedule", "[schedule]") {
  // Paddle's names, the README's and the papers' spellings, any case.
  const std::vector<std::pair<std::string, ScheduleKind>> spelled = {
      {"ZB-H1", ScheduleKind::kZBH1},
      {"zbh1", ScheduleKind::kZBH1},
      {"ZBH1", ScheduleKind::kZBH1},
      {"zb_h1", ScheduleKind::kZBH1},
      {"1F1B", ScheduleKind::k1F1B},
      {"1f1b", ScheduleKind::k1F1B},
      {"FThenB", ScheduleKind::kFThenB},
      {"fthenb", ScheduleKind::kFThenB},
      {"F-then-B", ScheduleKind::kFThenB},
      {"GPipe", ScheduleKind::kFThenB},
      {"ZB-VPP", ScheduleKind::kZBVPP},
      {"zbvpp", ScheduleKind::kZBVPP},
      {"VPP", ScheduleKind::kVPP},
      {"interleaved-1F1B", ScheduleKind::kVPP},
      {"Eager1F1B", ScheduleKind::kEager1F1B},
      {"eager-1f1b", ScheduleKind::kEager1F1B},
  };
  for (const auto& [text, kind] : spelled) {
    INFO(text);
    CHECK(parse_schedule_name(text) == kind);
  }
  // Every name schedule_name() writes reads back, but for no schedule at all.
  for (ScheduleKind k : {ScheduleKind::kFThenB, ScheduleKind::k1F1B, ScheduleKind::kEager1F1B, ScheduleKind::kVPP,
                         ScheduleKind::kZBH1, ScheduleKind::kZBVPP}) {
    CHECK(parse_schedule_name(schedule_name(k)) == k);
  }
  for (const char* none : {"none", "unknown", "", "-", "2F2B", "ZB"}) {
    INFO(none);
    CHECK_FALSE(parse_schedule_name(none).has_value());
  }
  const std::vector<ScheduleKind> all = {ScheduleKind::kFThenB, ScheduleKind::k1F1B, ScheduleKind::kEager1F1B,
                                         ScheduleKind::kVPP,    ScheduleKind::kZBH1, ScheduleKind::kZBVPP};
  CHECK(schedule_name_error("ZB-H2", all).find("did you mean ZBH1?") != std::string::npos);
  CHECK(schedule_name_error("1F2B", all).find("did you mean 1F1B?") != std::string::npos);
  CHECK(schedule_name_error("banana", all).find("did you mean") == std::string::npos);
  CHECK(schedule_name_error("banana", all).find("FThenB, 1F1B, Eager1F1B, VPP, ZBH1, ZBVPP") != std::string::npos);
}

TEST_CASE("a schedule's virtual stages run down the stages, and back up for the V-shaped odd chunks", "[schedule]") {
  CHECK(virtual_stage(ScheduleKind::k1F1B, 4, 2, -1) == 2);
  CHECK(virtual_stage(ScheduleKind::kVPP, 4, 2, 1) == 6);
  CHECK(virtual_stage(ScheduleKind::kZBVPP, 4, 0, 0) == 0);
  CHECK(virtual_stage(ScheduleKind::kZBVPP, 4, 3, 1) == 4);  // the bottom of the V
  CHECK(virtual_stage(ScheduleKind::kZBVPP, 4, 0, 1) == 7);
  for (ScheduleKind k : planned_schedules()) {
    for (int32_t v = 0; v < 12; ++v) {
      const StageChunk at = virtual_stage_place(k, 4, v);
      CHECK(virtual_stage(k, 4, at.stage, at.chunk) == v);
    }
  }
}
