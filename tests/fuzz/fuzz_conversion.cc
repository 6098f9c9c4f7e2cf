// Fuzz target: a whole conversion of an in-memory log directory, from the
// bytes of each rank's log to the written traces.
//
// Input: one options byte, then up to kMaxFiles logs separated by the
// literal "@@FILE@@". Options: bits 0-5 pick a small read buffer (so lines
// cross buffer boundaries and long lines take the skip path), bit 6 spreads
// the files over two machines, bit 7 also builds with two threads and
// compares the output bytes.
//
// Checked on every input, beyond "no crash, no undefined behaviour":
//  - nothing is lost: every line with the job marker is counted (against an
//    independent count of the input), and written + rejected = seen, per file
//    and in the summary;
//  - line and byte counts match the input;
//  - a small read buffer finds the same jobs as a large one when no line is
//    longer than the small one;
//  - the model's invariants (timeline.h): tracks sorted, lanes never overlap,
//    steps ordered, every job's step is one of its run's steps;
//  - the JSON trace parses, draws each job once as a B/E pair, never overlaps
//    slices on a track, and the Perfetto flavour is the Chrome one without
//    its colours; 1 and 2 threads write the same bytes;
//  - the .pftrace output is well-formed protobuf wire format (walked by a
//    decoder written here, independent of proto_wire.h) with one slice begin
//    and one end per job and per step.
#include <zlib.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fuzz_check.h"
#include "input/file_scanner.h"
#include "input/line_parser.h"
#include "model/timeline.h"
#include "output/sink/byte_sink.h"
#include "output/text/summary.h"
#include "output/trace/chrome_json_writer.h"
#include "output/trace/perfetto_writer.h"
#include "passes/timeline_builder.h"
#include "pp_timeline/log_line.h"

namespace {

constexpr std::string_view kSeparator = "@@FILE@@";
constexpr size_t kMaxFiles = 6;
constexpr size_t kLargeBuffer = 1 << 20;

const ppt::LineParser& parser() {
  static const ppt::LineParser p;
  return p;
}

struct LineStats {
  uint64_t lines = 0;
  uint64_t marker_lines = 0;
  size_t longest = 0;  // bytes, without the '\n'
};

// Counted without the scanner's code: split at '\n', look for the marker.
LineStats count_lines(std::string_view data) {
  LineStats s;
  size_t pos = 0;
  while (pos < data.size()) {
    size_t nl = data.find('\n', pos);
    size_t end = nl == std::string_view::npos ? data.size() : nl;
    std::string_view line = data.substr(pos, end - pos);
    ++s.lines;
    s.longest = std::max(s.longest, line.size());
    if (line.find(ppt::log_line::kJobMarker) != std::string_view::npos) ++s.marker_lines;
    pos = end + 1;
  }
  return s;
}

bool same_jobs(const ppt::FileScan& a, const ppt::FileScan& b) {
  if (a.jobs.size() != b.jobs.size() || a.types != b.types || a.markers.size() != b.markers.size() ||
      a.thread_changes.size() != b.thread_changes.size() || a.process_starts.size() != b.process_starts.size()) {
    return false;
  }
  for (size_t i = 0; i < a.process_starts.size(); ++i) {
    if (a.process_starts[i].job_index != b.process_starts[i].job_index ||
        a.process_starts[i].line != b.process_starts[i].line) {
      return false;
    }
  }
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    const ppt::Job &x = a.jobs[i], &y = b.jobs[i];
    if (x.start_ns != y.start_ns || x.end_ns != y.end_ns || x.job_id != y.job_id || x.micro_batch != y.micro_batch ||
        x.type != y.type || x.line != y.line) {
      return false;
    }
  }
  for (size_t i = 0; i < a.markers.size(); ++i) {
    if (a.markers[i].job_index != b.markers[i].job_index || a.markers[i].line != b.markers[i].line ||
        a.markers[i].start_step != b.markers[i].start_step) {
      return false;
    }
  }
  for (size_t i = 0; i < a.thread_changes.size(); ++i) {
    if (a.thread_changes[i].job_index != b.thread_changes[i].job_index ||
        a.thread_changes[i].thread_id != b.thread_changes[i].thread_id) {
      return false;
    }
  }
  for (size_t k = 0; k < ppt::kIssueKindCount; ++k) {
    auto kind = static_cast<ppt::IssueKind>(k);
    if (a.diagnostics.count_of(kind) != b.diagnostics.count_of(kind)) return false;
  }
  return true;
}

void check_scan(const ppt::FileScan& s, std::string_view data, const LineStats& stats, size_t file) {
  FUZZ_CHECK(s.readable, "file %zu unreadable from memory", file);
  FUZZ_CHECK(s.counts.bytes == data.size(), "file %zu: %llu bytes counted, %zu given", file,
             static_cast<unsigned long long>(s.counts.bytes), data.size());
  FUZZ_CHECK(s.counts.lines == stats.lines, "file %zu: %llu lines counted, %llu in the input", file,
             static_cast<unsigned long long>(s.counts.lines), static_cast<unsigned long long>(stats.lines));
  // `[Pipeline details]` lines describe jobs too (pairs, unmatched halves,
  // bad lines): the marker lines are then a lower bound.
  const bool details = data.find("[Pipeline details] ") != std::string_view::npos;
  FUZZ_CHECK(details ? s.counts.profiler_lines >= stats.marker_lines : s.counts.profiler_lines == stats.marker_lines,
             "file %zu: %llu profiler lines counted, %llu in the input", file,
             static_cast<unsigned long long>(s.counts.profiler_lines),
             static_cast<unsigned long long>(stats.marker_lines));
  FUZZ_CHECK(s.counts.jobs == s.jobs.size(), "file %zu", file);
  FUZZ_CHECK(s.counts.jobs + s.diagnostics.rejected_jobs() == s.counts.profiler_lines,
             "file %zu: %zu jobs + %llu rejected != %llu seen", file, s.jobs.size(),
             static_cast<unsigned long long>(s.diagnostics.rejected_jobs()),
             static_cast<unsigned long long>(s.counts.profiler_lines));
  for (const ppt::Job& j : s.jobs) {
    FUZZ_CHECK(j.type < s.types.size(), "file %zu: type index out of range", file);
    FUZZ_CHECK(j.line >= 1 && j.line <= stats.lines, "file %zu: line %u of %llu", file, j.line,
               static_cast<unsigned long long>(stats.lines));
    FUZZ_CHECK(j.start_ns > 0 && j.end_ns >= j.start_ns, "file %zu line %u", file, j.line);
  }
}

void check_timeline(const ppt::Timeline& tl, uint64_t seen) {
  FUZZ_CHECK(tl.counts.profiler_lines == seen, "summary counts %llu profiler lines, input has %llu",
             static_cast<unsigned long long>(tl.counts.profiler_lines), static_cast<unsigned long long>(seen));
  FUZZ_CHECK(tl.job_count() == tl.counts.jobs, "%zu jobs in tracks, %llu parsed", tl.job_count(),
             static_cast<unsigned long long>(tl.counts.jobs));
  FUZZ_CHECK(tl.job_count() + tl.diagnostics.rejected_jobs() == tl.counts.profiler_lines,
             "written %zu + rejected %llu != seen %llu", tl.job_count(),
             static_cast<unsigned long long>(tl.diagnostics.rejected_jobs()),
             static_cast<unsigned long long>(tl.counts.profiler_lines));
  // The summary line says the same.
  std::string summary = ppt::format_summary(tl);
  std::string want = ppt::with_commas(tl.counts.profiler_lines) +
                     " profiler lines: " + ppt::with_commas(tl.job_count()) + " jobs written, " +
                     ppt::with_commas(tl.diagnostics.rejected_jobs()) + " rejected";
  FUZZ_CHECK(summary.find(want) != std::string::npos, "summary '%s' lacks '%s'", summary.c_str(), want.c_str());
  (void)ppt::format_diagnostics(tl);

  std::vector<uint8_t> track_seen(tl.tracks.size(), 0);
  for (size_t r = 0; r < tl.runs.size(); ++r) {
    const ppt::Run& run = tl.runs[r];
    FUZZ_CHECK(run.index == r, "run %zu has index %u", r, run.index);
    for (size_t k = 1; k < run.steps.size(); ++k) {
      FUZZ_CHECK(run.steps[k].number > run.steps[k - 1].number, "run %zu: steps out of order", r);
      FUZZ_CHECK(run.steps[k].start_ns >= run.steps[k - 1].end_ns, "run %zu: step %d starts before %d ended", r,
                 run.steps[k].number, run.steps[k - 1].number);
    }
    for (const ppt::StepSpan& s : run.steps) {
      FUZZ_CHECK(s.start_ns <= s.end_ns && s.ranks > 0, "run %zu step %d", r, s.number);
    }
    for (uint32_t ti : run.tracks) {
      FUZZ_CHECK(ti < tl.tracks.size() && !track_seen[ti], "run %zu: bad or repeated track %u", r, ti);
      track_seen[ti] = 1;
      const ppt::Track& t = tl.tracks[ti];
      FUZZ_CHECK(t.run == r, "track %u in run %zu says run %u", ti, r, t.run);
      std::vector<int64_t> lane_end(t.lanes, INT64_MIN);
      for (size_t k = 0; k < t.jobs.size(); ++k) {
        const ppt::Job& j = t.jobs[k];
        if (k > 0) {
          const ppt::Job& p = t.jobs[k - 1];
          FUZZ_CHECK(p.start_ns < j.start_ns || (p.start_ns == j.start_ns && p.line <= j.line),
                     "track %u: jobs out of order", ti);
        }
        FUZZ_CHECK(j.lane < t.lanes, "track %u: lane %u of %u", ti, j.lane, t.lanes);
        FUZZ_CHECK(j.start_ns >= lane_end[j.lane], "track %u lane %u: jobs overlap", ti, j.lane);
        lane_end[j.lane] = j.end_ns;
        FUZZ_CHECK(j.type < tl.types.size(), "track %u: type out of range", ti);
        bool step_known =
            std::any_of(run.steps.begin(), run.steps.end(), [&](const ppt::StepSpan& s) { return s.number == j.step; });
        FUZZ_CHECK(step_known, "track %u: job at line %u is in step %d, which run %zu lacks", ti, j.line, j.step, r);
      }
    }
  }
  for (size_t ti = 0; ti < tl.tracks.size(); ++ti) {
    FUZZ_CHECK(track_seen[ti], "track %zu belongs to no run", ti);
  }
}

// Parses one JSON trace and checks it.
void check_json(const std::string& text, const ppt::Timeline& tl, bool chrome) {
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  FUZZ_CHECK(!doc.is_discarded(), "the %s trace is not JSON", chrome ? "Chrome" : "Perfetto");
  FUZZ_CHECK(doc.contains("traceEvents") && doc["traceEvents"].is_array(), "no traceEvents");
  // Slices on one track must not overlap, as a viewer computes their ends:
  // ts + dur in doubles.
  std::map<std::pair<int64_t, int64_t>, double> last_end;
  size_t jobs = 0;
  for (const nlohmann::json& e : doc["traceEvents"]) {
    std::string ph = e.value("ph", "");
    FUZZ_CHECK(ph != "B" && ph != "E", "a B/E event: slices are X events");
    if (ph != "X") continue;
    FUZZ_CHECK(e["pid"].is_number_integer() && e["pid"].get<int64_t>() > 0, "pid");
    FUZZ_CHECK(e["tid"].is_number_integer() && e["tid"].get<int64_t>() > 0, "tid");
    FUZZ_CHECK(e["ts"].is_number(), "ts");
    FUZZ_CHECK(e["dur"].is_number() && e["dur"].get<double>() >= 0, "dur");
    FUZZ_CHECK(e.value("name", "") != "", "a slice without a name");
    auto key = std::make_pair(e["pid"].get<int64_t>(), e["tid"].get<int64_t>());
    double ts = e["ts"].get<double>();
    if (e.value("cat", "") != "step") ++jobs;
    FUZZ_CHECK(chrome == e.contains("cname") || e.value("cat", "") == "step", "cname in the wrong flavour");
    auto prev = last_end.find(key);
    FUZZ_CHECK(prev == last_end.end() || ts >= prev->second,
               "a slice begins before the previous one on its track ended (pid %lld tid %lld)",
               static_cast<long long>(key.first), static_cast<long long>(key.second));
    last_end[key] = ts + e["dur"].get<double>();
  }
  FUZZ_CHECK(jobs == tl.job_count(), "%zu jobs drawn, %zu in the model", jobs, tl.job_count());
}

// Removes every ,"cname":"..." (colour names are plain identifiers).
std::string strip_cname(const std::string& s) {
  static constexpr std::string_view kKey = ",\"cname\":\"";
  std::string out;
  out.reserve(s.size());
  size_t pos = 0;
  while (true) {
    size_t at = s.find(kKey, pos);
    if (at == std::string::npos) break;
    out.append(s, pos, at - pos);
    size_t close = s.find('"', at + kKey.size());
    FUZZ_CHECK(close != std::string::npos, "unterminated cname");
    pos = close + 1;
  }
  out.append(s, pos, std::string::npos);
  return out;
}

std::string write_json(const ppt::Timeline& tl, ppt::JsonFlavor flavor) {
  ppt::StringSink sink;
  ppt::JsonWriteOptions o;
  o.flavor = flavor;
  ppt::write_chrome_json(tl, o, sink);
  return std::move(sink.data);
}

// Protobuf wire format, read without proto_wire.h: false on any overrun.
bool read_varint(std::string_view& s, uint64_t* v) {
  *v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (s.empty()) return false;
    uint8_t b = static_cast<uint8_t>(s.front());
    s.remove_prefix(1);
    *v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

// Calls fn(field, wire_type, varint value or 0, payload) for each field of one message.
template <typename Fn>
bool walk_fields(std::string_view s, Fn&& fn) {
  while (!s.empty()) {
    uint64_t key = 0, v = 0;
    if (!read_varint(s, &key)) return false;
    uint32_t field = static_cast<uint32_t>(key >> 3), wire = key & 7;
    std::string_view payload;
    switch (wire) {
      case 0:
        if (!read_varint(s, &v)) return false;
        break;
      case 1:
        if (s.size() < 8) return false;
        s.remove_prefix(8);
        break;
      case 2:
        if (!read_varint(s, &v) || v > s.size()) return false;
        payload = s.substr(0, v);
        s.remove_prefix(v);
        break;
      case 5:
        if (s.size() < 4) return false;
        s.remove_prefix(4);
        break;
      default: return false;
    }
    if (field == 0) return false;
    fn(field, wire, v, payload);
  }
  return true;
}

// The compressed .pftrace (the default) inflates to the plain one: each
// compressed_packets packet (field 50, alone in its packet) holds a zlib
// stream of the packets it replaces.
void check_compressed_pftrace(const ppt::Timeline& tl, const std::string& plain) {
  ppt::StringSink sink;
  ppt::write_perfetto_trace(tl, ppt::PerfettoWriteOptions{}, sink);
  std::string inflated;
  bool ok = true;  // set before the walk: its callback updates it
  ok &= walk_fields(sink.data, [&](uint32_t, uint32_t, uint64_t, std::string_view packet) {
    std::string_view packed;
    size_t fields = 0;
    ok &= walk_fields(packet, [&](uint32_t f, uint32_t, uint64_t, std::string_view v) {
      ++fields;
      if (f == 50) packed = v;
    });
    if (packed.data() == nullptr) {
      std::string framed(1, '\x0a');
      for (uint64_t n = packet.size();; n >>= 7) {
        framed.push_back(static_cast<char>(n < 0x80 ? n : (n & 0x7f) | 0x80));
        if (n < 0x80) break;
      }
      inflated += framed;
      inflated += packet;
      return;
    }
    ok &= fields == 1;
    std::string out(packed.size() * 200 + 1024, '\0');
    uLongf n = out.size();
    ok &= uncompress(reinterpret_cast<Bytef*>(out.data()), &n, reinterpret_cast<const Bytef*>(packed.data()),
                     packed.size()) == Z_OK;
    inflated.append(out.data(), n);
  });
  FUZZ_CHECK(ok && inflated == plain, "the compressed .pftrace does not inflate to the plain one (%zu bytes)",
             sink.data.size());
}

void check_pftrace(const ppt::Timeline& tl) {
  ppt::StringSink sink;
  ppt::PerfettoWriteOptions options;
  options.compress = false;  // the packets themselves (compressed, the unit tests inflate them)
  ppt::write_perfetto_trace(tl, options, sink);
  size_t begins = 0, ends = 0;
  bool packets_ok = true;
  // Trace { repeated TracePacket packet = 1; } TracePacket { TrackEvent track_event = 11; }
  // TrackEvent { Type type = 9; }  TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2.
  bool ok = walk_fields(sink.data, [&](uint32_t field, uint32_t wire, uint64_t, std::string_view packet) {
    if (field != 1 || wire != 2) {
      packets_ok = false;
      return;
    }
    packets_ok &= walk_fields(packet, [&](uint32_t f, uint32_t w, uint64_t, std::string_view event) {
      if (f != 11 || w != 2) return;
      packets_ok &= walk_fields(event, [&](uint32_t ef, uint32_t ew, uint64_t v, std::string_view) {
        if (ef == 9 && ew == 0) {
          begins += v == 1;
          ends += v == 2;
        }
      });
    });
  });
  FUZZ_CHECK(ok && packets_ok, "the .pftrace output is not well-formed protobuf (%zu bytes)", sink.data.size());
  size_t steps = 0;
  for (const ppt::Run& r : tl.runs) steps += r.steps.size();
  FUZZ_CHECK(begins == ends, ".pftrace: %zu slice begins, %zu ends", begins, ends);
  FUZZ_CHECK(begins == tl.job_count() + steps, ".pftrace: %zu slices for %zu jobs and %zu steps", begins,
             tl.job_count(), steps);
  check_compressed_pftrace(tl, sink.data);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t options = data[0];
  std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::vector<std::string_view> logs;
  while (logs.size() + 1 < kMaxFiles) {
    size_t sep = input.find(kSeparator);
    if (sep == std::string_view::npos) break;
    logs.push_back(input.substr(0, sep));
    input.remove_prefix(sep + kSeparator.size());
  }
  logs.push_back(input);

  ppt::ScanOptions small;
  small.buffer_bytes = 76 + static_cast<size_t>(options & 0x3f) * 16;
  ppt::ScanOptions large;
  large.buffer_bytes = kLargeBuffer;
  const bool two_machines = (options & 0x40) != 0;
  const bool compare_threads = (options & 0x80) != 0;

  std::vector<ppt::SourceFile> files;
  std::vector<ppt::FileScan> scans;
  uint64_t seen = 0;
  for (size_t i = 0; i < logs.size(); ++i) {
    LineStats stats = count_lines(logs[i]);
    seen += stats.marker_lines;
    ppt::FileScan a = ppt::scan_buffer(logs[i], static_cast<uint32_t>(i), parser(), large);
    ppt::FileScan b = ppt::scan_buffer(logs[i], static_cast<uint32_t>(i), parser(), small);
    check_scan(a, logs[i], stats, i);
    check_scan(b, logs[i], stats, i);
    seen += b.counts.profiler_lines - stats.marker_lines;  // the jobs of `[Pipeline details]` lines
    if (stats.longest + 1 < small.buffer_bytes) {
      FUZZ_CHECK(same_jobs(a, b), "file %zu: a %zu-byte buffer reads other jobs than a large one", i,
                 small.buffer_bytes);
    }
    int32_t machine = two_machines ? static_cast<int32_t>(i * 2 / logs.size()) : 0;
    ppt::SourceFile f;
    f.path = "logs/" + (two_machines ? "machine" + std::to_string(machine) + "/" : std::string()) + "workerlog." +
             std::to_string(i);
    f.machine_name = two_machines ? "machine" + std::to_string(machine) : "";
    f.machine = machine;
    f.local_index = static_cast<int32_t>(i);
    f.global_rank = static_cast<int32_t>(i);
    files.push_back(f);
    scans.push_back(std::move(b));
  }
  std::vector<std::string> machines =
      two_machines ? std::vector<std::string>{"machine0", "machine1"} : std::vector<std::string>{""};
  std::vector<ppt::FileScan> scans_copy;
  if (compare_threads) scans_copy = scans;
  ppt::Timeline tl = ppt::build_from_scans(files, machines, std::move(scans), 1);
  check_timeline(tl, seen);

  std::string chrome = write_json(tl, ppt::JsonFlavor::kChrome);
  std::string perfetto = write_json(tl, ppt::JsonFlavor::kPerfetto);
  check_json(chrome, tl, true);
  // The Perfetto flavour is the Chrome one without its colours, byte for byte
  // (compared as text: a second JSON parse would halve the fuzzer's speed).
  FUZZ_CHECK(strip_cname(chrome) == perfetto, "the two JSON flavours differ beyond cname");
  check_pftrace(tl);

  if (compare_threads) {
    ppt::Timeline tl2 = ppt::build_from_scans(files, machines, std::move(scans_copy), 2);
    FUZZ_CHECK(write_json(tl2, ppt::JsonFlavor::kChrome) == chrome, "1 and 2 threads write different bytes");
  }
  return 0;
}
