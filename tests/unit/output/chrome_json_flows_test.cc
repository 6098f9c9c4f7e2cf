// Flow arrows in the JSON outputs: one s/f pair per dependency, bound to the
// producer's and the consumer's slices, with ids unique per arrow.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "support/test_support.h"
#include "output/chrome_json_writer.h"
#include "passes/clock_align.h"
#include "passes/dependencies.h"
#include "output/trace_naming.h"

using namespace ppt;
using ppt::testing::generate_logs;
using ppt::testing::job_line;
using ppt::testing::RankLines;
using ppt::testing::timeline_from_lines;

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
    WARN("python3 not found: skipped (gen_logs.py makes the logs)");
    return;
  }
  for (const char* args : {"--stages 4 --schedule 1f1b", "--stages 2 --dp 2 --machines 2 --schedule vpp --chunks 2",
                           "--stages 4 --schedule zbvpp --chunks 2 --overlap 2:0", "--stages 3 --schedule overlap"}) {
    SECTION(args) {
      auto g = generate_logs(std::string("--micro-batches 4 --steps 2 ") + args);
      const Timeline& tl = g->timeline;
      Dependencies deps = find_dependencies(tl);
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
  Dependencies deps = find_dependencies(tl, DependencyOptions{2});
  CHECK(parse(write(tl, &deps)).flows.size() == 4);
}

TEST_CASE("A contradicted dependency is still drawn, named for what it is", "[flows]") {
  // Rank 1's forward starts 200 us before rank 0's ends; the backward is fine.
  std::vector<RankLines> ranks(2);
  ranks[0].lines = {job_line("forward", 0, 0, 1000, 0), job_line("backward", 0, 3000, 4000, 0)};
  ranks[1].lines = {job_line("forward", 0, 800, 1800, 0), job_line("backward", 0, 1800, 2800, 0)};
  Timeline tl = timeline_from_lines(ranks);
  Dependencies deps = find_dependencies(tl, DependencyOptions{2});
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
  Dependencies deps = find_dependencies(tl, DependencyOptions{2});
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
    WARN("python3 not found: skipped");
    return;
  }
  auto g = generate_logs("--stages 4 --machines 2 --micro-batches 4 --steps 1 --skew 1:5");
  Timeline& tl = g->timeline;
  Dependencies deps = find_dependencies(tl);
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
