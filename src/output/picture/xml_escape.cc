#include "output/picture/xml_escape.h"

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
          // XML 1.0 has no way to carry C0 controls; DEL it allows, but a
          // page has no use for it.
          if (c < 0x20 || c == 0x7f)
            out += "\xEF\xBF\xBD";
          else
            out.push_back(static_cast<char>(c));
      }
      ++i;
      continue;
    }
    // A multi-byte sequence: copy it when it is well-formed UTF-8 and a
    // character XML 1.0 allows (its Char production also leaves out U+FFFE
    // and U+FFFF, which UTF-8 itself allows), else U+FFFD per byte. C1
    // controls (U+0080..U+009F, XML 1.0 "discouraged") become U+FFFD too.
    size_t n = utf8_sequence_length(s, i);
    bool ok = n > 0;
    if (ok) {
      char32_t cp = utf8_code_point(s, i, n);
      ok = cp != 0xFFFE && cp != 0xFFFF && !(cp >= 0x80 && cp <= 0x9f);
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
