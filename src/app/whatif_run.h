// What `pp-timeline whatif` does after its options are decided: the measured
// run's prediction (analysis/whatif.h), then the best-ranked target as a run
// of its own through the passes, so that the writers take it as they take a
// measured run, and the page that shows both. Prints nothing: the command
// reports what each step returns.
#pragma once

#include <string>
#include <vector>

#include "analysis/whatif.h"
#include "app/driver.h"

namespace ppt {

// A --stage-scale stage the measured run does not have: the usage error, else "".
std::string check_stage_scale(const WhatifChanges& changes, const DriverResult& measured);

// The prediction of `measured` (run with stats) under `changes`, timed as the
// "whatif" phase.
WhatifReport predict_run(DriverResult& measured, const WhatifChanges& changes);

// The best-ranked target: one that fits where any does (the ranking puts
// those first); null when none could be predicted.
const WhatifOutcome* best_target(const WhatifReport& report);

// The target `best` as a run: one predicted step per measured step replayed,
// numbered as those are, with its memory, through the passes with the
// measured request's threads (and stats when `outputs` draw). With a page
// among `outputs`, both sides draw the same steps: the ones the measured
// picture chose within the steps the prediction replays, else the last of
// those (`measured.picture` is chosen again).
DriverResult predicted_run(DriverResult& measured, const WhatifReport& report, const WhatifOutcome& best,
                           const std::vector<OutputSpec>& outputs);

// The outputs of the prediction: the .html page compares the two, as diff's
// page does (the deltas, then the measured timeline above the predicted one
// on one time scale); the other outputs are the prediction alone.
std::vector<WrittenOutput> write_whatif_outputs(DriverResult& measured, DriverResult& predicted,
                                                const std::vector<OutputSpec>& outputs);

}  // namespace ppt
