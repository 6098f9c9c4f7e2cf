// Where a model chunk runs and which job feeds which: the virtual-stage rule
// and the dependency rule, the one definition (the replay, replay.h, and the
// dependencies found in a run, passes/dependencies.h, both follow them).
//
// Chunk c of pipeline stage s is virtual stage c*P + s, except that a
// V-shaped schedule's odd chunks run back up the stages (c*P + P-1-s): the
// table's v_shape column (schedules.h). Activations flow up the virtual
// stages, gradients down.
#pragma once

#include <cstdint>

#include "schedule/shape.h"

namespace ppt {

// The virtual stage (position along the model) of chunk `chunk` on pipeline
// stage `stage`. A job without a chunk (< 0) is on its stage.
int32_t virtual_stage(ScheduleKind kind, int32_t pp_degree, int32_t stage, int32_t chunk);

// Where virtual stage `vstage` is: the inverse of virtual_stage().
struct StageChunk {
  int32_t stage = 0;
  int32_t chunk = 0;
  bool operator==(const StageChunk&) const = default;
};
StageChunk virtual_stage_place(ScheduleKind kind, int32_t pp_degree, int32_t vstage);

enum class DependencyKind : uint8_t { kForward, kBackward };

// "forward" / "backward"
const char* dependency_kind_name(DependencyKind kind);

// The dependency rule: the virtual stage whose job of the same micro-batch
// feeds a job of `kind` on virtual stage `vstage` of `vstages`: vstage - 1
// for a forward, vstage + 1 for a backward (or backward_b); -1 when none does
// (the first forward, the last virtual stage's backward). backward_w
// computes weight gradients only and feeds no other stage.
int32_t producer_virtual_stage(DependencyKind kind, int32_t vstage, int32_t vstages);

}  // namespace ppt
