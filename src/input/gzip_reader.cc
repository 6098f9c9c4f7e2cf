#include "input/gzip_reader.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <utility>

namespace ppt {
namespace {

constexpr size_t kInputBytes = 256 * 1024;

bool gzip_magic(const unsigned char* p) { return p[0] == 0x1f && p[1] == 0x8b; }

}  // namespace

bool is_gzip_name(std::string_view file_name) {
  return file_name.size() > 3 && file_name.substr(file_name.size() - 3) == ".gz";
}

GzipReader::GzipReader(RawRead raw, std::string cut_message)
    : raw_(std::move(raw)), cut_message_(std::move(cut_message)), in_(kInputBytes) {}

GzipReader::RawRead GzipReader::from_fd(int fd) {
  return [fd](char* dst, size_t cap, std::string* error) -> long {
    while (true) {
      ssize_t n = ::read(fd, dst, cap);
      if (n >= 0) return static_cast<long>(n);
      if (errno == EINTR) continue;
      *error = std::strerror(errno);
      return -1;
    }
  };
}

GzipReader::~GzipReader() {
  if (zs_ready_) inflateEnd(&zs_);
}

bool GzipReader::fill(std::string* error) {
  if (in_pos_ > 0) {
    std::memmove(in_.data(), in_.data() + in_pos_, available());
    in_len_ -= in_pos_;
    in_pos_ = 0;
  }
  long n = raw_(reinterpret_cast<char*>(in_.data() + in_len_), in_.size() - in_len_, error);
  if (n < 0) return false;
  if (n == 0) eof_ = true;
  in_len_ += static_cast<size_t>(n);
  return true;
}

long GzipReader::read(char* dst, size_t cap, std::string* error) {
  if (cap == 0) return 0;
  while (true) {
    if (mode_ == Mode::kStart || mode_ == Mode::kBetween) {
      // A member starts with the two magic bytes; need both to decide.
      if (available() < 2 && !eof_) {
        if (!fill(error)) return -1;
        continue;
      }
      if (available() == 0) return 0;
      if (available() >= 2 && gzip_magic(in_.data() + in_pos_)) {
        // 16 + MAX_WBITS: a gzip header and trailer, checked (CRC, length).
        int rc = zs_ready_ ? inflateReset(&zs_) : inflateInit2(&zs_, 16 + MAX_WBITS);
        if (rc != Z_OK) {
          *error = "gzip: cannot start decompressing";
          return -1;
        }
        zs_ready_ = true;
        mode_ = Mode::kMember;
        continue;
      }
      mode_ = Mode::kPlain;  // not gzip (from the start, or after the members)
    }
    if (mode_ == Mode::kPlain) {
      if (available() == 0) {
        if (eof_) return 0;
        if (!fill(error)) return -1;
        continue;
      }
      size_t n = std::min(cap, available());
      std::memcpy(dst, in_.data() + in_pos_, n);
      in_pos_ += n;
      if (members_ > 0) trailing_ += n;
      return static_cast<long>(n);
    }
    // Inside a member.
    if (available() == 0) {
      if (eof_) {
        *error = cut_message_;
        return -1;
      }
      if (!fill(error)) return -1;
      continue;
    }
    zs_.next_in = in_.data() + in_pos_;
    zs_.avail_in = static_cast<uInt>(std::min<size_t>(available(), UINT_MAX));
    zs_.next_out = reinterpret_cast<Bytef*>(dst);
    zs_.avail_out = static_cast<uInt>(std::min<size_t>(cap, UINT_MAX));
    const uInt out_before = zs_.avail_out;
    int rc = inflate(&zs_, Z_NO_FLUSH);
    in_pos_ = static_cast<size_t>(zs_.next_in - in_.data());
    const size_t produced = out_before - zs_.avail_out;
    if (rc == Z_STREAM_END) {
      ++members_;
      mode_ = Mode::kBetween;
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
      *error = std::string("gzip: ") + (zs_.msg ? zs_.msg : "corrupt data");
      return -1;
    }
    if (produced > 0) return static_cast<long>(produced);
  }
}

}  // namespace ppt
