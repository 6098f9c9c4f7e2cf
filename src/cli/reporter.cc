#include "reporter.h"

#include <fmt/format.h>

#include <cstdio>

#include "app/driver.h"
#include "commands.h"
#include "model/diagnostics.h"
#include "util/escape.h"

namespace ppt::cli {

namespace {

// Every line on stderr is terminal text (util/escape.h): a message quotes
// folder and file names, types and log text, any of which may hold escape
// sequences, bytes that are not UTF-8 or a newline that would forge a message
// line of its own. Our own text has none of these, so it is unchanged.
void put(std::string_view s) {
  std::string line = terminal_text(s);
  line.push_back('\n');
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace

Reporter::Reporter(std::string_view command, bool quiet)
    : prefix_(command.empty() ? std::string("pp-timeline") : fmt::format("pp-timeline {}", command)), quiet_(quiet) {}

void Reporter::print(std::string_view severity, std::string_view text) const {
  put(fmt::format("{}: {}: {}", prefix_, severity, text));
}

void Reporter::error(std::string_view text) const { print("error", text); }
void Reporter::warning(std::string_view text) const { print("warning", text); }

void Reporter::note(std::string_view text) const {
  if (!quiet_) print("note", text);
}

void Reporter::info(std::string_view text) const {
  if (!quiet_) put(fmt::format("{}: {}", prefix_, text));
}

void Reporter::line(std::string_view text) const { put(text); }

bool Reporter::shows(const DiagnosticLine& line) const {
  return !quiet_ || (!line.example && line.severity != Severity::kInfo);
}

void Reporter::diagnostics(const std::vector<DiagnosticLine>& lines) const {
  for (const DiagnosticLine& l : lines) {
    if (!shows(l)) continue;
    // An example is two lines, the message and its excerpt; what the input
    // put into either is already escaped (summary.cc), so each newline here
    // is one of ours.
    const std::string line = diagnostic_text(l);
    std::string_view text = line;
    for (size_t start = 0;;) {
      size_t end = text.find('\n', start);
      put(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
      if (end == std::string_view::npos) break;
      start = end + 1;
    }
  }
}

void Reporter::timings(const std::vector<PhaseTime>& phases) const {
  std::string line = "pp-timeline: timings:";
  double total = 0;
  for (const PhaseTime& p : phases) {
    line += fmt::format(" {} {:.3f} s,", p.name, p.seconds);
    total += p.seconds;
  }
  put(line + fmt::format(" total {:.3f} s", total));
}

int Reporter::load(const DriverResult& r, bool draws, std::string_view label) const {
  switch (r.failure) {
    case DriverFailure::kUsage: error(fmt::format("{}{}", label, r.error)); return kExitUsage;
    case DriverFailure::kOutput:
      error(fmt::format("{}{}; nothing was read or written", label, r.error));
      return kExitInput;
    case DriverFailure::kLayout:
      error(fmt::format("{}{}", label, r.error));
      return r.usage_error ? kExitUsage : kExitInput;
    default: break;
  }
  if (r.layout) {
    for (const std::string& n : r.layout->notes) note(fmt::format("{}{}", label, n));
  }
  if (r.timeline) diagnostics(format_diagnostics(*r.timeline));
  if (r.failure == DriverFailure::kNoJobs && unreadable_files(*r.timeline) >= r.timeline->rank_files()) {
    // Nothing could be read: the profiler is not the question.
    line(format_summary(*r.timeline));
    error(fmt::format("{}{}: {} could not be read (the errors above say why)", label,
                      draws ? "no job to draw" : "no job found", counted(r.timeline->rank_files(), "log file")));
    return kExitInput;
  }
  if (r.failure == DriverFailure::kNoJobs) {
    line(format_summary(*r.timeline));
    error(fmt::format("{}{}: no 'Profiler Info: Job' line in the logs; " PPT_PROFILER_ON_HINT, label,
                      draws ? "no job to draw" : "no job found"));
    return kExitInput;
  }
  if (r.failure == DriverFailure::kStrict) {
    line(format_summary(*r.timeline));
    error(fmt::format("{}input problems found and --strict given; nothing written", label));
    return kExitInput;
  }
  return kExitOk;
}

int Reporter::unread_status(const Timeline& timeline) const {
  uint64_t unread = unreadable_files(timeline);
  if (unread == 0) return kExitOk;
  error(fmt::format("{} could not be read; what the others hold was written", counted(unread, "log file")));
  return kExitInput;
}

std::string format_size(size_t n) {
  if (n >= (size_t{1} << 20)) return fmt::format("{:.1f} MB", n / 1048576.0);
  if (n >= 1024) return fmt::format("{:.1f} KB", n / 1024.0);
  return fmt::format("{} B", n);
}

void report_internal_error(std::string_view what) {
  put(fmt::format("pp-timeline: internal error: {} (please report it, with the command line)", what));
}

}  // namespace ppt::cli
