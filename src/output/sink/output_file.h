// Writes an output file whole or not at all.
//
// Bytes go to a temporary file beside the target, which is renamed over the
// target only by commit(); an OutputFile destroyed without commit() (an
// error, an exception) removes the temporary file, so an interrupted run
// never leaves half a trace. A target that exists and is not a regular file
// (/dev/stdout, a pipe, /dev/full) is written directly, never replaced.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "output/sink/byte_sink.h"

namespace ppt {

class OutputFile : public ByteSink {
 public:
  OutputFile() = default;
  ~OutputFile() override;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Opens the temporary file. On failure returns false and sets error().
  // A symbolic link is written through (its target is replaced); a link to
  // nothing is refused rather than replaced by a file.
  bool open(const std::string& path);
  // Before open(): `path` lies inside the folder `root` (batch's --out,
  // which an artifact may have been unpacked beside or into), and nothing
  // below `root` on the way to it may be a symbolic link: a link in a
  // folder's place or in the file's is refused ("is a symbolic link inside
  // ROOT; refusing to write through it"), and the file is renamed over its
  // own name, never over a link's target. `root` itself may be a link.
  void refuse_links_below(std::string root) { confine_root_ = std::move(root); }
  // "" when open(path) would succeed as far as the file system says now: a
  // file can be created in its folder (a probe file is created and removed
  // at once), or it names a pipe or device to write directly; else the error
  // line open() would give. Commands call it before reading any input, so
  // that an output that cannot be written is found before the work is done.
  static std::string check_can_create(const std::string& path);
  // Writes to standard output (descriptor 1, never a path: with descriptor 1
  // closed, /dev/stdout names nothing and must not become a file).
  bool open_stdout();

  // Buffered; errors are remembered and reported by commit().
  void write(std::string_view bytes) override;
  void write(const char* p, size_t n) { write(std::string_view(p, n)); }

  // Flushes, closes and renames into place. False (and error()) on any
  // failure, in which case nothing is left at the target.
  bool commit();
  void abandon();

  const std::string& error() const { return error_; }
  const std::string& path() const { return path_; }
  size_t bytes_written() const { return bytes_; }

 private:
  void flush();
  void fail(const std::string& what, int err);

  std::string path_;
  std::string confine_root_;  // refuse_links_below()
  std::string target_;        // where commit() renames the temporary file (a link's target)
  std::string temp_path_;     // empty when writing the target directly
  int temp_slot_ = -1;        // in the list of files to remove on a signal
  int fd_ = -1;
  std::string buffer_;
  size_t bytes_ = 0;
  std::string error_;
};

// For main(): SIGINT, SIGTERM and SIGHUP remove the temporary files of the
// outputs being written, then end the process by the same signal; SIGPIPE and
// SIGXFSZ are ignored, so a closed pipe or a file size limit is a write error
// that is reported (exit 1) instead of a death by signal.
void install_output_signal_handlers();

// "" when `path` lies inside the folder `root` with no symbolic link below
// `root` on the way to it (nor in its own place), else an error line naming
// the link (what OutputFile::refuse_links_below() refuses).
std::string link_inside(const std::string& root, const std::string& path);

// Writes `text` to standard output (descriptor 1, as OutputFile::open_stdout)
// and returns "" or the error line: a command's answer on a closed descriptor,
// a closed pipe or a full disk is an error, not a silent exit 0.
std::string write_standard_output(std::string_view text);

// True when `a` and `b` name the same existing file (same device and inode).
bool same_file(const std::string& a, const std::string& b);

}  // namespace ppt
