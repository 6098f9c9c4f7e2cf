// The wall time of one named phase of a command (--timings): the driver's
// phases (app/driver.h) and the builder's own (passes/timeline_builder.h)
// append to one list, printed by the reporter.
#pragma once

#include <string>

namespace ppt {

struct PhaseTime {
  std::string name;
  double seconds = 0;
};

}  // namespace ppt
