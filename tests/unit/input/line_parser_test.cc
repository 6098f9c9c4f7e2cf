#include <catch2/catch.hpp>

#include <string>

#include "input/line_parser.h"
#include "pp_timeline/log_line.h"
#include "support/test_support.h"

using namespace ppt;
using ppt::testing::parser;

namespace {
const char* kCanonical =
    "I1020 09:15:07.265326 22317 standalone_executor.cc:217] Profiler Info: Job (3), type = forward, "
    "micro_batch_id = 2, job_start_time = 1697793307213.760986, job_end_time = 1697793307254.006104";

// Every single-byte deletion of the canonical line, and each of its bytes
// replaced by each of `subs`, in that order byte by byte.
std::vector<std::string> canonical_mutations(std::string_view subs) {
  const std::string base = kCanonical;
  std::vector<std::string> out;
  for (size_t i = 0; i < base.size(); ++i) {
    out.push_back(base.substr(0, i) + base.substr(i + 1));
    for (char c : subs) {
      std::string v = base;
      v[i] = c;
      out.push_back(v);
    }
  }
  return out;
}
}  // namespace

TEST_CASE("every accepted variant of the job line parses to the same job", "[line_parser]") {
  struct Row {
    std::string line;
    std::string type;
    int32_t mb;
    int64_t tid;
  };
  const std::string body =
      "Profiler Info: Job (3), type = TYPE, micro_batch_id = 2, job_start_time = 1697793307213.760986, "
      "job_end_time = 1697793307254.006104";
  auto with = [&](const std::string& prefix, const std::string& type, const std::string& suffix = "") {
    std::string b = body;
    b.replace(b.find("TYPE"), 4, type);
    return prefix + b + suffix;
  };
  const Row rows[] = {
      {kCanonical, "forward", 2, 22317},
      {with("I20231020 09:15:07.265326 22317 standalone_executor.cc:217] ", "forward"), "forward", 2, 22317},
      {with("", "backward_w1"), "backward_w1", 2, -1},
      {with("W1020 09:15:07.265326    77 x.cc:1] ", "forward(chunk0)"), "forward(chunk0)", 2, 77},
      {with("[rank 3] ", "recv_forward"), "recv_forward", 2, -1},
      {with("I1020 09:15:07.265326 22317 a.cc:1] ", "forward", "\r"), "forward", 2, 22317},
      {with("I1020 09:15:07.265326 22317 a.cc:1] ", "forward", "  "), "forward", 2, 22317},
      {with("junk \x01\x02 ", "type with spaces"), "type with spaces", 2, -1},
      {"Profiler Info: Job (0), type = optimizer, job_start_time = 1.000000, job_end_time = 2.000000", "optimizer", -1,
       -1},
  };
  for (const Row& r : rows) {
    INFO(r.line);
    for (bool regex_only : {false, true}) {
      LineResult res = regex_only ? parser().parse_regex_only(r.line) : parser().parse(r.line);
      REQUIRE(res.kind == LineKind::kJob);
      CHECK(res.job.type == r.type);
      CHECK(res.job.micro_batch == r.mb);
      CHECK(res.job.thread_id == r.tid);
      if (r.mb >= 0) {
        CHECK(res.job.job_id == 3);
        CHECK(res.job.start_ns == 1697793307213760986);
        CHECK(res.job.end_ns == 1697793307254006104);
      }
    }
  }
}

TEST_CASE("bad job lines are rejected with the reason", "[line_parser]") {
  struct Row {
    std::string line;
    IssueKind issue;
  };
  const std::string h = "Profiler Info: Job (1), type = forward, micro_batch_id = 0, ";
  const Row rows[] = {
      {h + "job_start_time = 2.000000, job_end_time = 1.000000", IssueKind::kEndBeforeStart},
      {h + "job_start_time = 0.000000, job_end_time = 0.000000", IssueKind::kZeroTimes},
      {h + "job_start_time = 0.000000, job_end_time = 5.000000", IssueKind::kHalfZeroTime},
      {h + "job_start_time = nan, job_end_time = 1.0", IssueKind::kBadTime},
      {h + "job_start_time = 1.0, job_end_time = inf", IssueKind::kBadTime},
      {h + "job_start_time = -1.0, job_end_time = 1.0", IssueKind::kNegativeTime},
      {h + "job_start_time = " + std::string(300, '9') + ", job_end_time = 1.0", IssueKind::kTimeOutOfRange},
      {"Profiler Info: Job (x), type = forward, micro_batch_id = 0, job_start_time = 1.0, job_end_time = 2.0",
       IssueKind::kBadJobId},
      {"Profiler Info: Job (99999999999), type = f, job_start_time = 1.0, job_end_time = 2.0", IssueKind::kBadJobId},
      {"Profiler Info: Job (1), type = forward, micro_batch_id = -1, job_start_time = 1.0, job_end_time = 2.0",
       IssueKind::kBadMicroBatch},
      {"Profiler Info: Job (1), type = forward, micro_batch_id = 0, job_start_ti", IssueKind::kMalformedJobLine},
      {"Profiler Info: Job (1), type = , job_start_time = 1.0, job_end_time = 2.0", IssueKind::kMalformedJobLine},
      {h + "job_start_time = 1.0, job_end_time = 2.0, extra = 1", IssueKind::kMalformedJobLine},
  };
  for (const Row& r : rows) {
    INFO(r.line);
    for (bool regex_only : {false, true}) {
      LineResult res = regex_only ? parser().parse_regex_only(r.line) : parser().parse(r.line);
      CHECK(res.kind == LineKind::kRejected);
      CHECK(res.issue == r.issue);
      CHECK_FALSE(res.detail.empty());
    }
  }
  LineResult cut = parser().parse("Profiler Info: Job (1), type = forward, micro_batch_id = 0, job_sta", true);
  CHECK(cut.issue == IssueKind::kTruncatedJobLine);
}

TEST_CASE("the fast path and the regular expression agree on mutated lines", "[line_parser]") {
  // Every single-byte deletion and a few substitutions of the canonical line:
  // whatever the fast path accepts, RE2 must accept with the same values.
  int checked = 0;
  for (const std::string& v : canonical_mutations(",)( \r-.x0")) {
    LineResult a = parser().parse(v);
    LineResult b = parser().parse_regex_only(v);
    INFO(v);
    REQUIRE(a.kind == b.kind);
    REQUIRE(a.issue == b.issue);
    if (a.kind == LineKind::kJob) {
      CHECK(a.job.type == b.job.type);
      CHECK(a.job.micro_batch == b.job.micro_batch);
      CHECK(a.job.job_id == b.job.job_id);
      CHECK(a.job.start_ns == b.job.start_ns);
      CHECK(a.job.end_ns == b.job.end_ns);
    }
    ++checked;
  }
  CHECK(checked > 1000);
}

TEST_CASE("the schedule marker gives the first step", "[line_parser]") {
  LineResult r =
      parser().parse("[2023-10-20 09:15:02,000] [INFO] - Schedule Profiler start at step 10 and end at step 20");
  REQUIRE(r.kind == LineKind::kScheduleMarker);
  CHECK(r.marker.start_step == 10);
  CHECK(r.marker.end_step == 20);
  LineResult bad = parser().parse("Schedule Profiler start at step ten and end at step 20");
  CHECK(bad.kind == LineKind::kOther);
  CHECK(bad.has_issue);
  CHECK(bad.issue == IssueKind::kBadScheduleMarker);
  CHECK(parser().parse("Profiler summary: nothing").kind == LineKind::kOther);
}

TEST_CASE("a job line taken in one pass is the job parse() gives, with no issue", "[line_parser]") {
  // parse_plain_job() may refuse any line (the caller then calls parse()),
  // but what it takes must be exactly parse()'s job: every single-byte
  // deletion and a few substitutions of the canonical line.
  int taken = 0, refused = 0;
  for (const std::string& v : canonical_mutations(",)( \r-.x0P")) {
    const size_t marker = v.find(log_line::kJobMarker);
    if (marker == std::string::npos) continue;
    INFO(v);
    ParsedJob plain;
    if (!parser().parse_plain_job(v, marker, &plain)) {
      ++refused;
      continue;
    }
    ++taken;
    LineResult r = parser().parse(v);
    REQUIRE(r.kind == LineKind::kJob);
    CHECK_FALSE(r.has_issue);
    CHECK(r.rest == std::string_view::npos);
    CHECK(plain.type == r.job.type);
    CHECK(plain.micro_batch == r.job.micro_batch);
    CHECK(plain.job_id == r.job.job_id);
    CHECK(plain.start_ns == r.job.start_ns);
    CHECK(plain.end_ns == r.job.end_ns);
    CHECK(plain.thread_id == r.job.thread_id);
  }
  // Lines as Paddle prints them, with every digit of the times varied.
  uint64_t state = 0x9E3779B97F4A7C15ull;
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  for (int k = 0; k < 2000; ++k) {
    const int64_t start = 1'000'000'000'000'000'000 + static_cast<int64_t>(next() % 8'000'000'000'000'000'000ull);
    const int64_t end = start + static_cast<int64_t>(next() % 10'000'000'000ull);
    const int64_t id = static_cast<int64_t>(next() % 1'000'000'000);
    const int64_t mb = k % 3 == 0 ? -1 : static_cast<int64_t>(next() % 100'000);
    const std::string line = "I1020 09:15:07.265326 " + std::to_string(k) + " standalone_executor.cc:217] " +
                             log_line::format_job_line(id, k % 2 ? "forward" : "backward(chunk1)", mb, start, end);
    INFO(line);
    ParsedJob plain;
    REQUIRE(parser().parse_plain_job(line, line.find(log_line::kJobMarker), &plain));
    CHECK(plain.start_ns == start);
    CHECK(plain.end_ns == end);
    CHECK(plain.job_id == id);
    CHECK(plain.micro_batch == mb);
    CHECK(plain.thread_id == k);
    CHECK(plain.type == (k % 2 ? "forward" : "backward(chunk1)"));
  }
  ParsedJob canonical;
  REQUIRE(parser().parse_plain_job(kCanonical, std::string_view(kCanonical).find(log_line::kJobMarker), &canonical));
  CHECK(canonical.thread_id == 22317);
  CHECK(taken > 500);
  CHECK(refused > 300);
}
