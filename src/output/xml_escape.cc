#include "output/xml_escape.h"

#include "util/text.h"

namespace ppt {

void append_xml_escaped(std::string& out, std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        case '\t': out += "&#9;"; break;
        case '\n': out += "&#10;"; break;
        case '\r': out += "&#13;"; break;
        default:
          if (c < 0x20) out += "\xEF\xBF\xBD";  // XML 1.0 has no way to carry these
          else out.push_back(static_cast<char>(c));
      }
      ++i;
      continue;
    }
    // A multi-byte sequence: copy it when it is well-formed UTF-8 and a
    // character XML 1.0 allows (its Char production also leaves out U+FFFE
    // and U+FFFF, which UTF-8 itself allows), else U+FFFD per byte.
    size_t n = utf8_sequence_length(s, i);
    bool ok = n > 0;
    if (ok && n == 3) {
      char32_t cp = utf8_code_point(s, i, n);
      ok = cp != 0xFFFE && cp != 0xFFFF;
    }
    if (ok) {
      out.append(s.data() + i, n);
      i += n;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
}

std::string xml_escaped(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  append_xml_escaped(out, s);
  return out;
}

}  // namespace ppt
