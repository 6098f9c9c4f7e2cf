#include "output/sink/output_file.h"
#include "output/sink/signal_cleanup.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

namespace ppt {
namespace {
constexpr size_t kBufferBytes = 1 << 20;

// The record getdents64 fills (the kernel's struct linux_dirent64).
struct linux_dirent64_view {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[1];
};

// Temporary files being written, for the signal handler: fixed storage, so
// that the handler only reads memory and calls unlink() (async-signal-safe).
// Slot states: 0 free, 1 being filled, 2 holds a path.
constexpr int kTempSlots = 64;
constexpr size_t kTempPathMax = 4096;
char g_temp_paths[kTempSlots][kTempPathMax];
std::atomic<int> g_temp_state[kTempSlots];

int register_temp(const std::string& path) {
  if (path.size() >= kTempPathMax) return -1;
  for (int i = 0; i < kTempSlots; ++i) {
    int expected = 0;
    if (g_temp_state[i].compare_exchange_strong(expected, 1)) {
      std::memcpy(g_temp_paths[i], path.c_str(), path.size() + 1);
      g_temp_state[i].store(2);
      return i;
    }
  }
  return -1;  // more outputs at once than slots: those are not cleaned on a signal
}

void unregister_temp(int& slot) {
  if (slot >= 0) g_temp_state[slot].store(0);
  slot = -1;
}

// Directories to remove whole on a signal (archives being extracted): the
// same fixed storage, and a removal made of async-signal-safe calls only.
constexpr int kTreeSlots = 16;
char g_tree_paths[kTreeSlots][kTempPathMax];
std::atomic<int> g_tree_state[kTreeSlots];

// Removes what is below the directory `dir` (a descriptor, closed here) with
// openat/getdents64/unlinkat only: no allocation, no stdio, so that it may
// run in a signal handler. Links are removed, never followed; `depth` bounds
// the recursion (a deeper tree keeps its deepest part; the next batch
// removes the rest).
void remove_below(int dir, int depth) {
  alignas(8) char buf[4096];
  for (bool again = true; again;) {
    again = false;
    lseek(dir, 0, SEEK_SET);
    while (true) {
      long n = syscall(SYS_getdents64, dir, buf, sizeof buf);
      if (n <= 0) break;
      for (long off = 0; off < n;) {
        const char* rec = buf + off;
        unsigned short reclen = 0;
        std::memcpy(&reclen, rec + offsetof(linux_dirent64_view, d_reclen), sizeof reclen);
        off += reclen;
        const char* name = rec + offsetof(linux_dirent64_view, d_name);
        if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0))) continue;
        if (unlinkat(dir, name, 0) == 0) {
          again = true;
          continue;
        }
        if (depth <= 0) continue;
        int sub = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0) continue;
        remove_below(sub, depth - 1);
        if (unlinkat(dir, name, AT_REMOVEDIR) == 0) again = true;
      }
    }
  }
  close(dir);
}

extern "C" void remove_temps_and_die(int sig) {
  for (int i = 0; i < kTempSlots; ++i) {
    if (g_temp_state[i].load() == 2) unlink(g_temp_paths[i]);
  }
  for (int i = 0; i < kTreeSlots; ++i) {
    if (g_tree_state[i].load() != 2) continue;
    // Another thread may still be writing into the tree (an extraction):
    // passes until the folder itself is gone, a few at most.
    for (int pass = 0; pass < 16 && rmdir(g_tree_paths[i]) != 0 && errno != ENOENT; ++pass) {
      int dir = open(g_tree_paths[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (dir < 0) break;
      remove_below(dir, 32);
    }
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

// Creates a new temporary file beside `path` (on the signal handler's list
// before it exists, so a signal at any moment leaves nothing behind).
// Returns its descriptor, or -1 with the errno of the last attempt in `*err`.
int create_temp(const std::string& path, std::string* name, int* slot, int* err) {
  static std::atomic<unsigned> counter{0};
  *err = EEXIST;
  for (int attempt = 0; attempt < 100 && *err == EEXIST; ++attempt) {
    *name = path + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
    *slot = register_temp(*name);
    int fd = ::open(name->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) return fd;
    *err = errno;
    unregister_temp(*slot);
  }
  return -1;
}

std::string folder_of(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Why no file could be created in the folder of `path` (errno `err`): the
// folder missing or not a folder, else the system's reason.
std::string cannot_create(const std::string& path, int err) {
  std::string dir = folder_of(path);
  struct stat st {};
  if (err == ENOENT || err == ENOTDIR) {
    if (stat(dir.c_str(), &st) != 0 && (errno == ENOENT || errno == ENOTDIR)) {
      return "cannot create: the folder " + dir + " does not exist";
    }
    if (stat(dir.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) return "cannot create: " + dir + " is not a folder";
  }
  return "cannot create a file in " + dir + ": " + strerror(err);
}

// The file open() writes: `given`, or the target of the link `given` is.
// False and the reason when it is a link to nothing.
bool resolve_target(const std::string& given, std::string* path, std::string* error) {
  *path = given;
  struct stat lst {};
  if (lstat(given.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
    std::error_code ec;
    std::filesystem::path target = std::filesystem::canonical(given, ec);
    if (ec) {
      *error = "is a symbolic link to nothing (" + ec.message() + "); refusing to replace it";
      return false;
    }
    *path = target.string();
  }
  return true;
}

}  // namespace

std::string OutputFile::check_can_create(const std::string& given) {
  std::string path, error;
  if (!resolve_target(given, &path, &error)) return given + ": " + error;
  struct stat st {};
  if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    // Written directly (a pipe, a device); only a folder is refused here.
    return S_ISDIR(st.st_mode) ? given + ": is a directory" : "";
  }
  std::string name;
  int slot = -1, err = 0;
  int fd = create_temp(path, &name, &slot, &err);
  if (fd < 0) return given + ": " + cannot_create(path, err);
  ::close(fd);
  unlink(name.c_str());
  unregister_temp(slot);
  return "";
}

int register_signal_cleanup_dir(const std::string& path) {
  if (path.size() >= kTempPathMax) return -1;
  for (int i = 0; i < kTreeSlots; ++i) {
    int expected = 0;
    if (g_tree_state[i].compare_exchange_strong(expected, 1)) {
      std::memcpy(g_tree_paths[i], path.c_str(), path.size() + 1);
      g_tree_state[i].store(2);
      return i;
    }
  }
  return -1;
}

void unregister_signal_cleanup_dir(int slot) {
  if (slot >= 0 && slot < kTreeSlots) g_tree_state[slot].store(0);
}

void install_output_signal_handlers() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;  // nohup
    struct sigaction sa {};
    sa.sa_handler = remove_temps_and_die;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, nullptr);
  }
  signal(SIGPIPE, SIG_IGN);
  signal(SIGXFSZ, SIG_IGN);
}

OutputFile::~OutputFile() { abandon(); }

void OutputFile::fail(const std::string& what, int err) {
  if (error_.empty()) error_ = path_ + ": " + what + (err ? std::string(": ") + strerror(err) : "");
}

bool OutputFile::open_stdout() {
  path_ = "standard output";
  fd_ = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 0);
  if (fd_ < 0) {
    fail(errno == EBADF ? "is closed" : "cannot be written", errno == EBADF ? 0 : errno);
    return false;
  }
  buffer_.reserve(kBufferBytes);
  return true;
}

// "" when `given` lies inside `root` and no component of it below `root` is
// a symbolic link, else why it may not be written. lstat() each component:
// what an artifact planted (a run folder or a file name that is a link out
// of --out) is found before any byte is written, and the final name is
// renamed over, never resolved.
std::string link_inside(const std::string& root, const std::string& given) {
  namespace fs = std::filesystem;
  fs::path rel = fs::path(given).lexically_normal().lexically_relative(fs::path(root).lexically_normal());
  if (rel.empty() || *rel.begin() == "..") return given + ": is not inside " + root + "; refusing to write it";
  fs::path at = fs::path(root);
  for (const fs::path& part : rel) {
    if (part == "." || part.empty()) continue;
    at /= part;
    struct stat lst {};
    if (lstat(at.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
      return at.string() + ": is a symbolic link inside " + root + "; refusing to write through it";
    }
  }
  return "";
}

bool OutputFile::open(const std::string& given) {
  path_ = given;
  std::string path, error;
  if (!confine_root_.empty()) {
    if (std::string why = link_inside(confine_root_, given); !why.empty()) {
      error_ = why;
      return false;
    }
    path = given;
  } else if (!resolve_target(given, &path, &error)) {
    fail(error, 0);
    return false;
  }
  target_ = path;
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
  std::string name;
  int e = 0;
  fd_ = create_temp(path, &name, &temp_slot_, &e);
  if (fd_ < 0) {
    fail(cannot_create(path, e), 0);
    return false;
  }
  temp_path_ = name;
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
    if (rename(temp_path_.c_str(), target_.c_str()) != 0) {
      fail("cannot rename into place", errno);
      abandon();
      return false;
    }
    unregister_temp(temp_slot_);
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
    unregister_temp(temp_slot_);
    temp_path_.clear();
  }
}

std::string write_standard_output(std::string_view text) {
  std::fflush(stdout);  // what went through stdio before comes first
  OutputFile out;
  if (!out.open_stdout()) return out.error();
  out.write(text);
  if (!out.commit()) return out.error();
  return "";
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  if (stat(a.c_str(), &sa) != 0 || stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace ppt
