#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <map>
#include <string>

#include "output/chrome_json_writer.h"
#include "output/output_file.h"
#include "input/timeline_builder.h"
#include "output/trace_naming.h"
#include "support/test_support.h"

using namespace ppt;
using ppt::testing::job_line;

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
  const Row rows[] = {{0, "0"}, {1, "0.001"}, {1000, "1"}, {1500, "1.5"}, {1234567, "1234.567"},
                      {1697793307213760986, "1697793307213760.986"}, {-2500, "-2.5"}};
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

TEST_CASE("an output is written whole or not at all", "[output]") {
  ppt::testing::TempDir dir;
  std::string path = dir.path() + "/t.json";
  {
    OutputFile f;
    REQUIRE(f.open(path));
    f.write("partial");
    // destroyed without commit: nothing at the target, no temporary left
  }
  CHECK_FALSE(std::filesystem::exists(path));
  CHECK(std::filesystem::is_empty(dir.path()));
  OutputFile g;
  REQUIRE(g.open(path));
  g.write("whole");
  REQUIRE(g.commit());
  CHECK(std::filesystem::file_size(path) == 5);
  OutputFile missing;
  CHECK_FALSE(missing.open(dir.path() + "/no/such/dir/t.json"));
  CHECK(missing.error().find("does not exist") != std::string::npos);
  OutputFile full;
  REQUIRE(full.open("/dev/full"));
  full.write(std::string(2 << 20, 'x'));
  CHECK_FALSE(full.commit());
  CHECK(full.error().find("/dev/full") != std::string::npos);
}
