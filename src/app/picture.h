// The one decision of which steps a run's pictures show (output/
// picture_selection.h), made by the driver when a command draws
// (DriverRequest::picture) and read by every writer and note.
//
// The rule, in order:
//   - steps chosen (--steps): those, never cut to the slowest;
//   - none chosen and the whole timeline too dense to read (its median
//     job, drawn across the plot width, narrower than kReadablePx), and
//     more than one step: the slowest step only, for the .svg, the .png and
//     the report alike (the report's zoom does not make thousands of blocks
//     readable; --steps A:B draws others);
//   - then at most `max_jobs` job rectangles: the first steps that fit; a
//     first step that alone holds more is drawn up to the cap, its jobs in
//     order of start time (PictureRun::until_ns).
// The note says which steps are shown when not all of them are.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "model/timeline.h"
#include "output/picture/picture_selection.h"
#include "output/picture/svg_writer.h"  // StepRange

namespace ppt {

// Narrower than this, a median block carries no label of two characters
// (block_label.h: "12" needs 16.7 px, "F3" 16.1, "0" 10.4).
inline constexpr double kReadablePx = 12;

struct PictureRequest {
  std::optional<StepRange> steps;  // the user's --steps; the driver sets it from its selection
  size_t max_jobs = 20000;         // job rectangles at most (report --max-jobs)
  double plot_width = 1200;        // pixels of the time axis the density is judged at
};

PictureSelection select_picture(const Timeline& timeline, const PictureRequest& request);

}  // namespace ppt
