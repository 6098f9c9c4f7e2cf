#include "output/trace/chrome_json_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "model/job_types.h"
#include "output/picture/palette.h"
#include "output/trace/trace_naming.h"
#include "passes/dependencies.h"
#include "pp_timeline/log_line.h"
#include "util/text.h"

namespace ppt {

void append_json_escaped(std::string& out, std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      // Rare: validate the rest once and append it sanitized.
      bool changed = false;
      std::string clean = sanitize_utf8(s.substr(i), &changed);
      for (unsigned char d : clean) {
        if (d == '"' || d == '\\') {
          out.push_back('\\');
          out.push_back(static_cast<char>(d));
        } else if (d < 0x20) {
          out += fmt::format("\\u{:04x}", d);
        } else {
          out.push_back(static_cast<char>(d));
        }
      }
      return;
    }
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\u{:04x}", c);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
}

void append_us(std::string& out, int64_t ns) {
  if (ns < 0) {
    out.push_back('-');
    // INT64_MIN cannot occur: times are validated far below it.
    ns = -ns;
  }
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, ns / 1000);
  out.append(buf, r.ptr);
  int frac = static_cast<int>(ns % 1000);
  if (frac != 0) {
    char f[4] = {'.', static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10),
                 static_cast<char>('0' + frac % 10)};
    int len = 4;
    while (f[len - 1] == '0') --len;
    out.append(f, len);
  }
}

namespace {

// Trace times are printed on a grid of 1/2048 us (about 0.49 ns) while they
// fit 53 bits there (|t| < 2^42 us, 51 days): every such number is exact as a
// double, so whatever sums and differences a viewer computes in doubles
// (ts + dur, rebasing a thread on its first ts) are exact, and x * 1000
// rounded gives back the exact ns (the grid error is under 0.25 ns, so also
// round(dur * 1000) is the exact duration).
constexpr int64_t kGridPerUs = 2048;
constexpr int64_t kGridLimitNs = (int64_t{1} << 42) * 1000;

bool on_grid(int64_t ns) { return ns > -kGridLimitNs && ns < kGridLimitNs; }

// round(ns * 2048 / 1000); no ties: 125 is odd.
int64_t grid_of(int64_t ns) {
  if (ns < 0) return -grid_of(-ns);
  return (ns * 256 + 62) / 125;
}

// Appends k / 2048 exactly: the fraction is f / 2^11 = f * 5^11 / 10^11.
void append_grid(std::string& out, int64_t k) {
  if (k < 0) {
    out.push_back('-');
    k = -k;
  }
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, k / kGridPerUs);
  out.append(buf, r.ptr);
  int64_t frac = (k % kGridPerUs) * 48828125;  // < 10^11
  if (frac != 0) {
    char f[12];
    f[0] = '.';
    for (int i = 11; i >= 1; --i) {
      f[i] = static_cast<char>('0' + frac % 10);
      frac /= 10;
    }
    int len = 12;
    while (f[len - 1] == '0') --len;
    out.append(f, len);
  }
}

// The double a JSON reader makes of the exact text append_us(ns) prints.
double parsed_us(int64_t ns) {
  std::string text;
  append_us(text, ns);
  double v = 0;
  std::from_chars(text.data(), text.data() + text.size(), v);
  return v;
}

}  // namespace

void append_trace_us(std::string& out, int64_t ns) {
  if (on_grid(ns)) {
    append_grid(out, grid_of(ns));
  } else {
    append_us(out, ns);
  }
}

void append_trace_dur_us(std::string& out, int64_t start_ns, int64_t end_ns) {
  if (on_grid(start_ns) && on_grid(end_ns)) {
    append_grid(out, grid_of(end_ns) - grid_of(start_ns));
    return;
  }
  // Epoch times (--absolute): the ts text is exact, its double is not. The
  // dur is the difference of the two doubles (exact by Sterbenz's lemma when
  // end <= 2 * start), so that ts + dur is the end's double; nudged where
  // that lemma does not hold.
  const double t = parsed_us(start_ns);
  const double e = parsed_us(end_ns);
  double d = e - t;
  for (int i = 0; i < 64 && t + d != e; ++i) {
    d = std::nextafter(d,
                       t + d < e ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity());
  }
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, d);
  out.append(buf, r.ptr);
}

TraceEventWriter::TraceEventWriter(ByteSink& out) : out_(out) { buf_.reserve(kFlushBytes + 4096); }

void TraceEventWriter::set_timeline(const Timeline& tl, JsonFlavor flavor, int64_t origin_ns) {
  tl_ = &tl;
  flavor_ = flavor;
  origin_ = origin_ns;
  type_text_.clear();
  colors_.clear();
  for (const std::string& t : tl.types) {
    std::string escaped;
    append_json_escaped(escaped, t);
    type_text_.push_back(std::move(escaped));
    colors_.push_back(chrome_color_name(t));
  }
}

void TraceEventWriter::maybe_flush() {
  if (buf_.size() >= kFlushBytes) flush();
}

void TraceEventWriter::flush() {
  out_.write(buf_);
  buf_.clear();
}

void TraceEventWriter::begin_event() {
  if (!first_event_) buf_ += ",\n";
  first_event_ = false;
}

void TraceEventWriter::metadata(const char* what, uint32_t pid, int64_t tid, std::string_view key,
                                const std::string* str_value, int64_t int_value) {
  begin_event();
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
  buf_ += "\":";
  if (str_value) {
    buf_ += '"';
    append_json_escaped(buf_, *str_value);
    buf_ += '"';
  } else {
    append_int(buf_, int_value);
  }
  buf_ += "}}";
}

void TraceEventWriter::name(const char* what, uint32_t pid, int64_t tid, const std::string& value) {
  metadata(what, pid, tid, "name", &value, 0);
}

void TraceEventWriter::sort_index(const char* what, uint32_t pid, int64_t tid, int64_t value) {
  metadata(what, pid, tid, "sort_index", nullptr, value);
}

void TraceEventWriter::steps(const Run& run, uint32_t pid, uint32_t tid) {
  std::string ids = ",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) + ",\"ts\":";
  for (const StepSpan& s : run.steps) {
    begin_event();
    buf_ += "{\"name\":\"";
    append_step_name(buf_, s.number);
    buf_ += "\",\"cat\":\"step\",\"ph\":\"X\"";
    buf_ += ids;
    append_trace_us(buf_, s.start_ns - origin_);
    buf_ += ",\"dur\":";
    append_trace_dur_us(buf_, s.start_ns - origin_, s.end_ns - origin_);
    buf_ += ",\"args\":{\"step\":";
    append_int(buf_, s.number);
    buf_ += ",\"ranks\":";
    append_int(buf_, s.ranks);
    buf_ += "}}";
    maybe_flush();
  }
}

// Hot: one X event per job. The pieces that repeat (escaped type
// names, colours, the pid/tid text) are built once per type or lane.
void TraceEventWriter::jobs(const Track& t, uint32_t pid, const TraceNaming& naming) {
  std::vector<std::string> lane_ids(t.lanes);
  for (uint32_t lane = 0; lane < t.lanes; ++lane) {
    lane_ids[lane] =
        ",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(naming.track_tid(t, lane)) + ",\"ts\":";
  }
  std::string args_head = ",\"args\":{\"rank\":" + std::to_string(t.rank) +
                          ",\"machine\":" + std::to_string(t.machine) +
                          ",\"local_rank\":" + std::to_string(t.local_index) + ",\"micro_batch_id\":";
  std::string source_prefix;
  append_json_escaped(source_prefix, tl_->files[t.file].path);
  source_prefix += ':';
  for (const Job& j : t.jobs) {
    const std::string& type = type_text_[j.type];
    begin_event();
    buf_ += "{\"name\":\"";
    append_job_name(buf_, type, j.micro_batch, j.job_id);
    buf_ += "\",\"cat\":\"";
    buf_ += type;
    buf_ += "\",\"ph\":\"X\"";
    buf_ += lane_ids[j.lane];
    append_trace_us(buf_, j.start_ns - origin_);
    buf_ += ",\"dur\":";
    append_trace_dur_us(buf_, j.start_ns - origin_, j.end_ns - origin_);
    if (flavor_ == JsonFlavor::kChrome) {
      buf_ += ",\"cname\":\"";
      buf_ += colors_[j.type];
      buf_ += '"';
    }
    buf_ += args_head;
    append_int(buf_, j.micro_batch);
    buf_ += ",\"step\":";
    append_int(buf_, j.step);
    buf_ += ",\"job_id\":";
    append_int(buf_, j.job_id);
    buf_ += ",\"source\":\"";
    buf_ += source_prefix;
    append_int(buf_, j.line);
    if (t.clock_offset_ns != 0) {
      buf_ += "\",\"logged_start_ms\":\"";
      log_line::append_ns_as_ms(buf_, j.start_ns - t.clock_offset_ns);
      buf_ += "\",\"logged_end_ms\":\"";
      log_line::append_ns_as_ms(buf_, j.end_ns - t.clock_offset_ns);
    }
    buf_ += "\"}}";
    maybe_flush();
  }
}

void append_gib(std::string& out, int64_t bytes) {
  // round(|bytes| * 10^4 / 2^30), half up, exact in 128 bits.
  const bool negative = bytes < 0;
  const unsigned __int128 magnitude = negative ? 0 - static_cast<uint64_t>(bytes) : static_cast<uint64_t>(bytes);
  const uint64_t q = static_cast<uint64_t>((magnitude * 10000 + (uint64_t{1} << 29)) >> 30);
  if (negative && q != 0) out.push_back('-');
  append_int(out, static_cast<int64_t>(q / 10000));
  uint64_t frac = q % 10000;
  if (frac == 0) return;
  char f[5] = {'.', static_cast<char>('0' + frac / 1000), static_cast<char>('0' + frac / 100 % 10),
               static_cast<char>('0' + frac / 10 % 10), static_cast<char>('0' + frac % 10)};
  int len = 5;
  while (f[len - 1] == '0') --len;
  out.append(f, len);
}

bool has_memory_samples(const Timeline& timeline) {
  for (const Track& t : timeline.tracks) {
    if (!t.memory.empty()) return true;
  }
  return false;
}

void TraceEventWriter::memory(const Track& t, uint32_t pid, const TraceNaming& naming, std::string_view prefix) {
  if (t.memory.empty()) return;
  std::string name;
  append_json_escaped(name, prefix);
  append_json_escaped(name, naming.thread_name(t, 0));
  const std::string ids = ",\"ph\":\"C\",\"pid\":" + std::to_string(pid) + ",\"ts\":";
  for (const MemorySample& s : t.memory) {
    for (int reserved = 0; reserved < 2; ++reserved) {
      begin_event();
      buf_ += "{\"name\":\"";
      buf_ += name;
      buf_ += reserved ? " memory reserved\"" : " memory allocated\"";
      buf_ += ids;
      append_trace_us(buf_, s.ts_ns - origin_);
      buf_ += ",\"args\":{\"GiB\":";
      append_gib(buf_, reserved ? s.reserved_bytes : s.allocated_bytes);
      buf_ += "}}";
    }
    maybe_flush();
  }
}

namespace {

class JsonTraceWriter {
 public:
  JsonTraceWriter(const Timeline& tl, const JsonWriteOptions& options, ByteSink& out)
      : tl_(tl), opt_(options), naming_(tl), events_(out), buf_(events_.buffer()) {
    origin_ = options.absolute ? 0 : tl.origin_ns;
    events_.set_timeline(tl, options.flavor, origin_);
  }

  void write();

 private:
  void write_metadata();
  void write_flows();

  const Timeline& tl_;
  const JsonWriteOptions& opt_;
  TraceNaming naming_;
  TraceEventWriter events_;
  std::string& buf_;  // the events' buffer: the trace's head, flows and tail
  int64_t origin_ = 0;
};

void JsonTraceWriter::write_metadata() {
  for (const Run& run : tl_.runs) {
    uint32_t spid = naming_.steps_pid(run.index);
    events_.name("process_name", spid, 0, naming_.steps_process_name(run.index));
    events_.sort_index("process_sort_index", spid, 0, spid);
    events_.name("thread_name", spid, naming_.steps_tid(run.index), "steps");
    int32_t last_machine = -1;
    for (uint32_t ti : run.tracks) {
      const Track& t = tl_.tracks[ti];
      uint32_t pid = naming_.track_pid(t);
      if (t.machine != last_machine) {
        // Tracks are in rank order, which is machine-major.
        events_.name("process_name", pid, 0, naming_.process_name(run.index, t.machine));
        events_.sort_index("process_sort_index", pid, 0, pid);
        last_machine = t.machine;
      }
      for (uint32_t lane = 0; lane < t.lanes; ++lane) {
        uint32_t tid = naming_.track_tid(t, lane);
        events_.name("thread_name", pid, tid, naming_.thread_name(t, lane));
        events_.sort_index("thread_sort_index", pid, tid, naming_.thread_sort_index(t, lane));
      }
      events_.maybe_flush();
    }
  }
}

// One s/f pair per dependency (chrome_json_writer.h says where they sit).
void JsonTraceWriter::write_flows() {
  const Dependencies& deps = *opt_.dependencies;
  auto inset = [](const Job& j) { return std::min<int64_t>(1000, (j.end_ns - j.start_ns) / 2); };
  auto ids = [&](const Track& t, const Job& j) {
    buf_ += ",\"pid\":";
    append_int(buf_, naming_.track_pid(t));
    buf_ += ",\"tid\":";
    append_int(buf_, naming_.track_tid(t, j.lane));
    buf_ += ",\"ts\":";
  };
  for (size_t i = 0; i < deps.edges.size(); ++i) {
    const Dependency& e = deps.edges[i];
    const Track* from_track = &tl_.tracks[e.producer.track];
    const Track* to_track = &tl_.tracks[e.consumer.track];
    const Job* from = &from_track->jobs[e.producer.job];
    const Job* to = &to_track->jobs[e.consumer.job];
    int64_t from_ns = from->end_ns - inset(*from);
    int64_t to_ns = to->start_ns + inset(*to);
    std::string_view suffix;
    if (e.contradicted) {
      suffix = " (contradicted by the times)";
      if (to->start_ns < from->start_ns) {
        std::swap(from_track, to_track);
        std::swap(from, to);
        suffix = " (contradicted by the times, drawn consumer to producer)";
      }
      const int64_t d = std::min(inset(*from), inset(*to));
      from_ns = from->start_ns + d;
      to_ns = to->start_ns + d;
    }
    std::string_view name = dependency_kind_name(e.kind);
    for (int side = 0; side < 2; ++side) {
      events_.begin_event();
      buf_ += "{\"name\":\"";
      buf_ += name;
      buf_ += suffix;
      buf_ += side == 0 ? "\",\"cat\":\"flow\",\"ph\":\"s\",\"id\":"
                        : "\",\"cat\":\"flow\",\"ph\":\"f\",\"bp\":\"e\",\"id\":";
      append_int(buf_, static_cast<int64_t>(i) + 1);
      if (side == 0) {
        ids(*from_track, *from);
        append_trace_us(buf_, from_ns - origin_);
      } else {
        ids(*to_track, *to);
        append_trace_us(buf_, to_ns - origin_);
      }
      buf_ += '}';
    }
    events_.maybe_flush();
  }
}

void JsonTraceWriter::write() {
  buf_ += "{\"traceEvents\":[\n";
  write_metadata();
  for (const Run& run : tl_.runs) {
    events_.steps(run, naming_.steps_pid(run.index), naming_.steps_tid(run.index));
    for (uint32_t ti : run.tracks) {
      const Track& t = tl_.tracks[ti];
      events_.jobs(t, naming_.track_pid(t), naming_);
      events_.memory(t, naming_.track_pid(t), naming_);
    }
  }
  if (opt_.dependencies) write_flows();
  buf_ += "\n],\n\"displayTimeUnit\":\"ms\",\n\"metadata\":{\"generator\":\"pp-timeline\",";
  buf_ += "\"time_origin_epoch_ns\":";
  append_int(buf_, origin_);
  buf_ += ",\"timestamps\":\"";
  buf_ += opt_.absolute ? "epoch microseconds" : "microseconds since time_origin_epoch_ns";
  buf_ += "\",\"runs\":";
  append_int(buf_, static_cast<int64_t>(tl_.runs.size()));
  buf_ += ",\"ranks\":";
  append_int(buf_, static_cast<int64_t>(tl_.rank_files()));
  if (tl_.resolution_ns > 1) {
    // Dynamic-graph profile records: times are whole milliseconds.
    buf_ += ",\"time_resolution_ns\":";
    append_int(buf_, tl_.resolution_ns);
  }
  buf_ += ",\"jobs\":";
  append_int(buf_, static_cast<int64_t>(tl_.job_count()));
  if (has_memory_samples(tl_)) {
    size_t samples = 0;
    for (const Track& t : tl_.tracks) samples += t.memory.size();
    buf_ += ",\"memory_samples\":";
    append_int(buf_, static_cast<int64_t>(samples));
    if (tl_.memory_resolution_bytes > 0) {
      buf_ += ",\"memory_resolution_bytes\":";
      append_int(buf_, tl_.memory_resolution_bytes);
    }
  }
  if (!tl_.prediction.empty()) {
    buf_ += ",\"prediction\":\"";
    append_json_escaped(buf_, tl_.prediction);
    buf_ += '"';
  }
  if (!tl_.partial.empty()) {
    buf_ += ",\"partial\":\"";
    append_json_escaped(buf_, tl_.partial);
    buf_ += '"';
  }
  if (opt_.dependencies) {
    buf_ += ",\"flows\":";
    append_int(buf_, static_cast<int64_t>(opt_.dependencies->edges.size()));
  }
  // Clock alignment: the offset added to each shifted machine's logged times.
  std::string offsets;
  for (const Run& run : tl_.runs) {
    int32_t last = -1;
    for (uint32_t ti : run.tracks) {
      const Track& t = tl_.tracks[ti];
      if (t.machine == last || t.clock_offset_ns == 0) continue;
      last = t.machine;
      offsets += offsets.empty() ? "[" : ",";
      offsets += "{\"run\":";
      append_int(offsets, run.index);
      offsets += ",\"machine\":\"";
      const std::string& machine = tl_.machines.size() > static_cast<size_t>(t.machine) ? tl_.machines[t.machine] : "";
      append_json_escaped(offsets, machine.empty() ? fmt::format("machine{}", t.machine) : machine);
      offsets += "\",\"offset_ns\":";
      append_int(offsets, t.clock_offset_ns);
      offsets += '}';
    }
  }
  if (!offsets.empty()) {
    buf_ += ",\"clock_offsets\":";
    buf_ += offsets;
    buf_ += ']';
  }
  buf_ += "}}\n";
  events_.flush();
}

}  // namespace

void write_chrome_json(const Timeline& timeline, const JsonWriteOptions& options, ByteSink& out) {
  JsonTraceWriter writer(timeline, options, out);
  writer.write();
}

}  // namespace ppt
