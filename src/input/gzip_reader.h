// Reads gzip data as gunzip does, and keeps what follows it.
//
// zlib's gzread() decompresses one gzip member after another and drops,
// without a word, whatever follows the last member that is not gzip: job
// lines appended to a .gz log after it was compressed (a launcher that
// compresses the log, then the still-running trainer writes on) were lost,
// 200 of 408 in one case, with exit status 0. gunzip warns "trailing garbage
// ignored"; a log reader must not lose jobs at all. So this reader inflates
// the members itself (zlib's inflate(), with gzip headers) and hands on the
// bytes after them unchanged, counting them, so that the caller reads them
// as text and says so. Data that is not gzip from its first byte is handed
// on unchanged (compressed standard input is optional).
#pragma once

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace ppt {

// Whether a file name is a gzip-compressed log's ("<name>.gz"): read through
// zlib by the scanner, not followed by watch. The one test of the suffix.
bool is_gzip_name(std::string_view file_name);

class GzipReader {
 public:
  // `raw` reads up to cap compressed bytes into dst: the count, 0 at the
  // end, or -1 with *error set. `cut_message` is the error for data that
  // ends inside a member.
  using RawRead = std::function<long(char* dst, size_t cap, std::string* error)>;
  GzipReader(RawRead raw, std::string cut_message);
  ~GzipReader();
  GzipReader(const GzipReader&) = delete;
  GzipReader& operator=(const GzipReader&) = delete;

  // Up to cap bytes of the decompressed data (then of the bytes after it):
  // the count, 0 at the end, or -1 with *error set (corrupt or cut data).
  long read(char* dst, size_t cap, std::string* error);

  // How many gzip members were decompressed, and how many bytes followed
  // the last of them that were not gzip (handed on as they are).
  uint64_t members() const { return members_; }
  uint64_t trailing_bytes() const { return trailing_; }

  // A RawRead over a file descriptor: read(), retried on EINTR.
  static RawRead from_fd(int fd);

 private:
  enum class Mode { kStart, kMember, kBetween, kPlain };
  // Reads more raw bytes behind those not yet used; false on a read error.
  bool fill(std::string* error);
  size_t available() const { return in_len_ - in_pos_; }

  RawRead raw_;
  std::string cut_message_;
  std::vector<unsigned char> in_;
  size_t in_pos_ = 0, in_len_ = 0;
  bool eof_ = false;
  z_stream zs_{};
  bool zs_ready_ = false;
  Mode mode_ = Mode::kStart;
  uint64_t members_ = 0;
  uint64_t trailing_ = 0;
};

}  // namespace ppt
