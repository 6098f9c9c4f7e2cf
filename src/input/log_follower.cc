#include "input/log_follower.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "input/gzip_reader.h"
#include "pp_timeline/log_line.h"

namespace ppt {
namespace {

constexpr size_t kReadBytes = 256 * 1024;
// The file's first bytes kept as its fingerprint (see the header).
constexpr size_t kFingerprintBytes = 1024;

// The start of a long line kept for its message (the scanner keeps as much).
constexpr size_t kLongHeadBytes = 200;
// A read is far shorter than a line may be, so a line found too long has its
// head in what waited before the read (split_lines).
static_assert(kReadBytes + kLongHeadBytes < kMaxLineBytes);

bool has_marker(std::string_view text) { return text.find(log_line::kJobMarker) != std::string_view::npos; }

}  // namespace

FileFollower::FileFollower(std::string path) : path_(std::move(path)) {}

FileFollower::~FileFollower() {
  if (fd_ >= 0) close(fd_);
}

bool FileFollower::open_path() {
  int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    int e = errno;
    struct stat link {};
    // A missing path is one not created yet (or renamed away); a link to
    // nothing is named, as convert names it.
    if (e != ENOENT)
      error_ = path_ + ": cannot open: " + strerror(e);
    else if (lstat(path_.c_str(), &link) == 0 && S_ISLNK(link.st_mode))
      error_ = path_ + ": cannot open: a symbolic link to nothing";
    return false;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    error_ = path_ + (S_ISDIR(st.st_mode) ? ": is a directory, not a log file"
                                          : ": not a regular file (a FIFO, socket or device); refusing to read it");
    close(fd);
    return false;
  }
  fd_ = fd;
  dev_ = st.st_dev;
  ino_ = st.st_ino;
  offset_ = 0;
  head_.clear();
  error_.clear();
  return true;
}

bool FileFollower::same_start() {
  if (head_.empty()) return true;
  std::string now(head_.size(), '\0');
  size_t have = 0;
  while (have < now.size()) {
    ssize_t got = pread(fd_, now.data() + have, now.size() - have, static_cast<off_t>(have));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    have += static_cast<size_t>(got);
  }
  return have == now.size() && now == head_;
}

void FileFollower::start_long_line() {
  long_line_ = true;
  long_ = LongLine{partial_.substr(0, kLongHeadBytes), has_marker(partial_), true};
  long_tail_ = partial_.substr(partial_.size() - std::min(partial_.size(), log_line::kJobMarker.size()));
  partial_.clear();
  partial_.shrink_to_fit();
}

void FileFollower::scan_long_line(const char* data, size_t n) {
  if (!long_.has_marker) {
    // A marker may begin in the bytes before this read.
    std::string seam = long_tail_ + std::string(data, std::min(n, log_line::kJobMarker.size()));
    long_.has_marker = has_marker(seam) || has_marker(std::string_view(data, n));
  }
  long_tail_ += std::string_view(data, n).substr(n - std::min(n, log_line::kJobMarker.size()));
  if (long_tail_.size() > log_line::kJobMarker.size())
    long_tail_.erase(0, long_tail_.size() - log_line::kJobMarker.size());
}

std::optional<FileFollower::LongLine> FileFollower::partial_too_long() const {
  if (!long_line_) return std::nullopt;
  LongLine l = long_;
  l.terminated = false;
  return l;
}

// Hands out whole lines. A line that grows past kMaxLineBytes is skipped from
// then on (held no longer: an unterminated gigabyte is a gigabyte of memory
// otherwise) up to its '\n', where an empty line takes its place.
void FileFollower::split_lines(const char* data, size_t n, std::string& out) {
  while (n > 0) {
    if (long_line_) {
      const char* nl = static_cast<const char*>(memchr(data, '\n', n));
      size_t upto = nl ? static_cast<size_t>(nl - data) : n;
      scan_long_line(data, upto);
      if (nl == nullptr) return;
      long_lines_.push_back(std::move(long_));
      long_line_ = false;
      long_tail_.clear();
      out += '\n';
      data += upto + 1;
      n -= upto + 1;
      continue;
    }
    const char* last_nl = static_cast<const char*>(memrchr(data, '\n', n));
    if (last_nl == nullptr) {
      if (partial_.size() + n <= kMaxLineBytes) {
        partial_.append(data, n);
        return;
      }
      // From here the line is skipped: what waited gives its head, the rest
      // is only looked at for the marker.
      start_long_line();
      scan_long_line(data, n);
      return;
    }
    const char* first_nl = static_cast<const char*>(memchr(data, '\n', n));
    if (partial_.size() + static_cast<size_t>(first_nl - data) > kMaxLineBytes) {
      // The waiting line ends here, too long: skipped like the others (the
      // branch above reads this piece of it, up to its '\n').
      start_long_line();
      continue;
    }
    out += partial_;
    partial_.clear();
    out.append(data, static_cast<size_t>(last_nl - data) + 1);
    partial_.append(last_nl + 1, static_cast<size_t>(data + n - last_nl - 1));
    return;
  }
}

void FileFollower::drain(std::string& out, size_t budget) {
  std::string buffer(std::min(kReadBytes, std::max<size_t>(budget, 1)), '\0');
  size_t read = 0;
  more_ = false;
  for (;;) {
    if (read >= budget) {
      // The rest waits in the file: memory follows the budget, not the burst.
      struct stat st {};
      more_ = fstat(fd_, &st) == 0 && static_cast<uint64_t>(st.st_size) > offset_;
      return;
    }
    ssize_t got = pread(fd_, buffer.data(), std::min(buffer.size(), budget - read), static_cast<off_t>(offset_));
    if (got < 0) {
      if (errno == EINTR) continue;
      error_ = path_ + ": " + strerror(errno);
      return;
    }
    if (got == 0) return;
    if (offset_ < kFingerprintBytes) {
      head_.append(buffer.data(), std::min<size_t>(static_cast<size_t>(got), kFingerprintBytes - offset_));
    }
    offset_ += static_cast<uint64_t>(got);
    bytes_read_ += static_cast<uint64_t>(got);
    read += static_cast<size_t>(got);
    split_lines(buffer.data(), static_cast<size_t>(got), out);
  }
}

// `tail -F`'s words: the path "has become inaccessible", then "has appeared".
void FileFollower::check_path(bool exists, int error) {
  if (!exists && !gone_) {
    gone_ = true;
    notices_.push_back(path_ + ": has become inaccessible: " + strerror(error) +
                       " (what it held was read; watching for it to appear again)");
  } else if (exists && gone_) {
    gone_ = false;
    notices_.push_back(path_ + ": has appeared again; following it");
  }
}

FileFollower::Event FileFollower::poll(std::string& out, size_t budget) {
  Event event = Event::kNone;
  if (fd_ < 0) {
    if (!open_path()) return event;
    event = Event::kOpened;
  }
  struct stat st {};
  if (fstat(fd_, &st) == 0 && (static_cast<uint64_t>(st.st_size) < offset_ || !same_start())) {
    // Truncated in place: what follows is written from the start again.
    // Truncated and grown past the offset again between two polls, the size
    // alone does not tell: the first bytes do.
    offset_ = 0;
    head_.clear();
    partial_.clear();
    long_line_ = false;
    long_tail_.clear();
    event = Event::kTruncated;
    ++truncations_;
  }
  drain(out, budget);
  if (more_) return event;  // the old file is read to its end before a new one is looked at
  struct stat now {};
  const bool exists = stat(path_.c_str(), &now) == 0;
  check_path(exists, errno);
  if (exists && (now.st_dev != dev_ || now.st_ino != ino_)) {
    // Rotated or replaced: the old file was read to its end above.
    close(fd_);
    fd_ = -1;
    if (open_path()) {
      drain(out, budget);
      event = Event::kReplaced;
      ++replacements_;
    }
  }
  return event;
}

LogFollower::LogFollower(LayoutRequest request) : request_(std::move(request)) {}

int LogFollower::index_of(const std::string& path) const {
  for (size_t i = 0; i < files_.size(); ++i) {
    if (files_[i]->path() == path) return static_cast<int>(i);
  }
  return -1;
}

size_t LogFollower::file_budget() const {
  return std::max(kPollBytes / std::max<size_t>(files_.size(), 1), kMinFileBytes);
}

uint64_t FileFollower::waiting_bytes() const {
  struct stat st {};
  if (fd_ < 0 || fstat(fd_, &st) != 0 || static_cast<uint64_t>(st.st_size) <= offset_) return 0;
  return static_cast<uint64_t>(st.st_size) - offset_;
}

uint64_t LogFollower::waiting_bytes() const {
  uint64_t n = 0;
  for (const auto& f : files_) n += f->waiting_bytes();
  return n;
}

uint64_t LogFollower::bytes_read() const {
  uint64_t n = 0;
  for (const auto& f : files_) n += f->bytes_read();
  return n;
}

bool LogFollower::more() const {
  return std::any_of(files_.begin(), files_.end(), [](const auto& f) { return f->more(); });
}

std::vector<std::string> LogFollower::take_notices() {
  std::vector<std::string> out = std::exchange(notices_, {});
  for (auto& f : files_) {
    for (std::string& n : f->take_notices()) {
      // With the directory gone, its files are: the directory's notice says it.
      if (!dir_gone_) out.push_back(std::move(n));
    }
  }
  return out;
}

// The log directory, once found, is watched like its logs: `tail -F` says
// when a followed name becomes inaccessible, and so does watch.
void LogFollower::check_directory() {
  if (request_.log_dir.empty() || layout_.files.empty()) return;  // never found yet: the waiting message says it
  struct stat st {};
  const bool found = stat(request_.log_dir.c_str(), &st) == 0;
  const int error = found ? ENOTDIR : errno;
  const bool exists = found && S_ISDIR(st.st_mode);
  if (!exists && !dir_gone_) {
    dir_gone_ = true;
    notices_.push_back(request_.log_dir + ": the log directory has become inaccessible: " + strerror(error) +
                       " (its logs were read to their end; watching for it to appear again)");
  } else if (exists && dir_gone_) {
    dir_gone_ = false;
    notices_.push_back(request_.log_dir + ": the log directory has appeared again; following it");
  }
}

void LogFollower::discover(std::vector<Update>& updates) {
  LayoutResult found = discover_layout(request_);
  if (!found.layout) {
    layout_error_ = found.error;
    return;
  }
  layout_error_.clear();
  layout_ = std::move(*found.layout);
  for (const SourceFile& f : layout_.files) {
    if (f.standard_input || is_gzip_name(f.path) || index_of(f.path) >= 0) continue;
    files_.push_back(std::make_unique<FileFollower>(f.path));
    Update u;
    u.file = files_.size() - 1;
    u.event = files_.back()->poll(u.lines, file_budget());
    u.long_lines = files_.back()->take_long_lines();
    updates.push_back(std::move(u));
  }
}

std::vector<LogFollower::Update> LogFollower::poll() {
  std::vector<Update> updates;
  const size_t budget = file_budget();
  for (size_t i = 0; i < files_.size(); ++i) {
    Update u;
    u.file = i;
    u.event = files_[i]->poll(u.lines, budget);
    u.long_lines = files_[i]->take_long_lines();
    if (!u.lines.empty() || !u.long_lines.empty() || u.event != FileFollower::Event::kNone)
      updates.push_back(std::move(u));
  }
  check_directory();
  discover(updates);
  return updates;
}

}  // namespace ppt
