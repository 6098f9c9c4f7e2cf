// One Chrome JSON trace holding two runs, for comparing them side by side
// in a viewer (`pp-timeline diff A B -o diff.json`).
//
// Each run is one process ("A: <label>", "B: <label>") whose threads are
// numbered as in the other traces (trace_naming.h): a steps thread for each
// run of the log, first, then one per (run, rank, lane), so that a log holding
// two runs whose times overlap (a clock that jumped back) never puts two runs
// on one track. Both are shifted so that
// their first common step (the first step number of A that B also has) starts
// at time 0; without a common step number, their first steps are aligned.
// Jobs are complete ("X") events, which nest because lanes never overlap,
// named job_name() (trace_naming.h) and timed as the Chrome JSON's
// (append_trace_us / append_trace_dur_us, chrome_json_writer.h). A run with
// memory samples carries them as the Chrome JSON does (two counters a rank on
// its side's process, named as its threads, the run in front when the log
// holds several).
#pragma once

#include <string>

#include "model/timeline.h"
#include "output/sink/byte_sink.h"

namespace ppt {

struct DiffTraceInfo {
  bool common_step = false;  // false: aligned at the first steps instead
  int32_t step = 0;          // A's step number at time 0
  int32_t step_b = 0;        // B's step number at time 0
};

DiffTraceInfo write_diff_trace(const Timeline& a, const std::string& a_label, const Timeline& b,
                               const std::string& b_label, ByteSink& out);

}  // namespace ppt
