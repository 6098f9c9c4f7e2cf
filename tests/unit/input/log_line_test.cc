#include <catch2/catch.hpp>

#include <random>
#include <string>

#include "input/line_parser.h"
#include "pp_timeline/log_line.h"
#include "support/test_support.h"

using ppt::log_line::parse_ms_to_ns;
using ppt::log_line::TimeParse;

TEST_CASE("millisecond texts become exact integer nanoseconds", "[log_line]") {
  struct Row {
    const char* text;
    TimeParse status;
    int64_t ns;
  };
  const Row rows[] = {
      {"1697793307213.760986", TimeParse::kOk, 1697793307213760986},
      {"1697793307213.761", TimeParse::kOk, 1697793307213761000},
      {"1697793307213", TimeParse::kOk, 1697793307213000000},
      {"0.000000", TimeParse::kOk, 0},
      {"0.000001", TimeParse::kOk, 1},
      {"12.5", TimeParse::kOk, 12500000},
      {".5", TimeParse::kOk, 500000},
      {"5.", TimeParse::kOk, 5000000},
      {"1.1234567891", TimeParse::kOk, 1123456},  // below a nanosecond: dropped
      {"", TimeParse::kEmpty, 0},
      {".", TimeParse::kNotANumber, 0},
      {"nan", TimeParse::kNotANumber, 0},
      {"inf", TimeParse::kNotANumber, 0},
      {"-inf", TimeParse::kNotANumber, 0},
      {"1e12", TimeParse::kNotANumber, 0},
      {"+12.0", TimeParse::kNotANumber, 0},
      {"12.0 ", TimeParse::kNotANumber, 0},
      {"1.2.3", TimeParse::kNotANumber, 0},
      {"-12.5", TimeParse::kNegative, 0},
      {"99999999999999.0", TimeParse::kTooLarge, 0},
      {"123456789012345678901234567890123456789012345678901234567890", TimeParse::kTooLarge, 0},
  };
  for (const Row& r : rows) {
    INFO(r.text);
    int64_t ns = -7;
    TimeParse got = parse_ms_to_ns(r.text, &ns);
    CHECK(got == r.status);
    if (r.status == TimeParse::kOk) CHECK(ns == r.ns);
  }
}

// The fast paths (eight digits at a time for the 15- to 20-byte texts
// Paddle prints) agree with the general parse on the texts they take and on
// every text one byte away from them.
TEST_CASE("the fast time parse agrees with the general one", "[log_line]") {
  std::mt19937_64 rng(1207);
  const std::string bytes = "0123456789.-+ ,e\r\x80/:";
  uint64_t checked = 0;
  auto check = [&](const std::string& text) {
    INFO(text);
    int64_t fast = -7, general = -7;
    const TimeParse a = parse_ms_to_ns(text, &fast);
    const TimeParse b = text.empty() || text[0] == '-' ? a : ppt::log_line::detail::parse_ms_general(text, &general);
    if (text.empty() || text[0] == '-') return;  // the sign is parse_ms_to_ns' own
    REQUIRE(a == b);
    if (a == TimeParse::kOk) REQUIRE(fast == general);
    ++checked;
  };
  for (int digits = 1; digits <= 15; ++digits) {
    for (int round = 0; round < 400; ++round) {
      std::string text;
      for (int k = 0; k < digits; ++k) text.push_back(static_cast<char>('0' + rng() % 10));
      if (round % 4 != 0 && text[0] == '0') text[0] = '1';
      text.push_back('.');
      for (int k = 0; k < 6; ++k) text.push_back(static_cast<char>('0' + rng() % 10));
      if (round % 5 == 0) text.replace(0, std::min<size_t>(digits, 4), std::string(std::min(digits, 4), '9'));
      check(text);
      // One byte changed, anywhere, to a digit, a separator or a byte no time holds.
      std::string changed = text;
      changed[rng() % changed.size()] = bytes[rng() % bytes.size()];
      check(changed);
      // The digits' neighbours in ASCII, which a check of the low half alone lets through.
      changed = text;
      changed[rng() % changed.size()] = static_cast<char>(rng() % 2 ? '0' - 1 : '9' + 1 + rng() % 6);
      check(changed);
    }
  }
  // At the int64 limit: 9223372036854.775807 ms is the last time that fits.
  for (const char* t : {"9223372036854.775807", "9223372036854.775808", "9223372036853.999999", "9223372036855.000000",
                        "9999999999999.999999", "1000000000000.000000", "10000000.000000", "99999999.999999"}) {
    check(t);
  }
  CHECK(checked > 10000);
}

TEST_CASE("a formatted job line reads back to the same values", "[log_line]") {
  std::string line = ppt::log_line::format_job_line(3, "forward(chunk0)", 2, 1697793307213760986, 1697793307254006104);
  CHECK(line ==
        "Profiler Info: Job (3), type = forward(chunk0), micro_batch_id = 2, job_start_time = "
        "1697793307213.760986, job_end_time = 1697793307254.006104");
  CHECK(ppt::log_line::format_job_line(0, "optimizer", -1, 1000, 2000001) ==
        "Profiler Info: Job (0), type = optimizer, job_start_time = 0.001000, job_end_time = 2.000001");
  std::string ms;
  ppt::log_line::append_ns_as_ms(ms, 5);
  CHECK(ms == "0.000005");
}

TEST_CASE("job types that would break the line are invalid", "[log_line]") {
  CHECK(ppt::log_line::is_valid_job_type("backward_w1_reduce"));
  CHECK(ppt::log_line::is_valid_job_type("forward(chunk0)"));
  CHECK_FALSE(ppt::log_line::is_valid_job_type(""));
  CHECK_FALSE(ppt::log_line::is_valid_job_type("a,b"));
  CHECK_FALSE(ppt::log_line::is_valid_job_type("a\nb"));
}

TEST_CASE("times past what int64 nanoseconds hold are refused, never wrapped", "[hardening][log_line]") {
  struct Case {
    const char* text;
    ppt::log_line::TimeParse want;
    int64_t ns;
  };
  const Case cases[] = {
      {"9223372036854.775807", ppt::log_line::TimeParse::kOk, INT64_MAX},
      {"9223372036854.775808", ppt::log_line::TimeParse::kTooLarge, 0},
      {"9223372036855", ppt::log_line::TimeParse::kTooLarge, 0},
      {"9999999999999.999999", ppt::log_line::TimeParse::kTooLarge, 0},
      {"0009223372036.854775", ppt::log_line::TimeParse::kOk, 9223372036854775},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    int64_t ns = -1;
    CHECK(ppt::log_line::parse_ms_to_ns(c.text, &ns) == c.want);
    if (c.want == ppt::log_line::TimeParse::kOk) CHECK(ns == c.ns);
  }
  std::string line =
      "Profiler Info: Job (1), type = forward, micro_batch_id = 0, job_start_time = "
      "9999999999999.999999, job_end_time = 9999999999999.999999";
  ppt::LineResult r = ppt::testing::parser().parse(line);
  CHECK(r.kind == ppt::LineKind::kRejected);
  CHECK(r.issue == ppt::IssueKind::kTimeOutOfRange);
}
