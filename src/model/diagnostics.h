// Every way the input can be wrong, in one registry, and the collector that
// counts them.
//
// A problem with one line is data, not a failure: it is counted by kind, the
// first few of each kind are kept with `path:line: reason` and the offending
// text, and the conversion goes on. Whether the run as a whole fails is decided
// at the end (nothing usable, or --strict).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ppt {

enum class Severity { kInfo, kWarning, kError };

// One entry per kind of problem. Keep in sync with kIssueInfo in diagnostics.cc.
enum class IssueKind : uint8_t {
  // Profiler lines that do not become a drawn job (each counts as "rejected").
  kMalformedJobLine,   // the line has the job marker but not the rest of the format
  kTruncatedJobLine,   // malformed, and the last line of the file without a newline
  kBadJobId,           // Job (N) is not an integer
  kBadMicroBatch,      // micro_batch_id is not a non-negative integer
  kBadTime,            // a time is not a decimal number of milliseconds
  kNegativeTime,       // a time below zero
  kTimeOutOfRange,     // a time too large to be a wall-clock time
  kZeroTimes,          // both times 0.000000: the job's timer never ran (not drawn)
  kHalfZeroTime,       // one time is 0 and the other is not
  kEndBeforeStart,     // job_end_time < job_start_time
  kLineTooLong,        // a line longer than the reader's limit (text skipped)
  kDuplicateJob,       // the same job as an earlier line of the file (printed twice)
  // Other problems, which lose no job.
  kUnreadableFile,     // a file could not be opened or read (its jobs are missing)
  kFileChanged,        // a file grew or shrank while it was read
  kNoProfilerLines,    // a file has no profiler line at all
  kBadScheduleMarker,  // "Schedule Profiler start at step" not followed by numbers
  kInvalidUtf8Type,    // the type had bytes that are not UTF-8; shown with U+FFFD
  kRerun,              // a file holds more than one run; split
  kMissingStep,        // a rank has no job in a step the other ranks ran
  kOverlap,            // jobs of one rank overlap in time; put on extra lanes
  // Dependencies between ranks (dependencies.h, clock_align.h).
  kNoMicroBatch,       // forward/backward jobs without micro_batch_id: no arrows for them
  kClockOffset,        // a machine's times were shifted to agree with the dependencies
  kContradictedDependency,  // a job starts before the job that feeds it ends
  // Dynamic-graph profile records (dygraph_profile.h); the first four reject a job.
  kBadProfileRecord,        // a record line that is not the pipeline profiler's JSON record
  kTruncatedProfileRecord,  // the file's last line, cut short (no newline, not a whole record)
  kUnmatchedBegin,          // a "B" record whose "E" never came
  kUnmatchedEnd,            // an "E" record without its "B"
  kMixedFormats,            // static-graph job lines beside dygraph profile records: not drawn
  kStageMismatch,           // a record's stage (tid - 1) is not the rank's stage in rank = replica*P + stage
  kCount
};

inline constexpr size_t kIssueKindCount = static_cast<size_t>(IssueKind::kCount);

struct IssueInfo {
  std::string_view name;  // stable, machine readable
  Severity severity;
  bool rejects_job;       // a line of this kind is a profiler line that is not drawn
  std::string_view explanation;  // what it means and what the user can do
};

const IssueInfo& issue_info(IssueKind kind);

// One kept example of a problem.
struct Diagnostic {
  IssueKind kind;
  uint32_t file = 0;   // index into the file list
  uint64_t line = 0;   // 1-based; 0 when the problem is not about a line
  std::string detail;  // the reason, specific to this instance
  std::string text;    // the offending text, cut to a readable length
};

// Collects problems for one unit of work (one file, one pass). Not thread
// safe: each thread has its own and they are merged in file order, so the
// kept examples never depend on timing.
class Diagnostics {
 public:
  static constexpr size_t kKeepPerKind = 5;

  void add(IssueKind kind, uint32_t file, uint64_t line, std::string detail,
           std::string_view text = {});
  // Counts without keeping an example (for kinds that are expected in bulk).
  void count(IssueKind kind, uint64_t n = 1) { counts_[static_cast<size_t>(kind)] += n; }
  void merge(const Diagnostics& other);

  uint64_t count_of(IssueKind kind) const { return counts_[static_cast<size_t>(kind)]; }
  uint64_t rejected_jobs() const;
  const std::vector<Diagnostic>& examples() const { return examples_; }

 private:
  std::array<uint64_t, kIssueKindCount> counts_{};
  std::array<uint8_t, kIssueKindCount> kept_{};
  std::vector<Diagnostic> examples_;
};

// Cuts `text` for display: at most `max_bytes`, control bytes shown as
// escapes, so a message never carries a terminal escape or a NUL.
std::string printable_excerpt(std::string_view text, size_t max_bytes = 160);

}  // namespace ppt
