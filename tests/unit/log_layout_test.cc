#include <catch2/catch.hpp>

#include <algorithm>

#include "pp_timeline/log_layout.h"
#include "test_logs.h"

using namespace ppt;

TEST_CASE("machine folders sort naturally", "[layout]") {
  std::vector<std::string> names = {"machine10", "machine2", "machine1", "machine9", "machine02", "machineA"};
  std::sort(names.begin(), names.end(), natural_less);
  CHECK(names == std::vector<std::string>{"machine1", "machine2", "machine02", "machine9", "machine10", "machineA"});
}

TEST_CASE("only workerlog.<i> names are logs", "[layout]") {
  CHECK(workerlog_index("workerlog.0") == 0);
  CHECK(workerlog_index("workerlog.15") == 15);
  CHECK(workerlog_index("workerlog.3.gz") == 3);
  CHECK(workerlog_index("workerlog.") == -1);
  CHECK(workerlog_index("workerlog.x") == -1);
  CHECK(workerlog_index("workerlog.1.bak") == -1);
  CHECK(workerlog_index("endpoints.log") == -1);
}

TEST_CASE("a multi-machine directory gives machine-major global ranks", "[layout]") {
  ppt::testing::TempDir dir;
  for (const char* m : {"machine10", "machine2", "machine1"}) {
    for (int i : {1, 0}) dir.write(std::string(m) + "/workerlog." + std::to_string(i), "x\n");
  }
  dir.write("machine2/envlog.0", "");
  dir.write("default.job.log", "");
  LayoutResult r = discover_layout({dir.path(), {}, {}});
  REQUIRE(r.layout);
  const auto& files = r.layout->files;
  REQUIRE(files.size() == 6);
  CHECK(r.layout->machines == std::vector<std::string>{"machine1", "machine2", "machine10"});
  CHECK(files[0].machine_name == "machine1");
  CHECK(files[0].local_index == 0);
  CHECK(files[1].local_index == 1);
  CHECK(files[2].machine_name == "machine2");
  CHECK(files[5].machine_name == "machine10");
  for (size_t i = 0; i < files.size(); ++i) CHECK(files[i].global_rank == static_cast<int>(i));
}

TEST_CASE("the devices option picks local indices, not ranks", "[layout]") {
  ppt::testing::TempDir dir;
  for (int i : {0, 1, 2, 3, 10}) dir.write("workerlog." + std::to_string(i), "x\n");
  LayoutResult r = discover_layout({dir.path(), {}, {10, 2}});
  REQUIRE(r.layout);
  REQUIRE(r.layout->files.size() == 2);
  CHECK(r.layout->files[0].local_index == 2);
  CHECK(r.layout->files[1].local_index == 10);
  CHECK(r.layout->files[1].global_rank == 1);
}

TEST_CASE("layout errors say what is wrong", "[layout]") {
  ppt::testing::TempDir dir;
  LayoutResult missing = discover_layout({dir.path() + "/nope", {}, {}});
  CHECK_FALSE(missing.layout);
  CHECK(missing.usage_error);
  CHECK(missing.error.find("does not exist") != std::string::npos);
  LayoutResult empty = discover_layout({dir.path(), {}, {}});
  CHECK_FALSE(empty.layout);
  CHECK_FALSE(empty.usage_error);
  CHECK(empty.error.find("no workerlog") != std::string::npos);
  std::string file = dir.write("afile", "x");
  LayoutResult not_dir = discover_layout({file, {}, {}});
  CHECK(not_dir.error.find("not a directory") != std::string::npos);
  LayoutResult explicit_missing = discover_layout({"", {dir.path() + "/x.log"}, {}});
  CHECK(explicit_missing.error.find("no such file") != std::string::npos);
}

TEST_CASE("explicit files are ranks in the order given", "[layout]") {
  ppt::testing::TempDir dir;
  std::string b = dir.write("b.log", "x\n");
  std::string a = dir.write("a.log", "x\n");
  LayoutResult r = discover_layout({"", {b, a}, {}});
  REQUIRE(r.layout);
  CHECK(r.layout->files[0].path == b);
  CHECK(r.layout->files[1].global_rank == 1);
}
