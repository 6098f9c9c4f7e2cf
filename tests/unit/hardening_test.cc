// Regression tests for what hostile inputs and fuzzing found (docs/hardening.md):
// each case here failed before its fix.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "input/file_scanner.h"
#include "passes/lanes.h"
#include "input/line_parser.h"
#include "input/log_layout.h"
#include "pp_timeline/log_line.h"
#include "output/output_file.h"
#include "test_logs.h"

using namespace ppt;
using ppt::testing::job_line;
using ppt::testing::TempDir;

namespace {

const LineParser& parser() {
  static const LineParser p;
  return p;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("times past what int64 nanoseconds hold are refused, never wrapped", "[hardening][log_line]") {
  struct Case {
    const char* text;
    log_line::TimeParse want;
    int64_t ns;
  };
  const Case cases[] = {
      {"9223372036854.775807", log_line::TimeParse::kOk, INT64_MAX},
      {"9223372036854.775808", log_line::TimeParse::kTooLarge, 0},
      {"9223372036855", log_line::TimeParse::kTooLarge, 0},
      {"9999999999999.999999", log_line::TimeParse::kTooLarge, 0},
      {"0009223372036.854775", log_line::TimeParse::kOk, 9223372036854775},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    int64_t ns = -1;
    CHECK(log_line::parse_ms_to_ns(c.text, &ns) == c.want);
    if (c.want == log_line::TimeParse::kOk) CHECK(ns == c.ns);
  }
  std::string line = "Profiler Info: Job (1), type = forward, micro_batch_id = 0, job_start_time = "
                     "9999999999999.999999, job_end_time = 9999999999999.999999";
  LineResult r = parser().parse(line);
  CHECK(r.kind == LineKind::kRejected);
  CHECK(r.issue == IssueKind::kTimeOutOfRange);
}

TEST_CASE("a job printed twice is drawn once and the copy is counted as rejected", "[hardening][scanner]") {
  std::string a = job_line("forward", 0, 0, 100);
  std::string b = job_line("forward", 1, 100, 200);
  std::string c = job_line("backward", 0, 200, 400);
  struct Case {
    const char* what;
    std::string log;
    uint64_t jobs, duplicates;
  };
  const Case cases[] = {
      {"each line twice in a row", a + a + b + b + c + c, 3, 3},
      {"the whole log twice", a + b + c + a + b + c, 3, 3},
      {"no duplicate", a + b + c, 3, 0},
      // Same times, other type or micro-batch: two jobs, not a copy.
      {"same times, other job", a + job_line("backward", 0, 0, 100) + job_line("forward", 5, 0, 100), 3, 0},
  };
  for (const Case& k : cases) {
    INFO(k.what);
    FileScan s = scan_buffer(k.log, 0, parser());
    CHECK(s.jobs.size() == k.jobs);
    CHECK(s.diagnostics.count_of(IssueKind::kDuplicateJob) == k.duplicates);
    CHECK(s.counts.profiler_lines == s.jobs.size() + s.diagnostics.rejected_jobs());
  }
  FileScan twice = scan_buffer(a + a, 0, parser());
  REQUIRE_FALSE(twice.diagnostics.examples().empty());
  CHECK(twice.diagnostics.examples()[0].line == 2);
  CHECK(twice.diagnostics.examples()[0].detail.find("line 1") != std::string::npos);
}

TEST_CASE("lanes are the lowest free ones, also when every job overlaps every other", "[hardening][lanes]") {
  // Against the plain definition (scan the lanes in order) on random sets.
  std::mt19937_64 rng(42);
  for (int round = 0; round < 50; ++round) {
    Track t;
    int n = 1 + static_cast<int>(rng() % 300);
    for (int i = 0; i < n; ++i) {
      Job j;
      j.start_ns = static_cast<int64_t>(rng() % 1000);
      j.end_ns = j.start_ns + static_cast<int64_t>(rng() % (round % 2 ? 50 : 2000));
      j.line = static_cast<uint32_t>(i + 1);
      t.jobs.push_back(j);
    }
    assign_lanes(t);
    std::vector<int64_t> lane_end;
    uint32_t overlapping = 0;
    for (const Job& j : t.jobs) {
      size_t lane = 0;
      while (lane < lane_end.size() && lane_end[lane] > j.start_ns) ++lane;
      if (lane == lane_end.size()) lane_end.push_back(j.end_ns);
      else lane_end[lane] = j.end_ns;
      INFO("round " << round << " line " << j.line);
      REQUIRE(j.lane == lane);
      overlapping += lane > 0;
    }
    CHECK(t.lanes == lane_end.size());
    CHECK(t.overlapping_jobs == overlapping);
  }
  // A stale timer: 200,000 jobs from one start; one lane each.
  Track stale;
  for (uint32_t i = 0; i < 200000; ++i) {
    Job j;
    j.start_ns = 1000;
    j.end_ns = 2000 + i;
    j.line = i + 1;
    stale.jobs.push_back(j);
  }
  assign_lanes(stale);
  CHECK(stale.lanes == 200000);
  CHECK(stale.jobs.back().lane == 199999);
}

TEST_CASE("a missing workerlog is named, not skipped in silence", "[hardening][layout]") {
  TempDir d;
  SECTION("one machine") {
    for (const char* f : {"logs/workerlog.0", "logs/workerlog.1", "logs/workerlog.3", "logs/workerlog.6"}) d.write(f, "x\n");
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

TEST_CASE("standard output is descriptor 1, and a closed one is an error, never a file", "[hardening][output]") {
  int saved = dup(STDOUT_FILENO);
  REQUIRE(saved >= 0);
  close(STDOUT_FILENO);
  OutputFile f;
  bool opened = f.open_stdout();
  dup2(saved, STDOUT_FILENO);
  close(saved);
  CHECK_FALSE(opened);
  CHECK(f.error() == "standard output: is closed");
}

TEST_CASE("an output through a symbolic link replaces the target; a dangling link is refused", "[hardening][output]") {
  TempDir d;
  std::string target = d.write("target.json", "old");
  std::string link = d.path() + "/link.json";
  REQUIRE(symlink(target.c_str(), link.c_str()) == 0);
  OutputFile f;
  REQUIRE(f.open(link));
  f.write(std::string_view("new"));
  REQUIRE(f.commit());
  struct stat st {};
  REQUIRE(lstat(link.c_str(), &st) == 0);
  CHECK(S_ISLNK(st.st_mode));
  CHECK(read_all(target) == "new");

  std::string dangling = d.path() + "/dangling.json";
  REQUIRE(symlink((d.path() + "/nowhere/x.json").c_str(), dangling.c_str()) == 0);
  OutputFile g;
  CHECK_FALSE(g.open(dangling));
  CHECK(g.error().find("symbolic link to nothing") != std::string::npos);
  REQUIRE(lstat(dangling.c_str(), &st) == 0);
  CHECK(S_ISLNK(st.st_mode));
}

TEST_CASE("a termination signal while writing leaves no temporary file", "[hardening][output]") {
  TempDir d;
  std::string out = d.path() + "/trace.json";
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    install_output_signal_handlers();
    OutputFile f;
    if (!f.open(out)) _exit(3);
    f.write(std::string(4 << 20, 'x'));  // some of it reaches the temporary file
    raise(SIGTERM);
    _exit(4);  // not reached: the handler ends the process by the signal
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  CHECK(WIFSIGNALED(status));
  if (WIFSIGNALED(status)) CHECK(WTERMSIG(status) == SIGTERM);
  CHECK(names_in(d.path()).empty());
}

TEST_CASE("a closed pipe is a write error, not a death by SIGPIPE", "[hardening][output]") {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  close(fds[0]);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    install_output_signal_handlers();
    dup2(fds[1], STDOUT_FILENO);
    OutputFile f;
    if (!f.open_stdout()) _exit(3);
    f.write(std::string(1 << 16, 'x'));
    _exit(f.commit() ? 0 : f.error().find("Broken pipe") != std::string::npos ? 1 : 5);
  }
  close(fds[1]);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
}
