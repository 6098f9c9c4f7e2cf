// Which steps the pictures of a run show (the .svg, the .png and the HTML
// report's timeline), and why. Decided once, by the driver
// (app/picture.h, DriverResult::picture); the writers draw what it says and
// the commands' notes repeat its `note`, so that every picture of one run
// shows the same steps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "model/timeline.h"

namespace ppt {

// The drawn steps of one run.
struct PictureRun {
  uint32_t run = 0;
  int32_t first_step = 0;  // drawn steps, included
  int32_t last_step = -1;
  int64_t start_ns = 0;  // time range of the drawn jobs
  int64_t end_ns = 0;
  size_t jobs = 0;
  // Jobs starting at or after this are not drawn: a step that alone holds
  // more jobs than a picture may shows its first ones (INT64_MAX: no cut).
  int64_t until_ns = INT64_MAX;

  bool shows(uint32_t r, int32_t step) const { return r == run && step >= first_step && step <= last_step; }
  // Whether the job (of this run) is drawn: in the drawn steps, before the cut.
  bool draws(const Job& j) const { return shows(run, j.step) && j.start_ns < until_ns; }
};

enum class PictureReason {
  kEverything,  // every step fits and is readable
  kChosen,      // the steps the user chose (--steps), all of them
  kCapped,      // the first steps that fit the job cap (the user's, or all)
  kSlowest,     // the slowest step only: every step would be too dense to read
  kNothing,     // no job in the chosen steps
};

struct PictureSelection {
  std::vector<PictureRun> runs;  // runs with at least one drawn job, in run order
  size_t jobs = 0;               // drawn
  size_t jobs_in_range = 0;      // in the chosen steps (more than `jobs` when capped)
  size_t steps_total = 0;        // steps of the timeline, every run
  // Steps of the runs as logged, before a selection (--run, --steps,
  // --skip-warmup) kept some: what a title counts the drawn steps against
  // ("steps 2-4 of 10"). steps_total when nothing was selected.
  size_t steps_logged = 0;
  PictureReason why = PictureReason::kEverything;
  std::string note;  // for the user (kCapped, kSlowest, kNothing); "" otherwise

  bool capped() const { return why == PictureReason::kCapped; }
  bool slowest() const { return why == PictureReason::kSlowest; }
  const PictureRun* find(uint32_t run) const {
    for (const PictureRun& r : runs) {
      if (r.run == run) return &r;
    }
    return nullptr;
  }
};

}  // namespace ppt
