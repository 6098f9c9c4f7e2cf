// What a path given to diff is, decided in one place: logs (standard input,
// a directory, a log file), a stored stats JSON, or nothing there; and a
// stored stats JSON read back.
#include <catch2/catch.hpp>

#include <string>

#include "app/stats_input.h"
#include "output/text/stats_json.h"
#include "support/test_support.h"

namespace ppt::testing {
namespace {

TEST_CASE("a path given as a run is logs, a stats JSON or missing", "[stats][diff]") {
  TempDir dir;
  const std::string log = dir.write("logs/workerlog.0", "Profiler Info: Job ...\n");
  const std::string json = dir.write("base.json", "\n  {\"schema\": \"pp-timeline-stats/2\"}\n");
  CHECK(classify_run_path("-") == RunPathKind::kStdin);
  CHECK(classify_run_path(dir.path() + "/logs") == RunPathKind::kLogDir);
  CHECK(classify_run_path(log) == RunPathKind::kLogFile);
  CHECK(classify_run_path(json) == RunPathKind::kStatsJson);
  CHECK(classify_run_path(dir.path() + "/nothing") == RunPathKind::kMissing);
}

TEST_CASE("the request for a run's logs replaces the input and keeps the rest", "[stats][diff]") {
  DriverRequest request;
  request.input.log_dir = "other/";
  request.input.files = {"a.log"};
  request.input.devices = {1, 2};
  request.threads = 3;
  DriverRequest dir = request_for_path(request, "logs/", RunPathKind::kLogDir);
  CHECK(dir.input.log_dir == "logs/");
  CHECK(dir.input.files.empty());
  CHECK(dir.input.devices == std::vector<int>{1, 2});
  CHECK(dir.threads == 3);
  DriverRequest file = request_for_path(request, "-", RunPathKind::kStdin);
  CHECK(file.input.log_dir.empty());
  CHECK(file.input.files == std::vector<std::string>{"-"});
}

TEST_CASE("a stored stats JSON is read with its source, or refused with why", "[stats][diff]") {
  TempDir dir;
  Stats st;
  st.source = "logs/";
  st.jobs = 12;
  const std::string good = dir.write("base.json", format_stats_json(st));
  StatsInput in;
  std::string error;
  bool usage = true;
  REQUIRE(read_stats_file(good, &in, &error, &usage));
  CHECK_FALSE(usage);
  CHECK(in.stats.jobs == 12);
  CHECK(in.stats.source == good + " (stats of logs/)");
  CHECK_FALSE(in.run);

  // A value the schema does not allow: a usage error, the field named.
  const std::string bad = dir.write("bad.json", "{\"schema\": \"pp-timeline-stats/2\", \"jobs\": -1}");
  CHECK_FALSE(read_stats_file(bad, &in, &error, &usage));
  CHECK(usage);
  CHECK(error.rfind(bad + ": not a valid stats file: jobs", 0) == 0);
  // Not JSON at all: an input problem, not a usage error.
  const std::string broken = dir.write("broken.json", "{\"schema\": ");
  CHECK_FALSE(read_stats_file(broken, &in, &error, &usage));
  CHECK_FALSE(usage);
  CHECK(error.rfind(broken + ": not JSON", 0) == 0);
}

}  // namespace
}  // namespace ppt::testing
