// Follows growing launch logs the way `tail -F` does, for `pp-timeline watch`.
//
// A FileFollower reads only what was appended to one path since its last
// poll, never rereading a byte: it keeps the file open at its offset and
// hands out whole lines only (a last line without its '\n' waits in a small
// buffer until the rest arrives). Each poll compares the path's inode and
// size with the open file's:
//  - the file shrank below the offset (truncated, `copytruncate`), or its
//    first bytes are no longer the ones read (truncated, then written past
//    the old offset again between two polls: the size cannot tell, so the
//    first 1 KB read is kept as the file's fingerprint, as log shippers do,
//    and compared at every poll with one pread): read again from its start,
//    the waiting partial line dropped (Event::kTruncated). A file rewritten
//    with the very same first kilobyte cannot be told from one that grew;
//  - the path names another file (rotated by a rename and a new file, or
//    replaced by a new run): the rest of the old file is read first, then the
//    new one from its start (Event::kReplaced); a partial line carries over,
//    as it does in the concatenated log;
//  - the path is missing (not created yet, or renamed away): the open file
//    is read to its end and the path is tried again at the next poll.
// A gzip file is not followed (it is written whole); LogFollower skips it.
//
// Memory does not follow what was appended: a poll reads at most a budget of
// bytes from a file (the rest waits in the file for the next poll, and
// more() says so), and a line longer than kMaxLineBytes, the scanner's read
// buffer, is skipped in constant memory (its first bytes are kept for the
// message; an empty line takes its place, so line numbers stay the file's).
//
// A path that disappears while followed (deleted, or renamed away and not
// replaced) is said once, as `tail -F` says it ("has become inaccessible"),
// and again when it appears again; so is the log directory.
//
// LogFollower finds the files with the layout finder (log_layout.h) at every
// poll, so ranks that start late are picked up; files are keyed by path.
// Polling is portable and cheap: one stat, one fstat and one pread of at
// most 1 KB per file per poll.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "input/log_layout.h"

namespace ppt {

// A line longer than this is skipped (file_scanner.h reads through a buffer
// of this size and skips such lines alike).
inline constexpr size_t kMaxLineBytes = size_t{1} << 20;

class FileFollower {
 public:
  enum class Event { kNone, kOpened, kTruncated, kReplaced };

  // A line skipped for its length.
  struct LongLine {
    std::string head;         // its first bytes, for the message
    bool has_marker = false;  // it holds the job marker (a job line lost: counted as rejected)
    bool terminated = true;   // false: the file ended inside it (the watch's end)
  };

  explicit FileFollower(std::string path);
  ~FileFollower();
  FileFollower(const FileFollower&) = delete;
  FileFollower& operator=(const FileFollower&) = delete;

  // Appends the whole lines (each with its '\n') written since the last
  // poll to `out`; returns what happened to the file. Never throws for I/O
  // problems: an unreadable file reads as nothing (error() says why: no
  // permission, a link loop, a link to nothing, a FIFO; a path that does not
  // exist yet is no error).
  // Reads at most `budget` bytes; more() is true when the file holds more.
  Event poll(std::string& out, size_t budget = SIZE_MAX);
  bool more() const { return more_; }
  // Bytes of the open file not read yet (0 when none is open).
  uint64_t waiting_bytes() const;
  // Bytes read since the start, over every file the path named.
  uint64_t bytes_read() const { return bytes_read_; }
  // The last line, still without its '\n' (for the end of a watch); when
  // that line is too long, "" and partial_too_long() describes it.
  const std::string& partial() const { return partial_; }
  std::optional<LongLine> partial_too_long() const;
  // The lines skipped for their length since the last call.
  std::vector<LongLine> take_long_lines() { return std::exchange(long_lines_, {}); }
  // What the user should know since the last call (the path became
  // inaccessible, or appeared again).
  std::vector<std::string> take_notices() { return std::exchange(notices_, {}); }
  // Bytes consumed from the open file so far.
  uint64_t offset() const { return offset_; }
  const std::string& path() const { return path_; }
  const std::string& error() const { return error_; }
  // Truncations (Event::kTruncated) and rotations or replacements
  // (Event::kReplaced) seen so far.
  uint64_t truncations() const { return truncations_; }
  uint64_t replacements() const { return replacements_; }

 private:
  bool open_path();
  bool same_start();
  void drain(std::string& out, size_t budget);
  void split_lines(const char* data, size_t n, std::string& out);
  void start_long_line();
  void scan_long_line(const char* data, size_t n);
  void check_path(bool exists, int error);

  std::string path_;
  int fd_ = -1;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  uint64_t offset_ = 0;
  std::string partial_;
  std::string head_;  // the first bytes read from the open file (its fingerprint)
  std::string error_;
  uint64_t truncations_ = 0;
  uint64_t replacements_ = 0;
  bool more_ = false;
  uint64_t bytes_read_ = 0;
  // A line past kMaxLineBytes being skipped: its head, whether the marker
  // was seen, and the last bytes (a marker may span two reads).
  bool long_line_ = false;
  LongLine long_;
  std::string long_tail_;
  std::vector<LongLine> long_lines_;
  bool gone_ = false;  // the path is inaccessible (said once)
  std::vector<std::string> notices_;
};

// Every log of a layout request, followed.
class LogFollower {
 public:
  explicit LogFollower(LayoutRequest request);

  struct Update {
    size_t file = 0;    // index into files()
    std::string lines;  // whole lines, in file order
    FileFollower::Event event = FileFollower::Event::kNone;
    std::vector<FileFollower::LongLine> long_lines;  // lines skipped for their length
  };
  // Reads every followed file, then looks for new files (and reads them), so
  // a file created before another's lines were written is never missed when
  // those lines are. Returns the files that had news. A poll reads at most
  // about kPollBytes over all files (at least kMinFileBytes from each).
  std::vector<Update> poll();
  // Whether a file holds more than the last poll read (poll again at once),
  // and how many bytes are waiting so.
  bool more() const;
  uint64_t waiting_bytes() const;
  // Bytes read since the start, over every file.
  uint64_t bytes_read() const;
  // What the user should know since the last call: the log directory or a
  // followed log has become inaccessible, or appeared again.
  std::vector<std::string> take_notices();

  static constexpr size_t kPollBytes = size_t{8} << 20;
  static constexpr size_t kMinFileBytes = size_t{64} << 10;

  // The layout of the last successful discovery (empty before).
  const Layout& layout() const { return layout_; }
  const std::string& layout_error() const { return layout_error_; }
  const std::vector<std::unique_ptr<FileFollower>>& files() const { return files_; }
  // The index into files() of a layout file's path; -1 when not followed.
  int index_of(const std::string& path) const;

 private:
  void discover(std::vector<Update>& updates);

  size_t file_budget() const;
  void check_directory();

  LayoutRequest request_;
  bool dir_gone_ = false;
  std::vector<std::string> notices_;
  Layout layout_;
  std::string layout_error_;
  std::vector<std::unique_ptr<FileFollower>> files_;
};

}  // namespace ppt
