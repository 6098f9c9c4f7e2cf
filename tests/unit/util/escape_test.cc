// The escaping rules for text from the input: terminal text and Markdown.
#include "util/escape.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "util/text.h"

namespace ppt {
namespace {

bool well_formed(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    size_t n = utf8_sequence_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

TEST_CASE("terminal text shows C0 controls and DEL as escapes and keeps printable text", "[escape]") {
  CHECK(terminal_text("fwd\x1b]0;owned\x07") == "fwd\\x1b]0;owned\\x07");
  CHECK(terminal_text("a\x1b[2Jb") == "a\\x1b[2Jb");
  CHECK(terminal_text("line\nforged") == "line\\nforged");
  CHECK(terminal_text("cr\rtab\t") == "cr\\rtab\\t");
  CHECK(terminal_text(std::string("nul\0x", 5)) == "nul\\x00x");
  CHECK(terminal_text("del\x7f") == "del\\x7f");
  CHECK(terminal_text("forward_backward machine-1 [x](y) \\x") == "forward_backward machine-1 [x](y) \\x");
}

TEST_CASE("terminal text shows C1 controls, bidirectional controls and line separators as \\u escapes", "[escape]") {
  CHECK(terminal_text("a\xc2\x9b"
                      "2Jb") == "a\\u009b2Jb");   // U+009B, the 8-bit CSI
  CHECK(terminal_text("\xc2\x85") == "\\u0085");  // NEL
  CHECK(terminal_text("\xe2\x80\xae"
                      "evil") == "\\u202eevil");        // RIGHT-TO-LEFT OVERRIDE
  CHECK(terminal_text("\xe2\x81\xa6x") == "\\u2066x");  // LEFT-TO-RIGHT ISOLATE
  CHECK(terminal_text("a\xe2\x80\xa8"
                      "b") == "a\\u2028b");  // LINE SEPARATOR
  CHECK(terminal_text("\xc2\xa0\xc3\xa9\xe2\x96\x81\xf0\x9f\x98\x80") ==
        "\xc2\xa0\xc3\xa9\xe2\x96\x81\xf0\x9f\x98\x80");
}

TEST_CASE("terminal text shows each byte that is not well-formed UTF-8 as \\x and stays UTF-8", "[escape]") {
  CHECK(terminal_text("m\xff") == "m\\xff");
  CHECK(terminal_text("\x9b") == "\\x9b");                    // a raw C1 byte is no UTF-8
  CHECK(terminal_text("\xe2\x82") == "\\xe2\\x82");           // cut short
  CHECK(terminal_text("\xc0\xaf") == "\\xc0\\xaf");           // overlong
  CHECK(terminal_text("\xed\xa0\x80") == "\\xed\\xa0\\x80");  // a surrogate
  for (int b = 0; b < 256; ++b) {
    std::string in(1, static_cast<char>(b));
    std::string out = terminal_text(in);
    CHECK(well_formed(out));
    for (char c : out) CHECK(static_cast<unsigned char>(c) >= 0x20);
  }
}

TEST_CASE("terminal text escaped again is the same text", "[escape]") {
  std::string hostile = "\x1b]0;t\x07\xff\xc2\x9b\n\t\\x1b";
  std::string once = terminal_text(hostile);
  CHECK(terminal_text(once) == once);
}

TEST_CASE("Markdown text escapes what is markup, so data makes no link, image, cell or HTML", "[escape]") {
  CHECK(markdown_text("![t](https://e.example/p.png)") == "\\!\\[t\\](https\\://e.example/p.png)");
  CHECK(markdown_text("[x]: https://e.example") == "\\[x\\]: https\\://e.example");
  CHECK(markdown_text("a|b") == "a\\|b");
  CHECK(markdown_text("<script>&amp;") == "&lt;script&gt;&amp;amp;");
  CHECK(markdown_text("*_`~#") == "\\*\\_\\`\\~\\#");
  CHECK(markdown_text("go to www.e.example or WWW.E.EXAMPLE") == "go to www\\.e.example or WWW\\.E.EXAMPLE");
  CHECK(markdown_text("forward 12 (0.0%), rank's") == "forward 12 (0.0%), rank's");
  CHECK(markdown_text("\xc3\xa9t\xc3\xa9") == "\xc3\xa9t\xc3\xa9");
}

TEST_CASE("Markdown text escapes what would be markup where a line starts", "[escape]") {
  CHECK(markdown_text("- item") == "\\- item");
  CHECK(markdown_text("+ item") == "\\+ item");
  CHECK(markdown_text("===") == "\\===");
  CHECK(markdown_text("> quote") == "&gt; quote");
  CHECK(markdown_text("12. item") == "12\\. item");
  CHECK(markdown_text("  3) item") == "  3\\) item");
  CHECK(markdown_text("a-b 1.5") == "a-b 1.5");
}

TEST_CASE("Markdown text writes line breaks and controls as the terminal escapes, their backslash escaped",
          "[escape]") {
  CHECK(markdown_text("a\rb") == "a\\\\rb");
  CHECK(markdown_text("a\n| x |") == "a\\\\n\\| x \\|");
  CHECK(markdown_text("\x1b[2J") == "\\\\x1b\\[2J");
  CHECK(markdown_text("\xff") == "\\\\xff");
}

TEST_CASE("Markdown text puts a word joiner after each @, which GFM's e-mail autolinks do not cross", "[escape]") {
  CHECK(markdown_text("me@example.com") == "me\\@\u2060example.com");
}

TEST_CASE("a Markdown code span for a table cell fences backticks and escapes pipes", "[escape]") {
  CHECK(markdown_table_code("runs/a.md") == "`runs/a.md`");
  CHECK(markdown_table_code("a|b") == "`a\\|b`");
  CHECK(markdown_table_code("a`b") == "``a`b``");
  CHECK(markdown_table_code("`x") == "`` `x ``");
  // A backslash cannot be escaped in a span (and "\\|" would end the cell):
  // such text is plain escaped text.
  CHECK(markdown_table_code("a\\|b") == "a\\\\\\|b");
  CHECK(markdown_table_code("a\nb") == "a\\\\nb");
}

TEST_CASE("a shell word is the text a POSIX shell reads back", "[escape]") {
  CHECK(shell_word("logs/workerlog.1") == "logs/workerlog.1");
  CHECK(shell_word("my logs/workerlog.1") == "'my logs/workerlog.1'");
  CHECK(shell_word("it's") == "'it'\\''s'");
  CHECK(shell_word("$(rm -rf x)") == "'$(rm -rf x)'");
  CHECK(shell_word("") == "''");
  // Through sh itself: what it reads back is the text.
  for (std::string s : {"a b", "it's", "x\"y", "$HOME", "`id`", "*", "a\\b"}) {
    std::string cmd = "printf %s " + shell_word(s);
    FILE* p = popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    std::string got;
    char buf[64];
    for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) got.append(buf, n);
    pclose(p);
    CHECK(got == s);
  }
}

}  // namespace
}  // namespace ppt
