// A tiny protocol-buffer wire-format writer, in the style of Perfetto's
// protozero: fields are appended to a std::string as they come, nested
// messages are opened and closed in LIFO order, and nothing is ever parsed.
//
// Why by hand: the .pftrace writer needs about twenty fields of Perfetto's
// trace protos (perfetto_writer.cc lists them). libprotobuf would add a
// dependency, generated code for Perfetto's .proto tree and an object per
// message on the hot path (two packets per job); this is a few dozen lines,
// allocation-free once the buffer has grown, and the tests check its output
// with an independent decoder (`protoc --decode`).
//
// Nested lengths: open_nested() reserves one length byte and close_nested()
// fills it in; a message of 128 bytes or more moves its content right by the
// extra length bytes. Trace packets are small (one job), so the move is rare
// and short, and every length is minimal, as protoc writes it.
//
// Not thread safe; one writer per buffer.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace ppt::proto {

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

inline constexpr size_t varint_size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

inline constexpr uint64_t tag(uint32_t field, WireType type) { return (uint64_t{field} << 3) | type; }

class Writer {
 public:
  // Writes into `buffer`, which it grows as needed; size() bytes of it are
  // the output so far (the string's own size is only capacity in use).
  explicit Writer(std::string& buffer) : out_(buffer) {}

  void varint(uint32_t field, uint64_t v) {
    char* p = ensure(20);
    p = put_varint(p, tag(field, kVarint));
    p = put_varint(p, v);
    pos_ = static_cast<size_t>(p - out_.data());
  }
  // int32/int64 fields: negative values take ten bytes, as in protobuf.
  void int64(uint32_t field, int64_t v) { varint(field, static_cast<uint64_t>(v)); }
  void boolean(uint32_t field, bool v) { varint(field, v ? 1 : 0); }
  void fixed64(uint32_t field, uint64_t v) {
    char* p = ensure(18);
    p = put_varint(p, tag(field, kFixed64));
    for (int i = 0; i < 8; ++i) *p++ = static_cast<char>((v >> (8 * i)) & 0xff);  // little endian
    pos_ = static_cast<size_t>(p - out_.data());
  }
  void bytes(uint32_t field, std::string_view v) {
    char* p = ensure(20 + v.size());
    p = put_varint(p, tag(field, kLengthDelimited));
    p = put_varint(p, v.size());
    if (!v.empty()) std::memcpy(p, v.data(), v.size());
    pos_ = static_cast<size_t>(p - out_.data()) + v.size();
  }
  void string(uint32_t field, std::string_view v) { bytes(field, v); }

  // Opens a nested message (or a packet: field 1 of Trace); returns the token
  // for close_nested().
  size_t open_nested(uint32_t field) {
    char* p = ensure(11);
    p = put_varint(p, tag(field, kLengthDelimited));
    *p++ = '\0';
    pos_ = static_cast<size_t>(p - out_.data());
    return pos_;
  }
  void close_nested(size_t token) {
    size_t len = pos_ - token;
    size_t n = varint_size(len);
    if (n > 1) {
      // Make room for the longer length: shift the content right.
      ensure(n - 1);
      char* base = out_.data() + token;
      std::memmove(base + n - 1, base, len);
      pos_ += n - 1;
    }
    char* p = out_.data() + token - 1;
    uint64_t v = len;
    for (size_t i = 0; i + 1 < n; ++i) {
      p[i] = static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    p[n - 1] = static_cast<char>(v);
  }

  size_t size() const { return pos_; }
  std::string_view view() const { return {out_.data(), pos_}; }
  void clear() { pos_ = 0; }

 private:
  friend class Reserved;
  // Room for `n` more bytes at pos_; returns where they go.
  char* ensure(size_t n) {
    if (pos_ + n > out_.size()) [[unlikely]]
      grow(n);
    return out_.data() + pos_;
  }
  [[gnu::noinline]] void grow(size_t n) { out_.resize(std::max(out_.size() * 2, pos_ + n + 4096)); }
  static char* put_varint(char* p, uint64_t v) {
    while (v >= 0x80) {
      *p++ = static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    *p++ = static_cast<char>(v);
    return p;
  }

  std::string& out_;
  size_t pos_ = 0;
};

// Room for at most `most` bytes of fields reserved in a Writer up front,
// written through a cursor of its own: the same calls and the same bytes as
// the Writer's (small fields only: no strings), for a hot run of fields.
//
// Why: a Writer keeps its position in itself and its buffer in a string
// that it points to, and the compiler must reload both after every byte it
// stores (a char store may alias them); here the cursor is a local that
// stays in a register, and the room is checked once. The .pftrace writer
// writes a job's two packets (about 80 bytes, 20 fields) through one.
// `most` must cover every field written and each nested length that grows
// past one byte (9 bytes each at most). The Writer gets the bytes when the
// Reserved is destroyed; nothing else may write to it before.
class Reserved {
 public:
  Reserved(Writer& w, size_t most) : w_(w), p_(w.ensure(most)) {}
  ~Reserved() { w_.pos_ = static_cast<size_t>(p_ - w_.out_.data()); }
  Reserved(const Reserved&) = delete;
  Reserved& operator=(const Reserved&) = delete;

  void varint(uint32_t field, uint64_t v) {
    p_ = Writer::put_varint(p_, tag(field, kVarint));
    p_ = Writer::put_varint(p_, v);
  }
  void int64(uint32_t field, int64_t v) { varint(field, static_cast<uint64_t>(v)); }
  void boolean(uint32_t field, bool v) { varint(field, v ? 1 : 0); }
  void fixed64(uint32_t field, uint64_t v) {
    p_ = Writer::put_varint(p_, tag(field, kFixed64));
    for (int i = 0; i < 8; ++i) *p_++ = static_cast<char>((v >> (8 * i)) & 0xff);  // little endian
  }
  char* open_nested(uint32_t field) {
    p_ = Writer::put_varint(p_, tag(field, kLengthDelimited));
    *p_++ = '\0';
    return p_;
  }
  void close_nested(char* token) {
    const size_t len = static_cast<size_t>(p_ - token);
    if (len < 0x80) [[likely]] {
      token[-1] = static_cast<char>(len);
      return;
    }
    const size_t n = varint_size(len);
    std::memmove(token + n - 1, token, len);
    p_ += n - 1;
    Writer::put_varint(token - 1, len);
  }

 private:
  Writer& w_;
  char* p_;
};

}  // namespace ppt::proto
