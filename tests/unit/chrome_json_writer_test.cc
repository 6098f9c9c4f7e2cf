#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <map>

#include "pp_timeline/chrome_json_writer.h"
#include "pp_timeline/output_file.h"
#include "pp_timeline/timeline_builder.h"
#include "test_logs.h"

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

TEST_CASE("the trace has named, ordered tracks and one B/E pair per job", "[json]") {
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
      if (ph == "B" || ph == "E") {
        CHECK(e["pid"].get<int>() > 0);
        CHECK(e["tid"].get<int>() > 0);
      }
    }
    // 8 jobs + 1 step slice; rank 0 and 1 each need an overlap lane.
    CHECK(phases["B"] == 9);
    CHECK(phases["E"] == 9);
    CHECK(thread_names[1] == "GPU:0");
    CHECK(thread_names[2] == "GPU:1");
    CHECK(thread_names[3] == "GPU:0 overlap 1");
    CHECK(cnames == (flavor == JsonFlavor::kChrome ? 8 : 0));
    CHECK(doc["metadata"]["time_origin_epoch_ns"].get<int64_t>() == ppt::testing::kEpochNs + 100000);
    bool found_hostile = false;
    for (const auto& e : events) {
      if (e.value("cat", "") == "forward\"<x>") {
        found_hostile = true;
        CHECK(e["name"] == "forward\"<x>_0");
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
