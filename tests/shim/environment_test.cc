#include <unistd.h>
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "pp_timeline/shim.h"

using namespace ppt::shim;

namespace {

// Sets variables for a scope and removes them after.
class Env {
 public:
  Env(std::initializer_list<std::pair<const char*, const char*>> vars) {
    for (auto [k, v] : vars) {
      ::setenv(k, v, 1);
      names_.push_back(k);
    }
  }
  ~Env() {
    for (const char* k : names_) ::unsetenv(k);
  }

 private:
  std::vector<const char*> names_;
};

}  // namespace

TEST_CASE("Unset variables change nothing") {
  Options o;
  REQUIRE(options_from_environment(&o).ok());
  CHECK_FALSE(o.window_set);
  CHECK(o.use_cuda);
  CHECK(o.wait == FlushWait::kSynchronize);
}

TEST_CASE("PPT_SHIM_START_STEP and PPT_SHIM_END_STEP set the window") {
  Env env{{"PPT_SHIM_START_STEP", "10"}, {"PPT_SHIM_END_STEP", "20"}};
  Options o;
  REQUIRE(options_from_environment(&o).ok());
  CHECK(o.window_set);
  CHECK(o.window_start == 10);
  CHECK(o.window_end == 20);
}

TEST_CASE("A start step alone opens the window to the end") {
  Env env{{"PPT_SHIM_START_STEP", "3"}};
  Options o;
  REQUIRE(options_from_environment(&o).ok());
  CHECK(o.window_start == 3);
  CHECK(o.window_end == kNoEndStep);
}

TEST_CASE("PPT_SHIM_CLOCK and PPT_SHIM_FLUSH_WAIT choose the clock and the wait") {
  Env env{{"PPT_SHIM_CLOCK", "host"}, {"PPT_SHIM_FLUSH_WAIT", "poll"}};
  Options o;
  REQUIRE(options_from_environment(&o).ok());
  CHECK_FALSE(o.use_cuda);
  CHECK(o.wait == FlushWait::kPoll);
}

TEST_CASE("A value that cannot be used is named in the error and changes nothing") {
  using Case = std::tuple<const char*, const char*, const char*>;
  const auto [name, value, expected] =
      GENERATE(Case{"PPT_SHIM_START_STEP", "ten", "an integer"}, Case{"PPT_SHIM_END_STEP", "12x", "an integer"},
               Case{"PPT_SHIM_END_STEP", "", "an integer"}, Case{"PPT_SHIM_CLOCK", "gpu", "one of auto, cuda, host"},
               Case{"PPT_SHIM_FLUSH_WAIT", "spin", "one of sync, poll"},
               Case{"PPT_SHIM_FORMAT", "json", "one of paddle, compact"});
  Env env{{"PPT_SHIM_CLOCK", "host"}, {name, value}};
  Options o;
  o.max_jobs_per_step = 7;
  const Status s = options_from_environment(&o);
  CHECK(s.code() == Code::kBadEnvironment);
  CHECK_THAT(s.message(), Catch::Contains(std::string(name) + "='" + value + "'") && Catch::Contains(expected));
  CHECK(o.use_cuda);  // PPT_SHIM_CLOCK=host was not applied either
  CHECK_FALSE(o.window_set);
  CHECK(o.max_jobs_per_step == 7);
}

TEST_CASE("An empty window from the environment is refused") {
  Env env{{"PPT_SHIM_START_STEP", "5"}, {"PPT_SHIM_END_STEP", "5"}};
  Options o;
  const Status s = options_from_environment(&o);
  CHECK(s.code() == Code::kBadEnvironment);
  CHECK_THAT(s.message(), Catch::Contains("empty window [5, 5)"));
}

TEST_CASE("PPT_SHIM_FORMAT and PPT_SHIM_LOG_FILE") {
  Env env{{"PPT_SHIM_FORMAT", "compact"}, {"PPT_SHIM_LOG_FILE", "/tmp/x.log"}};
  Options o;
  REQUIRE(o.format == LineFormat::kPaddle);
  REQUIRE(options_from_environment(&o).ok());
  CHECK(o.format == LineFormat::kCompact);
  CHECK(o.log_file == "/tmp/x.log");
}

namespace {
const char* torchrun_env(const char* name) {
  const std::string_view n = name;
  if (n == "RANK") return "5";
  if (n == "LOCAL_RANK") return "1";
  return nullptr;
}
const char* paddle_env(const char* name) {
  const std::string_view n = name;
  if (n == "PADDLE_TRAINER_ID") return "3";
  if (n == "PADDLE_RANK_IN_NODE") return "0";
  if (n == "RANK") return "9";  // Paddle's own wins
  return nullptr;
}
const char* no_env(const char*) { return nullptr; }
}  // namespace

TEST_CASE("{rank} and {local_rank} in the log path are the launcher's ranks") {
  CHECK(expand_log_path("log/shim.{rank}.{local_rank}.log", torchrun_env) == "log/shim.5.1.log");
  CHECK(expand_log_path("log/workerlog.{rank}", paddle_env) == "log/workerlog.3");
  CHECK(expand_log_path("{local_rank}/{rank}", paddle_env) == "0/3");
  CHECK(expand_log_path("plain{rnk}", paddle_env) == "plain{rnk}");
  // Without a launcher two processes still get two files.
  CHECK(expand_log_path("x.{rank}", no_env) == "x.pid" + std::to_string(::getpid()));
}

TEST_CASE("Two ranks given one PPT_SHIM_LOG_FILE pattern write two files") {
  char dir[] = "/tmp/ppt_rank_logXXXXXX";
  REQUIRE(::mkdtemp(dir) != nullptr);
  const std::string pattern = std::string(dir) + "/shim.{rank}.log";
  for (const char* rank : {"0", "1"}) {
    Env env({{"PPT_SHIM_LOG_FILE", pattern.c_str()}, {"RANK", rank}});
    Options o;
    o.use_cuda = false;
    REQUIRE(options_from_environment(&o).ok());
    Profiler p(o);
    REQUIRE(p.begin("forward", 0).ok());
    REQUIRE(p.end().ok());
    REQUIRE(p.flush(0).ok());
  }
  for (const char* rank : {"0", "1"}) {
    const std::string path = std::string(dir) + "/shim." + rank + ".log";
    std::FILE* f = std::fopen(path.c_str(), "r");
    REQUIRE(f != nullptr);
    char buf[512] = {};
    const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    CHECK_THAT(std::string(buf, n), Catch::Contains("Profiler Info: Job (0), type = forward"));
    std::remove(path.c_str());
  }
  ::rmdir(dir);
}

TEST_CASE("PPT_SHIM_CLOCK=cuda requires CUDA events; auto and host do not") {
  Options o;
  {
    Env env({{"PPT_SHIM_CLOCK", "cuda"}});
    REQUIRE(options_from_environment(&o).ok());
    CHECK(o.require_cuda);
    CHECK(o.use_cuda);
  }
  {
    Env env({{"PPT_SHIM_CLOCK", "auto"}});
    REQUIRE(options_from_environment(&o).ok());
    CHECK_FALSE(o.require_cuda);
  }
}
