// The C API, as ctypes would use it.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>
#include <vector>

#include "pp_timeline/shim_c.h"

namespace {

void keep_line(const char* line, size_t length, void* user) {
  static_cast<std::vector<std::string>*>(user)->emplace_back(line, length);
}

}  // namespace

TEST_CASE("The C API times jobs and writes them through the sink") {
  ppt_shim* h = ppt_shim_create(nullptr, -1, PPT_SHIM_HOST_CLOCK | PPT_SHIM_IGNORE_ENV);
  REQUIRE(h != nullptr);
  std::vector<std::string> lines;
  REQUIRE(ppt_shim_set_sink(h, keep_line, &lines) == PPT_SHIM_OK);
  CHECK(ppt_shim_backend(h) == 0);
  CHECK_THAT(ppt_shim_backend_note(h), Catch::StartsWith("host clock"));
  REQUIRE(ppt_shim_set_window(h, 0, 2) == PPT_SHIM_OK);
  CHECK(ppt_shim_recording(h) == 1);
  CHECK(ppt_shim_begin(h, "forward", 0) == PPT_SHIM_OK);
  CHECK(ppt_shim_end(h) == PPT_SHIM_OK);
  CHECK(ppt_shim_flush(h, 0) == PPT_SHIM_OK);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "Schedule Profiler start at step 0 and end at step 2");
  CHECK_THAT(lines[1], Catch::StartsWith("Profiler Info: Job (0), type = forward, micro_batch_id = 0"));
  CHECK(std::string(ppt_shim_last_error(h)).empty());
  ppt_shim_destroy(h);
}

TEST_CASE("The C API reports misuse as codes with a message") {
  ppt_shim* h = ppt_shim_create(nullptr, -1, PPT_SHIM_HOST_CLOCK | PPT_SHIM_IGNORE_ENV);
  REQUIRE(h != nullptr);
  std::vector<std::string> lines;
  REQUIRE(ppt_shim_set_sink(h, keep_line, &lines) == PPT_SHIM_OK);
  CHECK(ppt_shim_end(h) == PPT_SHIM_END_WITHOUT_BEGIN);
  CHECK_THAT(ppt_shim_last_error(h), Catch::Contains("end()"));
  CHECK(ppt_shim_begin(h, "a,b", 0) == PPT_SHIM_INVALID_TYPE);
  CHECK(ppt_shim_begin(h, nullptr, 0) == PPT_SHIM_INVALID_TYPE);
  CHECK(ppt_shim_begin(h, "forward", 0) == PPT_SHIM_OK);
  CHECK(ppt_shim_begin(h, "forward", 1) == PPT_SHIM_NESTED_BEGIN);
  CHECK(ppt_shim_set_sink(h, nullptr, nullptr) == PPT_SHIM_INVALID_ARGUMENT);
  CHECK(ppt_shim_flush(h, 0) == PPT_SHIM_OPEN_JOB_AT_FLUSH);
  CHECK_THAT(ppt_shim_last_error(h), Catch::Contains("dropped"));
  CHECK(ppt_shim_set_window(h, 3, 1) == PPT_SHIM_INVALID_ARGUMENT);
  CHECK(ppt_shim_set_step(h, 9) == PPT_SHIM_OK);
  CHECK(std::string(ppt_shim_status_name(PPT_SHIM_NESTED_BEGIN)) == "nested_begin");
  CHECK(std::string(ppt_shim_status_name(42)) == "unknown");
  ppt_shim_destroy(h);
}

TEST_CASE("A NULL handle is an error, not a crash") {
  CHECK(ppt_shim_begin(nullptr, "forward", 0) == PPT_SHIM_INVALID_ARGUMENT);
  CHECK(ppt_shim_end(nullptr) == PPT_SHIM_INVALID_ARGUMENT);
  CHECK(ppt_shim_flush(nullptr, 0) == PPT_SHIM_INVALID_ARGUMENT);
  CHECK(ppt_shim_set_step(nullptr, 0) == PPT_SHIM_INVALID_ARGUMENT);
  CHECK(ppt_shim_set_window(nullptr, 0, 1) == PPT_SHIM_INVALID_ARGUMENT);
  CHECK(ppt_shim_set_sink(nullptr, nullptr, nullptr) == PPT_SHIM_INVALID_ARGUMENT);
  CHECK(ppt_shim_recording(nullptr) == 0);
  CHECK(ppt_shim_backend(nullptr) == -1);
  CHECK(std::string(ppt_shim_last_error(nullptr)) == "NULL ppt_shim handle");
  CHECK(std::string(ppt_shim_backend_note(nullptr)).empty());
  ppt_shim_destroy(nullptr);
}

TEST_CASE("ppt_shim_create refuses a bad environment and says why") {
  ::setenv("PPT_SHIM_END_STEP", "soon", 1);
  ppt_shim* h = ppt_shim_create(nullptr, -1, 0);
  ::unsetenv("PPT_SHIM_END_STEP");
  CHECK(h == nullptr);
  CHECK_THAT(ppt_shim_create_error(), Catch::Contains("PPT_SHIM_END_STEP='soon'"));
  ppt_shim* ok = ppt_shim_create(nullptr, -1, PPT_SHIM_HOST_CLOCK);
  CHECK(ok != nullptr);
  CHECK(std::string(ppt_shim_create_error()).empty());
  ppt_shim_destroy(ok);
}
