#include "output/text/summary.h"

#include <fmt/format.h>

#include "util/escape.h"

namespace ppt {

std::string format_resolution(int64_t resolution_ns) {
  if (resolution_ns % 1'000'000 == 0) return fmt::format("{} ms", resolution_ns / 1'000'000);
  if (resolution_ns % 1'000 == 0) return fmt::format("{} us", resolution_ns / 1'000);
  return fmt::format("{} ns", resolution_ns);
}

std::string diagnostic_text(const DiagnosticLine& line) { return line.example ? line.text : "  " + line.text; }

std::vector<DiagnosticLine> format_diagnostics(const Timeline& tl) {
  std::vector<DiagnosticLine> lines;
  const Diagnostics& d = tl.diagnostics;
  for (const Diagnostic& e : d.examples()) {
    const IssueInfo& info = issue_info(e.kind);
    if (e.kind == IssueKind::kZeroTimes) continue;  // expected in bulk; counted below
    // The path as terminal text (util/escape.h), like the detail and the
    // excerpt: the one raw newline of an example is the one before its excerpt.
    std::string where = e.file < tl.files.size() ? terminal_text(tl.files[e.file].path) : std::string("?");
    if (e.line > 0) where += ":" + std::to_string(e.line);
    std::string sev = info.severity == Severity::kError     ? "error"
                      : info.severity == Severity::kWarning ? "warning"
                                                            : "note";
    std::string line = fmt::format("{}: {}: {}", where, sev, e.detail);
    if (!e.text.empty()) line += fmt::format("\n    {}", e.text);
    lines.push_back({e.kind, info.severity, true, std::move(line)});
  }
  for (size_t k = 0; k < kIssueKindCount; ++k) {
    IssueKind kind = static_cast<IssueKind>(k);
    uint64_t n = d.count_of(kind);
    if (n == 0) continue;
    const IssueInfo& info = issue_info(kind);
    std::string text = fmt::format("{} x {}: {}", with_commas(n), info.name, info.explanation);
    // How to turn the profiler on is said once: here when other logs hold
    // jobs; when none does, by the error every command then stops with.
    if (kind == IssueKind::kNoProfilerLines && tl.job_count() > 0) text += ": " PPT_PROFILER_ON_HINT;
    lines.push_back({kind, info.severity, false, std::move(text)});
  }
  return lines;
}

std::string format_summary(const Timeline& tl) {
  const InputCounts& c = tl.counts;
  uint64_t rejected = tl.diagnostics.rejected_jobs();
  std::string s = fmt::format("pp-timeline: {}, {}, {}: {} written, {} rejected", counted(c.files, "file"),
                              counted(c.lines, "line"), counted(c.profiler_lines, "profiler line"),
                              counted(tl.job_count(), "job"), with_commas(rejected));
  if (rejected > 0) {
    std::string parts;
    for (size_t k = 0; k < kIssueKindCount; ++k) {
      IssueKind kind = static_cast<IssueKind>(k);
      if (!issue_info(kind).rejects_job || tl.diagnostics.count_of(kind) == 0) continue;
      if (!parts.empty()) parts += ", ";
      parts += fmt::format("{} {}", with_commas(tl.diagnostics.count_of(kind)), issue_info(kind).name);
    }
    s += " (" + parts + ")";
  }
  // A selection (--run, --steps, --skip-warmup) keeps the account whole.
  if (tl.unselected_jobs > 0 || !tl.selection.empty()) {
    s += fmt::format(", {} left out by the selection: {}", with_commas(tl.unselected_jobs), tl.selection);
  }
  // Dynamic-graph profile records: a job is a B and an E record, so the
  // profiler lines there are the jobs the records describe.
  if (c.profile_records > 0) {
    s += fmt::format("; {} (a B and an E per job)", counted(c.profile_records, "dynamic-graph profile record"));
  }
  // `[Pipeline details]` lines: jobs (pairs) when the logs have no job line,
  // and memory samples.
  if (c.details_lines > 0) {
    s += fmt::format("; {} ({})", counted(c.details_lines, "[Pipeline details] line"),
                     counted(c.memory_samples, "memory sample"));
  }
  size_t steps = 0;
  for (const Run& r : tl.runs) steps += r.steps.size();
  s += fmt::format("; {}, {}", counted(tl.rank_files(), "rank"), counted(steps, "step"));
  if (tl.runs.size() > 1) s += fmt::format(", {}", counted(tl.runs.size(), "run"));
  uint64_t overlapping = tl.diagnostics.count_of(IssueKind::kOverlap);
  if (overlapping > 0) s += fmt::format(", {} on extra lanes", counted(overlapping, "overlapping job"));
  if (uint64_t unread = unreadable_files(tl); unread > 0) {
    size_t ranks = tl.rank_files();
    s += fmt::format("; {} of {} read", ranks > unread ? ranks - unread : 0, counted(ranks, "rank"));
  }
  if (!tl.partial.empty()) s += "; " + tl.partial;
  if (tl.resolution_ns > 1) s += fmt::format("; times to {}", format_resolution(tl.resolution_ns));
  return s;
}

uint64_t unreadable_files(const Timeline& tl) { return tl.diagnostics.count_of(IssueKind::kUnreadableFile); }

bool has_input_errors(const Timeline& tl) {
  for (size_t k = 0; k < kIssueKindCount; ++k) {
    IssueKind kind = static_cast<IssueKind>(k);
    if (issue_info(kind).severity == Severity::kError && tl.diagnostics.count_of(kind) > 0) return true;
  }
  return false;
}

}  // namespace ppt
