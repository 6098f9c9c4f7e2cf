#include "model/diagnostics.h"

#include <fmt/format.h>

namespace ppt {
namespace {

constexpr std::array<IssueInfo, kIssueKindCount> kIssueInfo = {{
    {"malformed_job_line", Severity::kError, true,
     "a line contains 'Profiler Info: Job (' but not the rest of the job format; "
     "it may have been cut by another thread's output"},
    {"truncated_job_line", Severity::kError, true,
     "a job line is cut short (its tail is shown): the file ends inside it (the run was killed, "
     "or the file is still being written), or the next line's text follows the cut without a "
     "newline (a process killed mid-line, then a rerun appended); the cut job is not drawn"},
    {"bad_job_id", Severity::kError, true, "the number in 'Job (N)' is not an integer"},
    {"bad_micro_batch_id", Severity::kError, true,
     "micro_batch_id is not a non-negative integer"},
    {"bad_time", Severity::kError, true,
     "job_start_time / job_end_time is not a decimal number of milliseconds"},
    {"negative_time", Severity::kError, true, "a job time is negative"},
    {"time_out_of_range", Severity::kError, true,
     "a job time is too large to be milliseconds since 1970"},
    {"zero_times", Severity::kInfo, true,
     "the job's timer never ran (both times 0.000000), as for communication-only jobs such as "
     "recv_forward/send_backward; counted, not drawn"},
    {"half_zero_time", Severity::kError, true,
     "one of the job's times is 0 and the other is not: a stale timer"},
    {"end_before_start", Severity::kError, true,
     "job_end_time is before job_start_time: a stale timer"},
    {"line_too_long", Severity::kError, true,
     "a profiler line is longer than the reader accepts; its text was skipped"},
    {"duplicate_job", Severity::kWarning, true,
     "a job line repeats an earlier line of the same file exactly (type, ids and both times): "
     "the log holds the output twice (a launcher that copies stdout into the log, a log "
     "concatenated with itself); the copy is not drawn"},
    {"unreadable_file", Severity::kError, false,
     "a log file could not be read; its rank is missing from the timeline"},
    {"file_changed", Severity::kWarning, false,
     "a log file grew or shrank while it was read: the run is still going, or the file was "
     "truncated or rotated; what was there when it was opened was read (up to where it was cut)"},
    {"no_profiler_lines", Severity::kWarning, false,
     "a log file has no 'Profiler Info: Job' line: turn the job schedule profiler on "
     "(FLAGS_auto_parallel_profiler=1, or the training front-end's pipeline profiler option) "
     "and keep GLOG_v >= 0"},
    {"bad_schedule_marker", Severity::kWarning, false,
     "'Schedule Profiler start at step' is not followed by two step numbers; steps are "
     "numbered from 0"},
    {"invalid_utf8_type", Severity::kWarning, false,
     "a job type contains bytes that are not UTF-8; they are shown as U+FFFD"},
    {"rerun", Severity::kInfo, false,
     "a log file holds more than one run appended (the log directory was reused without "
     "--log_overwrite, or the trainer was restarted): a new process's start-up line, a new "
     "thread id, times that go back, or a schedule marker with another window; each run is "
     "shown separately"},
    {"missing_step", Severity::kWarning, false,
     "a rank has no job in a step that other ranks ran: its lines for that step are missing "
     "from the log (cut output, a crash); the other ranks' steps are numbered as usual"},
    {"overlapping_jobs", Severity::kInfo, false,
     "jobs of one rank overlap in time; the later ones are drawn on extra lanes under the rank"},
    {"no_micro_batch_id", Severity::kInfo, false,
     "forward/backward jobs without micro_batch_id: which job feeds which cannot be known, so "
     "they get no flow arrows and take no part in clock alignment"},
    {"clock_offset", Severity::kInfo, false,
     "a machine's wall clock disagreed with the others' (jobs started before the jobs feeding "
     "them ended on another machine); its times were shifted by the offset shown, and each "
     "job keeps its logged times in its args (--align-clocks off draws them as logged)"},
    {"contradicted_dependency", Severity::kWarning, false,
     "a job starts before the job that feeds it (same micro-batch, neighbouring stage) ends, "
     "even after clock alignment; its arrow is drawn anyway. Causes: a wrong --pp-degree, "
     "clocks that drift during the run, or a timer that took the start when the job was "
     "queued rather than when it ran"},
    {"bad_profile_record", Severity::kError, true,
     "a line of a dynamic-graph profile file (profile_record_tmp_file_for_rank_<N>) is not one of "
     "the pipeline profiler's JSON records ({\"name\": \"F3\", \"ph\": \"B\", \"tid\": ..., "
     "\"ts\": ...}): not JSON, a field missing or of the wrong type, or a name other than "
     "F<n>/B<n>[_VP<v>]; the job it belongs to is not drawn"},
    {"truncated_profile_record", Severity::kError, true,
     "the last line of a dynamic-graph profile file is cut short (no newline, not a whole record): "
     "the trainer was killed while writing the step's records; that job is not drawn"},
    {"unmatched_begin", Severity::kError, true,
     "a \"B\" record of a dynamic-graph profile has no \"E\" record of the same name after it "
     "(the file was cut, or the step's records were written only in part); the job is not drawn"},
    {"unmatched_end", Severity::kError, true,
     "an \"E\" record of a dynamic-graph profile has no \"B\" record of the same name before it "
     "(its begin was cut off or rejected); the job is not drawn"},
    {"mixed_formats", Severity::kWarning, true,
     "a launch log (workerlog.<i>) holds static-graph job lines, but its folder holds dynamic-graph "
     "profile records, which are read as the run's ranks: the launch log's job lines are counted, "
     "not drawn (name the launch logs on the command line, or put them in a folder of their own, "
     "to read them)"},
    {"stage_mismatch", Severity::kWarning, false,
     "the pipeline stage a dynamic-graph profile file records (tid - 1) is not the rank's stage "
     "in rank = replica * P + stage: the topology puts other parallelism (model, sharding) inside "
     "the pipeline dimension; flow arrows and per-stage figures follow rank = replica * P + stage, "
     "so give --pp-degree, or read one replica's files"},
}};

}  // namespace

const IssueInfo& issue_info(IssueKind kind) { return kIssueInfo[static_cast<size_t>(kind)]; }

void Diagnostics::add(IssueKind kind, uint32_t file, uint64_t line, std::string detail,
                      std::string_view text) {
  size_t k = static_cast<size_t>(kind);
  ++counts_[k];
  if (kept_[k] < kKeepPerKind) {
    ++kept_[k];
    // Details quote the input (a field's text): escaped like the excerpt, so
    // that a NUL cannot cut a message short nor a control byte reach a terminal.
    examples_.push_back({kind, file, line, printable_excerpt(detail, 1024), printable_excerpt(text)});
  }
}

void Diagnostics::merge(const Diagnostics& other) {
  for (size_t k = 0; k < kIssueKindCount; ++k) counts_[k] += other.counts_[k];
  for (const Diagnostic& d : other.examples_) {
    size_t k = static_cast<size_t>(d.kind);
    if (kept_[k] < kKeepPerKind) {
      ++kept_[k];
      examples_.push_back(d);
    }
  }
}

uint64_t Diagnostics::rejected_jobs() const {
  uint64_t n = 0;
  for (size_t k = 0; k < kIssueKindCount; ++k) {
    if (kIssueInfo[k].rejects_job) n += counts_[k];
  }
  return n;
}

std::string printable_excerpt(std::string_view text, size_t max_bytes) {
  std::string out;
  bool cut = text.size() > max_bytes;
  if (cut) text = text.substr(0, max_bytes);
  out.reserve(text.size() + 8);
  for (unsigned char c : text) {
    if (c == '\t') {
      out.push_back(' ');
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  if (cut) out += "...";
  return out;
}

}  // namespace ppt
