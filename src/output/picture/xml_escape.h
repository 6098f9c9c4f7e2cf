// Escaping text for XML and HTML: every writer of markup (the SVG picture,
// the HTML pages, the stats tables, the batch index) puts text that came
// from a log through here.
#pragma once

#include <string>
#include <string_view>

namespace ppt {

// Appends `s` escaped for XML and HTML text and attribute values (& < > " ');
// bytes that are not valid UTF-8, and control characters XML forbids, become
// U+FFFD.
void append_xml_escaped(std::string& out, std::string_view s);
std::string xml_escaped(std::string_view s);

}  // namespace ppt
