#include "input/file_scanner.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <tuple>
#include <unordered_map>

#include "input/gzip_reader.h"
#include "input/pipeline_details.h"
#include "input/text_encoding.h"
#include "pp_timeline/log_line.h"
#include "util/byte_search.h"
#include "util/escape.h"
#include "util/text.h"

namespace ppt {
namespace {

// Both the job line and the schedule marker contain this literal; one search
// for it and the start-up line's literal finds every candidate line.
constexpr std::string_view kCandidate = log_line::kProfilerLiteral;
constexpr size_t kCandidateProbe = 3;  // 'f': rarer than 'P' in ordinary logs
constexpr std::string_view kStartup = log_line::kProcessStartMarker;
constexpr size_t kStartupProbe = 7;  // 'N' of "NOTE"
// A `[Pipeline details]` line (pipeline_details.h), found by its text from
// the 'P' on, so that the three literals share their first byte.
constexpr std::string_view kDetails = kDetailsLiteral.substr(1);
constexpr size_t kDetailsProbe = 16;  // ']'
static_assert(kCandidate[0] == kStartup[0] && kCandidate[0] == kDetails[0], "find_any_of_three needs one first byte");

bool is_candidate(std::string_view line) {
  return line.find(kCandidate) != std::string_view::npos || line.find(kStartup) != std::string_view::npos ||
         line.find(kDetails) != std::string_view::npos;
}
// A line is taken apart at most this many times (a cut line, then the next
// line's text); what is left after that is parsed as one piece.
constexpr int kMaxPiecesPerLine = 8;

// Reads up to `cap` bytes; returns 0 at the end, -1 on an error (with a
// message in *error).
using ReadFn = std::function<long(char* dst, size_t cap, std::string* error)>;

// The bytes a job marker may straddle between two reads.
constexpr size_t kOverlap = log_line::kJobMarker.size() - 1;
constexpr size_t kPage = 4096;

// One read buffer per thread, reused for every file the thread scans: neither
// zeroed nor faulted in again per file (1,024 files would clear and fault in
// 1 GB). Its `bytes` are a window and a page more: the window starts where
// every read lands on a page boundary (ReadWindow::keep), as the kernel
// copies file pages into an aligned destination markedly faster.
char* thread_read_buffer(size_t bytes) {
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  thread_local std::unique_ptr<char, Free> buffer;
  thread_local size_t buffer_size = 0;
  if (buffer_size != bytes) {
    buffer_size = bytes;
    buffer.reset(static_cast<char*>(std::aligned_alloc(kPage, (buffer_size + kPage - 1) / kPage * kPage)));
    if (!buffer) {
      buffer_size = 0;
      throw std::bad_alloc();
    }
  }
  return buffer.get();
}

// One vector of jobs per thread, reused for every file the thread scans: a
// file's jobs are gathered here (pages already faulted in, room already
// made) and copied once, at the end, into an array of exactly their size
// (Scanner::finish_scan).
JobList& thread_jobs() {
  thread_local JobList jobs;
  return jobs;
}

// A file with more jobs than this keeps the vector they were gathered in
// (the thread's next file makes its own): copying them would hold them
// twice at once, and they are few files.
constexpr size_t kMostCopiedJobs = (size_t{16} << 20) / sizeof(Job);

// The read window: `have` bytes from `buffer + lo`, at most `size`.
struct ReadWindow {
  char* buffer;
  size_t size;
  size_t lo = 0;
  size_t have = 0;
  char* base() const { return buffer + lo; }
  // Keeps n bytes from `from` as the window's start, placed so that the next
  // read is page-aligned.
  void keep(const char* from, size_t n) {
    size_t to = (kPage - n % kPage) % kPage;
    memmove(buffer + to, from, n);
    lo = to;
    have = n;
  }
};

// A line longer than the read window, followed across reads; its start is
// kept for the message.
struct LongLine {
  bool active = false;
  bool has_marker = false;
  std::string head;
};

bool contains_job_marker(const char* p, size_t n) {
  return memmem(p, n, log_line::kJobMarker.data(), log_line::kJobMarker.size()) != nullptr;
}

class Scanner {
 public:
  // Takes the thread's job vector (thread_jobs()); a second Scanner on the
  // same thread takes the empty one left behind and works as well.
  Scanner(uint32_t file_index, const LineParser& parser, FileScan& out)
      : file_index_(file_index), parser_(parser), out_(out) {
    jobs_.swap(thread_jobs());
    jobs_.clear();
  }
  ~Scanner() {
    jobs_.clear();
    jobs_.swap(thread_jobs());
  }
  Scanner(const Scanner&) = delete;
  Scanner& operator=(const Scanner&) = delete;

  // Room for `n` jobs before the scan, so that the vector is not grown by
  // doubling while it runs.
  void reserve_jobs(size_t n) { jobs_.reserve(n); }
  void run(const ReadFn& read_some, size_t buffer_bytes);

 private:
  // run()'s steps.
  enum class LongLineStep { kScan, kRead, kDone };
  bool read_more(ReadWindow& w, const ReadFn& read_some, std::string& error);
  LongLineStep continue_long_line(ReadWindow& w, LongLine& l, bool eof, size_t& start);
  void scan_lines(const ReadWindow& w, size_t& start);
  void scan_last_line(std::string_view line);
  void take_full_window(ReadWindow& w, size_t start, LongLine& l);
  void finish_long_line(LongLine& l, bool terminated);
  void finish_scan();
  void process_lines(const char* p, const char* end);
  void handle_physical_line(std::string_view line, uint64_t line_no, bool last_unterminated);
  void handle_line(std::string_view line, uint64_t line_no, bool last_unterminated);
  bool take_plain_job(std::string_view line, size_t hit, uint64_t line_no);
  void handle_result(const LineResult& r, std::string_view line, uint64_t line_no);
  void add_job(const ParsedJob& p, std::string_view line, uint64_t line_no);
  void note_process_start(uint64_t line_no);
  void handle_details(std::string_view line, uint64_t line_no);
  void close_open_before();
  void unmatched_before(const std::optional<DetailsPairing::Before>& b);
  void details_rejected(IssueKind kind, uint64_t line_no, const std::string& why, std::string_view text);
  void finish_details();
  uint32_t intern_type(std::string_view type, uint64_t line_no, std::string_view text);
  uint32_t earlier_copy(const Job& job);

  uint32_t file_index_;
  const LineParser& parser_;
  FileScan& out_;
  JobList jobs_;        // the file's jobs so far (on the heap); out_.jobs at the end of the scan
  uint64_t lines_ = 0;  // complete lines seen so far
  // Job types by their raw text: raw_types_[id] (the first kFewTypes are
  // looked through before the map) and type_ids_.
  static constexpr size_t kFewTypes = 16;
  std::vector<std::string> raw_types_;
  std::unordered_map<std::string, uint32_t> type_ids_;
  int64_t last_thread_ = INT64_MIN;
  // Exact duplicates (a log that holds its output twice). A rank prints its
  // jobs in time order, so a job that starts after every earlier one cannot
  // repeat one: the index of earlier jobs is built only once a start goes
  // back, and ordinary logs never pay for it.
  struct JobKeyHash {
    size_t operator()(const std::tuple<int64_t, int64_t, int32_t, int32_t, uint32_t>& k) const {
      auto [s, e, id, mb, type] = k;
      uint64_t h = static_cast<uint64_t>(s) * 0x9E3779B97F4A7C15ull;
      h ^= static_cast<uint64_t>(e) + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
      h ^= (static_cast<uint64_t>(static_cast<uint32_t>(id)) << 32 | static_cast<uint32_t>(mb)) + (h << 6) + (h >> 2);
      return static_cast<size_t>(h ^ (static_cast<uint64_t>(type) << 17));
    }
  };
  int64_t max_start_ = INT64_MIN;
  bool dedup_active_ = false;
  std::unordered_map<std::tuple<int64_t, int64_t, int32_t, int32_t, uint32_t>, uint32_t, JobKeyHash> seen_jobs_;

  // `[Pipeline details]` jobs, kept aside until the end: they are the file's
  // jobs only when it has no job line. Their `type` indexes details_types_;
  // the job index of each marker and start-up line in this list is kept too.
  DetailsPairing pairing_;
  JobList details_jobs_;
  std::vector<std::string> details_types_;
  std::vector<uint32_t> marker_details_index_;
  std::vector<uint32_t> start_details_index_;
  uint64_t details_rejected_ = 0;  // unmatched halves and bad lines: jobs seen, not drawn
};

// The line of an earlier job of this file that `job` repeats exactly, or 0.
uint32_t Scanner::earlier_copy(const Job& job) {
  auto key = [](const Job& j) { return std::make_tuple(j.start_ns, j.end_ns, j.job_id, j.micro_batch, j.type); };
  if (!dedup_active_) {
    if (job.start_ns > max_start_) {
      max_start_ = job.start_ns;
      return 0;
    }
    dedup_active_ = true;
    seen_jobs_.reserve(jobs_.size() * 2 + 16);
    for (const Job& j : jobs_) seen_jobs_.emplace(key(j), j.line);
  }
  auto [it, inserted] = seen_jobs_.emplace(key(job), job.line);
  return inserted ? 0 : it->second;
}

void Scanner::run(const ReadFn& read_some, size_t buffer_bytes) {
  buffer_bytes = std::max(buffer_bytes, kOverlap * 4);
  ReadWindow w{thread_read_buffer(buffer_bytes + kPage), buffer_bytes};
  LongLine long_line;
  std::string error;
  while (true) {
    const bool eof = read_more(w, read_some, error);
    size_t start = 0;
    if (long_line.active) {
      const LongLineStep next = continue_long_line(w, long_line, eof, start);
      if (next == LongLineStep::kDone) break;
      if (next == LongLineStep::kRead) continue;
    }
    scan_lines(w, start);
    const size_t tail = w.have - start;
    if (eof) {
      scan_last_line(std::string_view(w.base() + start, tail));
      break;
    }
    if (tail == w.size) {
      take_full_window(w, start, long_line);
      continue;
    }
    w.keep(w.base() + start, tail);
  }
  finish_scan();
}

// The steps of run(), in its order; each runs once per read (a window of
// `buffer_bytes`), not per byte.

// Reads into the window after what it holds; true at the end of the file. A
// failed read is reported and taken as the end: what was read is still
// scanned, a cut last line included.
inline bool Scanner::read_more(ReadWindow& w, const ReadFn& read_some, std::string& error) {
  long r = read_some(w.base() + w.have, w.size - w.have, &error);
  if (r < 0) {
    out_.diagnostics.add(IssueKind::kUnreadableFile, file_index_, 0,
                         "read failed after " + std::to_string(lines_) + " lines: " + error);
    out_.readable = out_.counts.bytes > 0;
    r = 0;
  }
  out_.counts.bytes += static_cast<uint64_t>(r);
  w.have += static_cast<size_t>(r);
  return r == 0;
}

// Inside a line longer than the buffer: looks for its end in the window. Its
// end found, `start` is the byte after it and the window is scanned (kScan);
// at the end of the file the scan is done (kDone); else the window keeps the
// last bytes a marker may straddle and the next read follows (kRead).
inline Scanner::LongLineStep Scanner::continue_long_line(ReadWindow& w, LongLine& l, bool eof, size_t& start) {
  const char* win = w.base();
  const char* nl = static_cast<const char*>(memchr(win, '\n', w.have));
  const size_t upto = nl ? static_cast<size_t>(nl - win) : w.have;
  if (!l.has_marker) l.has_marker = contains_job_marker(win, upto);
  if (nl) {
    finish_long_line(l, true);
    start = upto + 1;
    return LongLineStep::kScan;
  }
  if (eof) {
    finish_long_line(l, false);
    return LongLineStep::kDone;
  }
  w.keep(win + w.have - kOverlap, kOverlap);
  return LongLineStep::kRead;
}

// The complete lines of the window from `start`; `start` moves past them.
inline void Scanner::scan_lines(const ReadWindow& w, size_t& start) {
  const char* base = w.base();
  const char* last_nl = static_cast<const char*>(memrchr(base + start, '\n', w.have - start));
  if (last_nl) {
    process_lines(base + start, last_nl + 1);
    start = static_cast<size_t>(last_nl + 1 - base);
  }
}

// The file's last line when it ends without a newline.
inline void Scanner::scan_last_line(std::string_view line) {
  if (line.empty()) return;
  if (is_candidate(line)) handle_physical_line(line, lines_ + 1, true);
  ++lines_;
}

// No '\n' in the whole window: a progress bar's '\r'-ended updates can fill
// it (and more) before the '\n' that ends their line, with job lines among
// them. What ends in a '\r' is handled as lines, and the rest of the line
// goes on in the window; with no '\r' either, the line is longer than the
// buffer.
inline void Scanner::take_full_window(ReadWindow& w, size_t start, LongLine& l) {
  const char* base = w.base();
  const size_t tail = w.have - start;
  const char* cr = static_cast<const char*>(memrchr(base + start, '\r', tail));
  if (cr) {
    std::string_view done(base + start, static_cast<size_t>(cr + 1 - (base + start)));
    if (is_candidate(done)) handle_physical_line(done, lines_ + 1, false);
    w.keep(cr + 1, static_cast<size_t>(base + w.have - (cr + 1)));
    return;
  }
  l.active = true;
  l.has_marker = contains_job_marker(base, tail);
  l.head.assign(base, std::min<size_t>(tail, 200));
  w.keep(base + w.have - kOverlap, kOverlap);
}

inline void Scanner::finish_long_line(LongLine& l, bool terminated) {
  ++lines_;
  if (l.has_marker) {
    ++out_.counts.profiler_lines;
    out_.diagnostics.add(IssueKind::kLineTooLong, file_index_, lines_,
                         terminated ? "a profiler line longer than the read buffer"
                                    : "a profiler line longer than the read buffer, and "
                                      "the file ends inside it",
                         l.head);
  }
  l.active = false;
  l.has_marker = false;
}

inline void Scanner::finish_scan() {
  out_.counts.lines = lines_;
  out_.counts.files = 1;
  finish_details();
  if (jobs_.size() > kMostCopiedJobs) {
    out_.jobs = std::move(jobs_);
  } else {
    // Written whole and kept to the end: bulk memory, where the command
    // allows it (util/bulk_memory.h).
    BulkScope bulk;
    out_.jobs.assign(jobs_.begin(), jobs_.end());
  }
  if (out_.readable && out_.counts.profiler_lines == 0 && out_.markers.empty()) {
    out_.diagnostics.add(IssueKind::kNoProfilerLines, file_index_, 0,
                         "no 'Profiler Info: Job' line in " + std::to_string(lines_) + " lines");
  }
}

// Hot: runs over every byte of every log. A literal search finds candidate
// lines; only those are split out and parsed, and newlines are counted in
// bulk between them.
void Scanner::process_lines(const char* p, const char* end) {
  while (p < end) {
    const char* hit =
        find_any_of_three(p, end, kCandidate, kCandidateProbe, kStartup, kStartupProbe, kDetails, kDetailsProbe);
    if (!hit) {
      lines_ += count_newlines(p, end);
      return;
    }
    const char* line_start = static_cast<const char*>(memrchr(p, '\n', static_cast<size_t>(hit - p)));
    line_start = line_start ? line_start + 1 : p;
    lines_ += count_newlines(p, line_start);
    const char* line_end = static_cast<const char*>(memchr(hit, '\n', static_cast<size_t>(end - hit)));
    if (!line_end) line_end = end;  // cannot happen: the region ends with '\n'
    const std::string_view line(line_start, static_cast<size_t>(line_end - line_start));
    if (!take_plain_job(line, static_cast<size_t>(hit - line_start), lines_ + 1)) {
      handle_physical_line(line, lines_ + 1, false);
    }
    ++lines_;
    p = line_end + 1;
  }
}

// The usual job line, without handle_physical_line()'s and handle_line()'s
// searches of the whole line: `hit` is the first of the three literals in it
// (process_lines found it there). When that is the job marker, no '\r'
// comes before the line's last byte and the parser takes the text from the
// marker on as Paddle prints it (which holds no 'P' after the marker's
// own), the line is one piece holding no start-up line, no `[Pipeline
// details]` and no second marker (each of those literals holds a 'P'), so
// the general path would parse it as one line and take its job as this
// does. Anything else goes the general way.
bool Scanner::take_plain_job(std::string_view line, size_t hit, uint64_t line_no) {
  if (line.size() - hit < log_line::kJobMarker.size() ||
      memcmp(line.data() + hit, log_line::kJobMarker.data(), log_line::kJobMarker.size()) != 0) {
    return false;
  }
  if (line.size() > 1 && memchr(line.data(), '\r', line.size() - 1) != nullptr) return false;
  ParsedJob job;
  if (!parser_.parse_plain_job(line, hit, &job)) return false;
  add_job(job, line, line_no);
  return true;
}

uint32_t Scanner::intern_type(std::string_view type, uint64_t line_no, std::string_view text) {
  // A file's types are few (a schedule names a dozen at most) and come
  // interleaved (forward, backward, ...): the first ones' raw texts are
  // compared in order, then the map, which holds every one. A cache of the
  // last type alone missed on every other job of a 1F1B log.
  const size_t few = std::min(raw_types_.size(), kFewTypes);
  for (size_t k = 0; k < few; ++k) {
    if (raw_types_[k] == type) return static_cast<uint32_t>(k);
  }
  if (raw_types_.size() > kFewTypes) {
    auto it = type_ids_.find(std::string(type));
    if (it != type_ids_.end()) return it->second;
  }
  bool changed = false;
  std::string clean = sanitize_utf8(type, &changed);
  if (changed) {
    out_.diagnostics.add(IssueKind::kInvalidUtf8Type, file_index_, line_no, "the job type is not valid UTF-8", text);
  }
  // A sanitized type is looked up by its raw bytes.
  uint32_t id = static_cast<uint32_t>(out_.types.size());
  out_.types.push_back(std::move(clean));
  raw_types_.emplace_back(type);
  type_ids_.emplace(std::string(type), id);
  return id;
}

void Scanner::note_process_start(uint64_t line_no) {
  close_open_before();  // the process that began it has ended
  start_details_index_.push_back(static_cast<uint32_t>(details_jobs_.size()));
  ProcessStartAt p;
  p.job_index = static_cast<uint32_t>(jobs_.size());
  p.line = static_cast<uint32_t>(std::min<uint64_t>(line_no, UINT32_MAX));
  out_.process_starts.push_back(p);
}

// A lone '\r' ends a line too: a progress bar (tqdm) rewrites its line with
// '\r', and a job line printed after one, or a log whose writer ends lines
// with '\r' alone, would otherwise be one line holding many. Each
// '\r'-ended segment is a line of its own (with the line number of the
// '\n'-ended line that holds it); the '\r' of a "\r\n" ending stays with its
// line, which the parser allows. Only candidate lines pay for the search.
void Scanner::handle_physical_line(std::string_view line, uint64_t line_no, bool last_unterminated) {
  size_t cr = line.size() > 1 ? line.substr(0, line.size() - 1).find('\r') : std::string_view::npos;
  if (cr == std::string_view::npos) {
    handle_line(line, line_no, last_unterminated);
    return;
  }
  while (!line.empty()) {
    cr = line.size() > 1 ? line.substr(0, line.size() - 1).find('\r') : std::string_view::npos;
    bool last = cr == std::string_view::npos;
    std::string_view segment = last ? line : line.substr(0, cr);
    if (is_candidate(segment)) {
      handle_line(segment, line_no, last && last_unterminated);
    }
    if (last) return;
    line.remove_prefix(cr + 1);
  }
}

// A line is usually one piece. A job line cut short and followed by another
// line's text (a process killed mid-line, then a rerun appended) is split
// where the parser found the other line's start, and each piece is handled in
// order, so the next process's start-up line or job is not lost.
void Scanner::handle_line(std::string_view line, uint64_t line_no, bool last_unterminated) {
  if (line.find(kDetailsLiteral) != std::string_view::npos && line.find(kCandidate) == std::string_view::npos) {
    if (line.find(kStartup) != std::string_view::npos) note_process_start(line_no);
    handle_details(line, line_no);
    return;
  }
  for (int piece = 1;; ++piece) {
    LineResult r = parser_.parse(line, last_unterminated, piece < kMaxPiecesPerLine);
    std::string_view text = r.rest == std::string_view::npos ? line : line.substr(0, r.rest);
    size_t startup = text.find(kStartup);
    size_t content = text.find(kCandidate);
    bool startup_first = startup != std::string_view::npos && (content == std::string_view::npos || startup < content);
    if (startup_first) note_process_start(line_no);
    handle_result(r, text, line_no);
    if (startup != std::string_view::npos && !startup_first) note_process_start(line_no);
    if (r.rest == std::string_view::npos) return;
    line = line.substr(r.rest);
  }
}

// A job half that is not drawn: one job seen, rejected.
void Scanner::details_rejected(IssueKind kind, uint64_t line_no, const std::string& why, std::string_view text) {
  ++details_rejected_;
  out_.diagnostics.add(kind, file_index_, line_no, why, text);
}

void Scanner::unmatched_before(const std::optional<DetailsPairing::Before>& b) {
  if (!b) return;
  details_rejected(IssueKind::kUnmatchedDetailsBefore, b->line,
                   std::string(memory_point_name(b->d.point)) + " without its After_ line", b->text);
}

void Scanner::close_open_before() { unmatched_before(pairing_.close()); }

// One `[Pipeline details]` line: a memory sample, and half of a job
// (DetailsPairing says which, and the micro-batch).
void Scanner::handle_details(std::string_view line, uint64_t line_no) {
  ++out_.counts.details_lines;
  DetailsLine d;
  std::string why;
  if (!parse_details_line(line, &d, &why)) {
    details_rejected(IssueKind::kBadDetailsLine, line_no, why, line);
    return;
  }
  DetailsPairing::Step step = pairing_.feed(d, line_no, line);
  unmatched_before(step.unmatched);
  if (step.unmatched_after) {
    details_rejected(IssueKind::kUnmatchedDetailsAfter, line_no,
                     std::string(memory_point_name(d.point)) + " without a Before_ line of the same step", line);
  } else if (step.pair && step.end_before_start) {
    details_rejected(IssueKind::kEndBeforeStart, line_no,
                     "the After_ stamp is before its Before_ stamp at line " + std::to_string(step.pair->line), line);
  } else if (step.pair) {
    std::string type = is_forward_point(d.point) ? "forward" : "backward";
    if (d.chunk >= 0) type += std::to_string(d.chunk);
    auto it = std::find(details_types_.begin(), details_types_.end(), type);
    if (it == details_types_.end()) it = details_types_.insert(it, type);
    Job job;
    job.start_ns = step.pair->d.ts_ns;
    job.end_ns = d.ts_ns;
    job.job_id = step.pair->micro_batch;
    job.micro_batch = step.pair->micro_batch;
    job.type = static_cast<uint32_t>(it - details_types_.begin());
    job.line = static_cast<uint32_t>(std::min<uint64_t>(step.pair->line, UINT32_MAX));
    details_jobs_.push_back(job);
  }
  MemorySample sample;
  sample.ts_ns = d.ts_ns;
  sample.allocated_bytes = d.allocated_bytes;
  sample.reserved_bytes = d.reserved_bytes;
  sample.line = static_cast<uint32_t>(std::min<uint64_t>(line_no, UINT32_MAX));
  sample.micro_batch = step.micro_batch;
  sample.chunk = d.chunk;
  sample.point = d.point;
  out_.memory.push_back(sample);
  ++out_.counts.memory_samples;
}

// At the end of the file: the details jobs become the file's jobs when it
// has no job line; otherwise the job lines are the jobs and the details lines
// give memory only (each job would be counted twice).
void Scanner::finish_details() {
  close_open_before();
  const bool job_lines = out_.counts.profiler_lines > 0;
  out_.counts.profiler_lines += details_rejected_;
  if (details_jobs_.empty()) return;
  if (job_lines) {
    out_.diagnostics.add(IssueKind::kDetailsMemoryOnly, file_index_, details_jobs_.front().line,
                         std::to_string(details_jobs_.size()) +
                             " forward/backward steps in [Pipeline details] lines beside the file's job lines: "
                             "memory samples only, not drawn again");
    details_jobs_.clear();
    return;
  }
  std::vector<uint32_t> type_of;
  for (const std::string& t : details_types_) type_of.push_back(intern_type(t, 0, t));
  for (Job& j : details_jobs_) j.type = type_of[j.type];
  jobs_.swap(details_jobs_);  // jobs_ is empty: the file has no job line
  details_jobs_.clear();
  for (size_t i = 0; i < out_.markers.size(); ++i) out_.markers[i].job_index = marker_details_index_[i];
  for (size_t i = 0; i < out_.process_starts.size(); ++i) out_.process_starts[i].job_index = start_details_index_[i];
  out_.counts.profiler_lines += jobs_.size();
  out_.counts.jobs += jobs_.size();
  out_.details_jobs = true;
}

void Scanner::handle_result(const LineResult& r, std::string_view line, uint64_t line_no) {
  switch (r.kind) {
    case LineKind::kOther:
      if (r.has_issue) out_.diagnostics.add(r.issue, file_index_, line_no, r.detail, line);
      return;
    case LineKind::kScheduleMarker: {
      marker_details_index_.push_back(static_cast<uint32_t>(details_jobs_.size()));
      MarkerAt m;
      m.job_index = static_cast<uint32_t>(jobs_.size());
      m.line = static_cast<uint32_t>(line_no);
      m.start_step = static_cast<int32_t>(std::clamp<int64_t>(r.marker.start_step, INT32_MIN / 2, INT32_MAX / 2));
      m.end_step = static_cast<int32_t>(std::clamp<int64_t>(r.marker.end_step, INT32_MIN / 2, INT32_MAX / 2));
      out_.markers.push_back(m);
      return;
    }
    case LineKind::kRejected:
      ++out_.counts.profiler_lines;
      out_.diagnostics.add(r.issue, file_index_, line_no, r.detail, line);
      return;
    case LineKind::kJob: break;
  }
  add_job(r.job, line, line_no);
}

// A job line's job: counted, and kept unless it repeats an earlier one.
void Scanner::add_job(const ParsedJob& p, std::string_view line, uint64_t line_no) {
  ++out_.counts.profiler_lines;
  Job job;
  job.start_ns = p.start_ns;
  job.end_ns = p.end_ns;
  job.job_id = static_cast<int32_t>(p.job_id);
  job.micro_batch = p.micro_batch;
  // A count of lines past 2^32 would take a 4 GB+ file of empty lines; clamp.
  job.line = static_cast<uint32_t>(std::min<uint64_t>(line_no, UINT32_MAX));
  job.type = intern_type(p.type, line_no, line);
  if (uint32_t first = earlier_copy(job)) {
    out_.diagnostics.add(IssueKind::kDuplicateJob, file_index_, line_no,
                         "the same job as line " + std::to_string(first) + " (printed twice); not drawn again", line);
    return;
  }
  ++out_.counts.jobs;
  if (p.thread_id != last_thread_ && p.thread_id >= 0) {
    out_.thread_changes.push_back({static_cast<uint32_t>(jobs_.size()), p.thread_id});
    last_thread_ = p.thread_id;
  }
  jobs_.push_back(job);
}

// Feeds gzip data read from `fd` (a .gz file, or standard input, which may
// be plain text) to the scanner, through GzipReader, which reads the bytes
// after the gzip data as text instead of dropping them; they get a warning.
// `cut_message` is the error for gzip data that ends early.
void scan_gzip(Scanner& scanner, FileScan& out, uint32_t file_index, int fd, const ScanOptions& options,
               const char* cut_message) {
  GzipReader gz(GzipReader::from_fd(fd), cut_message);
  scanner.run([&](char* dst, size_t cap, std::string* error) { return gz.read(dst, cap, error); },
              options.buffer_bytes);
  if (gz.trailing_bytes() > 0) {
    out.diagnostics.add(IssueKind::kTrailingData, file_index, 0,
                        std::to_string(gz.trailing_bytes()) + " bytes after the gzip data (" +
                            std::to_string(gz.members()) + (gz.members() == 1 ? " member" : " members") +
                            ") are not gzip; read as plain text, where gunzip would drop them");
  }
}

// Standard input, read once as it arrives: plain text, or gzip, recognised
// by its magic bytes.
FileScan scan_stdin(uint32_t file_index, const LineParser& parser, const ScanOptions& options) {
  FileScan out;
  Scanner scanner(file_index, parser, out);
  scan_gzip(scanner, out, file_index, STDIN_FILENO, options,
            "gzip: unexpected end of the stream (the gzip data is cut short)");
  return out;
}

}  // namespace

bool has_gzip_magic(int fd) {
  unsigned char magic[2] = {0, 0};
  ssize_t n = pread(fd, magic, 2, 0);
  return n == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

int open_input_file(const std::string& path, const char* what, struct stat* st, std::string* why) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer. Regular files
  // ignore the flag.
  int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    *why = std::string("cannot open: ") + strerror(errno);
    return -1;
  }
  if (fstat(fd, st) != 0) {
    int e = errno;
    close(fd);
    *why = std::string("cannot stat: ") + strerror(e);
    return -1;
  }
  if (S_ISDIR(st->st_mode) || !S_ISREG(st->st_mode)) {
    close(fd);
    *why = S_ISDIR(st->st_mode) ? std::string("is a directory, not a ") + what
                                : "not a regular file (a FIFO, socket or device); refusing to read it";
    return -1;
  }
  return fd;
}

FileScan unreadable_file_scan(uint32_t file_index, const std::string& why) {
  FileScan out;
  out.readable = false;
  out.counts.files = 1;
  out.diagnostics.add(IssueKind::kUnreadableFile, file_index, 0, why);
  return out;
}

// scan_file's room for jobs: a file's bytes over this, at most kMostJobsReserved.
constexpr uint64_t kShortJobLine = 128;
constexpr uint64_t kMostJobsReserved = uint64_t{1} << 20;

FileScan scan_file(const std::string& path, uint32_t file_index, const LineParser& parser, const ScanOptions& options) {
  if (path == "-") return scan_stdin(file_index, parser, options);
  struct stat st {};
  std::string why;
  int fd = open_input_file(path, "log file", &st, &why);
  if (fd < 0) return unreadable_file_scan(file_index, why);
  FileScan out;
  Scanner scanner(file_index, parser, out);
  if (has_gzip_magic(fd)) {
    scan_gzip(scanner, out, file_index, fd, options, "gzip: unexpected end of file (the .gz is cut short)");
    close(fd);
    return out;
  }
  // Only the bytes present at open are read: a file that keeps growing (a run
  // still writing it) cannot keep the reader busy forever.
  const uint64_t size_at_open = static_cast<uint64_t>(st.st_size);
  uint64_t left = size_at_open;
  uint64_t raw_bytes = 0;  // bytes of the file read (counts.bytes counts what was scanned)
  bool read_error = false;
  ReadFn raw = [&](char* dst, size_t cap, std::string* error) -> long {
    if (left == 0) return 0;
    while (true) {
      ssize_t n = read(fd, dst, static_cast<size_t>(std::min<uint64_t>(cap, left)));
      if (n >= 0) {
        left -= static_cast<uint64_t>(n);
        raw_bytes += static_cast<uint64_t>(n);
        return static_cast<long>(n);
      }
      if (errno == EINTR) continue;
      *error = strerror(errno);
      read_error = true;
      return -1;
    }
  };
  // A UTF-16 log is read as the UTF-8 it holds (text_encoding.h).
  char head[512];
  ssize_t head_n = pread(fd, head, sizeof head, 0);
  size_t bom = 0;
  TextEncoding encoding =
      head_n > 0 ? sniff_encoding(std::string_view(head, static_cast<size_t>(head_n)), &bom) : TextEncoding::kUtf8;
  if (encoding == TextEncoding::kUtf8) {
    // Room for the jobs the file can hold, so that the vector is not grown
    // by doubling (a copy of every job and fresh pages each time: a tenth of
    // the scan at 1024 ranks). Paddle's job lines are 150-200 bytes; only
    // the pages written are resident, so room for more costs no memory, and
    // the thread's next file finds the room already made.
    scanner.reserve_jobs(std::min<uint64_t>(size_at_open / kShortJobLine, kMostJobsReserved));
    scanner.run(raw, options.buffer_bytes);
  } else {
    // The command names this file (the registry's text cannot): a shell
    // word, as terminal text (the summary prints details as they are).
    std::string word = terminal_text(shell_word(path));
    out.diagnostics.add(IssueKind::kTranscoded, file_index, 0,
                        std::string("the file is ") + std::string(encoding_name(encoding)) +
                            (bom ? " (it starts with a byte-order mark)" : " (a NUL beside every ASCII byte)") +
                            "; read as UTF-8. To convert it yourself: iconv -f UTF-16 -t UTF-8 " + word + " > " +
                            terminal_text(shell_word(path + ".utf8")));
    if (bom > 0) {
      char skip[2];
      std::string ignored;  // a failing read shows again at the next one
      raw(skip, bom, &ignored);
    }
    Utf16Decoder decoder(encoding, raw);
    scanner.run([&](char* dst, size_t cap, std::string* error) { return decoder.read(dst, cap, error); },
                options.buffer_bytes);
  }
  struct stat end_st {};
  if (!read_error && raw_bytes < size_at_open) {
    out.diagnostics.add(IssueKind::kFileChanged, file_index, 0,
                        "shrank from " + std::to_string(size_at_open) + " to " + std::to_string(raw_bytes) +
                            " bytes while being read (truncated?); what was cut off is missing");
  } else if (!read_error && fstat(fd, &end_st) == 0 && static_cast<uint64_t>(end_st.st_size) > size_at_open) {
    out.diagnostics.add(IssueKind::kFileChanged, file_index, 0,
                        "grew from " + std::to_string(size_at_open) + " to " + std::to_string(end_st.st_size) +
                            " bytes while being read (is the run still going?); read the first " +
                            std::to_string(size_at_open));
  }
  close(fd);
  return out;
}

FileScan scan_buffer(std::string_view data, uint32_t file_index, const LineParser& parser, const ScanOptions& options) {
  FileScan out;
  Scanner scanner(file_index, parser, out);
  size_t pos = 0;
  scanner.run(
      [&](char* dst, size_t cap, std::string*) -> long {
        size_t n = std::min(cap, data.size() - pos);
        memcpy(dst, data.data() + pos, n);
        pos += n;
        return static_cast<long>(n);
      },
      options.buffer_bytes);
  return out;
}

}  // namespace ppt
