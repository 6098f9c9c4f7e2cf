// Recognising the pipeline schedule of a run from each rank's job order.
//
// Paddle prints a step's jobs in the order of the rank's plan, so the printed
// order of a rank's jobs in one step *is* its schedule. From the plans of all
// ranks this module tells:
//  - the pipeline depth P (given, or inferred: the plans repeat with period P
//    over the ranks when data-parallel replicas exist, rank = replica*P + stage;
//    when every rank has the same plan, the ranks that start a step together
//    are the first stages of the replicas);
//  - the number of micro-batches M and model chunks V;
//  - the schedule: FThenB (every forward before any backward), 1F1B (stage s
//    runs min(P-s, M) forwards before its first backward), Eager1F1B
//    (min(2(P-s)-1, M)), VPP (chunked types), ZBH1 (split backward, one
//    chunk), ZBVPP (split backward, chunks placed in a V: the last stage runs
//    chunk 1 of a micro-batch right after its chunk 0), or unknown;
//  - the bubble ratio the schedule promises with equal stage times: its
//    plan (schedule/plan.h) replayed (schedule/replay.h).
//
// What a schedule is (its names, chunks, split backward, plan, virtual
// stages) is the schedule layer's (src/schedule/, one table: schedules.h);
// this module only recognises which one a run follows.
//
// Pure functions of a const Timeline; nothing here depends on timing except the
// start-time fallback for P, which is documented where it is used.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/timeline.h"
#include "schedule/schedules.h"
#include "schedule/virtual_stage.h"

namespace ppt {

// What a job type is to the schedule: its role (schedule/shape.h), none for
// optimizer, lr, default and communication jobs.
struct JobClass {
  std::optional<PlanRole> role;
  int32_t chunk = -1;        // model chunk (virtual stage index within the rank), -1 when none
  bool split = false;        // backward_b / backward_w (and backward_w_reduce): a split backward
  bool piece = false;        // `forward(chunk0)`: a piece of an overlapped job, not a model chunk
  bool no_pipeline = false;  // the `default` type
};

// One entry per Timeline::types entry.
std::vector<JobClass> classify_types(const std::vector<std::string>& types);

// A job as the plan names it.
struct OrderItem {
  uint32_t type = 0;  // index into Timeline::types
  int32_t micro_batch = -1;
  bool operator==(const OrderItem& o) const { return type == o.type && micro_batch == o.micro_batch; }
};

// A rank's plan: the most common order of its jobs within one step, over all
// runs and steps (ties go to the earliest step).
struct RankOrder {
  int32_t rank = 0;
  std::vector<OrderItem> order;
  uint32_t steps = 0;             // steps the rank has jobs in
  uint32_t steps_like_order = 0;  // how many of them follow `order` exactly
};

// By rank, ascending. Orders are by printed line within each step.
// Tracks are read in parallel on `threads` (0: one per core); the result does
// not depend on it. `run` >= 0 reads that run's tracks only (the run the
// figures are about), -1 every run's.
std::vector<RankOrder> rank_orders(const Timeline& timeline, unsigned threads = 1, int32_t run = -1);

// "forward:3" (type, then the micro-batch when the line had one).
std::string order_item_text(const Timeline& timeline, const OrderItem& item);

struct PipelineShape {
  int32_t pp_degree = 1;  // P
  int32_t replicas = 1;   // ranks / P
  std::string source;     // "--pp-degree", "job order", "start times", "all ranks", "no pipeline"
};

// P from `pp_degree_option` when > 0 (the caller checked it with
// check_pp_degree), else inferred as the header says.
PipelineShape infer_pipeline_shape(const Timeline& timeline, const std::vector<RankOrder>& orders,
                                   const std::vector<JobClass>& classes, int32_t pp_degree_option);

struct ScheduleInfo {
  ScheduleKind kind = ScheduleKind::kUnknown;
  std::string variant;    // "backward/forward overlap", "split backward", or ""
  int32_t pp_degree = 1;  // P
  std::string pp_degree_source;
  int32_t replicas = 1;
  int32_t micro_batches = 0;       // M (per chunk)
  int32_t chunks = 1;              // V
  double ideal_bubble_ratio = -1;  // < 0 when the schedule has no plan (ideal_bubble_ratio())
  std::string ideal_formula;       // what the ideal is, or why there is none
  std::string evidence;            // why this schedule (or why none), for the user
};

ScheduleInfo recognize_schedule(const std::vector<RankOrder>& orders, const std::vector<JobClass>& classes,
                                const PipelineShape& shape);

// The schedule as people read it, built here only:
//  - kShort (diff, batch, watch): "1F1B P=4 M=8", "VPP P=4 M=8 V=2 x2 replicas";
//  - kLong (the stats report): "1F1B, P=4 (from job order), M=8, V=2, 2
//    data-parallel replicas".
// The variant follows the name in parentheses; no pipeline is the name alone.
enum class ScheduleLabel { kShort, kLong };
std::string schedule_label(const ScheduleInfo& s, ScheduleLabel form = ScheduleLabel::kShort);

// The bubble ratio the schedule promises: its plan (schedule/plan.h, as
// Paddle builds it) replayed (schedule/replay.h) with equal stage costs, forward 1 and backward 2
// (backward_b 1 and backward_w 1 when split), optimizer 0, no link lag:
// idle / (P * span), as analysis/stats measures it. < 0 when there is no plan
// (the schedule is unknown, or Paddle would not build one for the shape).
// `formula` (optional) receives what it is ("Paddle's ZBH1 plan replayed
// with equal stage costs"), why there is none ("Paddle builds no 1F1B plan
// here: 1F1B needs M >= P: M=2, P=4"), or "" for an unknown schedule.
// `split_backward`: VPP's split-backward variant. Replayed on every call
// (nothing is remembered between calls): the pipeline pass asks once.
double ideal_bubble_ratio(ScheduleKind kind, int32_t pp_degree, int32_t micro_batches, int32_t chunks,
                          std::string* formula = nullptr, bool split_backward = false);

}  // namespace ppt
