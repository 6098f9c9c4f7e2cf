// The shim's own log: one line per write(2), after a glog-style prefix
// (`I1201 09:50:23.123456 4242 profiler.cc:120] `), to stderr or to a file
// opened for appending. glog itself is not needed (C++ programs that want
// their lines in glog's stream use pp_timeline/shim_glog.h).
#pragma once

#include <string>
#include <string_view>

namespace ppt::shim::detail {

class LogFile {
 public:
  // Empty path: stderr. Otherwise the file, created if missing; on failure
  // *error says why and the log is stderr.
  explicit LogFile(const std::string& path, std::string* error);
  ~LogFile();
  LogFile(const LogFile&) = delete;
  LogFile& operator=(const LogFile&) = delete;

  // severity: 'I' or 'W'. `line` is the source line named in the prefix.
  void write(char severity, int line, std::string_view text);

 private:
  int fd_ = 2;
  bool own_ = false;
  std::string buffer_;
};

// The prefix glog would print for a message at `wall_ns` from thread `tid`.
std::string glog_style_prefix(char severity, int64_t wall_ns, long tid, const char* file, int line);

}  // namespace ppt::shim::detail
