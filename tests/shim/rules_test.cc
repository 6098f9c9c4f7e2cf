// The Profiler's rules, on the host clock: misuse is reported, never fatal,
// and only the profiling window's steps are written.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "pp_timeline/log_line.h"
#include "pp_timeline/shim.h"

using namespace ppt::shim;

namespace {

struct Capture {
  std::vector<std::string> lines;
  std::vector<std::string> types;  // of the jobs, from on_job

  Options options() {
    Options o;
    o.use_cuda = false;
    o.sink = [this](std::string_view l) { lines.emplace_back(l); };
    o.on_job = [this](const JobTimes& j) { types.emplace_back(j.type); };
    return o;
  }
  size_t jobs() const {
    size_t n = 0;
    for (const auto& l : lines) n += l.find(ppt::log_line::kJobMarker) == 0 ? 1 : 0;
    return n;
  }
};

}  // namespace

TEST_CASE("end() without begin() is an error that changes nothing") {
  Capture c;
  Profiler p(c.options());
  const Status s = p.end();
  CHECK(s.code() == Code::kEndWithoutBegin);
  CHECK_THAT(s.message(), Catch::Contains("end()") && Catch::Contains("begin()"));
  CHECK(p.begin("forward", 0).ok());
  CHECK(p.end().ok());
  CHECK(p.end().code() == Code::kEndWithoutBegin);
  CHECK(p.flush(0).ok());
  CHECK(c.types == std::vector<std::string>{"forward"});
}

TEST_CASE("A nested begin() is an error and the open job stays open") {
  Capture c;
  Profiler p(c.options());
  REQUIRE(p.begin("forward", 1).ok());
  const Status s = p.begin("backward", 1);
  CHECK(s.code() == Code::kNestedBegin);
  CHECK_THAT(s.message(),
             Catch::Contains("\"backward\"") && Catch::Contains("\"forward\"") && Catch::Contains("micro-batch 1"));
  CHECK(p.end().ok());
  CHECK(p.flush(0).ok());
  CHECK(c.types == std::vector<std::string>{"forward"});
}

TEST_CASE("A type that would break the line apart is refused") {
  const std::string bad = GENERATE(std::string("for,ward"), std::string("forward\n"), std::string("for\rward"),
                                   std::string("fo\0rward", 8), std::string(""));
  Capture c;
  Profiler p(c.options());
  const Status s = p.begin(bad, 0);
  CHECK(s.code() == Code::kInvalidType);
  CHECK_THAT(s.message(), Catch::Contains("job type"));
  CHECK(s.message().find('\n') == std::string::npos);  // the message itself stays one line
  // Nothing was opened: a good job can follow.
  CHECK(p.end().code() == Code::kEndWithoutBegin);
  CHECK(p.begin("forward", 0).ok());
  CHECK(p.end().ok());
  CHECK(p.flush(0).ok());
  CHECK(c.jobs() == 1);
}

TEST_CASE("Types Paddle uses are accepted as they are") {
  Capture c;
  Profiler p(c.options());
  for (const char* t :
       {"forward(chunk0)", "backward(chunk1)", "backward_w1_reduce", "lr", "recv_forward", "default", "前向"}) {
    REQUIRE(p.begin(t, 0).ok());
    REQUIRE(p.end().ok());
  }
  CHECK(p.flush(0).ok());
  CHECK(c.types.size() == 7);
  CHECK(c.types.front() == "forward(chunk0)");
}

TEST_CASE("flush() with a job open drops that job, writes the others and ends the step") {
  Capture c;
  Profiler p(c.options());
  REQUIRE(p.begin("forward", 0).ok());
  REQUIRE(p.end().ok());
  REQUIRE(p.begin("backward", 0).ok());
  const Status s = p.flush(0);
  CHECK(s.code() == Code::kOpenJobAtFlush);
  CHECK_THAT(s.message(), Catch::Contains("\"backward\"") && Catch::Contains("dropped"));
  CHECK(c.types == std::vector<std::string>{"forward"});
  // The next step starts clean.
  CHECK(p.end().code() == Code::kEndWithoutBegin);
  REQUIRE(p.begin("optimizer", 0).ok());
  REQUIRE(p.end().ok());
  CHECK(p.flush(1).ok());
  CHECK(c.types == std::vector<std::string>{"forward", "optimizer"});
}

TEST_CASE("Only steps in the window are written, after one marker") {
  Capture c;
  Options o = c.options();
  Profiler p(o);
  REQUIRE(p.set_window(2, 4).ok());
  for (int step = 0; step < 6; ++step) {
    // Until a flush names a step, the step is recorded in case it is in the
    // window; after it, the step expected next decides.
    CHECK(p.recording() == (step == 0 || step == 2 || step == 3));
    REQUIRE(p.begin("forward", step).ok());
    REQUIRE(p.end().ok());
    REQUIRE(p.flush(step).ok());
  }
  REQUIRE(c.lines.size() == 3);
  CHECK(c.lines[0] == "Schedule Profiler start at step 2 and end at step 4");
  CHECK_THAT(c.lines[1], Catch::Contains("micro_batch_id = 2,"));
  CHECK_THAT(c.lines[2], Catch::Contains("micro_batch_id = 3,"));
  CHECK(p.stats().jobs_recorded == 3);
}

TEST_CASE("Without a window every step is written and no marker") {
  Capture c;
  Profiler p(c.options());
  for (int step = 0; step < 3; ++step) {
    REQUIRE(p.begin("forward", 0).ok());
    REQUIRE(p.end().ok());
    REQUIRE(p.flush(step).ok());
  }
  CHECK(c.lines.size() == 3);
  CHECK(c.jobs() == 3);
}

TEST_CASE("The marker names the first step written when the run starts inside the window") {
  Capture c;
  Options o = c.options();
  o.window_set = true;
  o.window_start = 0;
  o.window_end = 100;
  Profiler p(o);  // a resumed run: its first step is 40
  REQUIRE(p.begin("forward", 0).ok());
  REQUIRE(p.end().ok());
  REQUIRE(p.flush(40).ok());
  CHECK(c.lines.front() == "Schedule Profiler start at step 40 and end at step 100");
}

TEST_CASE("set_step() moves the current step, for steps that are not consecutive") {
  Capture c;
  Profiler p(c.options());
  REQUIRE(p.set_window(10, 11).ok());
  REQUIRE(p.set_step(9).ok());
  CHECK_FALSE(p.recording());
  REQUIRE(p.set_step(10).ok());
  CHECK(p.recording());
  REQUIRE(p.begin("forward", 0).ok());
  CHECK(p.set_step(3).code() == Code::kInvalidArgument);  // not while a job is open
  REQUIRE(p.end().ok());
  REQUIRE(p.flush(10).ok());
  CHECK_FALSE(p.recording());
  CHECK(c.jobs() == 1);
}

TEST_CASE("An empty window is refused") {
  Capture c;
  Profiler p(c.options());
  const Status s = p.set_window(5, 5);
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("empty"));
  CHECK(p.recording());
}

TEST_CASE("Outside the window begin() and end() still check their use") {
  Capture c;
  Profiler p(c.options());
  REQUIRE(p.set_window(5, 6).ok());
  REQUIRE(p.set_step(0).ok());
  REQUIRE(p.begin("forward", 0).ok());
  CHECK(p.begin("forward", 1).code() == Code::kNestedBegin);
  CHECK(p.begin("a,b", 1).code() == Code::kNestedBegin);
  REQUIRE(p.end().ok());
  CHECK(p.begin("a,b", 1).code() == Code::kInvalidType);
  CHECK(p.flush(0).ok());
  CHECK(c.lines.empty());
}

TEST_CASE("Compact lines: a job without a micro-batch has no field, numbered by position") {
  Capture c;
  Options o = c.options();
  o.format = LineFormat::kCompact;
  Profiler p(o);
  REQUIRE(p.begin("lr", -1).ok());
  REQUIRE(p.end().ok());
  REQUIRE(p.begin("forward", 7).ok());
  REQUIRE(p.end().ok());
  REQUIRE(p.flush(0).ok());
  REQUIRE(c.lines.size() == 2);
  CHECK_THAT(c.lines[0], Catch::StartsWith("Profiler Info: Job (0), type = lr, job_start_time = "));
  CHECK_THAT(c.lines[1], Catch::StartsWith("Profiler Info: Job (7), type = forward, micro_batch_id = 7, "));
}

TEST_CASE("A step's jobs are written in begin order, each after the one before") {
  Capture c;
  std::vector<JobTimes> jobs;
  std::vector<std::string> names;
  Options o = c.options();
  o.on_job = [&](const JobTimes& j) {
    jobs.push_back(j);
    names.emplace_back(j.type);
  };
  Profiler p(o);
  for (int i = 0; i < 50; ++i) {
    REQUIRE(p.begin(i % 2 == 0 ? "forward" : "backward", i).ok());
    REQUIRE(p.end().ok());
  }
  REQUIRE(p.flush(0).ok());
  REQUIRE(jobs.size() == 50);
  for (size_t i = 0; i < jobs.size(); ++i) {
    CHECK(jobs[i].micro_batch == static_cast<int64_t>(i));
    CHECK(names[i] == (i % 2 == 0 ? "forward" : "backward"));
    CHECK(jobs[i].start_ns <= jobs[i].end_ns);
    if (i > 0) CHECK(jobs[i - 1].end_ns <= jobs[i].start_ns);
  }
}

TEST_CASE("Times are wall-clock times of now") {
  Capture c;
  std::vector<JobTimes> jobs;
  Options o = c.options();
  o.on_job = [&](const JobTimes& j) { jobs.push_back(j); };
  Profiler p(o);
  const auto before = std::chrono::system_clock::now();
  REQUIRE(p.begin("forward", 0).ok());
  REQUIRE(p.end().ok());
  const auto after = std::chrono::system_clock::now();
  REQUIRE(p.flush(0).ok());
  REQUIRE(jobs.size() == 1);
  const int64_t lo = std::chrono::duration_cast<std::chrono::nanoseconds>(before.time_since_epoch()).count();
  const int64_t hi = std::chrono::duration_cast<std::chrono::nanoseconds>(after.time_since_epoch()).count();
  // A millisecond of slack for the clocks' mapping.
  CHECK(jobs[0].start_ns >= lo - 1'000'000);
  CHECK(jobs[0].end_ns <= hi + 1'000'000);
}

TEST_CASE("ScopedJob ends the job it began") {
  Capture c;
  Profiler p(c.options());
  {
    ScopedJob job(p, "forward", 0);
    CHECK(job.status().ok());
    ScopedJob nested(p, "backward", 0);
    CHECK(nested.status().code() == Code::kNestedBegin);
  }
  CHECK(p.end().code() == Code::kEndWithoutBegin);
  CHECK(p.flush(0).ok());
  CHECK(c.types == std::vector<std::string>{"forward"});
}

TEST_CASE("Without CUDA the shim says it uses the host clock, and why") {
  Options o;
  o.use_cuda = false;
  Profiler host(o);
  CHECK(host.backend() == Backend::kHostClock);
  CHECK_THAT(host.backend_note(), Catch::StartsWith("host clock: "));

  // Asked for CUDA on a machine without a device, it falls back and works.
  Options auto_options;
  auto_options.sink = [](std::string_view) {};
  Profiler maybe(auto_options);
  if (maybe.backend() == Backend::kHostClock) {
    CHECK_THAT(maybe.backend_note(), Catch::StartsWith("host clock: "));
    CHECK(maybe.begin("forward", 0).ok());
    CHECK(maybe.end().ok());
    CHECK(maybe.flush(0).ok());
  }
}

TEST_CASE("Every code has a stable name") {
  CHECK(std::string(code_name(Code::kOk)) == "ok");
  CHECK(std::string(code_name(Code::kNestedBegin)) == "nested_begin");
  CHECK(std::string(code_name(Code::kOpenJobAtFlush)) == "open_job_at_flush");
}
