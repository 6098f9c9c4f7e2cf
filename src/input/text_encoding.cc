#include "input/text_encoding.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace ppt {

std::string_view encoding_name(TextEncoding e) {
  switch (e) {
    case TextEncoding::kUtf16Le: return "UTF-16LE";
    case TextEncoding::kUtf16Be: return "UTF-16BE";
    case TextEncoding::kUtf8: break;
  }
  return "UTF-8";
}

TextEncoding sniff_encoding(std::string_view head, size_t* bom_bytes) {
  *bom_bytes = 0;
  auto byte = [&](size_t i) { return static_cast<unsigned char>(head[i]); };
  if (head.size() >= 2 && byte(0) == 0xff && byte(1) == 0xfe) {
    *bom_bytes = 2;
    return TextEncoding::kUtf16Le;
  }
  if (head.size() >= 2 && byte(0) == 0xfe && byte(1) == 0xff) {
    *bom_bytes = 2;
    return TextEncoding::kUtf16Be;
  }
  // No mark: ASCII text in UTF-16 has a NUL in every other byte and none
  // between. Nine units in ten must fit (a few characters beyond Latin-1 do
  // not), and a UTF-8 log with NUL bytes (a crash's zero fill) does not
  // fit: a pair of NULs counts for neither.
  size_t units = std::min<size_t>(head.size(), 512) / 2;
  if (units < 16) return TextEncoding::kUtf8;
  size_t le = 0, be = 0;
  for (size_t u = 0; u < units; ++u) {
    unsigned char a = byte(2 * u), b = byte(2 * u + 1);
    le += a != 0 && b == 0;
    be += a == 0 && b != 0;
  }
  if (le * 10 >= units * 9) return TextEncoding::kUtf16Le;
  if (be * 10 >= units * 9) return TextEncoding::kUtf16Be;
  return TextEncoding::kUtf8;
}

Utf16Decoder::Utf16Decoder(TextEncoding encoding, RawRead raw)
    : raw_(std::move(raw)), big_endian_(encoding == TextEncoding::kUtf16Be) {
  cd_ = iconv_open("UTF-8", big_endian_ ? "UTF-16BE" : "UTF-16LE");
}

Utf16Decoder::~Utf16Decoder() {
  if (cd_ != reinterpret_cast<iconv_t>(-1)) iconv_close(cd_);
}

long Utf16Decoder::read(char* dst, size_t cap, std::string* error) {
  if (!pending_.empty()) {
    size_t n = std::min(cap, pending_.size());
    std::memcpy(dst, pending_.data(), n);
    pending_.erase(0, n);
    return static_cast<long>(n);
  }
  if (cap >= 4) return convert(dst, cap, error);
  // Less room than one character may take: converted aside, handed out in
  // pieces (0 must mean the end, never "no room").
  char aside[64];
  long n = convert(aside, sizeof aside, error);
  if (n <= 0) return n;
  size_t k = std::min(cap, static_cast<size_t>(n));
  std::memcpy(dst, aside, k);
  pending_.assign(aside + k, static_cast<size_t>(n) - k);
  return static_cast<long>(k);
}

long Utf16Decoder::convert(char* dst, size_t cap, std::string* error) {
  if (cd_ == reinterpret_cast<iconv_t>(-1)) {
    *error = std::string("cannot convert from UTF-16: ") + std::strerror(errno);
    return -1;
  }
  constexpr size_t kChunk = 1 << 16;
  size_t out_left = cap;
  char* out = dst;
  while (out_left >= 4) {
    if (in_pos_ == in_.size() || (!eof_ && in_.size() - in_pos_ < 4)) {
      if (!eof_) {
        in_.erase(0, in_pos_);
        in_pos_ = 0;
        size_t have = in_.size();
        in_.resize(have + kChunk);
        long n = raw_(in_.data() + have, kChunk, error);
        if (n < 0) {
          in_.resize(have);
          if (out != dst) break;  // what was converted comes first; the error on the next call
          return -1;
        }
        in_.resize(have + static_cast<size_t>(n));
        if (n == 0) eof_ = true;
      }
      if (in_pos_ == in_.size()) break;
    }
    char* in = in_.data() + in_pos_;
    size_t in_left = in_.size() - in_pos_;
    size_t r = iconv(cd_, &in, &in_left, &out, &out_left);
    in_pos_ = in_.size() - in_left;
    if (r != static_cast<size_t>(-1)) continue;
    if (errno == E2BIG) break;
    if (errno == EINVAL && !eof_) continue;  // a unit cut by the read: more bytes come
    // A lone surrogate (EILSEQ) or a cut last unit (EINVAL at the end):
    // U+FFFD in its place, one unit skipped.
    std::memcpy(out, "\xEF\xBF\xBD", 3);
    out += 3;
    out_left -= 3;
    in_pos_ = std::min(in_.size(), in_pos_ + 2);
  }
  return static_cast<long>(out - dst);
}

}  // namespace ppt
