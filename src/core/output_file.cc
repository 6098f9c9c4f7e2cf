#include "pp_timeline/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <vector>

namespace ppt {
namespace {
constexpr size_t kBufferBytes = 1 << 20;
}

OutputFile::~OutputFile() { abandon(); }

void OutputFile::fail(const std::string& what, int err) {
  if (error_.empty()) error_ = path_ + ": " + what + (err ? std::string(": ") + strerror(err) : "");
}

bool OutputFile::open(const std::string& path) {
  path_ = path;
  struct stat st {};
  if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) {
      fail("is a directory", 0);
      return false;
    }
    fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd_ < 0) {
      fail("cannot open for writing", errno);
      return false;
    }
    // Blocking writes from here on (a pipe reader may be slow).
    int flags = fcntl(fd_, F_GETFL);
    if (flags >= 0) fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK);
    buffer_.reserve(kBufferBytes);
    return true;
  }
  std::string templ = path + ".tmp.XXXXXX";
  std::vector<char> name(templ.begin(), templ.end());
  name.push_back('\0');
  fd_ = mkstemp(name.data());
  if (fd_ < 0) {
    int e = errno;
    std::string dir = path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/'));
    fail(e == ENOENT ? "cannot create: the folder " + dir + " does not exist" : "cannot create", e == ENOENT ? 0 : e);
    return false;
  }
  temp_path_ = name.data();
  fchmod(fd_, 0644);
  buffer_.reserve(kBufferBytes);
  return true;
}

void OutputFile::write(std::string_view bytes) {
  if (fd_ < 0) return;
  bytes_ += bytes.size();
  if (buffer_.size() + bytes.size() > kBufferBytes) flush();
  if (bytes.size() >= kBufferBytes) {
    // Large piece: write through.
    const char* p = bytes.data();
    size_t n = bytes.size();
    while (n > 0 && error_.empty()) {
      ssize_t w = ::write(fd_, p, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        fail("write failed", errno);
        return;
      }
      p += w;
      n -= static_cast<size_t>(w);
    }
    return;
  }
  buffer_.append(bytes);
}

void OutputFile::flush() {
  const char* p = buffer_.data();
  size_t n = buffer_.size();
  while (n > 0 && error_.empty()) {
    ssize_t w = ::write(fd_, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      fail("write failed", errno);
      break;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  buffer_.clear();
}

bool OutputFile::commit() {
  if (fd_ < 0) {
    if (error_.empty()) error_ = path_ + ": not open";
    return false;
  }
  flush();
  if (::close(fd_) != 0) fail("close failed", errno);
  fd_ = -1;
  if (!error_.empty()) {
    abandon();
    return false;
  }
  if (!temp_path_.empty()) {
    if (rename(temp_path_.c_str(), path_.c_str()) != 0) {
      fail("cannot rename into place", errno);
      abandon();
      return false;
    }
    temp_path_.clear();
  }
  return true;
}

void OutputFile::abandon() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  if (!temp_path_.empty()) {
    unlink(temp_path_.c_str());
    temp_path_.clear();
  }
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  if (stat(a.c_str(), &sa) != 0 || stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace ppt
