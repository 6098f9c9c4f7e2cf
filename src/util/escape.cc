#include "util/escape.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>

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

namespace {

// Characters that are markup wherever they stand in inline text: emphasis,
// code, links and images, tables, strikethrough, headings, escapes.
bool markup_anywhere(char c) { return c != '\0' && std::strchr("\\`*_[]!|~#", c) != nullptr; }

// Characters that are markup only where a line starts (a list, a quote, a
// setext heading, an ordered list's "1." or "1)").
bool markup_at_line_start(char c) { return c != '\0' && std::strchr("-+=.)", c) != nullptr; }

bool lower_is(const std::string& s, size_t i, std::string_view word) {
  if (i < word.size()) return false;
  for (size_t k = 0; k < word.size(); ++k) {
    if (std::tolower(static_cast<unsigned char>(s[i - word.size() + k])) != word[k]) return false;
  }
  return true;
}

// `s` as Markdown inline text, appended to `out`.
void append_markdown_text(std::string& out, std::string_view s) {
  std::string plain = terminal_text(s);
  // The text may start a line (a list item's text, a paragraph): what is
  // markup there is escaped in its leading run (blanks, digits, then one
  // character).
  size_t lead = 0;
  while (lead < plain.size() && plain[lead] == ' ') ++lead;
  while (lead < plain.size() && plain[lead] >= '0' && plain[lead] <= '9') ++lead;
  for (size_t i = 0; i < plain.size(); ++i) {
    char c = plain[i];
    if (c == '<') {
      out += "&lt;";
      continue;
    }
    if (c == '>') {
      out += "&gt;";
      continue;
    }
    if (c == '&') {
      out += "&amp;";
      continue;
    }
    bool escape = markup_anywhere(c) || c == '@' || (i == lead && markup_at_line_start(c)) ||
                  // GFM autolinks: "http://..." and "www."
                  (c == ':' && plain.compare(i + 1, 2, "//") == 0) || (c == '.' && lower_is(plain, i, "www"));
    if (escape) out.push_back('\\');
    out.push_back(c);
    // GFM finds e-mail autolinks in the text after escapes are resolved;
    // a word joiner after the "@" (invisible) is not a domain's first letter.
    if (c == '@') out += "\u2060";
  }
}

}  // namespace

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

std::string shell_word(std::string_view s) {
  auto plain = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("_-./+,:@%").find(c) != std::string_view::npos;
  };
  if (!s.empty() && std::all_of(s.begin(), s.end(), plain)) return std::string(s);
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

}  // namespace ppt
