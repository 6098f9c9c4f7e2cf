// Turns one log line into a job, a schedule marker, or a reason it is neither.
//
// Thread safety: a LineParser is immutable after construction; one instance
// may be used from any number of threads at once (RE2 matching is const).
//
// Cost: callers find the literal ("Profiler ") first with a cheap scan and only
// hand candidate lines to this parser, so the regular expressions run on a few
// lines per step, never on the noise around them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "model/diagnostics.h"

namespace re2 {
class RE2;
}

namespace ppt {

struct ParsedJob {
  int64_t job_id = 0;
  std::string_view type;     // points into the line
  int32_t micro_batch = -1;  // -1: the line had no micro_batch_id
  int64_t start_ns = 0;      // since the Unix epoch
  int64_t end_ns = 0;
  int64_t thread_id = -1;  // from the glog prefix; -1 when there is none
};

struct ParsedMarker {
  int64_t start_step = 0;
  int64_t end_step = 0;
};

enum class LineKind { kOther, kJob, kScheduleMarker, kRejected };

struct LineResult {
  LineKind kind = LineKind::kOther;
  ParsedJob job;        // when kJob
  ParsedMarker marker;  // when kScheduleMarker
  IssueKind issue{};    // when kRejected (or a bad marker, with kind kOther)
  bool has_issue = false;
  std::string detail;  // the reason, when has_issue
  // When a job line is cut short and another line's text follows on the same
  // line (no newline between them), the offset where that text begins; the
  // result is about the text before it. npos otherwise.
  size_t rest = std::string_view::npos;
};

class LineParser {
 public:
  LineParser();
  ~LineParser();
  LineParser(const LineParser&) = delete;
  LineParser& operator=(const LineParser&) = delete;

  // `line` is one whole line without its '\n' (a trailing '\r' is allowed).
  // `last_unterminated` marks the file's final line when it has no newline.
  //
  // A job line cut short is reported as kTruncatedJobLine with its tail, not
  // as malformed or as a job whose end precedes its start:
  //  - the file's last line without a newline whose end time is not exactly
  //    what Paddle prints (std::to_string: digits, '.', six digits), or that
  //    stops before the end time: a cut inside the end time's digits leaves a
  //    valid but wrong number;
  //  - a job line that fails and holds the start of another line (a glog or
  //    Python logging prefix, another job line) where it stops making sense:
  //    the cut line and the next one, without a newline between them. With
  //    `split` the result says where that text begins (LineResult::rest);
  //  - a line whose end time lacks Paddle's six decimals and ends before its
  //    start.
  LineResult parse(std::string_view line, bool last_unterminated = false, bool split = true) const;

  // The usual job line in one pass, for a caller that already knows where
  // its marker is: true, with `job` filled, when the text from `marker_pos`
  // on (a kJobMarker there, none before) is a job line exactly as Paddle
  // prints it (log_line::format_job_line), which parse() takes as that one
  // job with no issue. Such a text holds no 'P' after its marker's own and
  // no CR but among the blanks that end it. False says only that the line
  // needs parse(), which decides it.
  bool parse_plain_job(std::string_view line, size_t marker_pos, ParsedJob* job) const;

  // The same, with the fast path off: RE2 alone decides. For the tests and
  // fuzzers that check both paths agree.
  LineResult parse_regex_only(std::string_view line, bool last_unterminated = false, bool split = true) const;

 private:
  LineResult parse_impl(std::string_view line, bool last_unterminated, bool fast, bool split) const;
  void parse_job(std::string_view line, size_t marker_pos, bool last_unterminated, bool fast, bool split,
                 LineResult& out) const;
  void parse_marker(std::string_view line, size_t marker_pos, LineResult& out) const;
  size_t find_other_line(std::string_view body) const;

  std::unique_ptr<re2::RE2> job_re_;
  std::unique_ptr<re2::RE2> marker_re_;
  std::unique_ptr<re2::RE2> line_start_re_;
};

}  // namespace ppt
