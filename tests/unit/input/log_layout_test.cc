#include <catch2/catch.hpp>

#include <algorithm>

#include "input/log_layout.h"
#include "support/test_support.h"

using namespace ppt;

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

TEST_CASE("the devices option picks local indices and keeps the run's global ranks", "[layout]") {
  ppt::testing::TempDir dir;
  for (int i : {0, 1, 2, 3, 10}) dir.write("workerlog." + std::to_string(i), "x\n");
  LayoutResult r = discover_layout({dir.path(), {}, {10, 2}});
  REQUIRE(r.layout);
  REQUIRE(r.layout->files.size() == 2);
  CHECK(r.layout->files[0].local_index == 2);
  CHECK(r.layout->files[0].global_rank == 2);
  CHECK(r.layout->files[1].local_index == 10);
  CHECK(r.layout->files[1].global_rank == 10);
}

TEST_CASE("devices 1,2,3 load ranks 1 to 3, not 0 to 2", "[layout]") {
  ppt::testing::TempDir dir;
  for (int i = 0; i < 4; ++i) dir.write("workerlog." + std::to_string(i), "x\n");
  LayoutResult r = discover_layout({dir.path(), {}, {1, 2, 3}});
  REQUIRE(r.layout);
  REQUIRE(r.layout->files.size() == 3);
  for (int k = 0; k < 3; ++k) {
    CHECK(r.layout->files[k].local_index == k + 1);
    CHECK(r.layout->files[k].global_rank == k + 1);
  }
  CHECK(r.layout->world_ranks == 4);
  CHECK(r.layout->partial == "ranks 1-3 of 4 loaded (--devices)");
  LayoutResult all = discover_layout({dir.path(), {}, {}});
  REQUIRE(all.layout);
  CHECK(all.layout->world_ranks == 4);
  CHECK(all.layout->partial.empty());
}

TEST_CASE("rank ranges are written compactly", "[layout]") {
  CHECK(format_rank_ranges({1, 2, 3}) == "1-3");
  CHECK(format_rank_ranges({0, 2, 3, 4, 7}) == "0, 2-4, 7");
  CHECK(format_rank_ranges({5}) == "5");
}

TEST_CASE("devices on several machines: rank = machine * processes per machine + i", "[layout]") {
  ppt::testing::TempDir dir;
  for (const char* m : {"machine0", "machine1"}) {
    for (int i = 0; i < 4; ++i) dir.write(std::string(m) + "/workerlog." + std::to_string(i), "x\n");
  }
  LayoutResult r = discover_layout({dir.path(), {}, {1, 3}});
  REQUIRE(r.layout);
  std::vector<int> ranks, machines;
  for (const SourceFile& f : r.layout->files) ranks.push_back(f.global_rank), machines.push_back(f.machine);
  CHECK(ranks == std::vector<int>{1, 3, 5, 7});
  CHECK(machines == std::vector<int>{0, 0, 1, 1});
  CHECK(r.layout->world_ranks == 8);
  CHECK(r.layout->partial == "ranks 1, 3, 5, 7 of 8 loaded (--devices)");
}

TEST_CASE("a missing workerlog does not renumber the ranks after it", "[layout]") {
  ppt::testing::TempDir dir;
  for (int i : {0, 1, 3}) dir.write("workerlog." + std::to_string(i), "x\n");
  LayoutResult r = discover_layout({dir.path(), {}, {}});
  REQUIRE(r.layout);
  REQUIRE(r.layout->files.size() == 3);
  CHECK(r.layout->files[2].local_index == 3);
  CHECK(r.layout->files[2].global_rank == 3);
  bool noted = false;
  for (const std::string& n : r.layout->notes) noted = noted || n.find("workerlog.2") != std::string::npos;
  CHECK(noted);
}

TEST_CASE("machine folders named by IP address or host name, in natural order", "[layout]") {
  ppt::testing::TempDir dir;
  for (const char* m : {"10.0.0.10", "10.0.0.2", "10.0.0.9"}) {
    for (int i : {0, 1}) dir.write(std::string(m) + "/workerlog." + std::to_string(i), "x\n");
    dir.write(std::string(m) + "/envlog.0", "PADDLE_GLOBAL_RANK=0\n");
    dir.write(std::string(m) + "/default.abcdef.log", "[]\n");
  }
  dir.write("notes/README", "copied from the nodes\n");  // a folder without logs is no machine
  LayoutResult r = discover_layout({dir.path(), {}, {}});
  REQUIRE(r.layout);
  CHECK(r.layout->machines == std::vector<std::string>{"10.0.0.2", "10.0.0.9", "10.0.0.10"});
  REQUIRE(r.layout->files.size() == 6);
  CHECK(r.layout->files[0].machine_name == "10.0.0.2");
  CHECK(r.layout->files[5].machine_name == "10.0.0.10");
  CHECK(r.layout->files[5].global_rank == 5);

  ppt::testing::TempDir hosts;
  for (const char* m : {"node-10", "node-2", "node-a"}) hosts.write(std::string(m) + "/workerlog.0", "x\n");
  LayoutResult h = discover_layout({hosts.path(), {}, {}});
  REQUIRE(h.layout);
  CHECK(h.layout->machines == std::vector<std::string>{"node-2", "node-10", "node-a"});
}

// One rule says which folder names are machines' (machine<k>, an IPv4
// address): batch's search takes them for machines of the run around them,
// and the layout notes one that holds no logs; a folder named otherwise
// without logs (notes/) is said nothing of.
TEST_CASE("a folder named as a machine without logs is noted, by the name rule batch uses", "[layout]") {
  CHECK(is_machine_folder_name("machine3"));
  CHECK(is_machine_folder_name("10.0.0.2"));
  CHECK_FALSE(is_machine_folder_name("node-a"));
  CHECK_FALSE(is_machine_folder_name("10.0.0"));
  CHECK_FALSE(is_machine_folder_name("10.0.0.2.5"));
  CHECK_FALSE(is_machine_folder_name("1000.0.0.2"));
  ppt::testing::TempDir dir;
  dir.write("10.0.0.2/workerlog.0", "x\n");
  dir.write("10.0.0.3/envlog.0", "PADDLE_GLOBAL_RANK=1\n");  // the node's logs were not copied
  dir.write("machine4/envlog.0", "x\n");
  dir.write("notes/README", "copied from the nodes\n");
  LayoutResult r = discover_layout({dir.path(), {}, {}});
  REQUIRE(r.layout);
  CHECK(r.layout->machines == std::vector<std::string>{"10.0.0.2"});
  CHECK(r.layout->notes == std::vector<std::string>{dir.path() + "/10.0.0.3: no workerlog.<i> files",
                                                    dir.path() + "/machine4: no workerlog.<i> files"});
}

TEST_CASE("top-level workerlogs beside machine folders are refused, naming both", "[layout]") {
  ppt::testing::TempDir dir;
  dir.write("workerlog.0", "x\n");
  dir.write("10.0.0.2/workerlog.0", "x\n");
  LayoutResult r = discover_layout({dir.path(), {}, {}});
  CHECK_FALSE(r.layout);
  CHECK(r.usage_error);
  CHECK(r.error.find("workerlog.0") != std::string::npos);
  CHECK(r.error.find("10.0.0.2") != std::string::npos);

  ppt::testing::TempDir old;
  old.write("workerlog.0", "x\n");
  old.write("machine0/workerlog.0", "x\n");
  LayoutResult o = discover_layout({old.path(), {}, {}});
  CHECK_FALSE(o.layout);
  CHECK(o.error.find("machine0") != std::string::npos);
}

TEST_CASE("a folder of auto-tuner tasks is several runs, not machines", "[layout]") {
  ppt::testing::TempDir dir;
  dir.write("Job1_GBS16_DP1_MP1_PP4_VPP1_Sharding1_Stage1_MBS1_Recompute_0_Granularity_full_AccStep16/workerlog.0",
            "x\n");
  dir.write("Job2_GBS16_DP1_MP1_PP2_VPP1_Sharding2_Stage1_MBS1_Recompute_0_Granularity_full_AccStep8/workerlog.0",
            "x\n");
  LayoutResult r = discover_layout({dir.path(), {}, {}});
  CHECK_FALSE(r.layout);
  CHECK(r.error.find("batch") != std::string::npos);
}

TEST_CASE("'-' is standard input, one rank among the files, never looked up on disk", "[layout]") {
  ppt::testing::TempDir dir;
  std::string a = dir.write("a.log", "x\n");
  LayoutResult r = discover_layout({"", {a, "-"}, {}});
  REQUIRE(r.layout);
  REQUIRE(r.layout->files.size() == 2);
  CHECK(r.layout->files[1].path == "<stdin>");  // as messages show it
  CHECK(r.layout->files[1].standard_input);
  CHECK(r.layout->files[1].global_rank == 1);
  LayoutResult twice = discover_layout({"", {"-", "-"}, {}});
  CHECK_FALSE(twice.layout);
  CHECK(twice.usage_error);
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

TEST_CASE("a directory named without --log_dir is the log directory", "[layout]") {
  ppt::testing::TempDir dir;
  for (int i = 0; i < 3; ++i) dir.write("logs/workerlog." + std::to_string(i), "x\n");
  std::string file = dir.write("other.log", "x\n");
  LayoutResult r = discover_layout({"", {dir.path() + "/logs"}, {1, 2}});
  REQUIRE(r.layout);
  REQUIRE(r.layout->files.size() == 2);
  CHECK(r.layout->files[0].local_index == 1);
  CHECK(r.layout->files[0].global_rank == 1);

  LayoutResult mixed = discover_layout({"", {dir.path() + "/logs", file}, {}});
  CHECK_FALSE(mixed.layout);
  CHECK(mixed.usage_error);
  CHECK(mixed.error.find("directory") != std::string::npos);
  LayoutResult both = discover_layout({dir.path() + "/logs", {dir.path() + "/logs"}, {}});
  CHECK_FALSE(both.layout);
  CHECK(both.usage_error);
}

TEST_CASE("a missing workerlog is named, not skipped in silence", "[hardening][layout]") {
  testing::TempDir d;
  SECTION("one machine") {
    for (const char* f : {"logs/workerlog.0", "logs/workerlog.1", "logs/workerlog.3", "logs/workerlog.6"})
      d.write(f, "x\n");
    LayoutResult r = discover_layout({d.path() + "/logs", {}, {}});
    REQUIRE(r.layout);
    REQUIRE(r.layout->notes.size() == 1);
    CHECK(r.layout->notes[0].find("no workerlog.2, workerlog.4, workerlog.5 (3 of 7 local ranks") != std::string::npos);
  }
  SECTION("a machine with fewer logs than the others") {
    for (const char* f : {"logs/machine0/workerlog.0", "logs/machine0/workerlog.1", "logs/machine1/workerlog.0"}) {
      d.write(f, "x\n");
    }
    LayoutResult r = discover_layout({d.path() + "/logs", {}, {}});
    REQUIRE(r.layout);
    REQUIRE(r.layout->notes.size() == 1);
    CHECK(r.layout->notes[0].find("machine1: no workerlog.1 (1 of 2") != std::string::npos);
  }
  SECTION("--devices asks for a subset: nothing to say") {
    for (const char* f : {"logs/workerlog.0", "logs/workerlog.3"}) d.write(f, "x\n");
    LayoutResult r = discover_layout({d.path() + "/logs", {}, {0, 3}});
    REQUIRE(r.layout);
    CHECK(r.layout->notes.empty());
  }
}

TEST_CASE("a log whose index is past the rank bound is named, never skipped in silence", "[layout]") {
  CHECK(workerlog_index("workerlog.999999") == 999999);
  CHECK(workerlog_index("workerlog.1000000") == -1);
  CHECK(is_log_name_past_rank_bound("workerlog.1000000"));
  CHECK(is_log_name_past_rank_bound("workerlog.99999999999999999999999.gz"));
  CHECK(is_log_name_past_rank_bound("workerlog.0000001"));
  CHECK(is_log_name_past_rank_bound("profile_record_tmp_file_for_rank_1000000"));
  CHECK_FALSE(is_log_name_past_rank_bound("workerlog.999999"));
  CHECK_FALSE(is_log_name_past_rank_bound("workerlog.1000000.bak"));
  CHECK_FALSE(is_log_name_past_rank_bound("workerlog.x"));

  ppt::testing::TempDir dir;
  dir.write("workerlog.0", "x\n");
  dir.write("workerlog.1000000", "x\n");
  dir.write("machine/workerlog.12345678.gz", "x\n");
  LayoutResult r = discover_layout({dir.path(), {}, {}});
  REQUIRE(r.layout);
  auto named = [&](const std::string& name) {
    return std::any_of(r.layout->notes.begin(), r.layout->notes.end(), [&](const std::string& n) {
      return n.find(name + ": not read: its index is past 999999") != std::string::npos;
    });
  };
  CHECK(named("workerlog.1000000"));
  CHECK(named("machine/workerlog.12345678.gz"));

  ppt::testing::TempDir profiles;
  profiles.write("profile_record_tmp_file_for_rank_0", "{\"ph\": \"B\"}\n");
  profiles.write("profile_record_tmp_file_for_rank_1000000", "{\"ph\": \"B\"}\n");
  LayoutResult p = discover_layout({profiles.path(), {}, {}});
  REQUIRE(p.layout);
  CHECK(p.layout->world_ranks == 1);
  CHECK(std::any_of(p.layout->notes.begin(), p.layout->notes.end(), [](const std::string& n) {
    return n.find("profile_record_tmp_file_for_rank_1000000: not read") != std::string::npos;
  }));
}

TEST_CASE("the missing logs' note follows the logs present, not the highest index", "[layout]") {
  ppt::testing::TempDir dir;
  dir.write("workerlog.0", "x\n");
  dir.write("workerlog.3", "x\n");
  dir.write("workerlog.999999", "x\n");
  LayoutResult r = discover_layout({dir.path(), {}, {}});
  REQUIRE(r.layout);
  CHECK(r.layout->world_ranks == 1000000);
  REQUIRE(r.layout->notes.size() == 1);
  CHECK(r.layout->notes[0].find(": no workerlog.1, workerlog.2, workerlog.4, workerlog.5, workerlog.6, workerlog.7, "
                                "workerlog.8, workerlog.9 and 999989 more (999997 of 1000000 local ranks have no "
                                "log") != std::string::npos);
}

TEST_CASE("a folder of logs past the rank bound only says why none is read", "[layout]") {
  ppt::testing::TempDir dir;
  dir.write("workerlog.1000000", "x\n");
  LayoutResult r = discover_layout({dir.path(), {}, {}});
  CHECK_FALSE(r.layout);
  CHECK(r.error.find("no workerlog.<i> file that can be read: ") != std::string::npos);
  CHECK(r.error.find("workerlog.1000000: not read: its index is past 999999") != std::string::npos);
}
