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

TEST_CASE("a poll reads at most its budget; the rest waits in the file", "[follower]") {
  ppt::testing::TempDir dir;
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "line " + std::to_string(i) + "\n";
  std::string path = dir.write("workerlog.0", text);
  FileFollower f(path);
  std::string got, out;
  size_t polls = 0;
  do {
    out.clear();
    f.poll(out, 1000);
    CHECK(out.size() <= 1000 + 10);  // the budget, and the line that waited from the poll before
    got += out;
    ++polls;
  } while (f.more() && polls < 100);
  CHECK_FALSE(f.more());
  CHECK(got == text);
  CHECK(polls >= text.size() / 1000);
}

TEST_CASE("a line over the limit is skipped in constant memory, an empty line in its place", "[follower]") {
  ppt::testing::TempDir dir;
  std::string path = dir.write("workerlog.0", "before\n");
  FileFollower f(path);
  CHECK(poll_text(f) == "before\n");
  // A job line of 3 MB written in pieces, the marker past the first MB.
  append(path, "I1020 head of the line ");
  CHECK(poll_text(f) == "");
  const std::string piece(512 * 1024, 'x');
  for (int i = 0; i < 3; ++i) {
    append(path, piece);
    CHECK(poll_text(f) == "");
    CHECK(f.partial().size() <= kMaxLineBytes);
  }
  append(path, std::string("Profiler Info: Job (7), type = forward") + piece);
  CHECK(poll_text(f) == "");
  CHECK(f.partial().empty());  // nothing of it is held
  REQUIRE(f.partial_too_long());
  CHECK(f.partial_too_long()->has_marker);
  CHECK_FALSE(f.partial_too_long()->terminated);
  append(path, "end\nafter\n");
  CHECK(poll_text(f) == "\nafter\n");
  std::vector<FileFollower::LongLine> skipped = f.take_long_lines();
  REQUIRE(skipped.size() == 1);
  CHECK(skipped[0].has_marker);
  CHECK(skipped[0].terminated);
  CHECK(skipped[0].head.starts_with("I1020 head of the line"));
  CHECK(skipped[0].head.size() <= 200);
  CHECK_FALSE(f.partial_too_long());

  // Without the marker: skipped, not a job line.
  append(path, std::string(kMaxLineBytes + 10, 'y') + "\nlast\n");
  CHECK(poll_text(f) == "\nlast\n");
  skipped = f.take_long_lines();
  REQUIRE(skipped.size() == 1);
  CHECK_FALSE(skipped[0].has_marker);
}

TEST_CASE("a deleted log, then a deleted log directory, is said once each, as tail -F says it", "[follower]") {
  ppt::testing::TempDir dir;
  dir.write("logs/workerlog.0", "a\n");
  dir.write("logs/workerlog.1", "b\n");
  const std::string logs = dir.path() + "/logs";
  LayoutRequest request;
  request.log_dir = logs;
  LogFollower follower(request);
  follower.poll();
  CHECK(follower.take_notices().empty());
  std::filesystem::remove(logs + "/workerlog.1");
  follower.poll();
  std::vector<std::string> said = follower.take_notices();
  REQUIRE(said.size() == 1);
  CHECK(said[0].starts_with(logs + "/workerlog.1: has become inaccessible: No such file or directory"));
  follower.poll();
  CHECK(follower.take_notices().empty());  // once
  std::filesystem::remove_all(logs);
  follower.poll();
  said = follower.take_notices();
  REQUIRE(said.size() == 1);  // the directory's notice, not one per log
  CHECK(said[0].starts_with(logs + ": the log directory has become inaccessible: No such file or directory"));
  follower.poll();
  CHECK(follower.take_notices().empty());
  dir.write("logs/workerlog.0", "c\n");
  follower.poll();
  said = follower.take_notices();
  REQUIRE(!said.empty());
  CHECK(said[0] == logs + ": the log directory has appeared again; following it");
}
