#include "passes/dependencies.h"
#include "passes/pipeline.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <vector>

#include "model/job_types.h"
#include "passes/pipeline_stage.h"
#include "support/test_support.h"

using namespace ppt;
using ppt::testing::generate_logs;
using ppt::testing::job_line;
using ppt::testing::RankLines;
using ppt::testing::timeline_from_lines;

namespace {

const Job& job_of(const Timeline& tl, JobRef r) { return tl.tracks[r.track].jobs[r.job]; }

// The virtual stage of a job's group (schedule.h), for checking neighbours.
int32_t vstage(const Timeline& tl, const PipelinePlan& plan, JobRef r) {
  const Track& t = tl.tracks[r.track];
  const JobClass c = classify_types(tl.types)[job_of(tl, r).type];
  const int32_t p = plan.shape.pp_degree;
  return virtual_stage(plan.schedule.kind, p, pipeline_stage(t.rank, p), c.chunk < 0 ? 0 : c.chunk);
}

// The dependencies with the plan decided as the driver decides it.
Dependencies dependencies_of(const Timeline& tl, int32_t pp_degree = 0, PipelinePlan* plan_out = nullptr) {
  PipelinePlan plan = decide_pipeline(tl, pp_degree, 1);
  Dependencies deps = find_dependencies(tl, plan, 1);
  if (plan_out) *plan_out = std::move(plan);
  return deps;
}

}  // namespace

TEST_CASE("Every schedule's jobs feed the same micro-batch on the neighbouring virtual stage", "[dependencies]") {
  if (!ppt::testing::have_python()) {
    FAIL("python3 not found: gen_logs.py makes the logs (scripts/setup.sh installs python3)");
  }
  struct Case {
    const char* schedule;
    int chunks;  // V in the expected count
    const char* extra;
  };
  const Case cases[] = {
      {"fthenb", 1, ""},
      {"1f1b", 1, ""},
      {"eager1f1b", 1, ""},
      {"pir1f1b", 1, ""},
      {"vpp", 2, "--chunks 2"},
      {"vpp", 3, "--chunks 3"},
      {"zbh1", 1, ""},
      {"zbvpp", 2, "--chunks 2"},
      {"overlap", 1, "--chunks 2"},
  };
  const int p = 4, m = 8, steps = 2;
  for (const Case& c : cases) {
    SECTION(std::string(c.schedule) + " " + c.extra) {
      auto g = generate_logs(
          fmt::format("--stages {} --micro-batches {} --steps {} --schedule {} {}", p, m, steps, c.schedule, c.extra));
      const Timeline& tl = g->timeline;
      PipelinePlan plan;
      Dependencies deps = dependencies_of(tl, 0, &plan);
      CHECK(plan.shape.pp_degree == p);
      CHECK(plan.schedule.chunks == c.chunks);
      // Each micro-batch crosses P*V - 1 boundaries forwards and as many backwards.
      const size_t per_direction = static_cast<size_t>(steps) * m * (p * c.chunks - 1);
      CHECK(deps.count(DependencyKind::kForward) == per_direction);
      CHECK(deps.count(DependencyKind::kBackward) == per_direction);
      // The generator honours every dependency (plus a latency): none is contradicted.
      CHECK(deps.contradicted == 0);
      std::set<std::pair<uint32_t, uint32_t>> consumers;
      for (const Dependency& e : deps.edges) {
        const Job& pj = job_of(tl, e.producer);
        const Job& cj = job_of(tl, e.consumer);
        INFO(describe_job(tl, e.producer) << " -> " << describe_job(tl, e.consumer));
        CHECK(pj.micro_batch == cj.micro_batch);
        CHECK(pj.step == cj.step);
        int32_t want =
            e.kind == DependencyKind::kForward ? vstage(tl, plan, e.consumer) - 1 : vstage(tl, plan, e.consumer) + 1;
        CHECK(vstage(tl, plan, e.producer) == want);
        TypeParts pt = split_type(tl.types[pj.type]);
        CHECK(pt.base == (e.kind == DependencyKind::kForward ? "forward" : "backward"));
        CHECK(pt.suffix.rfind('w', 0) != 0);                                 // backward_w feeds no other stage
        CHECK(consumers.insert({e.consumer.track, e.consumer.job}).second);  // one input per consumer
      }
    }
  }
}

TEST_CASE("VPP's last stage feeds stage 0's next chunk; ZBVPP's chunks turn back at the last stage", "[dependencies]") {
  if (!ppt::testing::have_python()) {
    FAIL("python3 not found (scripts/setup.sh installs it)");
  }
  const int p = 4;
  for (const char* schedule : {"vpp", "zbvpp"}) {
    SECTION(schedule) {
      auto g =
          generate_logs(fmt::format("--stages {} --micro-batches 8 --steps 1 --schedule {} --chunks 2", p, schedule));
      const Timeline& tl = g->timeline;
      PipelinePlan plan;
      Dependencies deps = dependencies_of(tl, 0, &plan);
      bool found = false;
      for (const Dependency& e : deps.edges) {
        if (e.kind != DependencyKind::kForward) continue;
        const Job& cj = job_of(tl, e.consumer);
        if (tl.types[cj.type] != "forward1" || cj.micro_batch != 0) continue;
        int32_t consumer_rank = tl.tracks[e.consumer.track].rank;
        if (std::string(schedule) == "vpp" && consumer_rank == 0) {
          CHECK(tl.tracks[e.producer.track].rank == p - 1);
          CHECK(tl.types[job_of(tl, e.producer).type] == "forward0");
          found = true;
        }
        if (std::string(schedule) == "zbvpp" && consumer_rank == p - 1) {
          CHECK(tl.tracks[e.producer.track].rank == p - 1);  // the same rank: the V turns there
          CHECK(tl.types[job_of(tl, e.producer).type] == "forward0");
          found = true;
        }
      }
      CHECK(found);
    }
  }
}

TEST_CASE("Data-parallel replicas have no dependency between them", "[dependencies]") {
  if (!ppt::testing::have_python()) {
    FAIL("python3 not found (scripts/setup.sh installs it)");
  }
  auto g = generate_logs("--stages 4 --dp 3 --micro-batches 8 --steps 2 --schedule 1f1b");
  const Timeline& tl = g->timeline;
  for (int32_t given : {0, 4}) {
    PipelinePlan plan;
    Dependencies deps = dependencies_of(tl, given, &plan);
    CHECK(plan.shape.pp_degree == 4);
    CHECK(plan.shape.source == (given ? "--pp-degree" : "job order"));
    CHECK(deps.edges.size() == 3u * 2 * 2 * 8 * 3);  // replicas * directions * steps * M * (P-1)
    CHECK(deps.contradicted == 0);
    for (const Dependency& e : deps.edges) {
      int32_t pr = tl.tracks[e.producer.track].rank, cr = tl.tracks[e.consumer.track].rank;
      CHECK(pipeline_replica(pr, 4) == pipeline_replica(cr, 4));
    }
  }
  // Taking all 12 ranks as one pipeline links replicas, and the times say so.
  Dependencies wrong = dependencies_of(tl, 12);
  CHECK(wrong.contradicted > 0);
}

TEST_CASE("Jobs without micro_batch_id get no dependency, and the user is told", "[dependencies]") {
  if (!ppt::testing::have_python()) {
    FAIL("python3 not found (scripts/setup.sh installs it)");
  }
  auto g = generate_logs("--stages 2 --micro-batches 4 --steps 1 --schedule 1f1b --no-mb");
  Timeline& tl = g->timeline;
  PipelinePlan plan;
  Dependencies deps = dependencies_of(tl, 0, &plan);
  CHECK(deps.edges.empty());
  CHECK(deps.jobs_without_micro_batch == 2u * 2 * 4);  // ranks * (F + B) * M
  report_dependencies(tl, deps);
  CHECK(tl.diagnostics.count_of(IssueKind::kNoMicroBatch) == 16);
  CHECK(tl.diagnostics.count_of(IssueKind::kContradictedDependency) == 0);
}

TEST_CASE("A consumer that starts before its producer ends is marked and reported with both places", "[dependencies]") {
  // Two stages, two micro-batches; rank 1's forward of micro-batch 1 starts
  // 300 us before rank 0's ends.
  std::vector<RankLines> ranks(2);
  ranks[0].lines = {job_line("forward", 0, 0, 1000, 0), job_line("forward", 1, 1000, 2000, 1),
                    job_line("backward", 0, 4000, 6000, 0), job_line("backward", 1, 7000, 9000, 1),
                    job_line("optimizer", 0, 9000, 9500, 0)};
  ranks[1].lines = {job_line("forward", 0, 1100, 1600, 0), job_line("forward", 1, 1700, 2700, 1),
                    job_line("backward", 0, 2700, 4000, 0), job_line("backward", 1, 4000, 6000, 1),
                    job_line("optimizer", 0, 9000, 9500, 0)};
  Timeline tl = timeline_from_lines(ranks);
  PipelinePlan plan;
  Dependencies deps = dependencies_of(tl, 0, &plan);
  REQUIRE(plan.shape.pp_degree == 2);
  CHECK(deps.edges.size() == 4);
  CHECK(deps.contradicted == 1);
  const Dependency* bad = nullptr;
  for (const Dependency& e : deps.edges) {
    if (e.contradicted) bad = &e;
  }
  REQUIRE(bad);
  CHECK(bad->kind == DependencyKind::kForward);
  CHECK(dependency_slack_ns(tl, *bad) == -300000);
  CHECK(job_of(tl, bad->consumer).micro_batch == 1);
  report_dependencies(tl, deps);
  REQUIRE(tl.diagnostics.count_of(IssueKind::kContradictedDependency) == 1);
  const Diagnostic& d = tl.diagnostics.examples().back();
  CHECK(d.kind == IssueKind::kContradictedDependency);
  CHECK(d.file == 1);
  CHECK(d.line == 2);
  CHECK_THAT(d.detail, Catch::Contains("0.300 ms before its input"));
  CHECK_THAT(d.detail, Catch::Contains("logs/machine0/workerlog.0:2"));
}

TEST_CASE("The pieces of an overlapped job are one job: the last piece produces, the first consumes",
          "[dependencies]") {
  // Both ranks end the step with an optimizer at the same time, so that the
  // step matcher sees one step on both.
  std::vector<RankLines> ranks(2);
  ranks[0].lines = {job_line("forward(chunk0)", 0, 0, 500, 0), job_line("forward(chunk1)", 0, 500, 1000, 0),
                    job_line("optimizer", 0, 3000, 3500, 0)};
  ranks[1].lines = {job_line("forward(chunk0)", 0, 1100, 1600, 0), job_line("forward(chunk1)", 0, 1600, 2100, 0),
                    job_line("optimizer", 0, 3000, 3500, 0)};
  Timeline tl = timeline_from_lines(ranks);
  Dependencies deps = dependencies_of(tl, 2);
  REQUIRE(deps.edges.size() == 1);
  const Dependency& e = deps.edges[0];
  CHECK(tl.types[job_of(tl, e.producer).type] == "forward(chunk1)");
  CHECK(tl.types[job_of(tl, e.consumer).type] == "forward(chunk0)");
  CHECK(dependency_slack_ns(tl, e) == 100000);
}

TEST_CASE("The dependency index lists each job's incoming and outgoing edges", "[dependencies]") {
  std::vector<RankLines> ranks(3);
  for (int r = 0; r < 3; ++r) {
    ranks[r].lines = {job_line("forward", 0, r * 1000, r * 1000 + 900, 0),
                      job_line("backward", 0, 6000 - r * 1000, 6900 - r * 1000, 0)};
  }
  Timeline tl = timeline_from_lines(ranks);
  Dependencies deps = dependencies_of(tl, 3);
  REQUIRE(deps.edges.size() == 4);
  CHECK(deps.contradicted == 0);
  DependencyIndex index(tl, deps);
  size_t in = 0;
  for (uint32_t t = 0; t < tl.tracks.size(); ++t) {
    for (uint32_t j = 0; j < tl.tracks[t].jobs.size(); ++j) {
      for (uint32_t e : index.incoming({t, j})) CHECK(deps.edges[e].consumer == (JobRef{t, j}));
      in += index.incoming({t, j}).size();
    }
  }
  CHECK(in == deps.edges.size());
  // The middle rank's forward both consumes and produces.
  const Track& middle = tl.tracks[1];
  REQUIRE(middle.rank == 1);
  CHECK(index.incoming({1, 0}).size() == 1);

  // Edges not in consumer order (the index is built in rows then): the same
  // edges into every job.
  Dependencies reversed = deps;
  std::reverse(reversed.edges.begin(), reversed.edges.end());
  DependencyIndex rows(tl, reversed);
  for (uint32_t t = 0; t < tl.tracks.size(); ++t) {
    for (uint32_t j = 0; j < tl.tracks[t].jobs.size(); ++j) {
      std::vector<JobRef> a, b;
      for (uint32_t e : index.incoming({t, j})) a.push_back(deps.edges[e].producer);
      for (uint32_t e : rows.incoming({t, j})) b.push_back(reversed.edges[e].producer);
      std::reverse(b.begin(), b.end());
      CHECK(a == b);
      CHECK(a.size() == index.incoming({t, j}).size());
    }
  }
}

TEST_CASE("V is the schedule's, the highest model chunk + 1, and the dependencies use it", "[dependencies]") {
  // Two stages running chunks 0 and 2 of a three-chunk model (chunk 1's jobs
  // are not in these logs): three chunks, so chunk 2 is virtual stages 4-5.
  std::vector<RankLines> ranks(2);
  for (int r = 0; r < 2; ++r) {
    int64_t t = r * 100;
    ranks[r].lines = {job_line("forward0", 0, t, t + 50, 0), job_line("forward2", 0, t + 300, t + 350, 1),
                      job_line("backward2", 0, t + 1000 - 2 * t, t + 1050 - 2 * t, 2),
                      job_line("backward0", 0, t + 2000 - 2 * t, t + 2050 - 2 * t, 3),
                      job_line("optimizer", 0, 3000, 3050, 4)};
  }
  Timeline tl = timeline_from_lines(ranks);
  PipelinePlan plan;
  Dependencies deps = dependencies_of(tl, 2, &plan);
  CHECK(plan.schedule.chunks == 3);
  // Within each chunk: forward stage 0 -> 1, backward stage 1 -> 0.
  CHECK(deps.count(DependencyKind::kForward) == 2);
  CHECK(deps.count(DependencyKind::kBackward) == 2);
}

TEST_CASE("The dependencies are the same edges in the same order on any number of threads", "[dependencies]") {
  if (!ppt::testing::have_python()) {
    FAIL("python3 not found: gen_logs.py makes the logs (scripts/setup.sh installs python3)");
  }
  // 40 tracks: more than the tracks each thread may have searched and not
  // yet appended (8 a thread), so that the searches' slots are reused.
  auto g = generate_logs("--stages 4 --dp 10 --micro-batches 6 --steps 2 --schedule 1f1b --seed 11");
  const Timeline& tl = g->timeline;
  const PipelinePlan plan = decide_pipeline(tl, 0, 1);
  const Dependencies one = find_dependencies(tl, plan, 1);
  REQUIRE(one.edges.size() > 400);
  for (unsigned threads : {2u, 3u, 8u}) {
    INFO("threads " << threads);
    const Dependencies many = find_dependencies(tl, plan, threads);
    REQUIRE(many.edges.size() == one.edges.size());
    bool same = true;
    for (size_t i = 0; i < one.edges.size() && same; ++i) {
      const Dependency &a = one.edges[i], &b = many.edges[i];
      same =
          a.producer == b.producer && a.consumer == b.consumer && a.kind == b.kind && a.contradicted == b.contradicted;
    }
    CHECK(same);
    CHECK(many.contradicted == one.contradicted);
  }
}

TEST_CASE("Scattered micro-batch ids give the same edges as ids in a row", "[dependencies]") {
  if (!ppt::testing::have_python()) {
    FAIL("python3 not found: gen_logs.py makes the logs (scripts/setup.sh installs python3)");
  }
  // Ids in a row fill a rank's (step, direction, chunk, micro-batch) box and
  // are looked up in it; ids 1000 apart would make that box a thousand times
  // the jobs, so those ranks' groups are sorted and searched instead. Both
  // must give the same edges, in the same (consumer) order, on schedules
  // whose jobs are not in key order (1F1B, VPP's chunks) and with the pieces
  // of overlapped jobs.
  const char* shapes[] = {
      "--schedule 1f1b",
      "--schedule vpp --chunks 2",
      "--schedule zbvpp --chunks 2",
      "--schedule overlap --chunks 2",
  };
  for (const char* shape : shapes) {
    SECTION(shape) {
      auto g = generate_logs(fmt::format("--stages 4 --micro-batches 8 --steps 2 --seed 5 {}", shape));
      const Timeline& tl = g->timeline;
      const PipelinePlan plan = decide_pipeline(tl, 0, 1);
      const Dependencies in_a_row = find_dependencies(tl, plan, 1);
      REQUIRE(in_a_row.edges.size() > 50);
      Timeline scattered = tl;
      for (Track& t : scattered.tracks) {
        for (Job& j : t.jobs) {
          if (j.micro_batch >= 0) j.micro_batch = j.micro_batch * 1000 + 7;
        }
      }
      const Dependencies found = find_dependencies(scattered, plan, 1);
      REQUIRE(found.edges.size() == in_a_row.edges.size());
      size_t differ = 0;
      for (size_t i = 0; i < found.edges.size(); ++i) {
        const Dependency &a = in_a_row.edges[i], &b = found.edges[i];
        differ +=
            a.producer == b.producer && a.consumer == b.consumer && a.kind == b.kind && a.contradicted == b.contradicted
                ? 0
                : 1;
      }
      CHECK(differ == 0);
      CHECK(found.contradicted == in_a_row.contradicted);
    }
  }
}
