#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "input/log_follower.h"
#include "support/test_support.h"

using namespace ppt;

namespace {

void append(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::app) << text;
}

std::string poll_text(FileFollower& f, FileFollower::Event* event = nullptr) {
  std::string out;
  FileFollower::Event e = f.poll(out);
  if (event) *event = e;
  return out;
}

}  // namespace

TEST_CASE("a follower hands out what was appended, once, in whole lines", "[follower]") {
  ppt::testing::TempDir dir;
  std::string path = dir.write("workerlog.0", "a\nb\n");
  FileFollower f(path);
  FileFollower::Event e{};
  CHECK(poll_text(f, &e) == "a\nb\n");
  CHECK(e == FileFollower::Event::kOpened);
  CHECK(poll_text(f, &e) == "");
  CHECK(e == FileFollower::Event::kNone);
  append(path, "c\n");
  CHECK(poll_text(f) == "c\n");
  CHECK(f.offset() == 6);
}

TEST_CASE("a partial last line waits for its end", "[follower]") {
  ppt::testing::TempDir dir;
  std::string path = dir.write("workerlog.0", "a\nhalf");
  FileFollower f(path);
  CHECK(poll_text(f) == "a\n");
  CHECK(f.partial() == "half");
  append(path, " more");
  CHECK(poll_text(f) == "");
  append(path, " done\nnext");
  CHECK(poll_text(f) == "half more done\n");
  CHECK(f.partial() == "next");
}

TEST_CASE("a truncated file is read again from its start", "[follower]") {
  ppt::testing::TempDir dir;
  std::string path = dir.write("workerlog.0", "one\ntwo\nthr");
  FileFollower f(path);
  CHECK(poll_text(f) == "one\ntwo\n");
  dir.write("workerlog.0", "x\n");  // truncates in place: same inode
  FileFollower::Event e{};
  CHECK(poll_text(f, &e) == "x\n");
  CHECK(e == FileFollower::Event::kTruncated);
  CHECK(f.partial().empty());
}

TEST_CASE("a file truncated and grown past the old offset between two polls is read again from its start",
          "[follower]") {
  ppt::testing::TempDir dir;
  std::string first =
      "I1020 09:15:00.000001 1 a.cc:1] run one, line 1\nI1020 09:15:00.000002 1 a.cc:1] run one, line 2\n";
  std::string path = dir.write("workerlog.0", first);
  FileFollower f(path);
  CHECK(poll_text(f) == first);
  // copytruncate, then the writer goes on: by the next poll the file is longer than what was read.
  std::string again =
      "I1020 09:16:00.000001 1 a.cc:1] after the rotation, line 1\n"
      "I1020 09:16:00.000002 1 a.cc:1] after the rotation, line 2\n";
  REQUIRE(again.size() > first.size());
  dir.write("workerlog.0", again);  // in place: same inode
  FileFollower::Event e{};
  CHECK(poll_text(f, &e) == again);
  CHECK(e == FileFollower::Event::kTruncated);
  // A file that only grew keeps its start: no rereading.
  append(path, "tail\n");
  CHECK(poll_text(f, &e) == "tail\n");
  CHECK(e == FileFollower::Event::kNone);
  // Past the fingerprint's kilobyte, a rewrite with a new start is still seen.
  append(path, std::string(3000, 'x') + "\n");
  CHECK(poll_text(f).size() == 3001);
  std::string third = "I1020 09:17:00.000001 1 a.cc:1] third run\n" + std::string(4000, 'y') + "\n";
  dir.write("workerlog.0", third);
  CHECK(poll_text(f, &e) == third);
  CHECK(e == FileFollower::Event::kTruncated);
}

TEST_CASE("a rotated file is read to its end, then the new file from its start", "[follower]") {
  ppt::testing::TempDir dir;
  std::string path = dir.write("workerlog.0", "old1\n");
  FileFollower f(path);
  CHECK(poll_text(f) == "old1\n");
  append(path, "old2\nold3 cut");
  std::filesystem::rename(path, path + ".1");
  // Renamed away, nothing new yet: the old file's rest is read.
  CHECK(poll_text(f) == "old2\n");
  dir.write("workerlog.0", " rest\nnew1\n");
  FileFollower::Event e{};
  CHECK(poll_text(f, &e) == "old3 cut rest\nnew1\n");
  CHECK(e == FileFollower::Event::kReplaced);
  append(path, "new2\n");
  CHECK(poll_text(f) == "new2\n");
}

TEST_CASE("a replaced file (removed and written again) is read from its start", "[follower]") {
  ppt::testing::TempDir dir;
  std::string path = dir.write("workerlog.0", "run1 a\nrun1 b\n");
  FileFollower f(path);
  CHECK(poll_text(f) == "run1 a\nrun1 b\n");
  std::filesystem::remove(path);
  dir.write("workerlog.0", "run2 a\n");
  FileFollower::Event e{};
  CHECK(poll_text(f, &e) == "run2 a\n");
  CHECK(e == FileFollower::Event::kReplaced);
}

TEST_CASE("a log directory's late files are followed once they appear", "[follower]") {
  ppt::testing::TempDir dir;
  LogFollower logs({dir.path(), {}, {}});
  CHECK(logs.poll().empty());
  CHECK_FALSE(logs.layout_error().empty());
  dir.write("workerlog.0", "r0\n");
  auto u = logs.poll();
  REQUIRE(u.size() == 1);
  CHECK(u[0].lines == "r0\n");
  dir.write("workerlog.1", "r1\n");
  append(dir.path() + "/workerlog.0", "r0 b\n");
  u = logs.poll();
  REQUIRE(u.size() == 2);
  CHECK(logs.files()[u[0].file]->path().ends_with("workerlog.0"));
  CHECK(u[0].lines == "r0 b\n");
  CHECK(u[1].lines == "r1\n");
  CHECK(logs.poll().empty());
  CHECK(logs.layout().files.size() == 2);
}
