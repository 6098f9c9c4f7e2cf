// How text that comes from the input (job types, folder and file names,
// excerpts of log lines) is written into each kind of text output. The logs,
// the folder names and the archives may all be made by someone hostile (a
// fork's pull request controls its CI artifacts), so one rule per kind of
// output, here, and every writer uses it for every field it did not make:
//
//   terminal  (stderr messages, stats/diff text, the watch dashboard):
//             valid UTF-8 with no control character at all. C0 controls and
//             DEL are shown as "\n", "\r", "\t" or "\x1b"; C1 controls
//             (U+0080..U+009F), the bidirectional controls and the line and
//             paragraph separators as "\u009b"; a byte that is not part of
//             well-formed UTF-8 as "\xff". Backslashes stay as they are: the
//             text is for people to read, and escaping it again changes
//             nothing (terminal_text(terminal_text(s)) == terminal_text(s)).
//   markdown  (stats --markdown, diff -o x.md, batch's summary.md): the
//             terminal text (so no line break, no control), then what
//             CommonMark and GFM read as markup is made text: \ ` * _ [ ] !
//             | ~ # backslash-escaped wherever they stand; < > & as entities;
//             - + = . ) escaped where the text starts (it may start a line:
//             a list, a setext heading, "1."); ":" before "//" and "." after
//             "www" escaped (GFM's autolinks); an "@" escaped and followed by
//             U+2060 WORD JOINER, since GFM finds e-mail autolinks after
//             escapes are resolved. No data can make a link, an image,
//             emphasis, raw HTML, a table cell or a line of its own.
//   html/svg  append_xml_escaped (output/picture/svg_writer.h).
//   json      nlohmann::json dumped with error_handler_t::replace (each
//             byte that is not UTF-8 becomes U+FFFD).
//
// All functions are pure and thread safe.
#pragma once

#include <string>
#include <string_view>

namespace ppt {

// Appends `s` as terminal text (above).
void append_terminal_text(std::string& out, std::string_view s);
std::string terminal_text(std::string_view s);

// Whether `cp` is shown escaped in terminal text: C0, DEL, C1, U+061C,
// U+200E/F, U+2028/9, U+202A..E, U+2066..9.
bool is_escaped_code_point(char32_t cp);

// `s` as Markdown inline text (above): safe anywhere inline text may go,
// including a GFM table cell and a heading.
std::string markdown_text(std::string_view s);

// `s` as a Markdown code span for a GFM table cell: the terminal text in a
// run of backticks longer than any inside it, "|" as "\|" (which GFM takes
// out of table cells before it reads the span); text that holds a backslash
// is written as markdown_text instead (see escape.cc).
std::string markdown_table_code(std::string_view s);

// `s` as one word a POSIX shell reads back as `s`, for a command a message
// suggests ("iconv -f UTF-16 -t UTF-8 'my logs/workerlog.1' > ..."): as it
// is when it holds only letters, digits and _ - . / + , : @ %, else in single
// quotes (a quote inside as '\''). Not terminal text: pass the result
// through terminal_text() for stderr.
std::string shell_word(std::string_view s);

}  // namespace ppt
