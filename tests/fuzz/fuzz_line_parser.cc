// Fuzz target: one log line (or several, split at '\n') through the line
// parser and the small text helpers around it.
//
// Beyond "no crash, no undefined behaviour", each line is checked against
// independent definitions:
//  - the hand-written fast path and the RE2-only path give the same result
//    (kind, reason, every field): RE2 is the definition of the format; a
//    line the scanner's one-pass reading takes is parse()'s job;
//  - an accepted job is sane (positive times, end >= start, non-empty type)
//    and reads back to itself when printed again with log_line::format_job_line;
//  - the line read as a time text parses to what a reference computes with
//    plain string arithmetic (no overflow, no rounding);
//  - sanitize_utf8 yields valid UTF-8 (checked by a separate decoder),
//    changes nothing in valid text and is idempotent;
//  - append_json_escaped yields a JSON string that nlohmann/json reads back
//    to the sanitized text;
//  - printable_excerpt yields no control bytes.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "input/line_parser.h"
#include "model/diagnostics.h"
#include "model/job_types.h"
#include "model/timeline.h"
#include "output/picture/palette.h"
#include "output/trace/chrome_json_writer.h"
#include "output/trace/trace_naming.h"
#include "pp_timeline/log_line.h"
#include "util/text.h"

namespace {

using ppt::LineKind;
using ppt::LineResult;

const ppt::LineParser& parser() {
  static const ppt::LineParser p;
  return p;
}

// RFC 3629, written out by byte ranges (independent of sanitize_utf8's bit tests).
bool valid_utf8(std::string_view s) {
  size_t i = 0;
  auto in = [&](size_t k, unsigned lo, unsigned hi) {
    if (i + k >= s.size()) return false;
    unsigned c = static_cast<unsigned char>(s[i + k]);
    return c >= lo && c <= hi;
  };
  while (i < s.size()) {
    unsigned c = static_cast<unsigned char>(s[i]);
    if (c <= 0x7f) {
      i += 1;
    } else if (c >= 0xc2 && c <= 0xdf) {
      if (!in(1, 0x80, 0xbf)) return false;
      i += 2;
    } else if (c == 0xe0) {
      if (!in(1, 0xa0, 0xbf) || !in(2, 0x80, 0xbf)) return false;
      i += 3;
    } else if ((c >= 0xe1 && c <= 0xec) || c == 0xee || c == 0xef) {
      if (!in(1, 0x80, 0xbf) || !in(2, 0x80, 0xbf)) return false;
      i += 3;
    } else if (c == 0xed) {
      if (!in(1, 0x80, 0x9f) || !in(2, 0x80, 0xbf)) return false;
      i += 3;
    } else if (c == 0xf0) {
      if (!in(1, 0x90, 0xbf) || !in(2, 0x80, 0xbf) || !in(3, 0x80, 0xbf)) return false;
      i += 4;
    } else if (c >= 0xf1 && c <= 0xf3) {
      if (!in(1, 0x80, 0xbf) || !in(2, 0x80, 0xbf) || !in(3, 0x80, 0xbf)) return false;
      i += 4;
    } else if (c == 0xf4) {
      if (!in(1, 0x80, 0x8f) || !in(2, 0x80, 0xbf) || !in(3, 0x80, 0xbf)) return false;
      i += 4;
    } else {
      return false;
    }
  }
  return true;
}

std::string show(std::string_view s) { return ppt::printable_excerpt(s, 200); }

void check_same(const LineResult& a, const LineResult& b, std::string_view line) {
  const std::string text = show(line);
  FUZZ_CHECK(a.kind == b.kind, "fast path kind %d, RE2 kind %d: %s", static_cast<int>(a.kind), static_cast<int>(b.kind),
             text.c_str());
  FUZZ_CHECK(a.has_issue == b.has_issue, "%s", text.c_str());
  if (a.has_issue) {
    FUZZ_CHECK(a.issue == b.issue, "fast path %s, RE2 %s: %s", std::string(ppt::issue_info(a.issue).name).c_str(),
               std::string(ppt::issue_info(b.issue).name).c_str(), text.c_str());
    FUZZ_CHECK(a.detail == b.detail, "'%s' vs '%s': %s", a.detail.c_str(), b.detail.c_str(), text.c_str());
  }
  if (a.kind == LineKind::kJob) {
    FUZZ_CHECK(a.job.job_id == b.job.job_id, "%s", text.c_str());
    FUZZ_CHECK(a.job.type == b.job.type, "type '%s' vs '%s': %s", show(a.job.type).c_str(), show(b.job.type).c_str(),
               text.c_str());
    FUZZ_CHECK(a.job.micro_batch == b.job.micro_batch, "%s", text.c_str());
    FUZZ_CHECK(a.job.start_ns == b.job.start_ns, "%s", text.c_str());
    FUZZ_CHECK(a.job.end_ns == b.job.end_ns, "%s", text.c_str());
    FUZZ_CHECK(a.job.thread_id == b.job.thread_id, "%s", text.c_str());
  }
  if (a.kind == LineKind::kScheduleMarker) {
    FUZZ_CHECK(a.marker.start_step == b.marker.start_step && a.marker.end_step == b.marker.end_step, "%s",
               text.c_str());
  }
}

void check_result(const LineResult& r, std::string_view line) {
  const std::string text = show(line);
  switch (r.kind) {
    case LineKind::kJob: {
      const ppt::ParsedJob& j = r.job;
      FUZZ_CHECK(line.find(ppt::log_line::kJobMarker) != std::string_view::npos, "%s", text.c_str());
      FUZZ_CHECK(!r.has_issue, "%s", text.c_str());
      FUZZ_CHECK(j.start_ns > 0 && j.end_ns >= j.start_ns, "%lld..%lld: %s", static_cast<long long>(j.start_ns),
                 static_cast<long long>(j.end_ns), text.c_str());
      FUZZ_CHECK(!j.type.empty(), "%s", text.c_str());
      FUZZ_CHECK(j.type.data() >= line.data() && j.type.data() + j.type.size() <= line.data() + line.size(),
                 "the type does not point into the line: %s", text.c_str());
      FUZZ_CHECK(j.micro_batch >= -1, "%s", text.c_str());
      FUZZ_CHECK(j.job_id >= INT32_MIN && j.job_id <= INT32_MAX, "%s", text.c_str());
      FUZZ_CHECK(j.thread_id >= -1, "%s", text.c_str());
      // Printed again, the job reads back to itself.
      if (ppt::log_line::is_valid_job_type(j.type)) {
        std::string again = ppt::log_line::format_job_line(j.job_id, j.type, j.micro_batch, j.start_ns, j.end_ns);
        LineResult back = parser().parse(again);
        FUZZ_CHECK(back.kind == LineKind::kJob, "'%s' printed as '%s' does not read back", text.c_str(),
                   show(again).c_str());
        FUZZ_CHECK(back.job.job_id == j.job_id && back.job.type == j.type && back.job.micro_batch == j.micro_batch &&
                       back.job.start_ns == j.start_ns && back.job.end_ns == j.end_ns,
                   "'%s' printed as '%s' reads back differently", text.c_str(), show(again).c_str());
      }
      // Type helpers take any accepted type.
      ppt::TypeParts parts = ppt::split_type(j.type);
      FUZZ_CHECK(parts.chunk >= -1, "%s", text.c_str());
      FUZZ_CHECK(ppt::chrome_color_name(j.type) != nullptr, "%s", text.c_str());
      break;
    }
    case LineKind::kRejected:
      FUZZ_CHECK(r.has_issue && !r.detail.empty(), "%s", text.c_str());
      FUZZ_CHECK(ppt::issue_info(r.issue).rejects_job, "a rejected line with a kind that rejects nothing: %s",
                 text.c_str());
      FUZZ_CHECK(line.find(ppt::log_line::kJobMarker) != std::string_view::npos, "%s", text.c_str());
      break;
    case LineKind::kScheduleMarker: FUZZ_CHECK(!r.has_issue, "%s", text.c_str()); break;
    case LineKind::kOther:
      FUZZ_CHECK(!r.has_issue || r.issue == ppt::IssueKind::kBadScheduleMarker, "%s", text.c_str());
      FUZZ_CHECK(line.find(ppt::log_line::kJobMarker) == std::string_view::npos,
                 "a line with the job marker was neither a job nor rejected: %s", text.c_str());
      break;
  }
}

// The reference for parse_ms_to_ns: "<digits>[.<digits>]" with at least one
// digit, a value below 2^63 ns, read as text; nanoseconds printed back
// with six decimals must be the same text once leading zeros are dropped and
// the fraction cut or padded to six digits.
void check_time_text(std::string_view t) {
  int64_t ns = -1;
  ppt::log_line::TimeParse got = ppt::log_line::parse_ms_to_ns(t, &ns);
  std::string_view body = t;
  bool negative = !body.empty() && body.front() == '-';
  if (negative) body.remove_prefix(1);
  size_t i = 0;
  while (i < body.size() && body[i] >= '0' && body[i] <= '9') ++i;
  std::string_view int_part = body.substr(0, i);
  std::string_view frac_part;
  bool grammar = true;
  if (i < body.size()) {
    if (body[i] != '.') {
      grammar = false;
    } else {
      size_t k = i + 1;
      while (k < body.size() && body[k] >= '0' && body[k] <= '9') ++k;
      frac_part = body.substr(i + 1, k - i - 1);
      grammar = k == body.size();
    }
  }
  grammar = grammar && (!int_part.empty() || !frac_part.empty());
  const std::string text = show(t);
  if (t.empty()) {
    FUZZ_CHECK(got == ppt::log_line::TimeParse::kEmpty, "%s", text.c_str());
    return;
  }
  if (!grammar) {
    FUZZ_CHECK(got == ppt::log_line::TimeParse::kNotANumber, "'%s' is no number, got %d", text.c_str(),
               static_cast<int>(got));
    return;
  }
  // The value must fit int64 nanoseconds: below 9223372036854.775807 ms.
  std::string_view digits = int_part;
  while (!digits.empty() && digits.front() == '0') digits.remove_prefix(1);
  bool fits = digits.size() <= 13;  // significant digits
  if (fits && digits.size() == 13) {
    std::string frac6(frac_part.substr(0, std::min<size_t>(6, frac_part.size())));
    frac6.resize(6, '0');
    fits = std::string(digits) + frac6 <= "9223372036854775807";
  }
  if (!fits) {
    FUZZ_CHECK(got == (negative ? ppt::log_line::TimeParse::kNotANumber : ppt::log_line::TimeParse::kTooLarge) ||
                   (negative && got == ppt::log_line::TimeParse::kNegative),
               "'%s' is too large, got %d", text.c_str(), static_cast<int>(got));
    return;
  }
  if (negative) {
    FUZZ_CHECK(got == ppt::log_line::TimeParse::kNegative, "'%s' got %d", text.c_str(), static_cast<int>(got));
    return;
  }
  FUZZ_CHECK(got == ppt::log_line::TimeParse::kOk, "'%s' got %d", text.c_str(), static_cast<int>(got));
  FUZZ_CHECK(ns >= 0, "'%s' gave %lld", text.c_str(), static_cast<long long>(ns));
  std::string want(digits.empty() ? std::string_view("0") : digits);
  want += '.';
  std::string frac6(frac_part.substr(0, std::min<size_t>(6, frac_part.size())));
  frac6.resize(6, '0');
  want += frac6;
  std::string back;
  ppt::log_line::append_ns_as_ms(back, ns);
  FUZZ_CHECK(back == want, "'%s' parsed to %s, want %s", text.c_str(), back.c_str(), want.c_str());
}

void check_text_helpers(std::string_view s) {
  const std::string text = show(s);
  bool changed = true;
  std::string clean = ppt::sanitize_utf8(s, &changed);
  FUZZ_CHECK(valid_utf8(clean), "sanitize_utf8 output is not UTF-8: %s", text.c_str());
  FUZZ_CHECK(changed == !valid_utf8(s), "changed=%d for %s", changed, text.c_str());
  if (!changed) FUZZ_CHECK(clean == s, "valid text was altered: %s", text.c_str());
  bool again = true;
  FUZZ_CHECK(ppt::sanitize_utf8(clean, &again) == clean && !again, "not idempotent: %s", text.c_str());

  std::string json = "\"";
  ppt::append_json_escaped(json, s);
  json += '"';
  nlohmann::json parsed = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  FUZZ_CHECK(!parsed.is_discarded() && parsed.is_string(), "escaped text is not a JSON string: %s", show(json).c_str());
  FUZZ_CHECK(parsed.get<std::string>() == clean, "JSON string reads back differently: %s", text.c_str());

  std::string excerpt = ppt::printable_excerpt(s);
  for (unsigned char c : excerpt) {
    FUZZ_CHECK(c >= 0x20 && c != 0x7f, "control byte 0x%02x in an excerpt of %s", c, text.c_str());
  }
}

// The scanner's one-pass reading (parse_plain_job) may refuse any line, but
// what it takes is parse()'s job, with no issue and nothing after it.
void check_plain_job(const LineResult& parsed, std::string_view line) {
  const size_t marker = line.find(ppt::log_line::kJobMarker);
  ppt::ParsedJob plain;
  if (marker == std::string_view::npos || !parser().parse_plain_job(line, marker, &plain)) return;
  const std::string text(line);
  FUZZ_CHECK(parsed.kind == LineKind::kJob && !parsed.has_issue && parsed.rest == std::string_view::npos,
             "taken in one pass, but parse() says otherwise: %s", text.c_str());
  FUZZ_CHECK(plain.job_id == parsed.job.job_id && plain.type == parsed.job.type &&
                 plain.micro_batch == parsed.job.micro_batch && plain.start_ns == parsed.job.start_ns &&
                 plain.end_ns == parsed.job.end_ns && plain.thread_id == parsed.job.thread_id,
             "one pass and parse() read different jobs: %s", text.c_str());
}

void check_line(std::string_view line, bool last_unterminated) {
  LineResult fast = parser().parse(line, last_unterminated);
  LineResult slow = parser().parse_regex_only(line, last_unterminated);
  check_same(fast, slow, line);
  if (!last_unterminated) check_plain_job(fast, line);
  check_result(fast, line);
  check_time_text(line);
  check_text_helpers(line);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  // Lines as the scanner hands them over: without their '\n'.
  size_t pos = 0;
  while (pos <= input.size()) {
    size_t nl = input.find('\n', pos);
    if (nl == std::string_view::npos) {
      if (pos < input.size()) check_line(input.substr(pos), true);
      break;
    }
    check_line(input.substr(pos, nl - pos), false);
    pos = nl + 1;
  }
  return 0;
}
