// The shim's own log: one line per write(2), after a glog-style prefix
// (`I1201 09:50:23.123456 4242 profiler.cc:120] `), to stderr or to a file
// opened for appending. glog itself is not needed (C++ programs that want
// their lines in glog's stream use pp_timeline/shim_glog.h).
//
// The calling thread never writes to the file: write() formats the line and
// queues it, and a writer thread (started at the first line) writes the
// queue out, so that a stalled pipe or a slow disk behind stderr never
// blocks a training step. The queue is bounded (kQueueLines); a line that
// finds it full is dropped and counted (dropped()). drain() waits for the
// queue to be written, for a bounded time; the destructor drains too, and
// leaves a writer that is stuck in write(2) behind rather than hang.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

namespace ppt::shim::detail {

class LogFile {
 public:
  // Lines queued and not yet written, at most; more are dropped.
  static constexpr size_t kQueueLines = 8192;
  // How long the destructor waits for the queue to be written.
  static constexpr int64_t kCloseWaitNs = 2'000'000'000;

  // Empty path: stderr. Otherwise the file, created if missing; on failure
  // *error says why and the log is stderr.
  explicit LogFile(const std::string& path, std::string* error);
  ~LogFile();
  LogFile(const LogFile&) = delete;
  LogFile& operator=(const LogFile&) = delete;

  // severity: 'I' or 'W'. `line` is the source line named in the prefix.
  // Queues the line; never waits for the file.
  void write(char severity, int line, std::string_view text);
  // Waits until every queued line is written, at most timeout_ns (real
  // time); false when lines are still queued then.
  bool drain(int64_t timeout_ns);
  // Lines dropped because the queue was full. They are said in a warning
  // line queued before the next line that finds room, or by say_drops().
  int64_t dropped() const;
  // Queues the warning about dropped lines now, if any are unsaid and the
  // queue has room.
  void say_drops();
  // In a child process after fork(): the writer thread does not exist there,
  // so nothing is written, waited for or joined, and the state is left.
  void abandon();

 private:
  struct Shared;
  bool enqueue_locked(const std::string& prefix, std::string_view text);
  void say_drops_locked();
  std::shared_ptr<Shared> shared_;
  std::thread* writer_ = nullptr;  // a pointer, so that abandon() can leave it
  bool abandoned_ = false;
};

}  // namespace ppt::shim::detail
