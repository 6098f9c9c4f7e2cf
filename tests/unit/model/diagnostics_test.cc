// The registry of input problems: one row per kind, each with its own name
// and text, and the collector that counts them.
#include "model/diagnostics.h"

#include <catch2/catch.hpp>

#include <set>
#include <string>

using namespace ppt;

TEST_CASE("every kind of input problem has a name and an explanation", "[diagnostics]") {
  std::set<std::string> names;
  std::set<std::string> texts;
  for (size_t k = 0; k < kIssueKindCount; ++k) {
    const IssueInfo& info = issue_info(static_cast<IssueKind>(k));
    INFO(k);
    CHECK_FALSE(info.name.empty());
    CHECK(info.explanation.size() > 20);
    CHECK(names.insert(std::string(info.name)).second);
    CHECK(texts.insert(std::string(info.explanation)).second);
  }
}

TEST_CASE("rejected jobs are the counts of the kinds that reject a job line", "[diagnostics]") {
  Diagnostics d;
  uint64_t want = 0;
  for (size_t k = 0; k < kIssueKindCount; ++k) {
    auto kind = static_cast<IssueKind>(k);
    d.count(kind, k + 1);
    if (issue_info(kind).rejects_job) want += k + 1;
  }
  CHECK(want > 0);
  CHECK(d.rejected_jobs() == want);
  CHECK(issue_info(IssueKind::kMalformedJobLine).rejects_job);
  CHECK_FALSE(issue_info(IssueKind::kRerun).rejects_job);
}
