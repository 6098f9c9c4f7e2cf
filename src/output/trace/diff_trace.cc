#include "output/trace/diff_trace.h"

#include <fmt/format.h>

#include <algorithm>

#include "output/trace/chrome_json_writer.h"
#include "output/trace/trace_naming.h"

namespace ppt {
namespace {

const StepSpan* first_step(const Timeline& tl) {
  for (const Run& run : tl.runs) {
    if (!run.steps.empty()) return &run.steps.front();
  }
  return nullptr;
}

const StepSpan* find_step(const Timeline& tl, int32_t number) {
  for (const Run& run : tl.runs) {
    for (const StepSpan& s : run.steps) {
      if (s.number == number) return &s;
    }
  }
  return nullptr;
}

// The two sides through the one JSON event writer (chrome_json_writer.h),
// so that steps, jobs and their args are those of the Chrome trace; only
// the processes differ (one per side) and the threads' order.
class DiffTraceWriter {
 public:
  explicit DiffTraceWriter(ByteSink& out) : events_(out), buf_(events_.buffer()) { buf_ = "{\"traceEvents\":[\n"; }

  void side(const Timeline& tl, uint32_t pid, const std::string& name, int64_t offset) {
    // Threads as in the other traces (trace_naming.h): one per (run, rank,
    // lane) and a steps thread per run, so that two runs of one log (a clock
    // that jumped back) never share a track; named as there, with the run
    // in front when the log holds several (the other traces name it in the
    // process, which here is the side).
    const TraceNaming naming(tl);
    events_.set_timeline(tl, JsonFlavor::kChrome, offset);
    const uint32_t runs = static_cast<uint32_t>(tl.runs.size());
    uint32_t lanes = 1;
    for (const Track& t : tl.tracks) lanes = std::max(lanes, t.lanes);
    const int64_t per_run = 1 + static_cast<int64_t>(std::max<int32_t>(1, tl.rank_count())) * lanes;
    auto prefix = [&](uint32_t run) { return runs > 1 ? fmt::format("run {}/{}: ", run + 1, runs) : std::string(); };
    events_.name("process_name", pid, 0, name);
    events_.sort_index("process_sort_index", pid, 0, pid);
    for (const Run& run : tl.runs) {
      events_.name("thread_name", pid, naming.steps_tid(run.index), prefix(run.index) + "steps");
      events_.sort_index("thread_sort_index", pid, naming.steps_tid(run.index), run.index * per_run);
    }
    for (const Track& t : tl.tracks) {
      for (uint32_t lane = 0; lane < t.lanes; ++lane) {
        events_.name("thread_name", pid, naming.track_tid(t, lane), prefix(t.run) + naming.thread_name(t, lane));
        events_.sort_index("thread_sort_index", pid, naming.track_tid(t, lane),
                           t.run * per_run + 1 + naming.thread_sort_index(t, lane));
      }
    }
    for (const Run& run : tl.runs) events_.steps(run, pid, naming.steps_tid(run.index));
    for (const Track& t : tl.tracks) events_.jobs(t, pid, naming);
    // Memory counters, named as the threads (a side is one process).
    for (const Track& t : tl.tracks) events_.memory(t, pid, naming, prefix(t.run));
  }

  void finish(int64_t origin_a) {
    buf_ +=
        "\n],\n\"displayTimeUnit\":\"ms\",\n\"metadata\":{\"generator\":\"pp-timeline diff\",\"time_origin_epoch_ns\":";
    append_int(buf_, origin_a);
    buf_ += "}}\n";
    events_.flush();
  }

 private:
  TraceEventWriter events_;
  std::string& buf_;
};

}  // namespace

DiffTraceInfo write_diff_trace(const Timeline& a, const std::string& a_label, const Timeline& b,
                               const std::string& b_label, ByteSink& out) {
  DiffTraceInfo info;
  const StepSpan* sa = nullptr;
  const StepSpan* sb = nullptr;
  for (const Run& run : a.runs) {
    for (const StepSpan& s : run.steps) {
      if (const StepSpan* other = find_step(b, s.number)) {
        sa = &s;
        sb = other;
        break;
      }
    }
    if (sa) break;
  }
  if (sa) {
    info.common_step = true;
  } else {
    sa = first_step(a);
    sb = first_step(b);
  }
  int64_t offset_a = sa ? sa->start_ns : a.origin_ns;
  int64_t offset_b = sb ? sb->start_ns : b.origin_ns;
  info.step = sa ? sa->number : 0;
  info.step_b = sb ? sb->number : 0;
  DiffTraceWriter w(out);
  w.side(a, 1, "A: " + a_label, offset_a);
  w.side(b, 2, "B: " + b_label, offset_b);
  w.finish(offset_a);
  return info;
}

}  // namespace ppt
