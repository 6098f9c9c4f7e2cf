#include "util/escape.h"

#include <fmt/format.h>

#include <algorithm>

#include "util/text.h"

namespace ppt {

bool is_escaped_code_point(char32_t cp) {
  return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x061c || cp == 0x200e || cp == 0x200f ||
         (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

// Hand-written: no library in the project escapes for a terminal, and this
// runs on every message and table cell (a byte loop, no allocation per byte).
void append_terminal_text(std::string& out, std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) {
      out.push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    if (c < 0x80) {
      switch (c) {
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default: out += fmt::format("\\x{:02x}", c);
      }
      ++i;
      continue;
    }
    size_t n = utf8_sequence_length(s, i);
    if (n == 0) {
      out += fmt::format("\\x{:02x}", c);
      ++i;
      continue;
    }
    char32_t cp = utf8_code_point(s, i, n);
    if (is_escaped_code_point(cp)) {
      out += fmt::format("\\u{:04x}", static_cast<uint32_t>(cp));
    } else {
      out.append(s.data() + i, n);
    }
    i += n;
  }
}

std::string terminal_text(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  append_terminal_text(out, s);
  return out;
}

void append_markdown_text(std::string& out, std::string_view s) {
  std::string plain = terminal_text(s);
  for (char c : plain) {
    unsigned char u = static_cast<unsigned char>(c);
    bool punct = u < 0x80 && ((u >= '!' && u <= '/') || (u >= ':' && u <= '@') || (u >= '[' && u <= '`') ||
                              (u >= '{' && u <= '~'));
    if (punct) out.push_back('\\');
    out.push_back(c);
    // GFM finds e-mail autolinks in the text after escapes are resolved;
    // a word joiner after the "@" (invisible) is not a domain's first letter.
    if (c == '@') out += "\u2060";
  }
}

std::string markdown_text(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  append_markdown_text(out, s);
  return out;
}

std::string markdown_table_code(std::string_view s) {
  std::string plain = terminal_text(s);
  // GFM splits a row into cells before it reads code spans, taking "\\x" as
  // one escaped character: a backslash before a "|" would let the "|" end
  // the cell. Such text is written as plain escaped text instead.
  if (plain.find('\\') != std::string::npos) return markdown_text(s);
  size_t longest = 0, run = 0;
  for (char c : plain) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  std::string fence(longest + 1, '`');
  std::string body;
  body.reserve(plain.size() + 4);
  for (char c : plain) {
    if (c == '|') body.push_back('\\');
    body.push_back(c);
  }
  // A span that starts or ends with a backtick needs a space inside the
  // fence (CommonMark strips one space from each end).
  bool pad = plain.empty() || plain.front() == '`' || plain.back() == '`' || plain.front() == ' ';
  return pad ? fence + " " + body + " " + fence : fence + body + fence;
}

}  // namespace ppt
