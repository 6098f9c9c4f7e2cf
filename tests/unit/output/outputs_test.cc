// Every output is opened in one place (outputs.h): standard output for '-',
// never onto an input, whole or nothing, also when an exception unwinds.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "output/outputs.h"
#include "output/sink/output_file.h"
#include "support/test_support.h"

namespace ppt {
namespace {

size_t files_in(const std::string& dir) {
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) n += e.is_regular_file() ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("open_output refuses an input, by file identity, and leaves it as it was") {
  testing::TempDir d;
  std::string log = d.write("logs/workerlog.0", "the log\n");
  std::filesystem::create_symlink(log, d.path() + "/link.json");
  for (const std::string& out : {log, d.path() + "/logs/../logs/workerlog.0", d.path() + "/link.json"}) {
    INFO(out);
    OutputFile f;
    std::string error = open_output(f, out, {log});
    CHECK(error.find("refusing to write onto an input") != std::string::npos);
    CHECK(write_text_output(out, "overwritten", {log}).find("refusing") != std::string::npos);
  }
  CHECK(testing::slurp(log) == "the log\n");
  CHECK(files_in(d.path() + "/logs") == 1);
  CHECK(check_not_an_input("-", {log}).empty());
  CHECK(check_not_an_input("/dev/stdout", {log}).empty());
  CHECK(write_text_output(d.path() + "/out.txt", "text", {log}).empty());
  CHECK(testing::slurp(d.path() + "/out.txt") == "text");
}

TEST_CASE("an exception while writing leaves neither the output nor a temporary file") {
  testing::TempDir d;
  const std::string target = d.path() + "/trace.json";
  try {
    OutputFile f;
    REQUIRE(open_output(f, target, {}).empty());
    f.write(std::string(3 << 20, 'x'));  // past the buffer: the temporary file holds bytes
    throw std::runtime_error("a bug while writing");
  } catch (const std::runtime_error&) {
  }
  CHECK(!std::filesystem::exists(target));
  CHECK(files_in(d.path()) == 0);
  // An earlier output of the same path stays whole.
  REQUIRE(write_text_output(target, "old").empty());
  try {
    OutputFile f;
    REQUIRE(open_output(f, target, {}).empty());
    f.write("new, half");
    throw std::runtime_error("again");
  } catch (const std::runtime_error&) {
  }
  CHECK(testing::slurp(target) == "old");
  CHECK(files_in(d.path()) == 1);
}

}  // namespace ppt
