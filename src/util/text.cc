#include "util/text.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <utility>

namespace ppt {

char32_t utf8_code_point(std::string_view s, size_t i, size_t n) {
  static constexpr unsigned char kLeadMask[] = {0, 0x7f, 0x1f, 0x0f, 0x07};
  char32_t cp = static_cast<unsigned char>(s[i]) & kLeadMask[n];
  for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3f);
  return cp;
}

std::string sanitize_utf8(std::string_view s, bool* changed) {
  *changed = false;
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    size_t n = utf8_sequence_length(s, i);
    if (n > 0) {
      out.append(s.data() + i, n);
      i += n;
    } else {
      out += "\xEF\xBF\xBD";
      *changed = true;
      ++i;
    }
  }
  return out;
}

std::string with_commas(uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  out.reserve(digits.size() + digits.size() / 3);
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

std::string counted(uint64_t n, std::string_view singular, std::string_view plural) {
  std::string out = with_commas(n);
  out += ' ';
  if (n == 1) {
    out += singular;
  } else if (plural.empty()) {
    out += singular;
    out += 's';
  } else {
    out += plural;
  }
  return out;
}

std::string format_percent(double pct, PercentSign sign, int decimals, std::string_view unit) {
  std::string text = fmt::format("{:.{}f}", pct, decimals);
  // Rounded to zero: no sign at all (fmt keeps the sign of -0.04 as "-0.0").
  bool zero = text.find_first_not_of("-0.") == std::string::npos;
  if (zero && text.front() == '-') text.erase(0, 1);
  if (!zero && sign == PercentSign::kAlways && text.front() != '-') text.insert(0, 1, '+');
  text += unit;
  return text;
}

bool parse_byte_size(std::string_view text, int64_t* bytes, std::string* why) {
  static constexpr std::pair<std::string_view, double> kUnits[] = {{"B", 1},        {"KB", 1e3},     {"MB", 1e6},
                                                                   {"GB", 1e9},     {"TB", 1e12},    {"KiB", 0x1p10},
                                                                   {"MiB", 0x1p20}, {"GiB", 0x1p30}, {"TiB", 0x1p40}};
  constexpr double kMost = 0x1p60;
  const char* units = "B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024)";
  size_t n = 0;  // the number's end: digits and at most one '.'
  bool dot = false, digits = false;
  for (; n < text.size(); ++n) {
    const char c = text[n];
    if (c >= '0' && c <= '9') {
      digits = true;
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      break;
    }
  }
  if (!digits) {
    *why = "not a size";
    return false;
  }
  std::string_view unit = text.substr(n);
  if (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  double scale = 0;
  if (unit.empty()) {
    if (dot) {
      *why = fmt::format("a size without a unit is whole bytes; the units are {}", units);
      return false;
    }
    scale = 1;
  }
  for (auto [name, factor] : kUnits) {
    std::string lower(name);
    for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    if (unit == name || unit == lower) scale = factor;
  }
  if (scale == 0) {
    *why = fmt::format("unknown unit '{}'; the units are {}", unit, units);
    return false;
  }
  const double value = std::strtod(std::string(text.substr(0, n)).c_str(), nullptr) * scale;
  if (!(value >= 0.5)) {
    *why = "the size must be above 0";
    return false;
  }
  if (value > kMost) {
    *why = "the size is above 2^60 bytes (1 EiB)";
    return false;
  }
  *bytes = std::llround(value);
  return true;
}

std::string format_gib(int64_t bytes, int decimals) {
  return fmt::format("{:.{}f} GiB", static_cast<double>(bytes) / 0x1p30, decimals);
}

bool natural_less(const std::string& a, const std::string& b) {
  const auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (is_digit(a[i]) && is_digit(b[j])) {
      size_t i0 = i, j0 = j;
      while (i < a.size() && a[i] == '0') ++i;
      while (j < b.size() && b[j] == '0') ++j;
      size_t is = i, js = j;
      while (i < a.size() && is_digit(a[i])) ++i;
      while (j < b.size() && is_digit(b[j])) ++j;
      size_t la = i - is, lb = j - js;
      if (la != lb) return la < lb;
      int c = a.compare(is, la, b, js, lb);
      if (c != 0) return c < 0;
      if ((i - i0) != (j - j0)) return (i - i0) < (j - j0);  // fewer leading zeros first
    } else {
      if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
      ++i;
      ++j;
    }
  }
  return (a.size() - i) < (b.size() - j);
}

}  // namespace ppt
