#include "output/trace/perfetto_writer.h"

#include <zlib.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <climits>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "output/trace/chrome_json_writer.h"
#include "output/trace/trace_naming.h"
#include "passes/clock_align.h"
#include "passes/dependencies.h"
#include "passes/pipeline.h"
#include "support/memory_samples.h"
#include "support/test_support.h"

using namespace ppt;
using ppt::testing::generate_logs;
using ppt::testing::run_command;
using ppt::testing::TempDir;

namespace {

// protoc's text output, as a tree. Scalars keep their text (strings
// unquoted and unescaped).
struct TextNode {
  std::vector<std::pair<std::string, std::string>> fields;
  std::vector<std::pair<std::string, TextNode>> children;

  std::string get(const std::string& name, const std::string& fallback = "") const {
    for (const auto& [k, v] : fields) {
      if (k == name) return v;
    }
    return fallback;
  }
  int64_t num(const std::string& name, int64_t fallback = -1) const {
    std::string v = get(name);
    return v.empty() ? fallback : std::stoll(v);
  }
  std::vector<std::string> all(const std::string& name) const {
    std::vector<std::string> out;
    for (const auto& [k, v] : fields) {
      if (k == name) out.push_back(v);
    }
    return out;
  }
  const TextNode* child(const std::string& name) const {
    for (const auto& [k, c] : children) {
      if (k == name) return &c;
    }
    return nullptr;
  }
  std::vector<const TextNode*> all_children(const std::string& name) const {
    std::vector<const TextNode*> out;
    for (const auto& [k, c] : children) {
      if (k == name) out.push_back(&c);
    }
    return out;
  }
};

std::string unquote(const std::string& v) {
  if (v.size() < 2 || v.front() != '"') return v;
  std::string out;
  for (size_t i = 1; i + 1 < v.size(); ++i) {
    if (v[i] != '\\') {
      out.push_back(v[i]);
      continue;
    }
    char c = v[++i];
    if (c >= '0' && c <= '7') {  // octal byte
      int n = 0;
      for (int k = 0; k < 3 && i < v.size() && v[i] >= '0' && v[i] <= '7'; ++k, ++i) n = n * 8 + (v[i] - '0');
      --i;
      out.push_back(static_cast<char>(n));
    } else if (c == 'n') {
      out.push_back('\n');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// Fails the test on a field protoc could not name (a bare number): a field
// the writer emits that the .proto does not declare.
TextNode parse_text(const std::string& text) {
  TextNode root;
  std::vector<TextNode*> stack{&root};
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? text.size() : nl + 1;
    size_t b = line.find_first_not_of(' ');
    if (b == std::string::npos) continue;
    line = line.substr(b);
    INFO(line);
    REQUIRE_FALSE((line[0] >= '0' && line[0] <= '9'));
    if (line == "}") {
      REQUIRE(stack.size() > 1);
      stack.pop_back();
    } else if (line.size() > 2 && line.substr(line.size() - 2) == " {") {
      stack.back()->children.push_back({line.substr(0, line.size() - 2), {}});
      stack.push_back(&stack.back()->children.back().second);
    } else {
      size_t colon = line.find(": ");
      REQUIRE(colon != std::string::npos);
      stack.back()->fields.push_back({line.substr(0, colon), unquote(line.substr(colon + 2))});
    }
  }
  REQUIRE(stack.size() == 1);
  return root;
}

std::string protoc_path() {
#ifdef PPT_PROTOC
  return PPT_PROTOC;
#else
  return "";
#endif
}

// A protobuf field as the tests read it: number, wire type, and where its
// value lies (a length-delimited value without its length).
struct WireField {
  uint32_t field = 0;
  uint32_t wire = 0;
  size_t start = 0;  // its key
  size_t begin = 0, end = 0;
};

uint64_t read_varint(std::string_view data, size_t& pos) {
  uint64_t v = 0;
  for (int shift = 0;; shift += 7) {
    REQUIRE(pos < data.size());
    const auto b = static_cast<uint8_t>(data[pos++]);
    v |= uint64_t{b & 0x7fu} << shift;
    if (b < 0x80) return v;
  }
}

std::vector<WireField> wire_fields(std::string_view data) {
  std::vector<WireField> out;
  size_t pos = 0;
  while (pos < data.size()) {
    const size_t start = pos;
    const uint64_t key = read_varint(data, pos);
    WireField f{static_cast<uint32_t>(key >> 3), static_cast<uint32_t>(key & 7), start, pos, pos};
    if (f.wire == 0) {
      read_varint(data, pos);
    } else if (f.wire == 1 || f.wire == 5) {
      pos += f.wire == 1 ? 8 : 4;
    } else {
      REQUIRE(f.wire == 2);
      const uint64_t n = read_varint(data, pos);
      f.begin = pos;
      pos += n;
    }
    REQUIRE(pos <= data.size());
    f.end = pos;
    out.push_back(f);
  }
  return out;
}

std::string zlib_inflate(std::string_view in) {
  z_stream z{};
  REQUIRE(inflateInit(&z) == Z_OK);  // a zlib header, as Perfetto's service writes
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  std::string out;
  int rc = Z_OK;
  while (rc == Z_OK) {
    char buf[65536];
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof buf - z.avail_out);
  }
  inflateEnd(&z);
  CHECK(rc == Z_STREAM_END);
  CHECK(z.avail_in == 0);  // one whole stream, nothing after it
  return out;
}

constexpr uint32_t kCompressedPacketsField = 50;

// The trace with each compressed_packets packet replaced by the packets it
// holds, as Perfetto's trace processor reads them (proto_trace_tokenizer.h):
// a compressed packet has no other field and is under 512 KB, and what it
// holds is Trace.packet fields, none of them compressed again. `compressed`
// (when given) gets how many compressed packets there were.
std::string inflate_trace(std::string_view trace, size_t* compressed = nullptr) {
  std::string out;
  size_t n = 0;
  for (const WireField& p : wire_fields(trace)) {
    REQUIRE(p.field == 1);
    REQUIRE(p.wire == 2);
    std::string_view body = trace.substr(p.begin, p.end - p.begin);
    std::vector<WireField> fields = wire_fields(body);
    auto packed = std::find_if(fields.begin(), fields.end(),
                               [](const WireField& f) { return f.field == kCompressedPacketsField; });
    if (packed == fields.end()) {
      out.append(trace.substr(p.start, p.end - p.start));
      continue;
    }
    ++n;
    CHECK(fields.size() == 1);
    CHECK(p.end - p.start < 512 * 1024);
    std::string inner = zlib_inflate(body.substr(packed->begin, packed->end - packed->begin));
    for (const WireField& q : wire_fields(inner)) {
      REQUIRE(q.field == 1);
      for (const WireField& g : wire_fields(std::string_view(inner).substr(q.begin, q.end - q.begin))) {
        CHECK(g.field != kCompressedPacketsField);
      }
    }
    out += inner;
  }
  if (compressed) *compressed = n;
  return out;
}

// Decodes a .pftrace with protoc and the project's subset of Perfetto's
// protos, its compressed packets inflated first (inflate_trace); empty when
// protoc is missing.
std::optional<TextNode> decode(const std::string& bytes) {
  if (protoc_path().empty()) return std::nullopt;
  TempDir dir;
  std::string file = dir.path() + "/trace.pftrace";
  std::ofstream(file, std::ios::binary) << inflate_trace(bytes);
  std::string out;
  std::string cmd =
      fmt::format("{} --decode=perfetto.protos.Trace -I {}/tests/proto {}/tests/proto/perfetto_trace_subset.proto < {}",
                  protoc_path(), PPT_SOURCE_DIR, PPT_SOURCE_DIR, file);
  int rc = run_command(cmd, &out);
  INFO(out.substr(0, 2000));
  REQUIRE(rc == 0);
  return parse_text(out);
}

struct Slice {
  uint64_t track = 0;
  int64_t start = 0;
  int64_t end = 0;
  std::string name;
  std::string category;
  std::map<std::string, std::string> args;
  std::vector<uint64_t> flows;
  bool operator<(const Slice& o) const {
    return std::tie(track, start, end, name) < std::tie(o.track, o.start, o.end, o.name);
  }
};

struct Decoded {
  std::map<uint64_t, const TextNode*> tracks;  // by uuid
  std::vector<Slice> slices;                   // sorted
  const TextNode* clock_snapshot = nullptr;
  size_t delta_events = 0;  // events timed on an incremental sequence clock
  // Counter tracks' values, (trace time, value) in order, by track uuid.
  std::map<uint64_t, std::vector<std::pair<int64_t, int64_t>>> counters;
};

// A sequence-scoped clock (ids 64-127) as trace_processor keeps it
// (src/trace_processor/util/clock_synchronizer.{h,cc}: ClockDomain::ToNs,
// AddSnapshot, Convert): its unit, whether its timestamps are deltas, the last
// absolute value, and its snapshots against BOOTTIME (the trace clock).
struct SeqClock {
  bool incremental = false;
  int64_t unit = 1;
  int64_t last_ns = 0;
  std::vector<std::pair<int64_t, int64_t>> snapshots;  // (this clock in ns, BOOTTIME)
  // A packet timestamp on this clock, in trace time.
  int64_t to_trace(int64_t value) {
    REQUIRE_FALSE(snapshots.empty());
    int64_t ns = value * unit;
    if (incremental) ns = last_ns += ns;
    // The latest snapshot at or before `ns` on this clock, else the first.
    auto it = std::upper_bound(snapshots.begin(), snapshots.end(), std::make_pair(ns, INT64_MAX));
    if (it != snapshots.begin()) --it;
    return it->second + (ns - it->first);
  }
};

// Replays the packets as a viewer would: per-sequence defaults, interned
// strings and clocks (delta-encoded timestamps resolved as trace_processor
// does), slices from begin/end pairs on each track.
Decoded replay(const TextNode& trace) {
  struct Seq {
    uint64_t default_track = 0;
    int64_t default_clock = 0;
    std::map<uint64_t, std::string> names, categories, annotation_names, strings;
    bool cleared = false;
  };
  Decoded d;
  std::map<uint64_t, Seq> seqs;
  std::map<std::pair<uint64_t, int64_t>, SeqClock> seq_clocks;  // by (sequence, clock id)
  std::map<uint64_t, std::vector<Slice>> open;
  for (const TextNode* p : trace.all_children("packet")) {
    uint64_t seq_id = static_cast<uint64_t>(p->num("trusted_packet_sequence_id", 0));
    REQUIRE(seq_id > 0);
    Seq& seq = seqs[seq_id];
    if (p->num("sequence_flags", 0) & 1) {
      seq = Seq{};
      seq.cleared = true;
      CHECK(p->get("first_packet_on_sequence") == "true");
    }
    if (const TextNode* def = p->child("trace_packet_defaults")) {
      seq.default_track = def->child("track_event_defaults")->num("track_uuid");
      seq.default_clock = def->num("timestamp_clock_id", 0);
    }
    if (const TextNode* in = p->child("interned_data")) {
      // Each string once a sequence (until it is cleared), as Perfetto's own
      // writers intern: a piece that starts mid-track knows what its
      // sequence has had.
      for (const TextNode* e : in->all_children("event_names")) {
        CHECK(seq.names.count(e->num("iid")) == 0);
        seq.names[e->num("iid")] = e->get("name");
      }
      for (const TextNode* e : in->all_children("event_categories")) {
        CHECK(seq.categories.count(e->num("iid")) == 0);
        seq.categories[e->num("iid")] = e->get("name");
      }
      for (const TextNode* e : in->all_children("debug_annotation_names")) {
        seq.annotation_names[e->num("iid")] = e->get("name");
      }
      for (const TextNode* e : in->all_children("debug_annotation_string_values")) {
        seq.strings[e->num("iid")] = e->get("str");
      }
    }
    if (const TextNode* td = p->child("track_descriptor")) {
      uint64_t uuid = td->num("uuid");
      CHECK(d.tracks.count(uuid) == 0);
      d.tracks[uuid] = td;
    }
    if (const TextNode* cs = p->child("clock_snapshot")) {
      // The trace's own snapshot (BOOTTIME against REALTIME), or a
      // sequence's clocks against BOOTTIME; a packet with a snapshot carries
      // nothing else that trace_processor reads.
      CHECK(p->child("track_event") == nullptr);
      CHECK(p->child("track_descriptor") == nullptr);
      if (!cs->get("primary_trace_clock").empty()) {
        CHECK_FALSE(d.clock_snapshot);
        d.clock_snapshot = cs;
        continue;
      }
      std::optional<int64_t> boottime;
      for (const TextNode* c : cs->all_children("clocks")) {
        if (c->num("clock_id") == 6) boottime = c->num("timestamp");
      }
      REQUIRE(boottime);
      for (const TextNode* c : cs->all_children("clocks")) {
        int64_t id = c->num("clock_id");
        if (id == 6) continue;
        REQUIRE((id >= 64 && id < 128));
        SeqClock& clock = seq_clocks[{seq_id, id}];
        bool incremental = c->get("is_incremental") == "true";
        int64_t unit = c->num("unit_multiplier_ns", 1);
        if (!clock.snapshots.empty()) {
          // One unit and one kind per clock; the trace clock never goes back.
          CHECK(clock.incremental == incremental);
          CHECK(clock.unit == unit);
          CHECK(*boottime >= clock.snapshots.back().second);
        }
        clock.incremental = incremental;
        clock.unit = unit;
        clock.last_ns = c->num("timestamp") * unit;
        clock.snapshots.push_back({clock.last_ns, *boottime});
      }
      continue;
    }
    const TextNode* te = p->child("track_event");
    if (!te) continue;
    REQUIRE(seq.cleared);
    REQUIRE(p->get("timestamp") != "");
    uint64_t track = te->get("track_uuid").empty() ? seq.default_track : te->num("track_uuid");
    int64_t ts = p->num("timestamp");
    const int64_t clock_id = p->num("timestamp_clock_id", seq.default_clock);
    if (clock_id >= 64 && clock_id < 128) {
      REQUIRE(seq_clocks.count({seq_id, clock_id}));
      SeqClock& clock = seq_clocks[{seq_id, clock_id}];
      if (clock.incremental) ++d.delta_events;
      ts = clock.to_trace(ts);
    } else {
      REQUIRE((clock_id == 0 || clock_id == 6));  // BOOTTIME, the trace clock
    }
    if (te->num("type") == 4) {
      REQUIRE(te->get("counter_value") != "");
      d.counters[track].push_back({ts, te->num("counter_value")});
    } else if (te->num("type") == 1) {
      Slice s;
      s.track = track;
      s.start = ts;
      REQUIRE(seq.names.count(te->num("name_iid")));
      s.name = seq.names[te->num("name_iid")];
      REQUIRE(seq.categories.count(te->num("category_iids")));
      s.category = seq.categories[te->num("category_iids")];
      for (const TextNode* a : te->all_children("debug_annotations")) {
        REQUIRE(seq.annotation_names.count(a->num("name_iid")));
        std::string key = seq.annotation_names[a->num("name_iid")];
        s.args[key] =
            a->get("string_value_iid").empty() ? a->get("int_value") : seq.strings[a->num("string_value_iid")];
      }
      for (const std::string& f : te->all("flow_ids")) s.flows.push_back(std::stoull(f));
      open[track].push_back(s);
    } else {
      REQUIRE(te->num("type") == 2);
      REQUIRE_FALSE(open[track].empty());
      Slice s = open[track].back();
      open[track].pop_back();
      s.end = ts;
      REQUIRE(s.end >= s.start);
      d.slices.push_back(s);
    }
  }
  for (const auto& [track, stack] : open) CHECK(stack.empty());
  std::sort(d.slices.begin(), d.slices.end());
  return d;
}

// The arrows as Perfetto draws them: the slices that carry one flow id,
// linked in the order of their starts, each to the next (trace_processor's
// FlowTracker::Begin/Step). Each arrow by its two ends as (track, start);
// fails on a flow id carried twice by one slice (a loop onto itself).
using SliceKey = std::pair<uint64_t, int64_t>;
std::multiset<std::pair<SliceKey, SliceKey>> arrows(const Decoded& d, size_t* carried = nullptr) {
  std::map<uint64_t, std::vector<SliceKey>> by_flow;
  size_t n = 0;
  for (const Slice& s : d.slices) {
    std::set<uint64_t> seen;
    for (uint64_t f : s.flows) {
      CHECK(seen.insert(f).second);
      by_flow[f].push_back({s.track, s.start});
      ++n;
    }
  }
  if (carried) *carried = n;
  std::multiset<std::pair<SliceKey, SliceKey>> out;
  for (auto& [id, ends] : by_flow) {
    std::stable_sort(ends.begin(), ends.end(),
                     [](const SliceKey& a, const SliceKey& b) { return a.second < b.second; });
    for (size_t i = 1; i < ends.size(); ++i) {
      // Two ends that start together have no order of their own: compared
      // as a pair.
      SliceKey a = ends[i - 1], b = ends[i];
      if (a.second == b.second && b < a) std::swap(a, b);
      out.insert({a, b});
    }
  }
  return out;
}

// The dependencies as Perfetto should draw them: from the job that started
// first to the other (a contradicted dependency whose consumer started first
// is drawn backwards, as in the JSON outputs).
std::multiset<std::pair<SliceKey, SliceKey>> wanted_arrows(const Timeline& tl, const Dependencies& deps,
                                                           int64_t origin) {
  TraceNaming naming(tl);
  std::multiset<std::pair<SliceKey, SliceKey>> out;
  auto key = [&](JobRef r) {
    const Track& t = tl.tracks[r.track];
    const Job& j = t.jobs[r.job];
    return SliceKey{naming.track_tid(t, j.lane), j.start_ns - origin};
  };
  for (const Dependency& e : deps.edges) {
    SliceKey a = key(e.producer), b = key(e.consumer);
    if (b.second < a.second || (a.second == b.second && b < a)) std::swap(a, b);
    out.insert({a, b});
  }
  return out;
}

std::string write_pftrace(const Timeline& tl, const Dependencies* deps, bool absolute = false) {
  StringSink sink;
  PerfettoWriteOptions o;
  o.dependencies = deps;
  o.absolute = absolute;
  write_perfetto_trace(tl, o, sink);
  return sink.data;
}

std::string write_json(const Timeline& tl, const Dependencies* deps) {
  StringSink sink;
  JsonWriteOptions o;
  o.dependencies = deps;
  write_chrome_json(tl, o, sink);
  return sink.data;
}

}  // namespace

TEST_CASE("The .pftrace decodes with protoc into the model's tracks, slices and flows", "[perfetto]") {
  if (!ppt::testing::have_python()) {
    FAIL("python3 not found: gen_logs.py makes the logs (scripts/setup.sh installs python3)");
  }
  if (protoc_path().empty()) {
    FAIL("protoc not found at configure time (Debian: protobuf-compiler, which scripts/setup.sh installs)");
  }
  for (const char* args : {"--stages 4 --machines 2 --schedule 1f1b --skew 1:3",
                           "--stages 2 --dp 2 --schedule vpp --chunks 2 --overlap 1:0 --rerun"}) {
    SECTION(args) {
      auto g = generate_logs(std::string("--micro-batches 4 --steps 2 ") + args);
      Timeline& tl = g->timeline;
      Dependencies deps = find_dependencies(tl, decide_pipeline(tl, 0, 1), 1);
      align_clocks(tl, deps);
      for (bool absolute : {false, true}) {
        const int64_t origin = absolute ? 0 : tl.origin_ns;
        std::optional<TextNode> trace = decode(write_pftrace(tl, &deps, absolute));
        REQUIRE(trace);
        Decoded d = replay(*trace);
        TraceNaming naming(tl);

        // The clock snapshot ties trace time to the wall clock.
        REQUIRE(d.clock_snapshot);
        auto clocks = d.clock_snapshot->all_children("clocks");
        REQUIRE(clocks.size() == 2);
        CHECK(clocks[1]->num("clock_id") == 1);
        CHECK(clocks[1]->num("timestamp") - clocks[0]->num("timestamp") == origin);

        // Every job is one slice on its rank's lane track, with its annotations.
        std::vector<Slice> want;
        for (uint32_t ti = 0; ti < tl.tracks.size(); ++ti) {
          const Track& t = tl.tracks[ti];
          for (const Job& j : t.jobs) {
            Slice s;
            s.track = naming.track_tid(t, j.lane);
            s.start = j.start_ns - origin;
            s.end = j.end_ns - origin;
            s.name = job_name(tl.types[j.type], j);
            s.category = tl.types[j.type];
            s.args["rank"] = std::to_string(t.rank);
            if (j.micro_batch >= 0) s.args["micro_batch_id"] = std::to_string(j.micro_batch);
            s.args["step"] = std::to_string(j.step);
            s.args["source"] = tl.files[t.file].path;
            s.args["line"] = std::to_string(j.line);
            s.args["job_id"] = std::to_string(j.job_id);
            if (t.clock_offset_ns != 0) {
              s.args["logged_start_ns"] = std::to_string(j.start_ns - t.clock_offset_ns);
              s.args["logged_end_ns"] = std::to_string(j.end_ns - t.clock_offset_ns);
            }
            want.push_back(s);
          }
        }
        for (const Run& run : tl.runs) {
          for (const StepSpan& sp : run.steps) {
            Slice s;
            s.track = naming.steps_tid(run.index);
            s.start = sp.start_ns - origin;
            s.end = sp.end_ns - origin;
            s.name = fmt::format("step{}", sp.number);
            s.category = "step";
            s.args["step"] = std::to_string(sp.number);
            s.args["ranks"] = std::to_string(sp.ranks);
            want.push_back(s);
          }
        }
        std::sort(want.begin(), want.end());
        REQUIRE(d.slices.size() == want.size());
        for (size_t i = 0; i < want.size(); ++i) {
          INFO("slice " << i << ": " << want[i].name << " at " << want[i].start);
          CHECK(d.slices[i].track == want[i].track);
          CHECK(d.slices[i].start == want[i].start);
          CHECK(d.slices[i].end == want[i].end);
          CHECK(d.slices[i].name == want[i].name);
          CHECK(d.slices[i].category == want[i].category);
          CHECK(d.slices[i].args == want[i].args);
        }

        // Perfetto draws one arrow per dependency, between its producer's and
        // its consumer's slices, and no other; a micro-batch's chain through
        // the stages shares one flow id, carried once by each job, so there
        // are fewer flow ids on the slices than two per dependency.
        size_t carried = 0;
        CHECK(arrows(d, &carried) == wanted_arrows(tl, deps, origin));
        CHECK(carried < 2 * deps.edges.size());

        // Every event's timestamp is a delta on its sequence's incremental
        // clock (resolved by replay() as trace_processor does).
        CHECK(d.delta_events == d.slices.size() * 2);

        // The tracks: names as in the JSON outputs, parents, and an explicit
        // order that puts the steps first and the ranks in rank order.
        for (const Track& t : tl.tracks) {
          for (uint32_t lane = 0; lane < t.lanes; ++lane) {
            REQUIRE(d.tracks.count(naming.track_tid(t, lane)));
            const TextNode* td = d.tracks.at(naming.track_tid(t, lane));
            CHECK(td->get("name") == naming.thread_name(t, lane));
            CHECK(td->num("sibling_order_rank") == 1 + static_cast<int64_t>(naming.thread_sort_index(t, lane)));
            uint64_t parent = td->num("parent_uuid");
            REQUIRE(d.tracks.count(parent));
            const TextNode* pd = d.tracks.at(parent);
            CHECK(pd->num("child_ordering") == 3);
            if (tl.machines.size() > 1) CHECK(pd->get("name") == naming.process_name(t.run, t.machine));
          }
        }
        for (const Run& run : tl.runs) {
          const TextNode* steps = d.tracks.at(naming.steps_tid(run.index));
          CHECK(steps->get("name") == "steps");
          CHECK(steps->num("sibling_order_rank") == 0);
          const TextNode* root = d.tracks.at(steps->num("parent_uuid"));
          CHECK(root->get("parent_uuid").empty());
          CHECK(root->num("child_ordering") == 3);
        }
      }
    }
  }
}

TEST_CASE("The .pftrace is at most a third of the Chrome JSON's size", "[perfetto]") {
  if (!ppt::testing::have_python()) {
    FAIL("python3 not found (scripts/setup.sh installs it)");
  }
  // As converted by default (flow arrows on), small sets included; without
  // arrows the per-sequence headers weigh more on a few hundred jobs, so
  // that is checked on a set of realistic size.
  struct Case {
    const char* args;
    bool without_flows_too;
  };
  const Case cases[] = {
      {"--stages 8 --dp 2 --machines 4 --schedule 1f1b --micro-batches 32 --steps 4", true},
      {"--stages 4 --machines 2 --schedule vpp --chunks 2 --micro-batches 8 --skew 1:2", false},
      {"--stages 4 --schedule zbh1 --micro-batches 8 --noise 5", false},
  };
  for (const Case& c : cases) {
    SECTION(c.args) {
      auto g = generate_logs(std::string("--steps 3 ") + c.args);
      Timeline& tl = g->timeline;
      Dependencies deps = find_dependencies(tl, decide_pipeline(tl, 0, 1), 1);
      align_clocks(tl, deps);
      std::vector<const Dependencies*> variants{&deps};
      if (c.without_flows_too) variants.push_back(nullptr);
      for (const Dependencies* flows : variants) {
        size_t proto = write_pftrace(tl, flows).size();
        size_t json = write_json(tl, flows).size();
        INFO("pftrace " << proto << " bytes, JSON " << json << " bytes, flows " << (flows != nullptr));
        CHECK(proto * 3 <= json);
      }
    }
  }
}

TEST_CASE("The .pftrace writer streams: no write holds much more than its 1 MB buffer", "[perfetto]") {
  // 200,000 jobs on one rank, made directly (no logs needed).
  Timeline tl;
  tl.files.push_back({"logs/workerlog.0", "", 0, 0, 0});
  tl.machines.push_back("");
  tl.types = {"forward", "backward"};
  Track t;
  for (uint32_t i = 0; i < 200000; ++i) {
    Job j;
    j.start_ns = 1'000'000'000'000'000'000 + int64_t{i} * 3000;
    j.end_ns = j.start_ns + 2000;
    j.job_id = static_cast<int32_t>(i % 64);
    j.micro_batch = static_cast<int32_t>(i % 64);
    j.type = i % 2;
    j.line = i + 1;
    j.step = static_cast<int32_t>(i / 128);
    t.jobs.push_back(j);
  }
  tl.tracks.push_back(std::move(t));
  Run run;
  run.tracks = {0};
  run.first_ns = tl.tracks[0].jobs.front().start_ns;
  run.last_ns = tl.tracks[0].jobs.back().end_ns;
  tl.runs.push_back(run);
  tl.origin_ns = run.first_ns;

  struct CountingSink : ByteSink {
    void write(std::string_view b) override {
      ++writes;
      total += b.size();
      largest = std::max(largest, b.size());
    }
    size_t writes = 0, total = 0, largest = 0;
  };
  for (bool compress : {false, true}) {
    INFO("compressed: " << compress);
    PerfettoWriteOptions o;
    o.compress = compress;
    CountingSink sink;
    write_perfetto_trace(tl, o, sink);
    CHECK(sink.total > (compress ? 100u << 10 : 4u << 20));
    CHECK(sink.writes >= 4);
    CHECK(sink.largest <= (1u << 20) + 4096);
    // The same bytes as a single buffer.
    StringSink whole;
    write_perfetto_trace(tl, o, whole);
    CHECK(whole.data.size() == sink.total);
  }
}

TEST_CASE("Long tracks are encoded in pieces: the bytes do not depend on the threads, and the trace decodes whole",
          "[perfetto]") {
  if (!ppt::testing::have_python()) {
    FAIL("python3 not found: gen_logs.py makes the logs (scripts/setup.sh installs python3)");
  }
  // 2 ranks x (64 forwards + 64 backwards + 1 optimizer) x 34 steps: 4,386
  // jobs a rank, past the writer's 4,096 jobs a piece, with an overlap (two
  // lanes) and a rerun, so that pieces start mid-track, mid-lane and mid-run.
  auto g = generate_logs("--stages 2 --schedule 1f1b --micro-batches 64 --steps 34 --overlap 1:20 --rerun");
  Timeline& tl = g->timeline;
  size_t longest = 0;
  for (const Track& t : tl.tracks) longest = std::max(longest, t.jobs.size());
  REQUIRE(longest > 4096);
  Dependencies deps = find_dependencies(tl, decide_pipeline(tl, 0, 1), 1);
  REQUIRE(deps.edges.size() > 4096);
  auto write = [&](unsigned threads) {
    StringSink sink;
    PerfettoWriteOptions o;
    o.dependencies = &deps;
    o.threads = threads;
    write_perfetto_trace(tl, o, sink);
    return sink.data;
  };
  const std::string one = write(1);
  CHECK(write(2) == one);
  CHECK(write(5) == one);

  // Compressed (the default), each piece's packets are one compressed
  // packet, and the trace inflates to the plain one byte for byte: every
  // slice, argument and arrow as in the plain trace.
  PerfettoWriteOptions plain_options;
  plain_options.dependencies = &deps;
  plain_options.compress = false;
  StringSink plain;
  write_perfetto_trace(tl, plain_options, plain);
  size_t packed = 0;
  CHECK(inflate_trace(one, &packed) == plain.data);
  CHECK(packed > tl.tracks.size());  // the long tracks in several pieces
  CHECK(one.size() * 2 < plain.data.size());
  CHECK(inflate_trace(plain.data, &packed) == plain.data);
  CHECK(packed == 0);

  if (protoc_path().empty()) {
    FAIL("protoc not found at configure time (Debian: protobuf-compiler, which scripts/setup.sh installs)");
  }
  std::optional<TextNode> trace = decode(one);
  REQUIRE(trace);
  Decoded d = replay(*trace);  // every name and category interned before use on its sequence
  size_t steps = 0;
  for (const Run& run : tl.runs) steps += run.steps.size();
  REQUIRE(d.slices.size() == tl.job_count() + steps);
  // Each job by (track, start): its name; the arrows exactly the dependencies.
  TraceNaming naming(tl);
  std::map<std::pair<uint64_t, int64_t>, const Slice*> at;
  for (const Slice& s : d.slices) at[{s.track, s.start}] = &s;
  for (size_t i = 0; i < deps.edges.size(); ++i) {
    INFO("edge " << i);
    const JobRef c = deps.edges[i].consumer;
    const Track& t = tl.tracks[c.track];
    const Job& j = t.jobs[c.job];
    auto it = at.find({naming.track_tid(t, j.lane), j.start_ns - tl.origin_ns});
    REQUIRE(it != at.end());
    CHECK(it->second->name == job_name(tl.types[j.type], j));
  }
  CHECK(arrows(d) == wanted_arrows(tl, deps, tl.origin_ns));
}

TEST_CASE("An event earlier than its sequence's last one keeps its exact time (absolute on the trace clock)",
          "[perfetto]") {
  if (protoc_path().empty()) {
    FAIL("protoc not found at configure time (Debian: protobuf-compiler, which scripts/setup.sh installs)");
  }
  // The builder never puts overlapping jobs on one lane; a timeline made by
  // hand can. Deltas are unsigned, so the writer must fall back to absolute
  // times for the events that go back, and the trace must still read back
  // every time exactly.
  Timeline tl;
  tl.files.push_back({"logs/workerlog.0", "", 0, 0, 0});
  tl.machines.push_back("");
  tl.types = {"forward"};
  Track t;
  const int64_t base = 1'700'000'000'000'000'000;
  const std::vector<std::pair<int64_t, int64_t>> times = {{0, 5000}, {3000, 9000}, {1000, 2000}, {9000, 12000}};
  for (size_t i = 0; i < times.size(); ++i) {
    Job j;
    j.start_ns = base + times[i].first;
    j.end_ns = base + times[i].second;
    j.micro_batch = static_cast<int32_t>(i);
    j.job_id = static_cast<int32_t>(i);
    j.line = static_cast<int32_t>(i + 1);
    t.jobs.push_back(j);
  }
  tl.tracks.push_back(std::move(t));
  Run run;
  run.tracks = {0};
  run.first_ns = base;
  run.last_ns = base + 12000;
  tl.runs.push_back(run);
  tl.origin_ns = base;
  for (bool absolute : {false, true}) {
    std::optional<TextNode> trace = decode(write_pftrace(tl, nullptr, absolute));
    REQUIRE(trace);
    Decoded d = replay(*trace);
    const int64_t origin = absolute ? 0 : base;
    std::multiset<std::pair<int64_t, int64_t>> got, want;
    for (const Slice& s : d.slices) got.insert({s.start, s.end});
    for (const Job& j : tl.tracks[0].jobs) want.insert({j.start_ns - origin, j.end_ns - origin});
    CHECK(got == want);
    CHECK(d.delta_events < 2 * times.size());  // some went back in time
  }
}

TEST_CASE("Memory samples are two counter tracks per rank, in bytes, after the rank's lanes", "[perfetto][memory]") {
  if (!ppt::testing::have_python()) {
    FAIL("python3 not found: gen_logs.py makes the logs (scripts/setup.sh installs python3)");
  }
  if (protoc_path().empty()) {
    FAIL("protoc not found at configure time (Debian: protobuf-compiler, which scripts/setup.sh installs)");
  }
  auto g = generate_logs("--stages 4 --machines 2 --micro-batches 4 --steps 2 --schedule 1f1b --overlap 1:0");
  Timeline& tl = g->timeline;
  const std::string without = write_pftrace(tl, nullptr);
  ppt::testing::add_memory_samples(tl);
  TraceNaming naming(tl);

  // Without samples: no counter track, and the lanes keep their order.
  std::optional<TextNode> plain = decode(without);
  REQUIRE(plain);
  Decoded p = replay(*plain);
  CHECK(p.counters.empty());
  for (const auto& [uuid, td] : p.tracks) CHECK(td->child("counter") == nullptr);

  const std::string with = write_pftrace(tl, nullptr);
  std::optional<TextNode> trace = decode(with);
  REQUIRE(trace);
  Decoded d = replay(*trace);
  // The Start samples precede every job: the trace's zero is the earliest sample.
  int64_t origin = tl.origin_ns;
  size_t samples = 0;
  for (const Track& t : tl.tracks) {
    origin = std::min(origin, t.memory.front().ts_ns);
    samples += t.memory.size();
  }
  REQUIRE(origin < tl.origin_ns);
  REQUIRE(d.clock_snapshot);
  auto clocks = d.clock_snapshot->all_children("clocks");
  REQUIRE(clocks.size() == 2);
  CHECK(clocks[1]->num("timestamp") - clocks[0]->num("timestamp") == origin);

  // The jobs are where they were, rebased on the new zero.
  std::multiset<std::pair<uint64_t, int64_t>> want_starts, got_starts;
  for (const Track& t : tl.tracks) {
    for (const Job& j : t.jobs) want_starts.insert({naming.track_tid(t, j.lane), j.start_ns - origin});
  }
  for (const Slice& s : d.slices) {
    if (s.category != "step") got_starts.insert({s.track, s.start});
  }
  CHECK(got_starts == want_starts);

  std::set<uint64_t> counter_tracks;
  for (const auto& [uuid, td] : d.tracks) {
    if (td->child("counter")) counter_tracks.insert(uuid);
  }
  CHECK(counter_tracks.size() == 2 * tl.tracks.size());
  size_t values = 0;
  for (const Track& t : tl.tracks) {
    const TextNode* lane = d.tracks.at(naming.track_tid(t, t.lanes - 1));
    const TextNode* first_lane = d.tracks.at(naming.track_tid(t, 0));
    // Lanes have three places each, so a rank's counters fit after its last lane.
    CHECK(first_lane->num("sibling_order_rank") == 1 + 3 * static_cast<int64_t>(naming.thread_sort_index(t, 0)));
    std::vector<const TextNode*> mine;
    for (uint64_t uuid : counter_tracks) {
      const TextNode* td = d.tracks.at(uuid);
      if (td->get("name").rfind(naming.thread_name(t, 0) + " memory ", 0) == 0 &&
          td->num("parent_uuid") == lane->num("parent_uuid")) {
        mine.push_back(td);
      }
    }
    REQUIRE(mine.size() == 2);
    std::sort(mine.begin(), mine.end(), [](const TextNode* a, const TextNode* b) {
      return a->num("sibling_order_rank") < b->num("sibling_order_rank");
    });
    CHECK(mine[0]->get("name") == naming.thread_name(t, 0) + " memory allocated");
    CHECK(mine[1]->get("name") == naming.thread_name(t, 0) + " memory reserved");
    for (int which = 0; which < 2; ++which) {
      CHECK(mine[which]->num("sibling_order_rank") == lane->num("sibling_order_rank") + 1 + which);
      CHECK(mine[which]->child("counter")->num("unit") == 3);  // UNIT_SIZE_BYTES
      const auto& got = d.counters[static_cast<uint64_t>(mine[which]->num("uuid"))];
      REQUIRE(got.size() == t.memory.size());
      for (size_t i = 0; i < got.size(); ++i) {
        const MemorySample& s = t.memory[i];
        CHECK(got[i].first == s.ts_ns - origin);
        CHECK(got[i].second == (which == 0 ? s.allocated_bytes : s.reserved_bytes));
      }
      values += got.size();
    }
  }
  CHECK(values == 2 * samples);
  // Every event, counters too, is timed by a delta on its sequence's clock.
  CHECK(d.delta_events == d.slices.size() * 2 + values);
  // Compact: a sample's two values take a few bytes each on top of the trace without them.
  CHECK(with.size() > without.size());
  CHECK(with.size() - without.size() < samples * 2 * 24 + tl.tracks.size() * 2 * 200);
}
