// flush(step) is the one source of step numbers; a step is never lost or
// dropped without an error; jobs per step are capped; the destructor warns;
// the lines are Paddle's; same-host processes agree on wall time.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "fake_cuda.h"
#include "pp_timeline/log_line.h"
#include "pp_timeline/shim.h"
#include "pp_timeline/shim_c.h"

using namespace ppt::shim;

namespace {

struct Capture {
  std::vector<std::string> lines;
  std::vector<std::string> warnings;
  std::vector<JobTimes> jobs;

  Options options() {
    Options o;
    o.use_cuda = false;
    o.sink = [this](std::string_view l) { lines.emplace_back(l); };
    o.warning_sink = [this](std::string_view w) { warnings.emplace_back(w); };
    o.on_job = [this](const JobTimes& j) { jobs.push_back(j); };
    return o;
  }
  size_t job_lines() const {
    size_t n = 0;
    for (const auto& l : lines) n += l.rfind(ppt::log_line::kJobMarker, 0) == 0 ? 1 : 0;
    return n;
  }
};

void run_step(Profiler& p, int jobs) {
  for (int j = 0; j < jobs; ++j) {
    REQUIRE(p.begin("forward", j).ok());
    REQUIRE(p.end().ok());
  }
}

}  // namespace

TEST_CASE("A window that does not start at 0, with steps numbered from its start, is written whole") {
  Capture c;
  Profiler p(c.options());
  REQUIRE(p.set_window(100, 103).ok());
  for (int64_t step = 100; step < 103; ++step) {
    run_step(p, 3);
    REQUIRE(p.flush(step).ok());
  }
  CHECK(c.job_lines() == 9);
  REQUIRE_FALSE(c.lines.empty());
  CHECK(c.lines.front() == "Schedule Profiler start at step 100 and end at step 103");
}

TEST_CASE("Steps numbered from 1 in a window [0, 3): steps 1 and 2 are written, 3 is outside") {
  Capture c;
  Profiler p(c.options());
  REQUIRE(p.set_window(0, 3).ok());
  for (int64_t step = 1; step <= 3; ++step) {
    run_step(p, 2);
    CHECK(p.flush(step).ok());
  }
  CHECK(c.job_lines() == 4);
  CHECK(c.lines.front() == "Schedule Profiler start at step 1 and end at step 3");
  CHECK(p.stats().jobs_dropped == 0);
  CHECK(p.stats().jobs_recorded == 4);  // step 3 was known to be outside: not even timed
}

TEST_CASE("The C API numbers steps by flush alone") {
  ppt_shim* h = ppt_shim_create(nullptr, -1, PPT_SHIM_HOST_CLOCK | PPT_SHIM_IGNORE_ENV);
  REQUIRE(h != nullptr);
  std::vector<std::string> lines;
  REQUIRE(ppt_shim_set_sink(
              h,
              [](const char* l, size_t n, void* u) { static_cast<std::vector<std::string>*>(u)->emplace_back(l, n); },
              &lines) == PPT_SHIM_OK);
  REQUIRE(ppt_shim_set_window(h, 100, 102) == PPT_SHIM_OK);
  for (int64_t step = 100; step < 102; ++step) {
    REQUIRE(ppt_shim_begin(h, "forward", 0) == PPT_SHIM_OK);
    REQUIRE(ppt_shim_end(h) == PPT_SHIM_OK);
    REQUIRE(ppt_shim_flush(h, step) == PPT_SHIM_OK);
  }
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == "Schedule Profiler start at step 100 and end at step 102");
  ppt_shim_destroy(h);
}

TEST_CASE("A step in the window that was not recorded is an error, never silently lost") {
  Capture c;
  Profiler p(c.options());
  REQUIRE(p.set_window(0, 3).ok());
  run_step(p, 1);
  REQUIRE(p.flush(5).ok());    // outside: dropped as it should be
  CHECK_FALSE(p.recording());  // step 6 is expected, outside the window
  run_step(p, 2);
  const Status s = p.flush(1);  // the numbers went back into the window
  CHECK(s.code() == Code::kStepNotRecorded);
  CHECK_THAT(s.message(), Catch::Contains("step 1 is in the window [0, 3)") &&
                              Catch::Contains("2 jobs were not recorded") && Catch::Contains("set_step(1)"));
  CHECK(p.stats().jobs_dropped == 2);
  // After it the numbering follows the flushes: step 2 is recorded.
  CHECK(p.recording());
  run_step(p, 1);
  REQUIRE(p.flush(2).ok());
  CHECK(c.job_lines() == 1);
}

TEST_CASE("set_step() names a step that does not follow the previous one") {
  Capture c;
  Profiler p(c.options());
  REQUIRE(p.set_window(10, 11).ok());
  run_step(p, 1);
  REQUIRE(p.flush(0).ok());
  CHECK_FALSE(p.recording());
  REQUIRE(p.set_step(10).ok());
  CHECK(p.recording());
  run_step(p, 2);
  REQUIRE(p.flush(10).ok());
  CHECK(c.job_lines() == 2);
}

TEST_CASE("Jobs past the per-step cap are refused with an error and counted") {
  Capture c;
  Options o = c.options();
  o.max_jobs_per_step = 10;
  Profiler p(o);
  run_step(p, 10);
  const Status b = p.begin("forward", 10);
  CHECK(b.code() == Code::kTooManyJobs);
  CHECK_THAT(b.message(), Catch::Contains("10 jobs") && Catch::Contains("flush(step)"));
  CHECK(p.end().code() == Code::kEndWithoutBegin);  // nothing was opened
  const Status f = p.flush(0);
  CHECK(f.code() == Code::kTooManyJobs);
  CHECK_THAT(f.message(), Catch::Contains("1 job(s) past the cap of 10"));
  CHECK(c.job_lines() == 10);
  CHECK(p.stats().jobs_dropped == 1);
  // The next step starts with room again.
  run_step(p, 10);
  CHECK(p.flush(1).ok());
}

TEST_CASE("Without a flush the step's memory stays bounded by the cap") {
  Capture c;
  Options o = c.options();
  o.max_jobs_per_step = 1000;
  Profiler p(o);
  int refused = 0;
  for (int j = 0; j < 20'000; ++j) {
    if (p.begin("forward", j).code() == Code::kTooManyJobs) {
      ++refused;
    } else {
      REQUIRE(p.end().ok());
    }
  }
  CHECK(refused == 19'000);
  CHECK(p.stats().jobs_recorded == 1000);
}

TEST_CASE("The destructor warns about a step that was never flushed") {
  Capture c;
  {
    Profiler p(c.options());
    run_step(p, 1);
    REQUIRE(p.flush(0).ok());
    run_step(p, 3);  // the loop exits before flush(1)
  }
  CHECK(c.job_lines() == 1);
  REQUIRE(c.warnings.size() == 1);
  CHECK_THAT(c.warnings[0],
             Catch::Contains("3 job(s) of a step that was never flushed") && Catch::Contains("flush(step)"));
}

TEST_CASE("Lines are Paddle's by default: micro_batch_id always, 0 without a micro-batch") {
  Capture c;
  Profiler p(c.options());
  REQUIRE(p.begin("optimizer", -1).ok());
  REQUIRE(p.end().ok());
  REQUIRE(p.begin("forward", 7).ok());
  REQUIRE(p.end().ok());
  REQUIRE(p.flush(0).ok());
  REQUIRE(c.lines.size() == 2);
  CHECK_THAT(c.lines[0],
             Catch::StartsWith("Profiler Info: Job (0), type = optimizer, micro_batch_id = 0, job_start_time = "));
  CHECK_THAT(c.lines[1], Catch::StartsWith("Profiler Info: Job (7), type = forward, micro_batch_id = 7, "));
  CHECK(c.jobs[0].micro_batch == 0);  // what the line says
  CHECK(c.warnings.empty());
}

TEST_CASE("The compact format leaves the field out, numbered by position") {
  Capture c;
  Options o = c.options();
  o.format = LineFormat::kCompact;
  Profiler p(o);
  REQUIRE(p.begin("forward", 7).ok());
  REQUIRE(p.end().ok());
  REQUIRE(p.begin("lr", -1).ok());
  REQUIRE(p.end().ok());
  REQUIRE(p.flush(0).ok());
  REQUIRE(c.lines.size() == 2);
  CHECK_THAT(c.lines[1], Catch::StartsWith("Profiler Info: Job (1), type = lr, job_start_time = "));
}

TEST_CASE("A type Paddle's helper cannot read is accepted, with one warning") {
  Capture c;
  Profiler p(c.options());
  for (int k = 0; k < 3; ++k) {
    REQUIRE(p.begin("forward(chunk0)", 0).ok());
    REQUIRE(p.end().ok());
  }
  REQUIRE(p.flush(0).ok());
  CHECK(c.job_lines() == 3);
  REQUIRE(c.warnings.size() == 1);
  CHECK_THAT(c.warnings[0], Catch::Contains("profiler_helper_static.py"));
}

TEST_CASE("Ranks on one host agree on wall time while the wall clock is slewed at 5000 ppm") {
  fake_cuda::Config cfg;
  cfg.wall_drift = 5000e-6;
  cfg.tick_ns = 10;
  fake_cuda::ClockScope clock(cfg);
  Capture a, b;
  Profiler rank_a(a.options());
  Profiler rank_b(b.options());
  // Both ranks time the same moments, but flush 40 ms apart, with steps of
  // 100 ms: one clock pair per flush would put them ~200 us apart.
  for (int64_t step = 0; step < 5; ++step) {
    for (int j = 0; j < 4; ++j) {
      REQUIRE(rank_a.begin("forward", j).ok());
      REQUIRE(rank_b.begin("forward", j).ok());
      fake_cuda::advance(20'000'000);
      REQUIRE(rank_a.end().ok());
      REQUIRE(rank_b.end().ok());
    }
    fake_cuda::advance(10'000'000);
    REQUIRE(rank_a.flush(step).ok());
    fake_cuda::advance(40'000'000);
    REQUIRE(rank_b.flush(step).ok());
    fake_cuda::advance(1'000'000);
  }
  REQUIRE(a.jobs.size() == 20);
  REQUIRE(b.jobs.size() == 20);
  int64_t worst = 0;
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    const int64_t ds = a.jobs[i].start_ns - b.jobs[i].start_ns;
    const int64_t de = a.jobs[i].end_ns - b.jobs[i].end_ns;
    worst = std::max({worst, ds < 0 ? -ds : ds, de < 0 ? -de : de});
  }
  INFO("worst disagreement " << worst << " ns");
  CHECK(worst <= 20'000);
}
