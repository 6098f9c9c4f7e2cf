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

// The registry: one row per kind of problem, X(kind, name, severity,
// rejects_job, explanation). It generates both IssueKind and the table
// issue_info() reads, so a kind cannot exist without its name and text.
//  - name: stable and machine readable (summaries, stats JSON);
//  - rejects_job: a line of this kind is a profiler line that is not drawn
//    (the summary's written + rejected = profiler lines seen counts on it);
//  - explanation: what it means and what the user can do.
// New kinds go at the end of their group; names and texts are part of the
// output (golden tests pin them).
// How to make Paddle print job lines, said once wherever a log has none: by
// the error of a command that found no job at all, else by the count of
// no_profiler_lines (format_diagnostics). docs/log-format.md, "Turning the
// profiler on", gives each switch with its source.
#define PPT_PROFILER_ON_HINT                                                                     \
  "turn Paddle's job schedule profiler on: PaddleNLP's --job_schedule_profiler_start N "         \
  "--job_schedule_profiler_end M, or paddle.profiler.utils.switch_job_schedule_profiler(model, " \
  "step, N, M) in the training loop (static auto-parallel, CUDA builds, GLOG_v >= 0; "           \
  "FLAGS_auto_parallel_profiler=1 on older Paddle); dynamic-graph runs: "                        \
  "strategy.hybrid_configs[\"pp_configs\"].profiling = True"

#define PPT_ISSUE_KINDS(X)                                                                                            \
  /* Profiler lines that do not become a drawn job (each counts as rejected). */                                      \
  X(kMalformedJobLine, "malformed_job_line", kError, true,                                                            \
    "a line contains 'Profiler Info: Job (' but not the rest of the job format; "                                     \
    "it may have been cut by another thread's output")                                                                \
  X(kTruncatedJobLine, "truncated_job_line", kError, true,                                                            \
    "a job line is cut short (its tail is shown): the file ends inside it (the run was killed, "                      \
    "or the file is still being written), or the next line's text follows the cut without a "                         \
    "newline (a process killed mid-line, then a rerun appended); the cut job is not drawn")                           \
  X(kBadJobId, "bad_job_id", kError, true, "the number in 'Job (N)' is not an integer")                               \
  X(kBadMicroBatch, "bad_micro_batch_id", kError, true, "micro_batch_id is not a non-negative integer")               \
  X(kBadTime, "bad_time", kError, true, "job_start_time / job_end_time is not a decimal number of milliseconds")      \
  X(kNegativeTime, "negative_time", kError, true, "a job time is negative")                                           \
  X(kTimeOutOfRange, "time_out_of_range", kError, true, "a job time is too large to be milliseconds since 1970")      \
  X(kZeroTimes, "zero_times", kInfo, true,                                                                            \
    "the job's timer never ran (both times 0.000000), as for communication-only jobs such as "                        \
    "recv_forward/send_backward; counted, not drawn")                                                                 \
  X(kHalfZeroTime, "half_zero_time", kError, true, "one of the job's times is 0 and the other is not: a stale timer") \
  X(kEndBeforeStart, "end_before_start", kError, true, "job_end_time is before job_start_time: a stale timer")        \
  X(kLineTooLong, "line_too_long", kError, true,                                                                      \
    "a profiler line is longer than the reader accepts; its text was skipped")                                        \
  X(kDuplicateJob, "duplicate_job", kWarning, true,                                                                   \
    "a job line repeats an earlier line of the same file exactly (type, ids and both times): "                        \
    "the log holds the output twice (a launcher that copies stdout into the log, a log "                              \
    "concatenated with itself); the copy is not drawn")                                                               \
  /* Other problems, which lose no job. */                                                                            \
  X(kUnreadableFile, "unreadable_file", kError, false,                                                                \
    "a log file could not be read; its rank is missing from the timeline")                                            \
  X(kFileChanged, "file_changed", kWarning, false,                                                                    \
    "a log file grew or shrank while it was read: the run is still going, or the file was "                           \
    "truncated or rotated; what was there when it was opened was read (up to where it was cut)")                      \
  X(kNoProfilerLines, "no_profiler_lines", kWarning, false, "a log file has no 'Profiler Info: Job' line")            \
  X(kBadScheduleMarker, "bad_schedule_marker", kWarning, false,                                                       \
    "'Schedule Profiler start at step' is not followed by two step numbers; steps are "                               \
    "numbered from 0")                                                                                                \
  X(kTranscoded, "transcoded", kInfo, false,                                                                          \
    "a log file is UTF-16 (a byte-order mark, or ASCII with a NUL after or before every byte: "                       \
    "PowerShell's '>' and Out-File write it); it was read as UTF-8. Each such file is named "                         \
    "above, with the iconv command that converts it")                                                                 \
  X(kInvalidUtf8Type, "invalid_utf8_type", kWarning, false,                                                           \
    "a job type contains bytes that are not UTF-8; they are shown as U+FFFD")                                         \
  X(kRerun, "rerun", kInfo, false,                                                                                    \
    "a log file holds more than one run appended (the log directory was reused without "                              \
    "--log_overwrite, or the trainer was restarted): a new process's start-up line, a new "                           \
    "thread id, times that go back, or a schedule marker with another window; each run is "                           \
    "shown separately")                                                                                               \
  X(kMissingStep, "missing_step", kWarning, false,                                                                    \
    "a rank has no job in a step that other ranks ran: its lines for that step are missing "                          \
    "from the log (cut output, a crash); the other ranks' steps are numbered as usual")                               \
  X(kOverlap, "overlapping_jobs", kInfo, false,                                                                       \
    "jobs of one rank overlap in time; the later ones are drawn on extra lanes under the rank")                       \
  /* Dependencies between ranks (dependencies.h, clock_align.h). */                                                   \
  X(kNoMicroBatch, "no_micro_batch_id", kInfo, false,                                                                 \
    "forward/backward jobs without micro_batch_id: which job feeds which cannot be known, so "                        \
    "they get no flow arrows and take no part in clock alignment")                                                    \
  X(kClockOffset, "clock_offset", kInfo, false,                                                                       \
    "a machine's wall clock disagreed with the others' (jobs started before the jobs feeding "                        \
    "them ended on another machine); its times were shifted by the offset shown, and each "                           \
    "job keeps its logged times in its args (--align-clocks off draws them as logged)")                               \
  X(kContradictedDependency, "contradicted_dependency", kWarning, false,                                              \
    "a job starts before the job that feeds it (same micro-batch, neighbouring stage) ends, "                         \
    "even after clock alignment; its arrow is drawn anyway. Causes: a wrong --pp-degree, "                            \
    "clocks that drift during the run, or a timer that took the start when the job was "                              \
    "queued rather than when it ran")                                                                                 \
  /* Dynamic-graph profile records (dygraph_profile.h); the first five reject a job. */                               \
  X(kBadProfileRecord, "bad_profile_record", kError, true,                                                            \
    "a line of a dynamic-graph profile file (profile_record_tmp_file_for_rank_<N>) is not one of "                    \
    "the pipeline profiler's JSON records ({\"name\": \"F3\", \"ph\": \"B\", \"tid\": ..., "                          \
    "\"ts\": ...}): not JSON, a field missing or of the wrong type, or a name other than "                            \
    "F<n>/B<n>[_VP<v>]; the job it belongs to is not drawn")                                                          \
  X(kTruncatedProfileRecord, "truncated_profile_record", kError, true,                                                \
    "the last line of a dynamic-graph profile file is cut short (no newline, not a whole record): "                   \
    "the trainer was killed while writing the step's records; that job is not drawn")                                 \
  X(kUnmatchedBegin, "unmatched_begin", kError, true,                                                                 \
    "a \"B\" record of a dynamic-graph profile has no \"E\" record of the same name after it "                        \
    "(the file was cut, or the step's records were written only in part); the job is not drawn")                      \
  X(kUnmatchedEnd, "unmatched_end", kError, true,                                                                     \
    "an \"E\" record of a dynamic-graph profile has no \"B\" record of the same name before it "                      \
    "(its begin was cut off or rejected); the job is not drawn")                                                      \
  X(kMixedFormats, "mixed_formats", kWarning, true,                                                                   \
    "a launch log (workerlog.<i>) holds static-graph job lines, but its folder holds dynamic-graph "                  \
    "profile records, which are read as the run's ranks: the launch log's job lines are counted, "                    \
    "not drawn (name the launch logs on the command line, or put them in a folder of their own, "                     \
    "to read them)")                                                                                                  \
  X(kStageMismatch, "stage_mismatch", kWarning, false,                                                                \
    "the pipeline stage a dynamic-graph profile file records (tid - 1) is not the rank's stage "                      \
    "in rank = replica * P + stage: the topology puts other parallelism (model, sharding) inside "                    \
    "the pipeline dimension; flow arrows and per-stage figures follow rank = replica * P + stage, "                   \
    "so give --pp-degree, or read one replica's files")                                                               \
  X(kTrailingData, "trailing_data", kWarning, false,                                                                  \
    "a .gz log holds bytes after its gzip data that are not gzip (lines appended to the file "                        \
    "after it was compressed): they are read as plain text, where gunzip would drop them")                            \
  /* Dynamic-graph `[Pipeline details]` lines (pipeline_details.h); the first three reject a job. */                  \
  X(kBadDetailsLine, "bad_details_line", kError, true,                                                                \
    "a line holds '[Pipeline details] ' but is not one of the dynamic-graph pipeline's details lines "                \
    "([YYYY-MM-DD HH:MM:SS,mmm] stamp, Before_/After_forward_step_chunk_<c>_step_<s> or the backward "                \
    "ones, or Start_/End_forward_backward_pipeline, then ': memory_allocated_size=<GiB>, "                            \
    "memory_reserved_size=<GiB>'): cut short or garbled; the job it belongs to is not drawn")                         \
  X(kUnmatchedDetailsBefore, "unmatched_details_before", kError, true,                                                \
    "a [Pipeline details] Before_ line has no After_ line of the same step after it (the process "                    \
    "died inside the step, or the log was cut); the job is not drawn, its memory sample is kept")                     \
  X(kUnmatchedDetailsAfter, "unmatched_details_after", kError, true,                                                  \
    "a [Pipeline details] After_ line has no Before_ line of the same step before it (its Before_ was "               \
    "cut off or garbled); the job is not drawn, its memory sample is kept")                                           \
  X(kDetailsMemoryOnly, "details_memory_only", kInfo, false,                                                          \
    "a log holds both job lines ('Profiler Info: Job') and [Pipeline details] lines: the job lines "                  \
    "are drawn, and the details lines give memory samples only, so that no job is counted twice")

enum class IssueKind : uint8_t {
#define PPT_ISSUE_KIND_ENUM(kind, name, severity, rejects_job, explanation) kind,
  PPT_ISSUE_KINDS(PPT_ISSUE_KIND_ENUM)
#undef PPT_ISSUE_KIND_ENUM
      kCount
};

inline constexpr size_t kIssueKindCount = static_cast<size_t>(IssueKind::kCount);

struct IssueInfo {
  std::string_view name;  // stable, machine readable
  Severity severity;
  bool rejects_job;              // a line of this kind is a profiler line that is not drawn
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

  void add(IssueKind kind, uint32_t file, uint64_t line, std::string detail, std::string_view text = {});
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

// Cuts `text` for display: at most `max_bytes` (at a character's start),
// tabs as blanks, the rest as terminal text (util/escape.h: controls, C1 and
// bytes that are not UTF-8 shown as escapes), so a message never carries a
// terminal escape, a NUL or invalid UTF-8.
std::string printable_excerpt(std::string_view text, size_t max_bytes = 160);

}  // namespace ppt
