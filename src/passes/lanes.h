// Puts jobs of one rank that overlap in time on extra lanes, so that every
// lane nests (its slices are disjoint) and no job is dropped, cut or moved.
//
// Jobs are sorted by (start, line) and each goes on the lowest lane that is
// free at its start (a job may begin exactly where another ends). This uses
// the fewest lanes possible for the set of intervals.
#pragma once

#include "model/timeline.h"

namespace ppt {

void assign_lanes(Track& track);

}  // namespace ppt
