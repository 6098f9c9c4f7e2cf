#include "pp_timeline/line_parser.h"

#include <re2/re2.h>

#include <charconv>

#include "pp_timeline/log_line.h"

namespace ppt {
namespace {

// glog's prefix: severity, date (mmdd, or yyyymmdd from glog 0.7), time,
// thread id, file:line. Only the thread id is used (it tells runs apart).
constexpr const char* kPrefixPattern = R"(\s*[IWEF]\d{4}(?:\d{4})? \d\d:\d\d:\d\d\.\d+ +(\d+) )";

bool parse_int(std::string_view text, int64_t* out) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end;
}

void reject(LineResult& out, IssueKind kind, std::string detail) {
  out.kind = LineKind::kRejected;
  out.issue = kind;
  out.has_issue = true;
  out.detail = std::move(detail);
}

const char* time_problem(log_line::TimeParse p, IssueKind* kind) {
  switch (p) {
    case log_line::TimeParse::kNegative:
      *kind = IssueKind::kNegativeTime;
      return "is negative";
    case log_line::TimeParse::kTooLarge:
      *kind = IssueKind::kTimeOutOfRange;
      return "is too large to be milliseconds since 1970";
    case log_line::TimeParse::kEmpty:
      *kind = IssueKind::kBadTime;
      return "is empty";
    default:
      *kind = IssueKind::kBadTime;
      return "is not a decimal number of milliseconds";
  }
}

}  // namespace

LineParser::LineParser() {
  RE2::Options options;
  options.set_log_errors(false);
  // Lines may hold any bytes; the pattern is matched byte-wise.
  options.set_encoding(RE2::Options::EncodingLatin1);
  options.set_dot_nl(false);
  job_re_ = std::make_unique<RE2>(log_line::kJobPattern, options);
  marker_re_ = std::make_unique<RE2>(log_line::kSchedulePattern, options);
  prefix_re_ = std::make_unique<RE2>(kPrefixPattern, options);
}

LineParser::~LineParser() = default;

LineResult LineParser::parse(std::string_view line, bool last_unterminated) const {
  LineResult out;
  size_t pos = line.find(log_line::kJobMarker);
  if (pos != std::string_view::npos) {
    parse_job(line, pos, last_unterminated, out);
    return out;
  }
  pos = line.find(log_line::kScheduleMarker);
  if (pos != std::string_view::npos) parse_marker(line, pos, out);
  return out;
}

int64_t LineParser::parse_thread_id(std::string_view prefix) const {
  re2::StringPiece tid;
  if (!RE2::PartialMatch(prefix, *prefix_re_, &tid)) return -1;
  int64_t v = -1;
  if (!parse_int(std::string_view(tid.data(), tid.size()), &v)) return -1;
  return v;
}

void LineParser::parse_job(std::string_view line, size_t marker_pos, bool last_unterminated,
                           LineResult& out) const {
  std::string_view body = line.substr(marker_pos);
  re2::StringPiece id, type, mb, start, end;
  if (!RE2::FullMatch(body, *job_re_, &id, &type, &mb, &start, &end)) {
    if (last_unterminated) {
      reject(out, IssueKind::kTruncatedJobLine, "the file ends inside a job line");
    } else {
      reject(out, IssueKind::kMalformedJobLine, "not a complete job line");
    }
    return;
  }
  ParsedJob& job = out.job;
  if (!parse_int(std::string_view(id.data(), id.size()), &job.job_id) || job.job_id < INT32_MIN ||
      job.job_id > INT32_MAX) {
    reject(out, IssueKind::kBadJobId, "Job (" + std::string(id.data(), id.size()) + ") is not an integer");
    return;
  }
  job.type = std::string_view(type.data(), type.size());
  if (job.type.empty()) {
    reject(out, IssueKind::kMalformedJobLine, "the job type is empty");
    return;
  }
  if (mb.data() != nullptr) {
    int64_t v = -1;
    if (!parse_int(std::string_view(mb.data(), mb.size()), &v) || v < 0 || v > INT32_MAX) {
      reject(out, IssueKind::kBadMicroBatch,
             "micro_batch_id = " + std::string(mb.data(), mb.size()) + " is not a non-negative integer");
      return;
    }
    job.micro_batch = static_cast<int32_t>(v);
  }
  auto start_status = log_line::parse_ms_to_ns(std::string_view(start.data(), start.size()), &job.start_ns);
  auto end_status = log_line::parse_ms_to_ns(std::string_view(end.data(), end.size()), &job.end_ns);
  if (start_status != log_line::TimeParse::kOk || end_status != log_line::TimeParse::kOk) {
    bool start_bad = start_status != log_line::TimeParse::kOk;
    IssueKind kind{};
    const char* why = time_problem(start_bad ? start_status : end_status, &kind);
    const re2::StringPiece& text = start_bad ? start : end;
    reject(out, kind,
           std::string(start_bad ? "job_start_time = " : "job_end_time = ") +
               std::string(text.data(), text.size()) + " " + why);
    return;
  }
  if (job.start_ns == 0 && job.end_ns == 0) {
    reject(out, IssueKind::kZeroTimes, "both times are 0");
    return;
  }
  if (job.start_ns == 0 || job.end_ns == 0) {
    reject(out, IssueKind::kHalfZeroTime,
           job.start_ns == 0 ? "job_start_time is 0 but job_end_time is not"
                             : "job_end_time is 0 but job_start_time is not");
    return;
  }
  if (job.end_ns < job.start_ns) {
    reject(out, IssueKind::kEndBeforeStart,
           "job_end_time is " + std::to_string((job.start_ns - job.end_ns) / 1000) +
               " us before job_start_time");
    return;
  }
  job.thread_id = marker_pos > 0 ? parse_thread_id(line.substr(0, marker_pos)) : -1;
  out.kind = LineKind::kJob;
}

void LineParser::parse_marker(std::string_view line, size_t marker_pos, LineResult& out) const {
  std::string_view body = line.substr(marker_pos);
  re2::StringPiece a, b;
  int64_t start = 0, end = 0;
  if (!RE2::FullMatch(body, *marker_re_, &a, &b) ||
      !parse_int(std::string_view(a.data(), a.size()), &start) ||
      !parse_int(std::string_view(b.data(), b.size()), &end)) {
    out.has_issue = true;
    out.issue = IssueKind::kBadScheduleMarker;
    out.detail = "the schedule marker has no valid step numbers";
    return;
  }
  out.kind = LineKind::kScheduleMarker;
  out.marker.start_step = start;
  out.marker.end_step = end;
}

std::string sanitize_utf8(std::string_view s, bool* changed) {
  *changed = false;
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = 0;
    if (c < 0x80) n = 1;
    else if ((c >> 5) == 0x6 && c >= 0xc2) n = 2;
    else if ((c >> 4) == 0xe) n = 3;
    else if ((c >> 3) == 0x1e && c <= 0xf4) n = 4;
    bool ok = n > 0 && i + n <= s.size();
    for (size_t k = 1; ok && k < n; ++k) {
      ok = (static_cast<unsigned char>(s[i + k]) >> 6) == 0x2;
    }
    if (ok && n == 3) {
      unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
      ok = !(c == 0xe0 && c1 < 0xa0) && !(c == 0xed && c1 >= 0xa0);  // overlong, surrogates
    }
    if (ok && n == 4) {
      unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
      ok = !(c == 0xf0 && c1 < 0x90) && !(c == 0xf4 && c1 >= 0x90);
    }
    if (ok) {
      out.append(s.data() + i, n);
      i += n;
    } else {
      out += "\xEF\xBF\xBD";
      *changed = true;
      ++i;
    }
  }
  return out;
}

}  // namespace ppt
