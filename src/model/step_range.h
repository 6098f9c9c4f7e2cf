// A range of step numbers: what a selection's --steps keeps
// (app/selection.h, which also reads it from text) and what a picture
// draws (output/picture/svg_writer.h).
#pragma once

#include <cstdint>

namespace ppt {

// Steps `first` to `last`, both included, as numbered in the timeline.
struct StepRange {
  int32_t first = INT32_MIN;
  int32_t last = INT32_MAX;
  bool contains(int32_t step) const { return step >= first && step <= last; }
};

}  // namespace ppt
