// Output files: written whole or not at all, through links, signals and
// closed pipes (output_file.h).
#include "output/sink/output_file.h"

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/test_support.h"

using namespace ppt;
using ppt::testing::slurp;
using ppt::testing::TempDir;

namespace {

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

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
  CHECK(slurp(target) == "new");

  std::string dangling = d.path() + "/dangling.json";
  REQUIRE(symlink((d.path() + "/nowhere/x.json").c_str(), dangling.c_str()) == 0);
  OutputFile g;
  CHECK_FALSE(g.open(dangling));
  CHECK(g.error().find("symbolic link to nothing") != std::string::npos);
  REQUIRE(lstat(dangling.c_str(), &st) == 0);
  CHECK(S_ISLNK(st.st_mode));
}

TEST_CASE("below a confining folder nothing is written through a link, in a folder's place or the file's",
          "[hardening][output]") {
  TempDir d;
  std::string victim = d.write("victim.txt", "mine");
  std::filesystem::create_directories(d.path() + "/out/run");
  std::filesystem::create_directories(d.path() + "/elsewhere");
  const std::string out = d.path() + "/out";
  REQUIRE(symlink(victim.c_str(), (out + "/index.html").c_str()) == 0);
  REQUIRE(symlink((d.path() + "/elsewhere").c_str(), (out + "/linked").c_str()) == 0);

  OutputFile file;
  file.refuse_links_below(out);
  CHECK_FALSE(file.open(out + "/index.html"));
  CHECK(file.error() == out + "/index.html: is a symbolic link inside " + out + "; refusing to write through it");
  CHECK(slurp(victim) == "mine");

  OutputFile folder;
  folder.refuse_links_below(out);
  CHECK_FALSE(folder.open(out + "/linked/report.html"));
  CHECK(folder.error() == out + "/linked: is a symbolic link inside " + out + "; refusing to write through it");
  CHECK(names_in(d.path() + "/elsewhere").empty());

  OutputFile outside;
  outside.refuse_links_below(out);
  CHECK_FALSE(outside.open(out + "/../victim.txt"));
  CHECK(outside.error().find("is not inside") != std::string::npos);

  // A real file and folder below it are written as ever; the root itself may be a link.
  std::string alias = d.path() + "/alias";
  REQUIRE(symlink(out.c_str(), alias.c_str()) == 0);
  OutputFile ok;
  ok.refuse_links_below(alias);
  REQUIRE(ok.open(alias + "/run/stats.json"));
  ok.write(std::string_view("{}"));
  REQUIRE(ok.commit());
  CHECK(slurp(out + "/run/stats.json") == "{}");
  CHECK(link_inside(out, out + "/run/stats.json").empty());
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

TEST_CASE("an output is written whole or not at all", "[output]") {
  TempDir dir;
  std::string path = dir.path() + "/t.json";
  {
    OutputFile f;
    REQUIRE(f.open(path));
    f.write("partial");
    // destroyed without commit: nothing at the target, no temporary left
  }
  CHECK_FALSE(std::filesystem::exists(path));
  CHECK(std::filesystem::is_empty(dir.path()));
  OutputFile g;
  REQUIRE(g.open(path));
  g.write("whole");
  REQUIRE(g.commit());
  CHECK(std::filesystem::file_size(path) == 5);
  OutputFile missing;
  CHECK_FALSE(missing.open(dir.path() + "/no/such/dir/t.json"));
  CHECK(missing.error().find("does not exist") != std::string::npos);
  OutputFile full;
  REQUIRE(full.open("/dev/full"));
  full.write(std::string(2 << 20, 'x'));
  CHECK_FALSE(full.commit());
  CHECK(full.error().find("/dev/full") != std::string::npos);
}
