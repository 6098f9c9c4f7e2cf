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
// LogFollower finds the files with the layout finder (log_layout.h) at every
// poll, so ranks that start late are picked up; files are keyed by path.
// Polling is portable and cheap: one stat, one fstat and one pread of at
// most 1 KB per file per poll.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "input/log_layout.h"

namespace ppt {

class FileFollower {
 public:
  enum class Event { kNone, kOpened, kTruncated, kReplaced };

  explicit FileFollower(std::string path);
  ~FileFollower();
  FileFollower(const FileFollower&) = delete;
  FileFollower& operator=(const FileFollower&) = delete;

  // Appends the whole lines (each with its '\n') written since the last
  // poll to `out`; returns what happened to the file. Never throws for I/O
  // problems: an unreadable file reads as nothing (error() says why: no
  // permission, a link loop, a link to nothing, a FIFO; a path that does not
  // exist yet is no error).
  Event poll(std::string& out);
  // The last line, still without its '\n' (for the end of a watch).
  const std::string& partial() const { return partial_; }
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
  void drain(std::string& out);
  void split_lines(const char* data, size_t n, std::string& out);

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
};

// Every log of a layout request, followed.
class LogFollower {
 public:
  explicit LogFollower(LayoutRequest request);

  struct Update {
    size_t file = 0;    // index into files()
    std::string lines;  // whole lines, in file order
    FileFollower::Event event = FileFollower::Event::kNone;
  };
  // Reads every followed file, then looks for new files (and reads them), so
  // a file created before another's lines were written is never missed when
  // those lines are. Returns the files that had news.
  std::vector<Update> poll();

  // The layout of the last successful discovery (empty before).
  const Layout& layout() const { return layout_; }
  const std::string& layout_error() const { return layout_error_; }
  const std::vector<std::unique_ptr<FileFollower>>& files() const { return files_; }
  // The index into files() of a layout file's path; -1 when not followed.
  int index_of(const std::string& path) const;

 private:
  void discover(std::vector<Update>& updates);

  LayoutRequest request_;
  Layout layout_;
  std::string layout_error_;
  std::vector<std::unique_ptr<FileFollower>> files_;
};

}  // namespace ppt
