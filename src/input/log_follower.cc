#include "input/log_follower.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace ppt {
namespace {

constexpr size_t kReadBytes = 256 * 1024;
// The file's first bytes kept as its fingerprint (see the header).
constexpr size_t kFingerprintBytes = 1024;

bool ends_with(const std::string& s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

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

void FileFollower::split_lines(const char* data, size_t n, std::string& out) {
  const char* last_nl = static_cast<const char*>(memrchr(data, '\n', n));
  if (last_nl == nullptr) {
    partial_.append(data, n);
    return;
  }
  out += partial_;
  partial_.clear();
  out.append(data, static_cast<size_t>(last_nl - data) + 1);
  partial_.append(last_nl + 1, static_cast<size_t>(data + n - last_nl - 1));
}

void FileFollower::drain(std::string& out) {
  std::string buffer(kReadBytes, '\0');
  for (;;) {
    ssize_t got = pread(fd_, buffer.data(), buffer.size(), static_cast<off_t>(offset_));
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
    split_lines(buffer.data(), static_cast<size_t>(got), out);
  }
}

FileFollower::Event FileFollower::poll(std::string& out) {
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
    event = Event::kTruncated;
    ++truncations_;
  }
  drain(out);
  struct stat now {};
  if (stat(path_.c_str(), &now) == 0 && (now.st_dev != dev_ || now.st_ino != ino_)) {
    // Rotated or replaced: the old file was read to its end above.
    close(fd_);
    fd_ = -1;
    if (open_path()) {
      drain(out);
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
    u.event = files_.back()->poll(u.lines);
    updates.push_back(std::move(u));
  }
}

std::vector<LogFollower::Update> LogFollower::poll() {
  std::vector<Update> updates;
  for (size_t i = 0; i < files_.size(); ++i) {
    Update u;
    u.file = i;
    u.event = files_[i]->poll(u.lines);
    if (!u.lines.empty() || u.event != FileFollower::Event::kNone) updates.push_back(std::move(u));
  }
  discover(updates);
  return updates;
}

}  // namespace ppt
