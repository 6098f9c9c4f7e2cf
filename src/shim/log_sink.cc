#include "log_sink.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace ppt::shim::detail {

LogFile::LogFile(const std::string& path, std::string* error) {
  if (path.empty()) return;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    *error = "cannot open the log file " + path + ": " + std::strerror(errno) + "; writing to stderr";
    return;
  }
  fd_ = fd;
  own_ = true;
}

LogFile::~LogFile() {
  if (own_) ::close(fd_);
}

std::string glog_style_prefix(char severity, int64_t wall_ns, long tid, const char* file, int line) {
  const std::time_t secs = static_cast<std::time_t>(wall_ns / 1'000'000'000);
  std::tm tm{};
  localtime_r(&secs, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%c%02d%02d %02d:%02d:%02d.%06d %ld %s:%d] ", severity, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(wall_ns % 1'000'000'000 / 1000), tid, file, line);
  return buf;
}

void LogFile::write(char severity, int line, std::string_view text) {
  const int64_t now =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  buffer_ = glog_style_prefix(severity, now, static_cast<long>(::syscall(SYS_gettid)), "profiler.cc", line);
  buffer_ += text;
  buffer_ += '\n';
  // One write per line, so that lines of several threads or processes sharing
  // the file never interleave inside a line.
  const char* p = buffer_.data();
  size_t left = buffer_.size();
  while (left > 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
}

}  // namespace ppt::shim::detail
