// Clock alignment across machines: each machine's wall clock is off by its
// NTP error, often as long as a job, or by seconds when it was never
// synchronised, so a multi-machine timeline can show a forward starting
// before its input arrived. The dependencies that cross machines
// (dependencies.h) bound how far apart two clocks can be. They pair the right
// jobs at any offset because runs and steps were matched across machines by
// structure when the timeline was built (timeline_builder.h, steps.h).
//
// Per run, with o_m the offset added to machine m's logged times, a
// dependency from a producer on machine a to a consumer on machine b says
// consumer.start + o_b >= producer.end + o_a, so each pair of machines gets an
// interval [L, U] of consistent differences o_a - o_b.
//  - If no dependency that crosses machines is broken, nothing changes.
//  - Otherwise each pair aims at the middle of its interval (or, when only one
//    side is bounded, at the bound nearest 0), and the offsets are solved
//    jointly: the least squares of the differences from those aims, subject
//    to every interval (projected Gauss-Seidel from a feasible point found
//    with Bellman-Ford). In a chain of machines every pair ends exactly in the
//    middle of its interval.
//  - A pair whose interval is empty (no offset satisfies all its
//    dependencies) takes the single difference that breaks the fewest of them,
//    by the least total time. If the pairs' intervals cannot all hold at once
//    (a cycle of machines), the offsets follow a spanning tree of the pairs
//    with the most dependencies, and whatever stays broken is reported.
//  - Offsets are relative: the machine of the run's lowest rank keeps its
//    clock (and so does the lowest machine of any group of machines that no
//    dependency connects to it).
//
// Applying them shifts every job of the machine's tracks, records the offset
// in Track::clock_offset_ns (logged = shown - offset, timeline.h), recomputes
// the step spans (steps.h's finalize_step_spans), run bounds and
// Timeline::origin_ns, and rechecks every
// dependency. docs/perfetto.md has the details.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/timeline.h"
#include "passes/dependencies.h"

namespace ppt {

struct MachineOffset {
  uint32_t run = 0;
  int32_t machine = 0;
  int64_t offset_ns = 0;  // added to the machine's logged times
  // The offsets consistent with every dependency to the other machines, at
  // their final offsets; lo_ns > hi_ns when there is none. INT64_MIN/MAX when
  // unbounded on that side.
  int64_t lo_ns = 0;
  int64_t hi_ns = 0;
  uint32_t dependencies = 0;  // dependencies between this machine and others
};

struct ClockAlignment {
  std::vector<MachineOffset> machines;  // per run, every machine with a dependency to another
  uint64_t crossing = 0;                // dependencies between machines
  uint64_t broken_before = 0;           // of those, contradicted by the logged times
  uint64_t broken_after = 0;            // of those, still contradicted with the offsets
  bool consistent = true;               // some offsets satisfy every crossing dependency

  bool shifts() const {
    for (const MachineOffset& m : machines) {
      if (m.offset_ns != 0) return true;
    }
    return false;
  }
};

// Estimates the offsets from the timeline's current times, then shifts the
// tracks by them (see above), rechecks `deps` and records each shifted
// machine as a kClockOffset diagnostic.
ClockAlignment align_clocks(Timeline& timeline, Dependencies& deps);

// For the summary line: "clocks aligned: machine1 -4.003 ms, machine2
// -8.011 ms", or "" when nothing moved.
std::string format_clock_alignment(const Timeline& timeline, const ClockAlignment& alignment);

}  // namespace ppt
