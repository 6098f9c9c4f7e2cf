#include "pp_timeline/chrome_json_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "pp_timeline/dependencies.h"
#include "pp_timeline/line_parser.h"
#include "pp_timeline/log_line.h"
#include "pp_timeline/trace_naming.h"

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

void append_int(std::string& out, int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

class JsonTraceWriter {
 public:
  JsonTraceWriter(const Timeline& tl, const JsonWriteOptions& options, ByteSink& out)
      : tl_(tl), opt_(options), out_(out), naming_(tl) {
    origin_ = options.absolute ? 0 : tl.origin_ns;
    buf_.reserve(kFlushBytes + 4096);
  }

  void write();

 private:
  static constexpr size_t kFlushBytes = 1 << 20;

  void maybe_flush() {
    if (buf_.size() >= kFlushBytes) {
      out_.write(buf_);
      buf_.clear();
    }
  }
  void begin_event() {
    if (!first_event_) buf_ += ",\n";
    first_event_ = false;
  }
  void metadata(const char* what, uint32_t pid, int64_t tid, std::string_view key,
                const std::string* str_value, int64_t int_value);
  void write_metadata();
  void write_steps(const Run& run);
  void write_track(const Track& t);
  void write_flows();

  const Timeline& tl_;
  const JsonWriteOptions& opt_;
  ByteSink& out_;
  TraceNaming naming_;
  int64_t origin_ = 0;
  std::string buf_;
  bool first_event_ = true;
  std::vector<std::string> type_text_;  // escaped, by type index
  std::vector<const char*> colors_;     // by type index
};

void JsonTraceWriter::metadata(const char* what, uint32_t pid, int64_t tid, std::string_view key,
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

void JsonTraceWriter::write_metadata() {
  for (const Run& run : tl_.runs) {
    uint32_t spid = naming_.steps_pid(run.index);
    std::string name = naming_.steps_process_name(run.index);
    metadata("process_name", spid, 0, "name", &name, 0);
    metadata("process_sort_index", spid, 0, "sort_index", nullptr, spid);
    std::string steps = "steps";
    metadata("thread_name", spid, naming_.steps_tid(run.index), "name", &steps, 0);
    int32_t last_machine = -1;
    for (uint32_t ti : run.tracks) {
      const Track& t = tl_.tracks[ti];
      uint32_t pid = naming_.track_pid(t);
      if (t.machine != last_machine) {
        // Tracks are in rank order, which is machine-major.
        std::string pname = naming_.process_name(run.index, t.machine);
        metadata("process_name", pid, 0, "name", &pname, 0);
        metadata("process_sort_index", pid, 0, "sort_index", nullptr, pid);
        last_machine = t.machine;
      }
      for (uint32_t lane = 0; lane < t.lanes; ++lane) {
        uint32_t tid = naming_.track_tid(t, lane);
        std::string tname = naming_.thread_name(t, lane);
        metadata("thread_name", pid, tid, "name", &tname, 0);
        metadata("thread_sort_index", pid, tid, "sort_index", nullptr, naming_.thread_sort_index(t, lane));
      }
      maybe_flush();
    }
  }
}

void JsonTraceWriter::write_steps(const Run& run) {
  uint32_t pid = naming_.steps_pid(run.index);
  uint32_t tid = naming_.steps_tid(run.index);
  std::string ids = ",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) + ",\"ts\":";
  for (const StepSpan& s : run.steps) {
    begin_event();
    buf_ += "{\"name\":\"step";
    append_int(buf_, s.number);
    buf_ += "\",\"cat\":\"step\",\"ph\":\"B\"";
    buf_ += ids;
    append_us(buf_, s.start_ns - origin_);
    buf_ += ",\"args\":{\"step\":";
    append_int(buf_, s.number);
    buf_ += ",\"ranks\":";
    append_int(buf_, s.ranks);
    buf_ += "}}";
    begin_event();
    buf_ += "{\"ph\":\"E\"";
    buf_ += ids;
    append_us(buf_, s.end_ns - origin_);
    buf_ += '}';
    maybe_flush();
  }
}

// Hot: one B and one E event per job. The pieces that repeat (escaped type
// names, colours, the pid/tid text) are built once per type or lane.
void JsonTraceWriter::write_track(const Track& t) {
  std::vector<std::string> lane_ids(t.lanes);
  uint32_t pid = naming_.track_pid(t);
  for (uint32_t lane = 0; lane < t.lanes; ++lane) {
    lane_ids[lane] = ",\"pid\":" + std::to_string(pid) + ",\"tid\":" +
                     std::to_string(naming_.track_tid(t, lane)) + ",\"ts\":";
  }
  std::string args_head = ",\"args\":{\"rank\":" + std::to_string(t.rank) +
                          ",\"machine\":" + std::to_string(t.machine) +
                          ",\"local_rank\":" + std::to_string(t.local_index) + ",\"micro_batch_id\":";
  std::string source_prefix;
  append_json_escaped(source_prefix, tl_.files[t.file].path);
  source_prefix += ':';
  for (const Job& j : t.jobs) {
    const std::string& type = type_text_[j.type];
    begin_event();
    buf_ += "{\"name\":\"";
    buf_ += type;
    buf_ += '_';
    append_int(buf_, j.job_id);
    buf_ += "\",\"cat\":\"";
    buf_ += type;
    buf_ += "\",\"ph\":\"B\"";
    buf_ += lane_ids[j.lane];
    append_us(buf_, j.start_ns - origin_);
    if (opt_.flavor == JsonFlavor::kChrome) {
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
    begin_event();
    buf_ += "{\"ph\":\"E\"";
    buf_ += lane_ids[j.lane];
    append_us(buf_, j.end_ns - origin_);
    buf_ += '}';
    maybe_flush();
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
    const Track& pt = tl_.tracks[e.producer.track];
    const Track& ct = tl_.tracks[e.consumer.track];
    const Job& p = pt.jobs[e.producer.job];
    const Job& c = ct.jobs[e.consumer.job];
    std::string_view name = dependency_kind_name(e.kind);
    for (int side = 0; side < 2; ++side) {
      begin_event();
      buf_ += "{\"name\":\"";
      buf_ += name;
      if (e.contradicted) buf_ += " (contradicted by the times)";
      buf_ += side == 0 ? "\",\"cat\":\"flow\",\"ph\":\"s\",\"id\":" : "\",\"cat\":\"flow\",\"ph\":\"f\",\"bp\":\"e\",\"id\":";
      append_int(buf_, static_cast<int64_t>(i) + 1);
      if (side == 0) {
        ids(pt, p);
        append_us(buf_, (e.contradicted ? p.start_ns + inset(p) : p.end_ns - inset(p)) - origin_);
      } else {
        ids(ct, c);
        append_us(buf_, (e.contradicted ? c.end_ns - inset(c) : c.start_ns + inset(c)) - origin_);
      }
      buf_ += '}';
    }
    maybe_flush();
  }
}

void JsonTraceWriter::write() {
  for (const std::string& t : tl_.types) {
    std::string escaped;
    append_json_escaped(escaped, t);
    type_text_.push_back(std::move(escaped));
    colors_.push_back(chrome_color_name(t));
  }
  buf_ += "{\"traceEvents\":[\n";
  write_metadata();
  for (const Run& run : tl_.runs) {
    write_steps(run);
    for (uint32_t ti : run.tracks) write_track(tl_.tracks[ti]);
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
  append_int(buf_, static_cast<int64_t>(tl_.files.size()));
  buf_ += ",\"jobs\":";
  append_int(buf_, static_cast<int64_t>(tl_.job_count()));
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
  out_.write(buf_);
  buf_.clear();
}

}  // namespace

void write_chrome_json(const Timeline& timeline, const JsonWriteOptions& options, ByteSink& out) {
  JsonTraceWriter writer(timeline, options, out);
  writer.write();
}

}  // namespace ppt
