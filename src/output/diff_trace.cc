#include "output/diff_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "model/job_types.h"
#include "output/palette.h"
#include "output/chrome_json_writer.h"
#include "output/trace_naming.h"

namespace ppt {
namespace {

void append_int(std::string& out, int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

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

class DiffTraceWriter {
 public:
  explicit DiffTraceWriter(ByteSink& out) : out_(out) { buf_ = "{\"traceEvents\":[\n"; }

  void side(const Timeline& tl, uint32_t pid, const std::string& name, int64_t offset) {
    // Threads as in the other traces (trace_naming.h): one per (run, rank,
    // lane) and a steps thread per run, so that two runs of one log (a clock
    // that jumped back) never share a track.
    const TraceNaming naming(tl);
    const uint32_t runs = static_cast<uint32_t>(tl.runs.size());
    uint32_t lanes = 1;
    for (const Track& t : tl.tracks) lanes = std::max(lanes, t.lanes);
    const int64_t per_run = 1 + static_cast<int64_t>(std::max<int32_t>(1, tl.rank_count())) * lanes;
    auto prefix = [&](uint32_t run) { return runs > 1 ? fmt::format("run {}/{}: ", run + 1, runs) : std::string(); };
    meta("process_name", pid, 0, "name", name);
    meta_int("process_sort_index", pid, 0, pid);
    for (const Run& run : tl.runs) {
      meta("thread_name", pid, naming.steps_tid(run.index), "name", prefix(run.index) + "steps");
      meta_int("thread_sort_index", pid, naming.steps_tid(run.index), run.index * per_run);
    }
    for (const Track& t : tl.tracks) {
      for (uint32_t lane = 0; lane < t.lanes; ++lane) {
        std::string tname = prefix(t.run) + "rank " + std::to_string(t.rank);
        if (lane > 0) tname += " overlap " + std::to_string(lane);
        meta("thread_name", pid, naming.track_tid(t, lane), "name", tname);
        meta_int("thread_sort_index", pid, naming.track_tid(t, lane),
                 t.run * per_run + 1 + naming.thread_sort_index(t, lane));
      }
    }
    for (const Run& run : tl.runs) {
      for (const StepSpan& s : run.steps) {
        begin();
        buf_ += "{\"name\":\"step ";
        append_int(buf_, s.number);
        buf_ += "\",\"cat\":\"step\",\"ph\":\"X\",\"pid\":";
        append_int(buf_, pid);
        buf_ += ",\"tid\":";
        append_int(buf_, naming.steps_tid(run.index));
        buf_ += ",\"ts\":";
        append_trace_us(buf_, s.start_ns - offset);
        buf_ += ",\"dur\":";
        append_trace_dur_us(buf_, s.start_ns - offset, s.end_ns - offset);
        buf_ += ",\"args\":{\"step\":";
        append_int(buf_, s.number);
        buf_ += "}}";
      }
    }
    std::vector<std::string> types;
    for (const std::string& ty : tl.types) {
      std::string e;
      append_json_escaped(e, ty);
      types.push_back(std::move(e));
    }
    for (const Track& t : tl.tracks) {
      for (const Job& j : t.jobs) {
        begin();
        const std::string& ty = types[j.type];
        buf_ += "{\"name\":\"";
        append_job_name(buf_, ty, j.micro_batch, j.job_id);
        buf_ += "\",\"cat\":\"";
        buf_ += ty;
        buf_ += "\",\"ph\":\"X\",\"pid\":";
        append_int(buf_, pid);
        buf_ += ",\"tid\":";
        append_int(buf_, naming.track_tid(t, j.lane));
        buf_ += ",\"ts\":";
        append_trace_us(buf_, j.start_ns - offset);
        buf_ += ",\"dur\":";
        append_trace_dur_us(buf_, j.start_ns - offset, j.end_ns - offset);
        buf_ += ",\"cname\":\"";
        buf_ += chrome_color_name(tl.types[j.type]);
        buf_ += "\",\"args\":{\"rank\":";
        append_int(buf_, t.rank);
        buf_ += ",\"micro_batch_id\":";
        append_int(buf_, j.micro_batch);
        buf_ += ",\"step\":";
        append_int(buf_, j.step);
        buf_ += ",\"job_id\":";
        append_int(buf_, j.job_id);
        buf_ += "}}";
        if (buf_.size() > (1 << 20)) flush();
      }
    }
  }

  void finish(int64_t origin_a) {
    buf_ += "\n],\n\"displayTimeUnit\":\"ms\",\n\"metadata\":{\"generator\":\"pp-timeline diff\",\"time_origin_epoch_ns\":";
    append_int(buf_, origin_a);
    buf_ += "}}\n";
    flush();
  }

 private:
  void begin() {
    if (!first_) buf_ += ",\n";
    first_ = false;
  }
  void flush() {
    out_.write(buf_);
    buf_.clear();
  }
  void meta(const char* what, uint32_t pid, int64_t tid, const char* key, const std::string& value) {
    begin();
    buf_ += "{\"name\":\"";
    buf_ += what;
    buf_ += "\",\"ph\":\"M\",\"pid\":";
    append_int(buf_, pid);
    if (tid > 0) {
      buf_ += ",\"tid\":";
      append_int(buf_, tid);
    }
    buf_ += ",\"args\":{\"";
    buf_ += key;
    buf_ += "\":\"";
    append_json_escaped(buf_, value);
    buf_ += "\"}}";
  }
  void meta_int(const char* what, uint32_t pid, int64_t tid, int64_t value) {
    begin();
    buf_ += "{\"name\":\"";
    buf_ += what;
    buf_ += "\",\"ph\":\"M\",\"pid\":";
    append_int(buf_, pid);
    if (tid > 0) {
      buf_ += ",\"tid\":";
      append_int(buf_, tid);
    }
    buf_ += ",\"args\":{\"sort_index\":";
    append_int(buf_, value);
    buf_ += "}}";
  }

  ByteSink& out_;
  std::string buf_;
  bool first_ = true;
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
