// What one Profiler of a test wrote: its lines, its jobs' times and its
// warnings, collected through the sinks of the Options it hands out.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "pp_timeline/shim.h"

namespace shim_test {

struct Run {
  std::vector<std::string> lines;
  std::vector<ppt::shim::JobTimes> jobs;
  std::vector<std::string> warnings;

  ppt::shim::Options options(void* stream) {
    ppt::shim::Options o;
    o.stream = stream;
    o.sink = [this](std::string_view l) { lines.emplace_back(l); };
    o.on_job = [this](const ppt::shim::JobTimes& j) { jobs.push_back(j); };
    o.warning_sink = [this](std::string_view w) { warnings.emplace_back(w); };
    return o;
  }
};

}  // namespace shim_test
