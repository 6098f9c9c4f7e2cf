// The shared text helpers: UTF-8 by the standard's table, numbers, names.
#include "util/text.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace ppt {
namespace {

constexpr const char* kFffd = "\xEF\xBF\xBD";

// Well-formed UTF-8 throughout, by the sequence lengths.
bool well_formed(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    size_t n = utf8_sequence_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string repeated_fffd(size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += kFffd;
  return out;
}

TEST_CASE("UTF-8 sequences are accepted or refused as the Unicode Standard's table says", "[text][utf8]") {
  struct Row {
    const char* what;
    std::string bytes;
    bool valid;
    char32_t code_point;  // when valid and one character
  };
  const Row rows[] = {
      {"ASCII", "A", true, U'A'},
      {"NUL is a character", std::string("\0", 1), true, 0},
      {"two bytes, lowest", "\xC2\x80", true, 0x80},
      {"two bytes, highest", "\xDF\xBF", true, 0x7FF},
      {"overlong two bytes (C0)", "\xC0\xAF", false, 0},
      {"overlong two bytes (C1)", "\xC1\xBF", false, 0},
      {"a lone continuation byte", "\x80", false, 0},
      {"three bytes, lowest", "\xE0\xA0\x80", true, 0x800},
      {"overlong three bytes", "\xE0\x80\xAF", false, 0},
      {"overlong three bytes, highest", "\xE0\x9F\xBF", false, 0},
      {"last before the surrogates", "\xED\x9F\xBF", true, 0xD7FF},
      {"high surrogate", "\xED\xA0\x80", false, 0},
      {"low surrogate", "\xED\xBF\xBF", false, 0},
      {"first after the surrogates", "\xEE\x80\x80", true, 0xE000},
      {"noncharacter U+FFFE is well-formed", "\xEF\xBF\xBE", true, 0xFFFE},
      {"noncharacter U+FFFF is well-formed", "\xEF\xBF\xBF", true, 0xFFFF},
      {"four bytes, lowest", "\xF0\x90\x80\x80", true, 0x10000},
      {"overlong four bytes", "\xF0\x8F\xBF\xBF", false, 0},
      {"U+10FFFF, the last code point", "\xF4\x8F\xBF\xBF", true, 0x10FFFF},
      {"above U+10FFFF", "\xF4\x90\x80\x80", false, 0},
      {"F5 lead (above U+10FFFF)", "\xF5\x80\x80\x80", false, 0},
      {"FF", "\xFF", false, 0},
      {"cut by the end", "\xE2\x82", false, 0},
      {"cut by a byte that does not continue it", "\xE2\x28\xA1", false, 0},
      {"four bytes cut after three", "\xF0\x9F\x98", false, 0},
      {"emoji", "\xF0\x9F\x98\x80", true, 0x1F600},
  };
  for (const Row& row : rows) {
    INFO(row.what);
    CHECK(well_formed(row.bytes) == row.valid);
    size_t n = utf8_sequence_length(row.bytes, 0);
    CHECK((n == row.bytes.size()) == row.valid);
    if (row.valid) CHECK(utf8_code_point(row.bytes, 0, n) == row.code_point);
    bool changed = true;
    std::string clean = sanitize_utf8(row.bytes, &changed);
    CHECK(changed == !row.valid);
    CHECK(well_formed(clean));
    if (row.valid) {
      CHECK(clean == row.bytes);
    } else {
      // One U+FFFD for each byte that does not start a well-formed sequence.
      std::string want;
      for (size_t i = 0; i < row.bytes.size();) {
        size_t k = utf8_sequence_length(row.bytes, i);
        want += k > 0 ? row.bytes.substr(i, k) : std::string(kFffd);
        i += k > 0 ? k : 1;
      }
      CHECK(clean == want);
      CHECK(clean.find(kFffd) != std::string::npos);
    }
  }
}

TEST_CASE("sanitizing replaces each bad byte and keeps the text around it", "[text][utf8]") {
  struct Row {
    std::string in, out;
  };
  const Row rows[] = {
      {"forward\xC3\xA9", "forward\xC3\xA9"},
      {"a\xFF"
       "b",
       "a" + repeated_fffd(1) + "b"},
      {"\xE0\x80\x80", repeated_fffd(3)},
      {"\xED\xA0\x80x", repeated_fffd(3) + "x"},
      {"\xE2\x82"
       "A",
       repeated_fffd(2) + "A"},
      {"ok\xF4\x90\x80\x80ok", "ok" + repeated_fffd(4) + "ok"},
  };
  for (const Row& row : rows) {
    bool changed = false;
    CHECK(sanitize_utf8(row.in, &changed) == row.out);
    CHECK(changed == (row.in != row.out));
    bool again = true;
    CHECK(sanitize_utf8(row.out, &again) == row.out);
    CHECK_FALSE(again);
  }
}

TEST_CASE("whole-field numbers refuse spaces, signs where they do not belong, and overflow", "[text]") {
  int32_t i = 0;
  CHECK(parse_whole_number("42", &i));
  CHECK(i == 42);
  CHECK(parse_whole_number("-7", &i));
  CHECK(i == -7);
  CHECK_FALSE(parse_whole_number("", &i));
  CHECK_FALSE(parse_whole_number(" 1", &i));
  CHECK_FALSE(parse_whole_number("1 ", &i));
  CHECK_FALSE(parse_whole_number("1x", &i));
  CHECK_FALSE(parse_whole_number("2147483648", &i));
  int64_t l = 0;
  CHECK(parse_whole_number("2147483648", &l));
  CHECK(l == 2147483648LL);
  uint32_t u = 0;
  CHECK_FALSE(parse_whole_number("-1", &u));
}

TEST_CASE("counts read with thousands separators", "[text]") {
  struct Row {
    uint64_t n;
    const char* text;
  };
  const Row rows[] = {{0, "0"},
                      {7, "7"},
                      {999, "999"},
                      {1000, "1,000"},
                      {12345, "12,345"},
                      {123456, "123,456"},
                      {1234567, "1,234,567"},
                      {UINT64_MAX, "18,446,744,073,709,551,615"}};
  for (const Row& row : rows) CHECK(with_commas(row.n) == row.text);
}

TEST_CASE("counts name their noun in the singular for one, in the plural otherwise", "[text]") {
  CHECK(counted(1, "file") == "1 file");
  CHECK(counted(0, "file") == "0 files");
  CHECK(counted(2, "rank") == "2 ranks");
  CHECK(counted(1234, "step") == "1,234 steps");
  CHECK(counted(1, "replica") == "1 replica");
  CHECK(counted(3, "overlapping job", "overlapping jobs") == "3 overlapping jobs");
  CHECK(counted(1, "overlapping job", "overlapping jobs") == "1 overlapping job");
}

TEST_CASE("percentages that round to zero have no sign", "[text]") {
  CHECK(format_percent(-0.04) == "0.0%");
  CHECK(format_percent(-0.0) == "0.0%");
  CHECK(format_percent(12.345) == "12.3%");
  CHECK(format_percent(-1.25) == "-1.2%");
  CHECK(format_percent(-0.04, PercentSign::kAlways) == "0.0%");
  CHECK(format_percent(0.0, PercentSign::kAlways) == "0.0%");
  CHECK(format_percent(0.05, PercentSign::kAlways) == "+0.1%");
  CHECK(format_percent(3.0, PercentSign::kAlways) == "+3.0%");
  CHECK(format_percent(-3.0, PercentSign::kAlways) == "-3.0%");
  CHECK(format_percent(-0.4, PercentSign::kAlways, 0) == "0%");
  CHECK(format_percent(-0.04, PercentSign::kAlways, 1, " pt") == "0.0 pt");
  CHECK(format_percent(-2.0, PercentSign::kAlways, 1, " pt") == "-2.0 pt");
}

TEST_CASE("machine folders sort naturally", "[layout]") {
  std::vector<std::string> names = {"machine10", "machine2", "machine1", "machine9", "machine02", "machineA"};
  std::sort(names.begin(), names.end(), natural_less);
  CHECK(names == std::vector<std::string>{"machine1", "machine2", "machine02", "machine9", "machine10", "machineA"});
}

TEST_CASE("natural order of IP addresses and host names", "[layout]") {
  std::vector<std::string> names = {"10.0.0.10", "10.0.0.2", "10.0.1.1", "9.9.9.9", "node-10", "node-2"};
  std::sort(names.begin(), names.end(), natural_less);
  CHECK(names == std::vector<std::string>{"9.9.9.9", "10.0.0.2", "10.0.0.10", "10.0.1.1", "node-2", "node-10"});
}

// The bytes of a size, or -1 with the reason when it is refused.
int64_t size_of(const std::string& text, std::string* why = nullptr) {
  int64_t bytes = -1;
  std::string reason;
  if (!parse_byte_size(text, &bytes, &reason)) bytes = -1;
  if (why) *why = reason;
  return bytes;
}

TEST_CASE("sizes of memory: powers of 1024 with an i, of 1000 without, whole bytes without a unit", "[text][size]") {
  CHECK(size_of("80GiB") == 80LL << 30);
  CHECK(size_of("81920MiB") == 80LL << 30);
  CHECK(size_of("80GB") == 80'000'000'000LL);
  CHECK(size_of("85899345920") == 80LL << 30);
  CHECK(size_of("80 GiB") == 80LL << 30);
  CHECK(size_of("80gib") == 80LL << 30);
  CHECK(size_of("79.5GiB") == std::llround(79.5 * (1LL << 30)));
  CHECK(size_of("1.5TB") == 1'500'000'000'000LL);
  CHECK(size_of("512KiB") == 512LL << 10);
  CHECK(size_of("3MB") == 3'000'000);
  CHECK(size_of("1TiB") == 1LL << 40);
  CHECK(size_of("1024B") == 1024);
}

TEST_CASE("sizes of memory: anything else is refused with the reason", "[text][size]") {
  std::string why;
  CHECK(size_of("80G", &why) == -1);
  CHECK(why.find("unknown unit 'G'") != std::string::npos);
  CHECK(why.find("GiB") != std::string::npos);
  CHECK(size_of("80GIB", &why) == -1);  // neither as written nor lower case
  CHECK(size_of("80 GiB extra", &why) == -1);
  CHECK(size_of("80  GiB", &why) == -1);  // one space at most
  CHECK(size_of("1.5", &why) == -1);
  CHECK(why.find("whole bytes") != std::string::npos);
  CHECK(size_of("0GiB", &why) == -1);
  CHECK(why.find("above 0") != std::string::npos);
  CHECK(size_of("-80GiB", &why) == -1);
  CHECK(size_of("", &why) == -1);
  CHECK(size_of("GiB", &why) == -1);
  CHECK(size_of("nan", &why) == -1);
  CHECK(size_of("inf", &why) == -1);
  CHECK(size_of("1e3GiB", &why) == -1);
  CHECK(size_of("1.2.3GiB", &why) == -1);
  CHECK(size_of("2000000TiB", &why) == -1);
  CHECK(why.find("2^60") != std::string::npos);
  CHECK(size_of("99999999999999999999999999") == -1);
}

TEST_CASE("GiB for people", "[text][size]") {
  CHECK(format_gib(80LL << 30) == "80.0 GiB");
  CHECK(format_gib(std::llround(83.24 * (1LL << 30))) == "83.2 GiB");
  CHECK(format_gib(std::llround(83.24 * (1LL << 30)), 2) == "83.24 GiB");
}

}  // namespace
}  // namespace ppt
