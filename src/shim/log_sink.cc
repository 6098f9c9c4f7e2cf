#include "log_sink.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <mutex>
#include <vector>

namespace ppt::shim::detail {

// What the writer thread shares with the LogFile; the thread holds it too,
// so that a writer left stuck in write(2) never touches freed memory.
struct LogFile::Shared {
  int fd = 2;
  bool own = false;
  std::mutex mu;
  std::condition_variable wake;  // a line was queued, or stop
  std::condition_variable idle;  // the queue was written out
  // A ring of lines; each slot keeps its capacity, and the writer swaps a
  // slot with its own string, so that queueing a line allocates only until
  // the strings have grown to the lines' length.
  std::vector<std::string> ring = std::vector<std::string>(kQueueLines);
  size_t head = 0;   // the oldest queued line
  size_t count = 0;  // lines queued
  bool writing = false;
  bool stop = false;
  std::atomic<int64_t> dropped{0};
  int64_t dropped_said = 0;  // drops already said in a warning line

  ~Shared() {
    if (own) ::close(fd);
  }

  void write_all(const std::string& text) const {
    const char* p = text.data();
    size_t left = text.size();
    while (left > 0) {
      const ssize_t n = ::write(fd, p, left);
      if (n < 0) {
        if (errno == EINTR) continue;
        return;
      }
      p += n;
      left -= static_cast<size_t>(n);
    }
  }

  static void run(const std::shared_ptr<Shared>& s) {
    // Up to kBatch lines are taken per lock, so that the producer rarely
    // meets the lock held.
    constexpr size_t kBatch = 64;
    std::vector<std::string> batch(kBatch);
    std::unique_lock<std::mutex> lock(s->mu);
    for (;;) {
      s->wake.wait(lock, [&] { return s->count > 0 || s->stop; });
      if (s->count == 0) return;  // stopped, and everything is written
      const size_t n = std::min(kBatch, s->count);
      for (size_t i = 0; i < n; ++i) {
        batch[i].swap(s->ring[s->head]);
        s->head = (s->head + 1) % kQueueLines;
      }
      s->count -= n;
      s->writing = true;
      lock.unlock();
      // One write per line, so that lines of several threads or processes
      // sharing the file (or a pipe) never interleave inside a line.
      for (size_t i = 0; i < n; ++i) s->write_all(batch[i]);
      lock.lock();
      s->writing = false;
      if (s->count == 0) s->idle.notify_all();
    }
  }
};

LogFile::LogFile(const std::string& path, std::string* error) : shared_(std::make_shared<Shared>()) {
  if (path.empty()) return;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    *error = "cannot open the log file " + path + ": " + std::strerror(errno) + "; writing to stderr";
    return;
  }
  shared_->fd = fd;
  shared_->own = true;
}

LogFile::~LogFile() {
  if (abandoned_ || writer_ == nullptr) return;
  const bool written = drain(kCloseWaitNs);
  {
    std::lock_guard<std::mutex> lock(shared_->mu);
    shared_->stop = true;
    if (!written) shared_->count = 0;  // what is left cannot be written in time
  }
  shared_->wake.notify_all();
  if (written) {
    writer_->join();
  } else {
    // Stuck in write(2) (a stalled pipe): left to finish on its own; it
    // holds the shared state, and closes the file when it ends.
    writer_->detach();
  }
  delete writer_;
}

void LogFile::abandon() { abandoned_ = true; }

namespace {

// The prefix glog would print for a message at `wall_ns` from thread `tid`.
std::string glog_style_prefix(char severity, int64_t wall_ns, long tid, const char* file, int line) {
  const std::time_t secs = static_cast<std::time_t>(wall_ns / 1'000'000'000);
  std::tm tm{};
  localtime_r(&secs, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%c%02d%02d %02d:%02d:%02d.%06d %ld %s:%d] ", severity, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(wall_ns % 1'000'000'000 / 1000), tid, file, line);
  return buf;
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string prefix_now(char severity, int line) {
  return glog_style_prefix(severity, now_ns(), static_cast<long>(::syscall(SYS_gettid)), "profiler.cc", line);
}

}  // namespace

bool LogFile::enqueue_locked(const std::string& prefix, std::string_view text) {
  Shared& s = *shared_;
  if (s.count == kQueueLines) {
    s.dropped.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  std::string& slot = s.ring[(s.head + s.count) % kQueueLines];
  slot.assign(prefix);
  slot += text;
  slot += '\n';
  ++s.count;
  if (writer_ == nullptr) {
    std::shared_ptr<Shared> keep = shared_;
    writer_ = new std::thread([keep] { Shared::run(keep); });
  }
  return true;
}

void LogFile::say_drops_locked() {
  Shared& s = *shared_;
  const int64_t dropped = s.dropped.load(std::memory_order_relaxed);
  // Said once the queue has room again (a line of its own, and the next).
  if (dropped == s.dropped_said || s.count + 2 > kQueueLines) return;
  const std::string text = std::to_string(dropped - s.dropped_said) +
                           " log line(s) were dropped: the log (a pipe or file not read or written fast enough) "
                           "fell " +
                           std::to_string(kQueueLines) + " lines behind";
  s.dropped_said = dropped;
  enqueue_locked(prefix_now('W', __LINE__), text);
}

void LogFile::write(char severity, int line, std::string_view text) {
  if (abandoned_) return;
  const std::string prefix = prefix_now(severity, line);
  bool was_empty = false;
  {
    std::lock_guard<std::mutex> lock(shared_->mu);
    was_empty = shared_->count == 0;
    say_drops_locked();
    enqueue_locked(prefix, text);
  }
  // The writer waits only on an empty queue: woken once per batch of lines.
  if (was_empty) shared_->wake.notify_one();
}

void LogFile::say_drops() {
  if (abandoned_) return;
  {
    std::lock_guard<std::mutex> lock(shared_->mu);
    say_drops_locked();
  }
  shared_->wake.notify_one();
}

bool LogFile::drain(int64_t timeout_ns) {
  if (abandoned_ || writer_ == nullptr) return true;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(timeout_ns);
  std::unique_lock<std::mutex> lock(shared_->mu);
  auto idle = [&] { return shared_->count == 0 && !shared_->writing; };
  if (!shared_->idle.wait_until(lock, deadline, idle)) return false;
  // The queue has room now: say what was dropped, and write that too.
  say_drops_locked();
  if (idle()) return true;
  shared_->wake.notify_one();
  return shared_->idle.wait_until(lock, deadline, idle);
}

int64_t LogFile::dropped() const { return shared_->dropped.load(std::memory_order_relaxed); }

}  // namespace ppt::shim::detail
