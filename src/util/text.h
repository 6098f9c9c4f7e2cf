// Text helpers every stage shares: UTF-8 checking and repair, whole-field
// integers, numbers and names for people. One definition each, so that the
// parser, the writers and the command line agree on what a valid string, a
// number or the order of two names is.
//
// All functions are pure and thread safe.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>

namespace ppt {

// ---------------------------------------------------------------------------
// UTF-8 (RFC 3629; the Unicode Standard, Table 3-7 "Well-Formed UTF-8 Byte
// Sequences")

// The length (1 to 4) of the well-formed UTF-8 sequence that starts at s[i],
// or 0 when the bytes there are not one: a continuation byte without a lead,
// C0/C1 or F5..FF, a sequence cut short (by the end or by a byte that does
// not continue it), an overlong form (E0 80..9F, F0 80..8F), a surrogate
// (ED A0..BF: U+D800..DFFF) or a code point above U+10FFFF (F4 90..BF).
// Noncharacters (U+FFFE, U+FFFF, ...) are well-formed UTF-8.
inline size_t utf8_sequence_length(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  unsigned char c = byte(0);
  if (c < 0x80) return 1;
  size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(k) & 0xc0) != 0x80) return 0;
  }
  unsigned char c1 = byte(1);
  if ((c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 >= 0xa0) || (c == 0xf0 && c1 < 0x90) || (c == 0xf4 && c1 >= 0x90)) {
    return 0;
  }
  return n;
}

// The code point of the well-formed sequence of `n` bytes at s[i]
// (utf8_sequence_length(s, i) == n > 0).
char32_t utf8_code_point(std::string_view s, size_t i, size_t n);

// The code points of valid UTF-8 text (the bytes that do not continue a
// sequence): the width a terminal table or a picture's label gives it.
inline size_t utf8_code_points(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xc0) != 0x80 ? 1 : 0;
  return n;
}

// `s` if it is valid UTF-8, else a copy with each byte that does not start a
// well-formed sequence replaced by U+FFFD (one per byte); *changed says
// whether anything was replaced.
std::string sanitize_utf8(std::string_view s, bool* changed);

// ---------------------------------------------------------------------------
// Numbers

// The whole of `text` as a decimal integer of type T (no sign for unsigned
// types, no spaces, no trailing text); false when it is not one or does not fit.
template <typename T>
bool parse_whole_number(std::string_view text, T* out) {
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end;
}

// 1234567 -> "1,234,567".
std::string with_commas(uint64_t n);

// "1 file", "2 files", "1,234 steps": the count with commas and the noun in
// the singular for exactly one. `plural` defaults to `singular` + "s".
std::string counted(uint64_t n, std::string_view singular, std::string_view plural = {});

// Every percentage people read is formatted here: `pct` (already in percent)
// with `decimals` places and `unit` ("%", " pt"). A value that rounds to zero
// is "0.0%", never "-0.0%" (nor "+0.0%" with kAlways).
enum class PercentSign { kNegativeOnly, kAlways };
std::string format_percent(double pct, PercentSign sign = PercentSign::kNegativeOnly, int decimals = 1,
                           std::string_view unit = "%");

// A size of memory as people write it: a number and a unit, B, KB, MB, GB,
// TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024), the unit's case
// as written here or all lower case, at most one space between
// ("80GiB", "81920MiB", "80GB" = 80e9, "79.5 GiB"), or whole bytes without a
// unit ("85899345920"). The bytes, rounded, into *bytes; false with the
// reason in *why when it is not one, is not above 0 or is above 2^60 bytes.
bool parse_byte_size(std::string_view text, int64_t* bytes, std::string* why);

// Bytes as GiB for people: "83.2 GiB" (`decimals` places).
std::string format_gib(int64_t bytes, int decimals = 1);

// ---------------------------------------------------------------------------
// Names

// "machine2" < "machine10"; runs of digits compare by value (fewer leading
// zeros first when equal), the rest byte-wise.
bool natural_less(const std::string& a, const std::string& b);

}  // namespace ppt
