// Every command through the real binary: what the driver decides once is what
// every output says, and no command writes onto one of its inputs.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "support/test_support.h"

namespace ppt::testing {
namespace {

struct Ran {
  int code = -1;
  std::string out;
  std::string err;
};

// The binary with `args` (shell words), in `dir`; stderr captured to a file.
Ran run_binary(const std::string& dir, const std::string& args) {
  Ran r;
  std::string err = dir + "/.stderr";
  r.code = run_command(fmt::format("cd '{}' && '{}' {} 2>'{}' </dev/null", dir, PPT_BINARY, args, err), &r.out);
  r.err = slurp(err);
  std::filesystem::remove(err);
  return r;
}

// Four ranks: two pipelines of two stages (rank = replica * 2 + stage).
std::unique_ptr<GeneratedLogs> two_replicas() {
  return generate_logs("--schedule 1f1b --stages 2 --dp 2 --micro-batches 4 --steps 2 --seed 3");
}

bool no_temp_files(const std::string& dir) {
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.path().filename().string().find(".tmp") != std::string::npos) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("every command refuses an output that is one of its input logs") {
  auto g = two_replicas();
  const std::string& d = g->dir.path();
  // An input log named like an output of each format, so that the format
  // check passes and the input check is what refuses.
  std::filesystem::copy_file(g->logs + "/workerlog.0", d + "/rank0.html");
  std::filesystem::copy_file(g->logs + "/workerlog.0", d + "/rank0.json");
  const std::string log0 = slurp(g->logs + "/workerlog.0");
  const std::string html0 = slurp(d + "/rank0.html");
  struct Case {
    const char* what;
    std::string args;
    std::string input;
  };
  for (const Case& c : {
           Case{"convert", "logs/workerlog.0 -o logs/workerlog.0.json --perfetto-json logs/workerlog.0",
                "logs/workerlog.0"},
           Case{"convert -o", "rank0.json -o rank0.json", "rank0.json"},
           Case{"stats -o", "stats rank0.json -o rank0.json", "rank0.json"},
           Case{"stats --json -o", "stats --json rank0.json -o rank0.json", "rank0.json"},
           Case{"report -o", "report rank0.html -o rank0.html", "rank0.html"},
           Case{"diff -o (B's log)", "diff logs rank0.html -o rank0.html", "rank0.html"},
           Case{"diff -o (A's log)", "diff rank0.json logs -o rank0.json", "rank0.json"},
           Case{"diff --trace (A's log)", "diff rank0.json logs --trace rank0.json", "rank0.json"},
           Case{"batch --out", "batch logs --out logs/workerlog.0", "logs/workerlog.0"},
       }) {
    INFO(c.what);
    const std::string before = slurp(d + "/" + c.input);
    Ran r = run_binary(d, c.args);
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find("refusing to write onto an input") != std::string::npos);
    CHECK(slurp(d + "/" + c.input) == before);
    CHECK(no_temp_files(d));
  }
  CHECK(slurp(g->logs + "/workerlog.0") == log0);
  CHECK(slurp(d + "/rank0.html") == html0);
}

TEST_CASE("convert's report page is report's page for the same options") {
  auto g = two_replicas();
  const std::string& d = g->dir.path();
  for (const char* extra : {"", "--pp-degree 4", "--align-clocks off --steps 1"}) {
    INFO(extra);
    Ran c = run_binary(d, fmt::format("--log_dir logs -o c.html {}", extra));
    Ran r = run_binary(d, fmt::format("report --log_dir logs -o r.html {}", extra));
    REQUIRE(c.code == 0);
    REQUIRE(r.code == 0);
    CHECK(slurp(d + "/c.html") == slurp(d + "/r.html"));
  }
}

TEST_CASE("pp-degree: one decision that the summary and the stats and the page agree on") {
  // A four-stage pipeline read as two stages: the option wins everywhere.
  auto g = generate_logs("--schedule 1f1b --stages 4 --micro-batches 4 --steps 2 --seed 5");
  const std::string& d = g->dir.path();
  Ran c = run_binary(d, "--log_dir logs -o c.html -o c.json --pp-degree 2");
  INFO(c.err);
  REQUIRE(c.code == 0);
  CHECK(c.err.find("2 stages x 2 replicas (--pp-degree)") != std::string::npos);
  std::string page = slurp(d + "/c.html");
  CHECK(page.find("P=2 (from --pp-degree)") != std::string::npos);
  CHECK(page.find("P=4") == std::string::npos);
  Ran s = run_binary(d, "stats --log_dir logs --json --pp-degree 2");
  REQUIRE(s.code == 0);
  nlohmann::json st = nlohmann::json::parse(s.out);
  CHECK(st["schedule"]["pp_degree"] == 2);
  CHECK(st["schedule"]["replicas"] == 2);
}

TEST_CASE("batch honours --pp-degree and --align-clocks") {
  auto g = generate_logs("--schedule 1f1b --stages 4 --micro-batches 4 --steps 2 --seed 5");
  const std::string& d = g->dir.path();
  Ran b = run_binary(d, "batch logs --out out --pp-degree 2 --align-clocks off -q");
  INFO(b.err);
  REQUIRE(b.code == 0);
  nlohmann::json index = nlohmann::json::parse(slurp(d + "/out/index.json"));
  REQUIRE(index["runs"].size() == 1);
  CHECK(index["runs"][0]["schedule"].get<std::string>().find("P=2") != std::string::npos);
  CHECK(slurp(d + "/out/" + index["runs"][0]["name"].get<std::string>() + "/report.html")
            .find("P=2 (from --pp-degree)") != std::string::npos);
  Ran bad = run_binary(d, "batch logs --out out2 --pp-degree 3");
  CHECK(bad.code != 0);
}

TEST_CASE("batch keeps the count of each kind of input problem per run") {
  auto g = generate_logs("--schedule 1f1b --stages 2 --micro-batches 4 --steps 2 --seed 5");
  const std::string& d = g->dir.path();
  std::ofstream(g->logs + "/workerlog.1", std::ios::app) << "Profiler Info: Job (1), type = forward, garbage\n";
  Ran b = run_binary(d, "batch logs --out out -q");
  REQUIRE(b.code == 0);
  nlohmann::json index = nlohmann::json::parse(slurp(d + "/out/index.json"));
  bool counted = false;
  for (const auto& w : index["runs"][0]["warnings"]) {
    counted = counted || w.get<std::string>().rfind("1 x malformed_job_line:", 0) == 0;
  }
  CHECK(counted);
}

TEST_CASE("timings: the driver's phases are listed") {
  auto g = two_replicas();
  const std::string& d = g->dir.path();
  Ran c = run_binary(d, "--log_dir logs -o c.json --timings");
  REQUIRE(c.code == 0);
  for (const char* phase : {" layout ", " scan ", " build ", " pipeline ", " dependencies ", " clocks ", " write "}) {
    INFO(phase << " in " << c.err);
    CHECK(c.err.find(phase) != std::string::npos);
  }
  CHECK(c.err.find(" stats ") == std::string::npos);  // no output needs them
  Ran s = run_binary(d, "stats --log_dir logs --timings -o s.txt");
  REQUIRE(s.code == 0);
  CHECK(s.err.find("timings:") != std::string::npos);
  CHECK(s.err.find(" stats ") != std::string::npos);
}

}  // namespace ppt::testing
