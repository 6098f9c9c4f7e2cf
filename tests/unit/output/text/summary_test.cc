// The input problems as data: examples and counts, each with its kind and
// severity, for every reader to filter as it needs.
#include <catch2/catch.hpp>

#include "output/text/summary.h"
#include "support/test_support.h"

namespace ppt {

TEST_CASE("format_diagnostics gives examples, then one count per kind, as data") {
  testing::TempDir dir;
  dir.write("logs/workerlog.0", testing::job_line("forward", 0, 0, 10) + testing::job_line("forward", 1, 30, 20) +
                                    "Profiler Info: Job (1), type = forward, garbage\n");
  Timeline tl = testing::load_dir(dir.path() + "/logs");
  std::vector<DiagnosticLine> lines = format_diagnostics(tl);
  REQUIRE(lines.size() == 4);
  // Examples in the file's order of lines.
  CHECK(lines[0].example);
  CHECK(lines[0].kind == IssueKind::kEndBeforeStart);
  CHECK(lines[0].severity == Severity::kError);
  CHECK(lines[0].text.find("workerlog.0:2: error: ") != std::string::npos);
  CHECK(lines[1].example);
  CHECK(lines[1].kind == IssueKind::kMalformedJobLine);
  CHECK(lines[1].text.find("workerlog.0:3: error: ") != std::string::npos);
  // Counts in the registry's order of kinds.
  CHECK_FALSE(lines[2].example);
  CHECK(lines[2].kind == IssueKind::kMalformedJobLine);
  CHECK(lines[2].text.rfind("1 x malformed_job_line: ", 0) == 0);
  CHECK_FALSE(lines[3].example);
  CHECK(lines[3].kind == IssueKind::kEndBeforeStart);
  // As printed: counts indented under the examples.
  CHECK(diagnostic_text(lines[2]).rfind("  1 x malformed_job_line: ", 0) == 0);
  CHECK(diagnostic_text(lines[0]) == lines[0].text);
}

TEST_CASE("the summary line counts in words: one file, one rank, one step") {
  testing::TempDir dir;
  dir.write("logs/workerlog.0", testing::job_line("forward", 0, 0, 10) + testing::job_line("backward", 0, 20, 30));
  Timeline tl = testing::load_dir(dir.path() + "/logs");
  std::string s = format_summary(tl);
  INFO(s);
  CHECK(s.find(": 1 file, ") != std::string::npos);
  CHECK(s.find("; 1 rank, 1 step") != std::string::npos);
  CHECK(s.find("1 files") == std::string::npos);
  CHECK(s.find("1 ranks") == std::string::npos);
  CHECK(s.find("1 steps") == std::string::npos);
  CHECK(s.find("2 profiler lines: 2 jobs written, 0 rejected") != std::string::npos);
}

}  // namespace ppt
