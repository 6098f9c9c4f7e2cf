// Which part of a run's logs the commands look at: one run of several
// appended (--run N), some steps (--steps A:B) and without the first ones
// (--skip-warmup N). One definition for convert, stats, report and diff,
// applied once by the driver (driver.h) right after the timeline is built,
// so that every pass, analysis and writer sees the same jobs.
//
// The order: --run keeps one run (numbered from 1, as the trace's "run 2/3"
// groups); --skip-warmup drops the first N steps of each kept run; --steps
// then keeps the step numbers in its range. Jobs left out are counted in
// Timeline::unselected_jobs (the summary accounts for them) and the
// selection is described in Timeline::selection.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "model/step_range.h"
#include "model/timeline.h"

namespace ppt {

// "A:B" (A to B included), "A:" (from A), ":B" (up to B) or "A" (only A):
// the one reading of a --steps range (the selection's, batch's steps to
// draw). nullopt and a message when the text is not one of those.
std::optional<StepRange> parse_step_range(std::string_view text, std::string* error);

struct Selection {
  uint32_t run = 0;                // 1-based; 0: every run
  std::optional<StepRange> steps;  // step numbers, both ends included; empty: all
  uint32_t skip_warmup = 0;        // each kept run's first N steps left out

  bool empty() const { return run == 0 && !steps && skip_warmup == 0; }
  // "--run 2 --steps 1:4 --skip-warmup 1", the options as the user gave them.
  std::string options_text() const;
};

// Removes from `timeline` the runs, steps and jobs outside `selection`
// (nothing when it is empty). Returns "" or, when nothing would be left, a
// usage error that names what exists ("--steps 7:9: no such step; the run
// has steps 100-102"); the timeline is then unchanged.
std::string apply_selection(Timeline& timeline, const Selection& selection);

// "0-9", "0-3, 5-9" (numbers in order, runs of consecutive ones joined).
std::string step_list(const std::vector<int32_t>& sorted_numbers);

}  // namespace ppt
