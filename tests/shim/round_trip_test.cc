// The writing side and the reading side agree: what the shim writes parses
// back, with the shared header's pattern and with the converter's line
// parser, to the same type, micro-batch and times, to the nanosecond.
#include <glog/logging.h>
#include <re2/re2.h>

#include <catch2/catch.hpp>
#include <mutex>
#include <string>
#include <vector>

#include "input/line_parser.h"
#include "pp_timeline/log_line.h"
#include "pp_timeline/shim.h"
#include "pp_timeline/shim_glog.h"

using namespace ppt;

namespace {

struct Fields {
  std::string id, type, micro_batch, start, end;
};

// The shared pattern, applied as its comment says: from the marker to the end
// of the line.
bool match(std::string_view line, Fields* f) {
  static const RE2 re(log_line::kJobPattern);
  REQUIRE(re.ok());
  const size_t at = line.find(log_line::kJobMarker);
  if (at == std::string_view::npos) return false;
  const re2::StringPiece rest(line.data() + at, line.size() - at);
  return RE2::FullMatch(rest, re, &f->id, &f->type, &f->micro_batch, &f->start, &f->end);
}

int64_t ns(const std::string& text) {
  int64_t v = -1;
  REQUIRE(log_line::parse_ms_to_ns(text, &v) == log_line::TimeParse::kOk);
  return v;
}

struct Written {
  std::string line;
  std::string type;
  int64_t micro_batch;
  int64_t start_ns;
  int64_t end_ns;
};

}  // namespace

TEST_CASE("format_job_line parses back to its values to the nanosecond") {
  const int64_t t =
      GENERATE(int64_t{0}, int64_t{1}, int64_t{999'999}, int64_t{1'000'000}, int64_t{1'697'793'307'213'760'986},
               int64_t{1'697'793'307'213'000'001}, int64_t{9'999'999'999'999'999'999 / 1000});
  const int64_t mb = GENERATE(int64_t{-1}, int64_t{0}, int64_t{123});
  const std::string line = log_line::format_job_line(mb < 0 ? 5 : mb, "backward_w1", mb, t, t + 7);
  Fields f;
  REQUIRE(match(line, &f));
  CHECK(f.type == "backward_w1");
  CHECK(f.micro_batch == (mb < 0 ? "" : std::to_string(mb)));
  CHECK(ns(f.start) == t);
  CHECK(ns(f.end) == t + 7);
}

TEST_CASE("Lines the shim writes parse back to the job it timed") {
  std::vector<Written> written;
  shim::Options o;
  o.use_cuda = false;
  o.warning_sink = [](std::string_view) {};  // the types Paddle's helper cannot read
  o.sink = [&](std::string_view line) {
    if (line.find(log_line::kJobMarker) == 0) written.push_back({std::string(line), "", 0, 0, 0});
  };
  size_t next = 0;
  o.on_job = [&](const shim::JobTimes& j) {
    REQUIRE(next < written.size());
    Written& w = written[next++];
    w.type = std::string(j.type);
    w.micro_batch = j.micro_batch;
    w.start_ns = j.start_ns;
    w.end_ns = j.end_ns;
  };
  shim::Profiler p(o);
  const char* const types[] = {"forward", "backward_b", "forward(chunk0)", "backward1", "前向", "optimizer", "x y"};
  for (int step = 0; step < 5; ++step) {
    for (int j = 0; j < 100; ++j) {
      REQUIRE(p.begin(types[j % 7], j % 9 == 8 ? -1 : j).ok());
      REQUIRE(p.end().ok());
    }
    REQUIRE(p.flush(step).ok());
  }
  REQUIRE(written.size() == 500);
  REQUIRE(next == 500);

  LineParser parser;
  for (const Written& w : written) {
    INFO(w.line);
    Fields f;
    REQUIRE(match(w.line, &f));
    CHECK(f.type == w.type);
    CHECK(f.micro_batch == (w.micro_batch < 0 ? "" : std::to_string(w.micro_batch)));
    CHECK(ns(f.start) == w.start_ns);
    CHECK(ns(f.end) == w.end_ns);

    const LineResult r = parser.parse(w.line);
    REQUIRE(r.kind == LineKind::kJob);
    CHECK(r.job.type == w.type);
    CHECK(r.job.micro_batch == (w.micro_batch < 0 ? -1 : w.micro_batch));
    CHECK(r.job.start_ns == w.start_ns);
    CHECK(r.job.end_ns == w.end_ns);
  }
}

namespace {

// Keeps what glog writes, prefix included, as its text output has it.
class KeepLines : public google::LogSink {
 public:
  void send(google::LogSeverity severity, const char*, const char* base_filename, int line,
            const google::LogMessageTime& time, const char* message, size_t length) override {
    std::lock_guard<std::mutex> lock(mu_);
    lines_.push_back(ToString(severity, base_filename, line, time, message, length));
  }
  std::vector<std::string> lines() {
    std::lock_guard<std::mutex> lock(mu_);
    return lines_;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> lines_;
};

}  // namespace

TEST_CASE("Through glog_sink() the lines carry glog's prefix and still parse back") {
  KeepLines keep;
  google::AddLogSink(&keep);
  std::vector<shim::JobTimes> jobs;
  std::vector<std::string> types;
  shim::Options o;
  o.use_cuda = false;
  o.sink = shim::glog_sink();
  o.window_set = true;
  o.window_end = 1;
  o.on_job = [&](const shim::JobTimes& j) {
    jobs.push_back(j);
    types.emplace_back(j.type);
  };
  {
    shim::Profiler p(o);
    REQUIRE(p.begin("forward", 3).ok());
    REQUIRE(p.end().ok());
    REQUIRE(p.flush(0).ok());
  }
  google::RemoveLogSink(&keep);

  std::vector<std::string> profiler_lines;
  for (const std::string& l : keep.lines()) {
    if (l.find("Profiler") != std::string::npos) profiler_lines.push_back(l);
  }
  REQUIRE(profiler_lines.size() == 2);
  REQUIRE(jobs.size() == 1);
  // I<date> <time> <thread> <file>:<line>] <message>
  static const RE2 prefix(R"(I\d{4,8} \d\d:\d\d:\d\d\.\d{6} +\d+ [\w.]+:\d+\] )");
  LineParser parser;
  {
    INFO(profiler_lines[0]);
    CHECK(RE2::PartialMatch(profiler_lines[0], prefix));
    const LineResult marker = parser.parse(profiler_lines[0]);
    CHECK(marker.kind == LineKind::kScheduleMarker);
    CHECK(marker.marker.start_step == 0);
    CHECK(marker.marker.end_step == 1);
  }
  INFO(profiler_lines[1]);
  CHECK(RE2::PartialMatch(profiler_lines[1], prefix));
  Fields f;
  REQUIRE(match(profiler_lines[1], &f));
  CHECK(f.type == "forward");
  CHECK(ns(f.start) == jobs[0].start_ns);
  CHECK(ns(f.end) == jobs[0].end_ns);
  const LineResult r = parser.parse(profiler_lines[1]);
  REQUIRE(r.kind == LineKind::kJob);
  CHECK(r.job.type == "forward");
  CHECK(r.job.micro_batch == 3);
  CHECK(r.job.start_ns == jobs[0].start_ns);
  CHECK(r.job.end_ns == jobs[0].end_ns);
  CHECK(r.job.thread_id > 0);
}
