// The driver: phases in order, the pipeline decided once and handed to every
// pass, analysis and writer.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "app/driver.h"
#include "output/report/html_report.h"
#include "output/text/stats_json.h"
#include "support/test_support.h"

namespace ppt::testing {
namespace {

DriverRequest request_for(const std::string& logs, int32_t pp_degree) {
  DriverRequest r;
  r.input.log_dir = logs;
  r.threads = 1;
  r.pp_degree = pp_degree;
  return r;
}

}  // namespace

TEST_CASE("driver: --pp-degree 2 on four ranks is the P of the arrows, the stats and the page") {
  // Two pipelines of two stages, read with the option and without it.
  auto g = generate_logs("--schedule 1f1b --stages 4 --micro-batches 4 --steps 2 --seed 5");
  DriverRequest req = request_for(g->logs, 2);
  req.stats = true;
  DriverResult r = run_driver(req);
  REQUIRE(r.ok());
  CHECK(r.pipeline.shape.pp_degree == 2);
  CHECK(r.pipeline.shape.replicas == 2);
  CHECK(r.pipeline.shape.source == "--pp-degree");
  REQUIRE(r.stats);
  CHECK(r.stats->schedule.pp_degree == 2);
  CHECK(r.stats->schedule.pp_degree_source == "--pp-degree");
  // Arrows stay within a replica: no edge between rank 1 and rank 2.
  const Timeline& tl = *r.timeline;
  for (const Dependency& e : r.dependencies.edges) {
    CHECK(tl.tracks[e.producer.track].rank / 2 == tl.tracks[e.consumer.track].rank / 2);
  }
  // The page's tables are the driver's stats.
  TempDir out;
  std::string page = out.path() + "/x.html";
  std::vector<WrittenOutput> w = write_outputs(r, {OutputSpec{page, OutputFormat::kHtmlReport}}, WriteOptions{});
  REQUIRE(w[0].error.empty());
  std::string html = slurp(page);
  CHECK(html.find("P=2 (from --pp-degree)") != std::string::npos);
  CHECK(html.find("P=4") == std::string::npos);
}

TEST_CASE("driver: the phases in order, stats only when asked") {
  auto g = generate_logs("--schedule 1f1b --stages 2 --dp 2 --micro-batches 4 --steps 2 --seed 3");
  DriverRequest req = request_for(g->logs, 0);
  DriverResult plain = run_driver(req);
  REQUIRE(plain.ok());
  std::vector<std::string> names;
  for (const PhaseTime& p : plain.timings) names.push_back(p.name);
  CHECK(names == std::vector<std::string>{"layout", "scan", "build", "pipeline", "dependencies", "clocks"});
  CHECK(!plain.stats);
  req.stats = true;
  DriverResult with = run_driver(req);
  REQUIRE(with.stats);
  CHECK(with.timings.back().name == "stats");
  CHECK(with.pipeline.shape.pp_degree == 2);  // inferred from the job order
  CHECK(with.stats->schedule.pp_degree == with.pipeline.shape.pp_degree);
}

TEST_CASE("driver: suggestions finished later, beside the JSON's writing, are the ones made in the driver") {
  // FThenB at M=4 on 4 stages, a slow rank, two replicas: suggestions with
  // a warning to carry.
  auto g = generate_logs("--schedule fthenb --stages 4 --dp 2 --micro-batches 4 --steps 4 --slow 5:1.3 --seed 7");
  DriverRequest req = request_for(g->logs, 0);
  req.threads = 2;
  req.stats = true;
  req.suggest = true;
  DriverResult now = run_driver(req);
  REQUIRE(now.ok());
  REQUIRE(now.stats);
  REQUIRE_FALSE(now.stats->suggestions.empty());
  CHECK_FALSE(now.suggestion_replays);
  const std::string want = format_stats_json(*now.stats, now.timeline->origin_ns);

  req.suggest_later = true;
  DriverResult later = run_driver(req);
  REQUIRE(later.ok());
  REQUIRE(later.suggestion_replays);
  CHECK(later.stats->suggestions.empty());
  CHECK(later.timings.back().name == "stats and the model");
  LaterSuggestions finishing;
  finishing.start(later);
  Stats copy = *later.stats;
  int calls = 0;
  const std::string got = format_stats_json(copy, later.timeline->origin_ns, [&] {
    ++calls;
    finishing.finish(&copy);
  });
  CHECK(calls == 1);
  CHECK(got == want);
  // The run's own stats have them too (the page reads those), and a second
  // finish changes nothing.
  finishing.finish(&copy);
  CHECK(format_stats_json(*later.stats, later.timeline->origin_ns) == want);
  CHECK(format_stats_json(copy, later.timeline->origin_ns) == want);
}

TEST_CASE("driver: an output that is an input is refused before anything is read") {
  auto g = generate_logs("--schedule 1f1b --stages 2 --micro-batches 2 --steps 1 --seed 3");
  DriverRequest req = request_for(g->logs, 0);
  req.outputs = {"-", g->logs + "/workerlog.1"};
  DriverResult r = run_driver(req);
  CHECK(r.failure == DriverFailure::kUsage);
  CHECK(r.error.find("refusing to write onto an input") != std::string::npos);
  CHECK(!r.timeline);
  req.outputs = {"-", g->logs + "/other.json"};
  CHECK(run_driver(req).ok());
}

TEST_CASE("driver: a --pp-degree that does not divide the run's ranks is a usage error") {
  auto g = generate_logs("--schedule 1f1b --stages 4 --micro-batches 4 --steps 1 --seed 3");
  DriverResult r = run_driver(request_for(g->logs, 3));
  CHECK(r.failure == DriverFailure::kUsage);
  CHECK(r.error.find("does not divide") != std::string::npos);
}

TEST_CASE("driver: no job and --strict stop before the analysis") {
  TempDir d;
  std::filesystem::create_directories(d.path() + "/logs");
  std::ofstream(d.path() + "/logs/workerlog.0") << "nothing here\n";
  DriverRequest req = request_for(d.path() + "/logs", 0);
  req.stats = true;
  DriverResult r = run_driver(req);
  CHECK(r.failure == DriverFailure::kNoJobs);
  CHECK(!r.stats);
  std::ofstream(d.path() + "/logs/workerlog.0")
      << job_line("forward", 0, 0, 10, 0) << job_line("forward", 1, 20, 10, 1);
  req.strict = true;
  r = run_driver(req);
  CHECK(r.failure == DriverFailure::kStrict);
  req.strict = false;
  CHECK(run_driver(req).ok());
}

TEST_CASE("driver: the summary names the replicas the pipeline decision counted, in words") {
  DriverResult r;
  r.timeline.emplace();
  r.timeline->world_ranks = 8;
  r.pipeline.shape = {4, 2, "job order"};
  CHECK(format_pipeline_summary(r) == ", 4 stages x 2 replicas (job order)");
  // Fewer ranks than two pipelines: one replica, which is no news.
  r.timeline->world_ranks = 6;
  r.pipeline.shape = {4, 1, "--pp-degree"};
  CHECK(format_pipeline_summary(r).empty());
  r.pipeline.shape = {1, 6, "no pipeline"};
  CHECK(format_pipeline_summary(r).empty());
}

TEST_CASE("driver: a directory among the files is the log directory, decided by the layout") {
  auto g = generate_logs("--schedule 1f1b --stages 2 --micro-batches 2 --steps 1 --seed 3");
  DriverRequest req;
  req.input.files = {g->logs};
  req.threads = 2;
  DriverResult r = run_driver(req);
  REQUIRE(r.ok());
  CHECK(r.source == g->logs);
  CHECK(r.timeline->rank_files() == 2);
  // The writers phase runs on the request's threads, carried by the result.
  CHECK(r.threads == 2);
  // Two directories: the layout's usage error, as the command line says it.
  req.input.files = {g->logs, g->logs};
  r = run_driver(req);
  CHECK(r.failure == DriverFailure::kLayout);
  CHECK(r.usage_error);
  CHECK(r.error.find("one log directory at a time") != std::string::npos);
}

}  // namespace ppt::testing
