// Fuzz target: the escaping rules for text from the input (util/escape.h)
// and the HTML/SVG escaper (output/picture/svg_writer.h), on any bytes. Checks:
//  - terminal text is valid UTF-8 with no control character at all (C0, DEL,
//    C1), no bidirectional control, and escaping it again changes nothing;
//  - Markdown text is valid UTF-8 with no control character; every backslash
//    escapes a punctuation character; none of ` * _ [ ] ! | ~ # < > @ is
//    bare, an "&" only starts the entities it wrote; - + = . ) are escaped
//    where the text starts; no bare "://" nor "www." (GFM autolinks); an
//    escaped "@" is followed by U+2060 (no e-mail autolink). So no data can
//    open a link, an image, a table cell, emphasis or raw HTML.
//  - a Markdown table code span holds no line break and no "|" that is not
//    escaped, and is fenced (or is Markdown text);
//  - XML text is valid UTF-8 with no control character, and none of & < > " '
//    but in the entities it wrote.
#include <cctype>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "output/picture/svg_writer.h"
#include "util/escape.h"
#include "util/text.h"

namespace {

using ppt::utf8_code_point;
using ppt::utf8_sequence_length;

// Calls `each(cp, offset, length)` for each character; false when `s` is not
// well-formed UTF-8.
template <typename F>
bool each_char(std::string_view s, F each) {
  for (size_t i = 0; i < s.size();) {
    size_t n = utf8_sequence_length(s, i);
    if (n == 0) return false;
    each(utf8_code_point(s, i, n), i, n);
    i += n;
  }
  return true;
}

bool is_ascii_punct(char32_t c) {
  return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') || (c >= '{' && c <= '~');
}

void check_terminal(std::string_view in) {
  std::string out = ppt::terminal_text(in);
  bool ok = each_char(out, [&](char32_t cp, size_t, size_t) {
    FUZZ_CHECK(!ppt::is_escaped_code_point(cp), "terminal text holds U+%04X", static_cast<unsigned>(cp));
  });
  FUZZ_CHECK(ok, "terminal text is not UTF-8");
  FUZZ_CHECK(ppt::terminal_text(out) == out, "terminal text changes when escaped again");
  // Text without anything to escape is kept as it is.
  bool plain = true;
  bool utf8 = each_char(in, [&](char32_t cp, size_t, size_t) { plain = plain && !ppt::is_escaped_code_point(cp); });
  if (utf8 && plain) FUZZ_CHECK(out == in, "plain text was changed");
}

void check_markdown(std::string_view in) {
  std::string out = ppt::markdown_text(in);
  FUZZ_CHECK(each_char(out,
                       [&](char32_t cp, size_t, size_t) {
                         FUZZ_CHECK(!ppt::is_escaped_code_point(cp), "Markdown text holds U+%04X",
                                    static_cast<unsigned>(cp));
                       }),
             "Markdown text is not UTF-8");
  // Walk the text as CommonMark reads escapes: "\" + punctuation is one
  // literal character.
  size_t lead = 0;
  while (lead < out.size() && out[lead] == ' ') ++lead;
  while (lead < out.size() && out[lead] >= '0' && out[lead] <= '9') ++lead;
  std::string literal;  // the text as it reads, escapes resolved, entities kept
  for (size_t i = 0; i < out.size(); ++i) {
    char c = out[i];
    bool escaped = false;
    if (c == '\\') {
      FUZZ_CHECK(i + 1 < out.size() && is_ascii_punct(static_cast<unsigned char>(out[i + 1])),
                 "a backslash that escapes nothing at %zu", i);
      if (i == lead) lead = i + 1;  // the escaped character is the one at the start
      c = out[++i];
      escaped = true;
    }
    if (!escaped) {
      FUZZ_CHECK(std::strchr("`*_[]!|~#<>@", c) == nullptr || c == '\0', "unescaped '%c' at %zu", c, i);
      if (c == '&') {
        bool entity =
            out.compare(i, 4, "&lt;") == 0 || out.compare(i, 4, "&gt;") == 0 || out.compare(i, 5, "&amp;") == 0;
        FUZZ_CHECK(entity, "a bare '&' at %zu", i);
      }
      if (i == lead)
        FUZZ_CHECK(std::strchr("-+=.)", c) == nullptr || c == '\0', "unescaped '%c' where a line may start", c);
      if (c == ':') FUZZ_CHECK(out.compare(i + 1, 2, "//") != 0, "an unescaped '://' (autolink)");
      if (c == '.' && literal.size() >= 3) {
        std::string last = literal.substr(literal.size() - 3);
        for (char& x : last) x = static_cast<char>(std::tolower(static_cast<unsigned char>(x)));
        FUZZ_CHECK(last != "www", "an unescaped 'www.' (autolink)");
      }
    }
    if (escaped && c == '@') {
      FUZZ_CHECK(out.compare(i + 1, 3, "\u2060") == 0, "an '@' without a word joiner after it");
    }
    literal.push_back(c);
  }
}

void check_table_code(std::string_view in) {
  std::string out = ppt::markdown_table_code(in);
  FUZZ_CHECK(each_char(out,
                       [&](char32_t cp, size_t, size_t) {
                         FUZZ_CHECK(!ppt::is_escaped_code_point(cp), "code span holds U+%04X",
                                    static_cast<unsigned>(cp));
                       }),
             "code span is not UTF-8");
  if (out == ppt::markdown_text(in)) return;
  FUZZ_CHECK(!out.empty() && out.front() == '`' && out.back() == '`', "code span is not fenced");
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == '|') FUZZ_CHECK(i > 0 && out[i - 1] == '\\', "unescaped '|' in a code span");
    if (out[i] == '\\') FUZZ_CHECK(i + 1 < out.size() && out[i + 1] == '|', "a backslash in a code span");
  }
}

void check_xml(std::string_view in) {
  std::string out = ppt::xml_escaped(in);
  bool ok = each_char(out, [&](char32_t cp, size_t i, size_t) {
    FUZZ_CHECK(!(cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)), "XML text holds U+%04X", static_cast<unsigned>(cp));
    FUZZ_CHECK(cp != '<' && cp != '>' && cp != '"' && cp != '\'', "XML text holds a bare '%c'", static_cast<char>(cp));
    if (cp == '&') {
      size_t semi = out.find(';', i);
      FUZZ_CHECK(semi != std::string::npos && semi - i <= 6, "XML text holds a bare '&'");
    }
  });
  FUZZ_CHECK(ok, "XML text is not UTF-8");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  check_terminal(in);
  check_markdown(in);
  check_table_code(in);
  check_xml(in);
  return 0;
}
