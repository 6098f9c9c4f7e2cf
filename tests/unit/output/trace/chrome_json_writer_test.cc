// The Chrome/Perfetto JSON writer: exact times, escaping, tracks and slices,
// and the flow arrows (one s/f pair per dependency, bound to the producer's
// and the consumer's slices, with ids unique per arrow).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <map>
#include <string>

#include "output/trace/chrome_json_writer.h"
#include "output/trace/trace_naming.h"
#include "passes/clock_align.h"
#include "passes/dependencies.h"
#include "passes/pipeline.h"
#include "passes/timeline_builder.h"
#include "support/memory_samples.h"
#include "support/test_support.h"

using namespace ppt;
using ppt::testing::generate_logs;
using ppt::testing::job_line;
using ppt::testing::RankLines;
using ppt::testing::timeline_from_lines;

namespace {

Timeline two_rank_timeline(const std::string& hostile_type = "forward") {
  static LineParser parser;
  std::vector<SourceFile> files;
  std::vector<FileScan> scans;
  for (int r = 0; r < 2; ++r) {
    std::string log = job_line(hostile_type, 0, 100 + r * 10, 110 + r * 10) + job_line("backward", 0, 120, 140) +
                      job_line("backward", 1, 135, 150) +  // overlaps the previous one
                      job_line("optimizer", 0, 150, 151);
    files.push_back({"logs/workerlog." + std::to_string(r), "", 0, r, r});
    scans.push_back(scan_buffer(log, r, parser));
  }
  return build_from_scans(files, {""}, std::move(scans));
}

}  // namespace

TEST_CASE("microseconds are printed exactly from nanoseconds", "[json]") {
  struct Row {
    int64_t ns;
    const char* text;
  };
  const Row rows[] = {{0, "0"},       {1, "0.001"},          {1000, "1"},
                      {1500, "1.5"},  {1234567, "1234.567"}, {1697793307213760986, "1697793307213760.986"},
                      {-2500, "-2.5"}};
  for (const Row& r : rows) {
    std::string s;
    append_us(s, r.ns);
    CHECK(s == r.text);
  }
}

TEST_CASE("strings from logs are escaped into valid JSON", "[json]") {
  std::string s;
  append_json_escaped(s, "a\"b\\c\n\x01<img src=x>\xff");
  CHECK(s == "a\\\"b\\\\c\\u000a\\u0001<img src=x>\xEF\xBF\xBD");
  CHECK_NOTHROW(nlohmann::json::parse("\"" + s + "\""));
}

TEST_CASE("trace times are exact in doubles, and exact ns for Perfetto", "[json]") {
  // Viewers compute ts + dur, and speedscope first rebases each thread on its
  // first ts, in doubles: a job that ends where the next one starts must not
  // overlap it by a rounding error. Perfetto rounds x * 1000 to ns.
  const int64_t starts[] = {0, 1, 999, 1009123, 1558325, 34785001, 123456789012, 1697793307213760986};
  const int64_t durs[] = {0, 1, 7, 1000, 1009001, 2017003, 333333333};
  const int64_t firsts[] = {0, 987, 1234567};
  for (int64_t s : starts) {
    for (int64_t d : durs) {
      std::string ts, dur, end;
      append_trace_us(ts, s);
      append_trace_dur_us(dur, s, s + d);
      append_trace_us(end, s + d);
      const double t = std::stod(ts), du = std::stod(dur), e = std::stod(end);
      INFO(ts << " + " << dur << " -> " << end);
      CHECK(t + du == e);
      if (s < (int64_t{1} << 50)) {
        CHECK(std::llround(t * 1000.0) == s);
        CHECK(std::llround(du * 1000.0) == d);
        for (int64_t f : firsts) {
          if (f > s) continue;
          std::string first;
          append_trace_us(first, f);
          const double fv = std::stod(first);
          CHECK((t - fv) + du == e - fv);
        }
      }
    }
  }
  std::string whole;
  append_trace_us(whole, 1009000);
  CHECK(whole == "1009");
  std::string half;
  append_trace_us(half, -2500);
  CHECK(half == "-2.5");
}

TEST_CASE("job slices are named by type and micro-batch", "[json]") {
  std::string s;
  append_job_name(s, "backward_b1", 0, 7);
  CHECK(s == "backward_b1 mb0");
  CHECK(job_name("forward", Job{0, 0, 3, -1}) == "forward (Job 3)");
  CHECK(job_name("forward", Job{0, 0, 2, 5}) == "forward mb5");
}

TEST_CASE("the trace has named, ordered tracks and one X event per job", "[json]") {
  Timeline tl = two_rank_timeline("forward\"<x>");
  for (JsonFlavor flavor : {JsonFlavor::kChrome, JsonFlavor::kPerfetto}) {
    StringSink sink;
    JsonWriteOptions opt;
    opt.flavor = flavor;
    write_chrome_json(tl, opt, sink);
    nlohmann::json doc = nlohmann::json::parse(sink.data);
    const auto& events = doc["traceEvents"];
    std::map<std::string, int> phases;
    std::map<int, std::string> thread_names;
    int cnames = 0;
    for (const auto& e : events) {
      std::string ph = e["ph"];
      phases[ph]++;
      if (e.contains("cname")) ++cnames;
      if (ph == "M" && e["name"] == "thread_name") thread_names[e["tid"].get<int>()] = e["args"]["name"];
      if (ph == "X") {
        CHECK(e["pid"].get<int>() > 0);
        CHECK(e["tid"].get<int>() > 0);
        CHECK(e["dur"].get<double>() >= 0);
      }
    }
    // 8 jobs + 1 step slice; rank 0 and 1 each need an overlap lane.
    CHECK(phases["X"] == 9);
    CHECK(phases.count("B") == 0);
    CHECK(phases.count("E") == 0);
    CHECK(thread_names[1] == "GPU:0");
    CHECK(thread_names[2] == "GPU:1");
    CHECK(thread_names[3] == "GPU:0 overlap 1");
    CHECK(cnames == (flavor == JsonFlavor::kChrome ? 8 : 0));
    CHECK(doc["metadata"]["time_origin_epoch_ns"].get<int64_t>() == ppt::testing::kEpochNs + 100000);
    bool found_hostile = false;
    for (const auto& e : events) {
      if (e.value("cat", "") == "forward\"<x>") {
        found_hostile = true;
        CHECK(e["name"] == "forward\"<x> mb0");
        CHECK(e["args"]["job_id"] == 0);
        CHECK(e["args"]["source"] == "logs/workerlog." + std::to_string(e["args"]["rank"].get<int>()) + ":1");
      }
    }
    CHECK(found_hostile);
  }
}

TEST_CASE("the absolute option keeps epoch microseconds", "[json]") {
  Timeline tl = two_rank_timeline();
  StringSink sink;
  JsonWriteOptions opt;
  opt.absolute = true;
  write_chrome_json(tl, opt, sink);
  CHECK(sink.data.find("\"ts\":1697793307000100") != std::string::npos);
}

// ---------------------------------------------------------------------------
// Flow arrows

namespace {

int64_t to_ns(const nlohmann::json& ts) { return std::llround(ts.get<double>() * 1000.0); }

struct JsonSlice {
  int64_t start = 0;
  int64_t end = 0;
  const nlohmann::json* begin = nullptr;
};

struct Parsed {
  nlohmann::json doc;
  std::map<std::pair<int64_t, int64_t>, std::vector<JsonSlice>> slices;  // by (pid, tid)
  std::vector<const nlohmann::json*> flows;
};

Parsed parse(const std::string& text) {
  Parsed p;
  p.doc = nlohmann::json::parse(text);
  for (const auto& e : p.doc["traceEvents"]) {
    std::string ph = e["ph"];
    if (ph == "M") continue;
    auto key = std::make_pair(e["pid"].get<int64_t>(), e["tid"].get<int64_t>());
    if (ph == "X") {
      p.slices[key].push_back({to_ns(e["ts"]), to_ns(e["ts"]) + to_ns(e["dur"]), &e});
    } else {
      REQUIRE((ph == "s" || ph == "f"));
      p.flows.push_back(&e);
    }
  }
  return p;
}

// The slice of (pid, tid) that strictly contains ts, or nullptr.
const JsonSlice* enclosing(const Parsed& p, const nlohmann::json& e) {
  auto it = p.slices.find({e["pid"].get<int64_t>(), e["tid"].get<int64_t>()});
  if (it == p.slices.end()) return nullptr;
  int64_t ts = to_ns(e["ts"]);
  for (const JsonSlice& s : it->second) {
    if (s.start < ts && ts < s.end) return &s;
  }
  return nullptr;
}

bool is_job(const Timeline& tl, const JsonSlice& s, JobRef r) {
  const Track& t = tl.tracks[r.track];
  const Job& j = t.jobs[r.job];
  const auto& args = (*s.begin)["args"];
  return (*s.begin)["name"] == job_name(tl.types[j.type], j) && args["rank"] == t.rank &&
         args["micro_batch_id"] == j.micro_batch && args["step"] == j.step && args["job_id"] == j.job_id;
}

std::string write(const Timeline& tl, const Dependencies* deps, JsonFlavor flavor = JsonFlavor::kChrome) {
  StringSink sink;
  JsonWriteOptions o;
  o.flavor = flavor;
  o.dependencies = deps;
  write_chrome_json(tl, o, sink);
  return sink.data;
}

// Checks every arrow of `text` against `deps`.
void check_flows(const Timeline& tl, const Dependencies& deps, const std::string& text) {
  Parsed p = parse(text);
  REQUIRE(p.flows.size() == 2 * deps.edges.size());
  std::map<int64_t, std::pair<const nlohmann::json*, const nlohmann::json*>> by_id;
  for (const nlohmann::json* e : p.flows) {
    auto& slot = by_id[(*e)["id"].get<int64_t>()];
    if ((*e)["ph"] == "s") {
      CHECK(slot.first == nullptr);
      slot.first = e;
    } else {
      CHECK(slot.second == nullptr);
      CHECK((*e)["bp"] == "e");  // bound to the enclosing slice, not the next one
      slot.second = e;
    }
  }
  REQUIRE(by_id.size() == deps.edges.size());
  for (size_t i = 0; i < deps.edges.size(); ++i) {
    const Dependency& edge = deps.edges[i];
    auto [s, f] = by_id[static_cast<int64_t>(i) + 1];
    REQUIRE(s);
    REQUIRE(f);
    CHECK((*s)["name"] == (*f)["name"]);
    CHECK((*s)["cat"] == (*f)["cat"]);
    std::string name = (*s)["name"];
    CHECK(name.rfind(dependency_kind_name(edge.kind), 0) == 0);
    CHECK((name.find("contradicted") != std::string::npos) == edge.contradicted);
    const JsonSlice* from = enclosing(p, *s);
    const JsonSlice* to = enclosing(p, *f);
    REQUIRE(from);
    REQUIRE(to);
    // The arrow goes forward in time: from the producer to the consumer, or,
    // when the times contradict the dependency and the consumer started
    // first, from the consumer to the producer, named so.
    const bool reversed = name.find("drawn consumer to producer") != std::string::npos;
    CHECK(is_job(tl, *from, reversed ? edge.consumer : edge.producer));
    CHECK(is_job(tl, *to, reversed ? edge.producer : edge.consumer));
    if (reversed) CHECK(edge.contradicted);
    CHECK(to_ns((*s)["ts"]) <= to_ns((*f)["ts"]));
    CHECK(to_ns((*s)["ts"]) < to_ns((*f)["ts"]) + (edge.contradicted ? 1 : 0));
  }
}

}  // namespace

TEST_CASE("Each dependency is one flow arrow from the producer's slice to the consumer's", "[flows]") {
  if (!ppt::testing::have_python()) {
    FAIL("python3 not found: gen_logs.py makes the logs (scripts/setup.sh installs python3)");
  }
  for (const char* args : {"--stages 4 --schedule 1f1b", "--stages 2 --dp 2 --machines 2 --schedule vpp --chunks 2",
                           "--stages 4 --schedule zbvpp --chunks 2 --overlap 2:0", "--stages 3 --schedule overlap"}) {
    SECTION(args) {
      auto g = generate_logs(std::string("--micro-batches 4 --steps 2 ") + args);
      const Timeline& tl = g->timeline;
      Dependencies deps = find_dependencies(tl, decide_pipeline(tl, 0, 1), 1);
      REQUIRE_FALSE(deps.edges.empty());
      check_flows(tl, deps, write(tl, &deps, JsonFlavor::kChrome));
      check_flows(tl, deps, write(tl, &deps, JsonFlavor::kPerfetto));
      nlohmann::json doc = nlohmann::json::parse(write(tl, &deps));
      CHECK(doc["metadata"]["flows"] == deps.edges.size());
    }
  }
}

TEST_CASE("Without dependencies the JSON has no flow events", "[flows]") {
  std::vector<RankLines> ranks(2);
  ranks[0].lines = {job_line("forward", 0, 0, 1000, 0), job_line("backward", 0, 3000, 4000, 0)};
  ranks[1].lines = {job_line("forward", 0, 1000, 2000, 0), job_line("backward", 0, 2000, 3000, 0)};
  Timeline tl = timeline_from_lines(ranks);
  Parsed p = parse(write(tl, nullptr));
  CHECK(p.flows.empty());
  CHECK_FALSE(p.doc["metadata"].contains("flows"));
  Dependencies deps = find_dependencies(tl, decide_pipeline(tl, 2, 1), 1);
  CHECK(parse(write(tl, &deps)).flows.size() == 4);
}

TEST_CASE("A contradicted dependency is still drawn, named for what it is", "[flows]") {
  // Rank 1's forward starts 200 us before rank 0's ends; the backward is fine.
  std::vector<RankLines> ranks(2);
  ranks[0].lines = {job_line("forward", 0, 0, 1000, 0), job_line("backward", 0, 3000, 4000, 0)};
  ranks[1].lines = {job_line("forward", 0, 800, 1800, 0), job_line("backward", 0, 1800, 2800, 0)};
  Timeline tl = timeline_from_lines(ranks);
  Dependencies deps = find_dependencies(tl, decide_pipeline(tl, 2, 1), 1);
  REQUIRE(deps.edges.size() == 2);
  REQUIRE(deps.contradicted == 1);
  std::string text = write(tl, &deps);
  check_flows(tl, deps, text);
  CHECK(text.find("\"forward (contradicted by the times)\"") != std::string::npos);
}

TEST_CASE("A dependency whose consumer ran before its producer is drawn forward in time", "[flows]") {
  // Rank 1's forward ran entirely before rank 0's (clocks off by more than a
  // job): the arrow goes from the consumer to the producer, named so.
  std::vector<RankLines> ranks(2);
  ranks[0].lines = {job_line("forward", 0, 2000, 3000, 0), job_line("backward", 0, 6000, 7000, 0)};
  ranks[1].lines = {job_line("forward", 0, 0, 500, 0), job_line("backward", 0, 4000, 5000, 0)};
  Timeline tl = timeline_from_lines(ranks);
  Dependencies deps = find_dependencies(tl, decide_pipeline(tl, 2, 1), 1);
  REQUIRE(deps.edges.size() == 2);
  REQUIRE(deps.contradicted == 1);
  for (JsonFlavor flavor : {JsonFlavor::kChrome, JsonFlavor::kPerfetto}) {
    std::string text = write(tl, &deps, flavor);
    check_flows(tl, deps, text);
    CHECK(text.find("\"forward (contradicted by the times, drawn consumer to producer)\"") != std::string::npos);
  }
}

TEST_CASE("Jobs of a shifted machine keep their logged times in their args", "[flows]") {
  if (!ppt::testing::have_python()) {
    FAIL("python3 not found (scripts/setup.sh installs it)");
  }
  auto g = generate_logs("--stages 4 --machines 2 --micro-batches 4 --steps 1 --skew 1:5");
  Timeline& tl = g->timeline;
  Dependencies deps = find_dependencies(tl, decide_pipeline(tl, 0, 1), 1);
  ClockAlignment a = align_clocks(tl, deps);
  REQUIRE(a.shifts());
  Parsed p = parse(write(tl, &deps));
  size_t with_logged = 0;
  for (const auto& [key, slices] : p.slices) {
    for (const JsonSlice& s : slices) {
      const auto& args = (*s.begin)["args"];
      if (!args.contains("rank")) continue;  // a step
      const Track* track = nullptr;
      for (const Track& t : tl.tracks) {
        if (t.rank == args["rank"]) track = &t;
      }
      REQUIRE(track);
      if (track->clock_offset_ns == 0) {
        CHECK_FALSE(args.contains("logged_start_ms"));
        continue;
      }
      ++with_logged;
      // The logged text is the log's own: find the job line in the source.
      std::string logged_start = args["logged_start_ms"];
      std::string logged_end = args["logged_end_ms"];
      int64_t start_ns = 0, end_ns = 0;
      REQUIRE(log_line::parse_ms_to_ns(logged_start, &start_ns) == log_line::TimeParse::kOk);
      REQUIRE(log_line::parse_ms_to_ns(logged_end, &end_ns) == log_line::TimeParse::kOk);
      CHECK(start_ns + track->clock_offset_ns - tl.origin_ns == to_ns((*s.begin)["ts"]));
      CHECK(end_ns - start_ns == s.end - s.start);
    }
  }
  CHECK(with_logged > 0);
  nlohmann::json doc = nlohmann::json::parse(write(tl, &deps));
  REQUIRE(doc["metadata"].contains("clock_offsets"));
  CHECK(doc["metadata"]["clock_offsets"][0]["machine"] == "machine1");
}

TEST_CASE("GiB are printed with at most four decimals, a logged size exactly as logged", "[json][memory]") {
  struct Row {
    int64_t bytes;
    const char* text;
  };
  const Row rows[] = {{0, "0"},
                      {1073741824, "1"},
                      {std::llround(12.34 * 1073741824.0), "12.34"},
                      {std::llround(0.01 * 1073741824.0), "0.01"},
                      {std::llround(79.99 * 1073741824.0), "79.99"},
                      {1073741824 + 53688, "1.0001"},  // just over 0.00005 GiB (53687.09 bytes): up
                      {1073741824 + 53687, "1"},       // just under: down
                      {-std::llround(1.5 * 1073741824.0), "-1.5"}};
  for (const Row& r : rows) {
    std::string s;
    append_gib(s, r.bytes);
    CHECK(s == r.text);
  }
}

TEST_CASE("Memory samples are two counters per rank on its process, only when there are samples", "[json][memory]") {
  Timeline tl = two_rank_timeline();
  for (JsonFlavor flavor : {JsonFlavor::kChrome, JsonFlavor::kPerfetto}) {
    JsonWriteOptions opt;
    opt.flavor = flavor;
    StringSink plain;
    write_chrome_json(tl, opt, plain);
    CHECK(plain.data.find("\"ph\":\"C\"") == std::string::npos);
    CHECK(plain.data.find("memory_") == std::string::npos);

    Timeline with = tl;
    ppt::testing::add_memory_samples(with, 0.25, 5000);
    StringSink sink;
    write_chrome_json(with, opt, sink);
    nlohmann::json doc = nlohmann::json::parse(sink.data);
    TraceNaming naming(with);
    std::map<std::string, std::vector<std::pair<double, double>>> counters;  // name -> (ts, GiB)
    std::map<std::string, int> pids;
    for (const auto& e : doc["traceEvents"]) {
      if (e["ph"] != "C") continue;
      REQUIRE(e["args"].size() == 1);
      counters[e["name"]].push_back({e["ts"].get<double>(), e["args"]["GiB"].get<double>()});
      pids[e["name"]] = e["pid"].get<int>();
    }
    size_t samples = 0;
    for (const Track& t : with.tracks) {
      samples += t.memory.size();
      for (int reserved = 0; reserved < 2; ++reserved) {
        const std::string name = naming.thread_name(t, 0) + (reserved ? " memory reserved" : " memory allocated");
        REQUIRE(counters.count(name));
        CHECK(pids[name] == static_cast<int>(naming.track_pid(t)));
        const auto& got = counters[name];
        REQUIRE(got.size() == t.memory.size());
        for (size_t i = 0; i < got.size(); ++i) {
          const MemorySample& s = t.memory[i];
          // Times on the jobs' scale (a Start sample precedes the origin: negative).
          CHECK(std::llround(got[i].first * 1000) == s.ts_ns - with.origin_ns);
          const int64_t want = reserved ? s.reserved_bytes : s.allocated_bytes;
          CHECK(std::llround(got[i].second * 100) == std::llround(static_cast<double>(want) / 1073741824.0 * 100));
        }
      }
    }
    CHECK(counters.size() == 2 * with.tracks.size());
    CHECK(doc["metadata"]["memory_samples"].get<size_t>() == samples);
    CHECK(doc["metadata"]["memory_resolution_bytes"] == 10737418);
    // The jobs are as without samples.
    size_t x = 0;
    for (const auto& e : doc["traceEvents"]) x += e["ph"] == "X" ? 1 : 0;
    CHECK(x == 9);
  }
}
