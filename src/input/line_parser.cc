#include "input/line_parser.h"

#include <re2/re2.h>

#include "pp_timeline/log_line.h"
#include "util/text.h"

namespace ppt {
namespace {

// A field between the line's punctuation: an integer, spaces around it allowed.
bool parse_int(std::string_view text, int64_t* out) {
  // The usual field, a few digits and nothing else, is summed here; any
  // other text (spaces, a sign, 19 digits or more) goes to from_chars.
  if (!text.empty() && text.size() <= 18) {
    int64_t v = 0;
    unsigned bad = 0;
    for (char ch : text) {
      const unsigned d = static_cast<unsigned char>(ch) - unsigned{'0'};
      bad |= d > 9 ? 1u : 0u;
      v = v * 10 + d;
    }
    if (bad == 0) {
      *out = v;
      return true;
    }
  }
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return parse_whole_number(text, out);
}

void reject(LineResult& out, IssueKind kind, std::string detail) {
  out.kind = LineKind::kRejected;
  out.issue = kind;
  out.has_issue = true;
  out.detail = std::move(detail);
}

const char* time_problem(log_line::TimeParse p, IssueKind* kind) {
  switch (p) {
    case log_line::TimeParse::kNegative: *kind = IssueKind::kNegativeTime; return "is negative";
    case log_line::TimeParse::kTooLarge:
      *kind = IssueKind::kTimeOutOfRange;
      return "is too large to be milliseconds since 1970";
    case log_line::TimeParse::kEmpty: *kind = IssueKind::kBadTime; return "is empty";
    default: *kind = IssueKind::kBadTime; return "is not a decimal number of milliseconds";
  }
}

// Hot path, hand-written on purpose: RE2 with five captures costs a few
// microseconds a line, which was more than half of a whole conversion. This
// accepts only the exact canonical layout (type up to the first comma,
// optional micro_batch_id, two times, trailing blanks) and captures the same
// texts the RE2 pattern would; anything else goes to RE2, which stays the
// definition of the format. tests/unit/input/line_parser_test.cc checks both paths
// agree.
struct Captures {
  std::string_view id, type, mb, start, end;
  bool has_mb = false;
};

// Inlined, so that each literal's length is a constant and the comparison a
// few loads rather than a call to memcmp (a tenth of a job line's parse).
[[gnu::always_inline]] inline bool eat(std::string_view& s, std::string_view lit) {
  if (s.size() < lit.size() || __builtin_memcmp(s.data(), lit.data(), lit.size()) != 0) return false;
  s.remove_prefix(lit.size());
  return true;
}

bool fast_capture(std::string_view body, Captures& c) {
  if (!eat(body, log_line::kJobMarker)) return false;
  size_t close = body.find(')');
  if (close == std::string_view::npos) return false;
  c.id = body.substr(0, close);
  body.remove_prefix(close);
  if (!eat(body, log_line::kTypeKey)) return false;
  size_t comma = body.find(',');
  if (comma == std::string_view::npos) return false;
  c.type = body.substr(0, comma);
  body.remove_prefix(comma);
  if (eat(body, log_line::kMicroBatchKey)) {
    comma = body.find(',');
    if (comma == std::string_view::npos) return false;
    c.mb = body.substr(0, comma);
    c.has_mb = true;
    body.remove_prefix(comma);
  }
  if (!eat(body, log_line::kStartKey)) return false;
  comma = body.find(',');
  if (comma == std::string_view::npos) return false;
  c.start = body.substr(0, comma);
  body.remove_prefix(comma);
  if (!eat(body, log_line::kEndKey)) return false;
  while (!body.empty() && (body.back() == ' ' || body.back() == '\t' || body.back() == '\r')) body.remove_suffix(1);
  for (char ch : body) {
    if (ch == ',' || ch == '\r' || ch == '\n') return false;
  }
  c.end = body;
  return true;
}

// glog's prefix (severity, mmdd or yyyymmdd from glog 0.7, time, thread id,
// file:line) `I1020 09:15:07.265326 22317 file:line] ` (or with the year):
// the thread id is the third field. Hand-split for the same reason as above;
// a prefix of any other shape yields -1, like a line without one.
// The start of another log line, as it appears glued to a job line cut short:
// a glog prefix (with or without the year), Python logging's default formats
// (asctime "2023-10-20 09:15:01,000" or "[2023-10-20 ...", and
// "INFO:root:"), the launcher's, or another profiler line (a whole one or a
// damaged one: "Profiler Info: Jo (7), ...").
constexpr const char* kLineStartPattern =
    R"(([IWEF]\d{4}(?:\d{4})? \d\d:\d\d:\d\d\.\d{6} |\[?\d{4}-\d\d-\d\d \d\d:\d\d:\d\d|)"
    R"((?:DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.]*:|LAUNCH (?:INFO|WARNING|ERROR) |Profiler Info: ))";

int64_t fast_thread_id(std::string_view prefix) {
  while (!prefix.empty() && (prefix.front() == ' ' || prefix.front() == '\t')) prefix.remove_prefix(1);
  if (prefix.size() < 6) return -1;
  char sev = prefix[0];
  if (sev != 'I' && sev != 'W' && sev != 'E' && sev != 'F') return -1;
  size_t i = 1;
  while (i < prefix.size() && prefix[i] >= '0' && prefix[i] <= '9') ++i;
  if (i != 5 && i != 9) return -1;
  if (i >= prefix.size() || prefix[i] != ' ') return -1;
  size_t time_end = prefix.find(' ', i + 1);
  if (time_end == std::string_view::npos || time_end - i - 1 < 9) return -1;
  std::string_view t = prefix.substr(i + 1, time_end - i - 1);
  if (t[2] != ':' || t[5] != ':' || t[8] != '.') return -1;
  size_t p = time_end;
  while (p < prefix.size() && prefix[p] == ' ') ++p;
  size_t d = p;
  int64_t v = 0;
  while (d < prefix.size() && prefix[d] >= '0' && prefix[d] <= '9' && d - p < 18) v = v * 10 + (prefix[d++] - '0');
  if (d == p || d >= prefix.size() || prefix[d] != ' ') return -1;
  return v;
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
  line_start_re_ = std::make_unique<RE2>(kLineStartPattern, options);
}

LineParser::~LineParser() = default;

LineResult LineParser::parse(std::string_view line, bool last_unterminated, bool split) const {
  return parse_impl(line, last_unterminated, true, split);
}

LineResult LineParser::parse_regex_only(std::string_view line, bool last_unterminated, bool split) const {
  return parse_impl(line, last_unterminated, false, split);
}

LineResult LineParser::parse_impl(std::string_view line, bool last_unterminated, bool fast, bool split) const {
  LineResult out;
  size_t pos = line.find(log_line::kJobMarker);
  if (pos != std::string_view::npos) {
    parse_job(line, pos, last_unterminated, fast, split, out);
    return out;
  }
  pos = line.find(log_line::kScheduleMarker);
  if (pos != std::string_view::npos) parse_marker(line, pos, out);
  return out;
}

namespace {

// Paddle prints both times with std::to_string(double): digits, '.', six digits.
bool is_paddle_time(std::string_view t) {
  if (t.size() < 8 || t[t.size() - 7] != '.') return false;
  for (size_t i = 0; i < t.size(); ++i) {
    if (i + 7 != t.size() && (t[i] < '0' || t[i] > '9')) return false;
  }
  return true;
}

// Where a cut job text stops, from its last field: "job_end_time = 16977933072".
std::string cut_tail(std::string_view body) {
  while (!body.empty() && (body.back() == ' ' || body.back() == '\t' || body.back() == '\r')) body.remove_suffix(1);
  size_t comma = body.rfind(", ");
  std::string_view tail = comma == std::string_view::npos ? body : body.substr(comma + 2);
  if (tail.size() > 60) tail = tail.substr(tail.size() - 60);
  return std::string(tail);
}

constexpr const char* kCutShort = "the job line is cut short after '";
constexpr const char* kFileEnds = "the file ends inside a job line, after '";

// Replaces `out` with a truncated line: `lead` (above), the cut text, `why`.
void truncated(LineResult& out, const char* lead, std::string_view body, const char* why) {
  out = LineResult{};
  reject(out, IssueKind::kTruncatedJobLine, lead + cut_tail(body) + "'" + why);
}

enum class Fields { kJob, kRejected, kMaybeCut };

// A type that holds a field of the format or the profiler's literal is two
// lines run together, never one job: Paddle's job types are plan names
// ("forward", "backward(chunk0)", "optimizer").
bool type_holds_another_line(std::string_view type) {
  return type.find(log_line::kStartKey) != std::string_view::npos ||
         type.find(log_line::kEndKey) != std::string_view::npos ||
         type.find("Profiler Info: ") != std::string_view::npos;
}

// A field rejected on its own may be the start of another line glued into
// it (a line cut inside "Job (", then a whole job line): then the line is
// handled as a cut one, and the whole line after it is not lost.
Fields rejected_field(std::string_view body) {
  return body.find(log_line::kJobMarker, 1) != std::string_view::npos ? Fields::kMaybeCut : Fields::kRejected;
}

// parse_fields' steps, small enough to be inlined there (it runs per job
// line). Each check returns kJob when its fields are good, else how the line
// was rejected (in `out`).

// The slow path: the job line as RE2 defines it, for a body the fast path
// does not take. False when the body is no complete job line. Kept out of
// line, as a rare path: inlined, the setting up of its matcher's arguments
// was hoisted to parse_fields' start, paid on every line.
[[gnu::noinline]] bool regex_capture(std::string_view body, const RE2& job_re, Captures& c) {
  re2::StringPiece id, type, mb, start, end;
  // A type may hold commas, so a job line cut short and followed by a whole
  // one can match as one job with an absurd type: a second marker says so.
  // Likewise a whole job line followed by a damaged one ("Profiler Info:
  // Jo (7), ..."): the type then holds the first line's own fields
  // (type_holds_another_line, below).
  if (!RE2::FullMatch(body, job_re, &id, &type, &mb, &start, &end) ||
      body.find(log_line::kJobMarker, 1) != std::string_view::npos) {
    return false;
  }
  c.id = std::string_view(id.data(), id.size());
  c.type = std::string_view(type.data(), type.size());
  c.has_mb = mb.data() != nullptr;
  c.mb = std::string_view(mb.data(), mb.size());
  c.start = std::string_view(start.data(), start.size());
  c.end = std::string_view(end.data(), end.size());
  return true;
}

// The job id, type and micro-batch (when the line has one). The fields come
// by value, as the captures are read once into them: taken by reference, the
// captures would be kept in memory and zeroed on every line.
inline Fields check_names(std::string_view id, std::string_view type, bool has_mb, std::string_view mb,
                          std::string_view body, LineResult& out) {
  ParsedJob& job = out.job;
  // Both paths: the fast one stops a type at its first comma, yet may meet
  // "Profiler Info: " in it.
  if (type_holds_another_line(type)) {
    reject(out, IssueKind::kMalformedJobLine, "not a complete job line");
    return Fields::kMaybeCut;
  }
  if (!parse_int(id, &job.job_id) || job.job_id < INT32_MIN || job.job_id > INT32_MAX) {
    reject(out, IssueKind::kBadJobId, "Job (" + std::string(id) + ") is not an integer");
    return rejected_field(body);
  }
  job.type = type;
  if (job.type.empty()) {
    reject(out, IssueKind::kMalformedJobLine, "the job type is empty");
    return Fields::kRejected;
  }
  if (has_mb) {
    int64_t v = -1;
    if (!parse_int(mb, &v) || v < 0 || v > INT32_MAX) {
      reject(out, IssueKind::kBadMicroBatch, "micro_batch_id = " + std::string(mb) + " is not a non-negative integer");
      return rejected_field(body);
    }
    job.micro_batch = static_cast<int32_t>(v);
  }
  return Fields::kJob;
}

// The start and end times: numbers, not zero, the end not before the start.
inline Fields check_times(std::string_view start, std::string_view end, std::string_view body, LineResult& out) {
  ParsedJob& job = out.job;
  auto start_status = log_line::parse_ms_to_ns(start, &job.start_ns);
  auto end_status = log_line::parse_ms_to_ns(end, &job.end_ns);
  if (start_status != log_line::TimeParse::kOk || end_status != log_line::TimeParse::kOk) {
    bool start_bad = start_status != log_line::TimeParse::kOk;
    log_line::TimeParse status = start_bad ? start_status : end_status;
    IssueKind kind{};
    const char* why = time_problem(status, &kind);
    const std::string_view& text = start_bad ? start : end;
    reject(out, kind, std::string(start_bad ? "job_start_time = " : "job_end_time = ") + std::string(text) + " " + why);
    bool cut_like = status == log_line::TimeParse::kNotANumber || status == log_line::TimeParse::kEmpty;
    return cut_like ? Fields::kMaybeCut : Fields::kRejected;
  }
  if (job.start_ns == 0 && job.end_ns == 0) {
    reject(out, IssueKind::kZeroTimes, "both times are 0");
    return Fields::kRejected;
  }
  if (job.start_ns == 0 || job.end_ns == 0) {
    reject(out, IssueKind::kHalfZeroTime,
           job.start_ns == 0 ? "job_start_time is 0 but job_end_time is not"
                             : "job_end_time is 0 but job_start_time is not");
    return Fields::kRejected;
  }
  if (job.end_ns < job.start_ns) {
    if (!is_paddle_time(end)) {
      // "job_end_time = 16977933072": digits lost from the end time, which
      // Paddle always prints with six decimals.
      truncated(out, kCutShort, body,
                ": the end time lacks the six decimals Paddle prints, and would be before the start");
      return Fields::kRejected;
    }
    reject(out, IssueKind::kEndBeforeStart,
           "job_end_time is " + std::to_string((job.start_ns - job.end_ns) / 1000) + " us before job_start_time");
    return Fields::kRejected;
  }
  return Fields::kJob;
}

// Parses the text from the job marker on. kMaybeCut: rejected in a way a cut
// explains (the format stops holding, a time is not a number), so the caller
// may look for the next line's start.
Fields parse_fields(std::string_view line, size_t marker_pos, std::string_view body, const RE2& job_re, bool fast,
                    LineResult& out, std::string_view* end_text) {
  Captures c;
  if (!fast || !fast_capture(body, c)) {
    Captures slow;  // apart from `c`, whose address then stays in this function
    if (!regex_capture(body, job_re, slow)) {
      reject(out, IssueKind::kMalformedJobLine, "not a complete job line");
      return Fields::kMaybeCut;
    }
    c = slow;
  }
  const std::string_view id = c.id, type = c.type, mb = c.mb, start = c.start, end = c.end;
  *end_text = end;
  if (Fields f = check_names(id, type, c.has_mb, mb, body, out); f != Fields::kJob) return f;
  if (Fields f = check_times(start, end, body, out); f != Fields::kJob) return f;
  out.job.thread_id = marker_pos > 0 ? fast_thread_id(line.substr(0, marker_pos)) : -1;
  out.kind = LineKind::kJob;
  return Fields::kJob;
}

}  // namespace

namespace {

// 1-9 digits up to `stop`, `s` moved to it: false for anything else (a
// longer number, a sign, a space), which parse_int() then decides.
[[gnu::always_inline]] inline bool small_number(std::string_view& s, char stop, int64_t* out) {
  int64_t v = 0;
  size_t n = 0;
  for (; n < s.size() && n < 10; ++n) {
    const unsigned d = static_cast<unsigned char>(s[n]) - unsigned{'0'};
    if (d > 9) break;
    v = v * 10 + d;
  }
  if (n == 0 || n > 9 || n == s.size() || s[n] != stop) return false;
  s.remove_prefix(n);
  *out = v;
  return true;
}

// A time as std::to_string prints a wall-clock one (log_line::detail::
// wall_clock_ns, parse_ms_to_ns()'s own reading of it), `s` moved past it.
[[gnu::always_inline]] inline bool wall_clock_time(std::string_view& s, int64_t* ns) {
  constexpr size_t kSize = 20;
  if (s.size() < kSize || !log_line::detail::wall_clock_ns(s.data(), ns)) return false;
  s.remove_prefix(kSize);
  return true;
}

// The line exactly as Paddle prints it (log_line::format_job_line: id,
// type, micro-batch or none, two wall-clock times, blanks at most after),
// read in one pass with no search. False for any other layout.
bool paddle_job(std::string_view body, ParsedJob* job) {
  body.remove_prefix(log_line::kJobMarker.size());
  if (!small_number(body, ')', &job->job_id) || !eat(body, log_line::kTypeKey)) return false;
  size_t n = 0;
  unsigned odd = 0;  // a 'P' may begin "Profiler Info: " (type_holds_another_line) or another literal
  for (; n < body.size() && body[n] != ','; ++n) odd |= body[n] == 'P' ? 1u : 0u;
  if (n == 0 || n == body.size() || odd != 0) return false;
  job->type = body.substr(0, n);
  body.remove_prefix(n);
  job->micro_batch = -1;
  if (eat(body, log_line::kMicroBatchKey)) {
    int64_t mb = 0;
    if (!small_number(body, ',', &mb)) return false;
    job->micro_batch = static_cast<int32_t>(mb);
  }
  if (!eat(body, log_line::kStartKey) || !wall_clock_time(body, &job->start_ns)) return false;
  if (!eat(body, log_line::kEndKey) || !wall_clock_time(body, &job->end_ns)) return false;
  for (char ch : body) {
    if (ch != ' ' && ch != '\t' && ch != '\r') return false;
  }
  return job->end_ns >= job->start_ns;
}

}  // namespace

bool LineParser::parse_plain_job(std::string_view line, size_t marker_pos, ParsedJob* job) const {
  if (!paddle_job(line.substr(marker_pos), job)) return false;
  job->thread_id = marker_pos > 0 ? fast_thread_id(line.substr(0, marker_pos)) : -1;
  return true;
}

// Where another line's text begins inside a job line's body (after its own
// marker), or npos.
size_t LineParser::find_other_line(std::string_view body) const {
  if (body.size() <= 1) return std::string_view::npos;
  std::string_view rest = body.substr(1);
  re2::StringPiece found;
  if (!RE2::PartialMatch(rest, *line_start_re_, &found)) return std::string_view::npos;
  return static_cast<size_t>(found.data() - body.data());
}

void LineParser::parse_job(std::string_view line, size_t marker_pos, bool last_unterminated, bool fast, bool split,
                           LineResult& out) const {
  std::string_view body = line.substr(marker_pos);
  std::string_view end_text;
  Fields f = parse_fields(line, marker_pos, body, *job_re_, fast, out, &end_text);
  if (f == Fields::kJob) {
    // The file's last line without a newline: the writer may have been cut
    // off inside the end time, which still reads as a number.
    if (last_unterminated && !is_paddle_time(end_text)) {
      truncated(out, kFileEnds, body, ": the end time lacks the six decimals Paddle prints");
    }
    return;
  }
  if (f != Fields::kMaybeCut) {
    if (last_unterminated && out.issue == IssueKind::kTruncatedJobLine) {
      truncated(out, kFileEnds, body, ": the end time lacks the six decimals Paddle prints");
    }
    return;
  }
  if (split) {
    size_t other = find_other_line(body);
    if (other != std::string_view::npos) {
      // The text before the other line, as a line cut there: a whole job
      // whose newline alone is missing, or a cut one.
      std::string_view head = body.substr(0, other);
      LineResult h;
      std::string_view head_end;
      if (parse_fields(line, marker_pos, head, *job_re_, fast, h, &head_end) == Fields::kJob &&
          is_paddle_time(head_end)) {
        out = h;
      } else if (h.kind == LineKind::kRejected && h.issue != IssueKind::kMalformedJobLine &&
                 h.issue != IssueKind::kBadTime && h.issue != IssueKind::kTruncatedJobLine) {
        out = h;  // complete up to the cut, and wrong for its own reason
      } else {
        truncated(out, kCutShort, head, ", and another line's text follows without a newline");
      }
      out.rest = marker_pos + other;
      return;
    }
  }
  if (last_unterminated) truncated(out, kFileEnds, body, "");
}

void LineParser::parse_marker(std::string_view line, size_t marker_pos, LineResult& out) const {
  std::string_view body = line.substr(marker_pos);
  re2::StringPiece a, b;
  int64_t start = 0, end = 0;
  if (!RE2::FullMatch(body, *marker_re_, &a, &b) || !parse_int(std::string_view(a.data(), a.size()), &start) ||
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

}  // namespace ppt
