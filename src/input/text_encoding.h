// Logs that are not UTF-8 (or ASCII): UTF-16, as Windows PowerShell's '>'
// and Out-File write a redirected launch log. Such a file holds the job
// marker only with a NUL after (or before) every byte, so without this it
// reads as "no profiler line".
//
// sniff_encoding() tells UTF-16 from its first bytes: a byte-order mark, or,
// without one, text whose first 256 units are nine in ten ASCII with a NUL
// at the odd (little-endian) or even (big-endian) offset. Utf16Decoder then turns the bytes into UTF-8 as they
// are read, through iconv (glibc), in constant memory; a lone surrogate or a
// cut last unit becomes U+FFFD, never an error.
#pragma once

#include <iconv.h>

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace ppt {

enum class TextEncoding { kUtf8, kUtf16Le, kUtf16Be };

// "UTF-16LE", "UTF-16BE", "UTF-8".
std::string_view encoding_name(TextEncoding e);

// `head` is the file's first bytes (512 are plenty). `bom_bytes` receives
// the length of the byte-order mark (2 or 0).
TextEncoding sniff_encoding(std::string_view head, size_t* bom_bytes);

class Utf16Decoder {
 public:
  // Reads raw bytes: up to `cap` into `dst`; 0 at the end, -1 on an error.
  using RawRead = std::function<long(char* dst, size_t cap, std::string* error)>;

  Utf16Decoder(TextEncoding encoding, RawRead raw);
  ~Utf16Decoder();
  Utf16Decoder(const Utf16Decoder&) = delete;
  Utf16Decoder& operator=(const Utf16Decoder&) = delete;

  // Up to `cap` bytes of UTF-8; 0 at the end, -1 on a read error.
  long read(char* dst, size_t cap, std::string* error);

 private:
  long convert(char* dst, size_t cap, std::string* error);  // cap >= 4
  std::string pending_;                                     // converted, not yet handed out
  iconv_t cd_;
  RawRead raw_;
  bool big_endian_;
  std::string in_;  // raw bytes not yet converted
  size_t in_pos_ = 0;
  bool eof_ = false;
};

}  // namespace ppt
