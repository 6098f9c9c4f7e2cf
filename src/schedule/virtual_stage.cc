#include "schedule/virtual_stage.h"

#include "schedule/schedules.h"

namespace ppt {

namespace {

bool v_shaped(ScheduleKind kind) {
  const ScheduleRow* r = schedule_row(kind);
  return r && r->v_shape;
}

}  // namespace

int32_t virtual_stage(ScheduleKind kind, int32_t p, int32_t stage, int32_t chunk) {
  if (chunk < 0) return stage;
  if (chunk % 2 == 1 && v_shaped(kind)) return chunk * p + (p - 1 - stage);
  return chunk * p + stage;
}

StageChunk virtual_stage_place(ScheduleKind kind, int32_t p, int32_t v) {
  const int32_t chunk = v / p;
  const int32_t k = v % p;
  const int32_t stage = (chunk % 2 == 1 && v_shaped(kind)) ? p - 1 - k : k;
  return {stage, chunk};
}

const char* dependency_kind_name(DependencyKind kind) {
  return kind == DependencyKind::kForward ? "forward" : "backward";
}

int32_t producer_virtual_stage(DependencyKind kind, int32_t vstage, int32_t vstages) {
  const int32_t from = kind == DependencyKind::kForward ? vstage - 1 : vstage + 1;
  return from >= 0 && from < vstages ? from : -1;
}

}  // namespace ppt
