// The table of schedules: one row per schedule Paddle builds a plan for,
// holding everything that differs between them, read by everything that
// names or treats a schedule (the plans, their replay, the virtual stages,
// recognition, whatif, the command line, pp-demo). A new schedule is one row
// here plus its plan and shape rule (plan_builders.h).
//
// The names are Paddle's pipeline_scheduler_pass names (FThenB, 1F1B,
// Eager1F1B, VPP, ZBH1, ZBVPP: docs/schedules.md); the other spellings are
// what the same schedules go by (GPipe is FThenB's name in the literature,
// interleaved 1F1B VPP's, Megatron-LM's; ZB-H1 and ZB-VPP the zero-bubble
// papers'). A spelling is compared folded: case, '-', '_', '.' and spaces do
// not count, so "ZB-H1", "zb_h1" and "ZBH1" are one.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "schedule/shape.h"

namespace ppt {

using PlanBuilder = void (*)(const PlanShape& shape, int32_t stage, PlanCache& cache, std::vector<PlanJob>& out);
using ShapeRule = std::string (*)(std::string_view name, const PlanShape& shape, PlanCache& cache);

struct ScheduleRow {
  ScheduleKind kind = ScheduleKind::kUnknown;
  std::string_view name;                      // schedule_name()
  std::array<std::string_view, 2> spellings;  // the other names it goes by ("" unused)
  bool chunked = false;         // V model chunks per stage; job types carry the chunk (forward0, backward_b1)
  bool split_backward = false;  // every backward split into backward_b/backward_w (a zero-bubble plan)
  bool split_option = false;    // the split_backward attribute may be asked (PlanShape::split_backward)
  bool v_shape = false;         // odd chunks run back up the stages (virtual_stage, virtual_stage.h)
  bool m_below_p = false;       // its shape rule takes fewer micro-batches than stages (M < P)
  ShapeRule shape_rule = nullptr;
  PlanBuilder plan = nullptr;
  // An assertion of Paddle's that the plan builder leaves out, so that the
  // plan is the one its creator builds without it: `refuses(shape)` when
  // Paddle would refuse the shape for it; nullptr when there is none.
  bool (*refuses)(const PlanShape& shape) = nullptr;
  std::string_view assertion;    // what Paddle asserts ("Paddle's ZB-VPP asserts M <= P")
  std::string_view asserted_in;  // the Paddle file that asserts it
};

// Every row, in the table's order (FThenB, 1F1B, Eager1F1B, VPP, ZBH1, ZBVPP).
std::span<const ScheduleRow> schedule_rows();
// The row of `kind`; nullptr for kUnknown and kNoPipeline.
const ScheduleRow* schedule_row(ScheduleKind kind);
// Every row's kind, in the table's order: the schedules there are plans of.
std::vector<ScheduleKind> planned_schedules();

// The row's flags; false for kUnknown and kNoPipeline.
bool schedule_chunked(ScheduleKind kind);
bool schedule_split_backward(ScheduleKind kind);

// The assertion Paddle would refuse `shape` for although its plan is built
// (the row's `assertion`), or nullptr.
const ScheduleRow* paddle_refuses(const PlanShape& shape);

// "FThenB", "1F1B", "Eager1F1B", "VPP", "ZBH1", "ZBVPP", "none", "unknown".
std::string_view schedule_name(ScheduleKind kind);
// The exact name schedule_name() writes (a stats --json file's "schedule").
std::optional<ScheduleKind> schedule_from_name(std::string_view name);

// The one reading of a schedule as a user spells it, for every option that
// names one (whatif --schedule, pp-demo --schedule): a row's name or one of
// its spellings, folded ("ZB-H1", "zbh1", "1F1B", "FThenB", "F-then-B",
// "ZB-VPP", "eager_1f1b", "GPipe", "interleaved 1F1B"). "none" and "unknown"
// are no schedule to ask for.
std::optional<ScheduleKind> parse_schedule_name(std::string_view text);

// The usage error for a name parse_schedule_name() does not read, or that is
// not among `accepted`: "not a schedule" or "not one of the schedules here",
// the accepted names, and the nearest of them when one is close ("did you
// mean ZBH1?").
std::string schedule_name_error(std::string_view text, const std::vector<ScheduleKind>& accepted);

}  // namespace ppt
