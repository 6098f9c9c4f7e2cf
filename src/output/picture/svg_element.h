// Writing SVG markup one element at a time: the SVG picture's modules
// (svg_writer.h) build every element through here, so that numbers are
// formatted one way and text from a log is always escaped (xml_escape.h).
//
//   SvgElement(out, "rect").attr("class", "job").box(x, y, w, h).attr("fill", fill).close();
//   -> <rect class="job" x="1.5" y="0" width="12" height="18" fill="#4c72b0"/>\n
//
// Attributes are written in the order they are appended. attr() escapes its
// value; attr_escaped() takes one that already is (a type name escaped once
// for every job of its type).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ppt {

// Appends `v` with at most three decimals, trailing zeros dropped, and no
// "-0": 12, 12.5, 0.333, -4.25.
void append_svg_num(std::string& out, double v);

class SvgElement {
 public:
  // Writes "<name".
  SvgElement(std::string& out, std::string_view name);

  SvgElement& attr(std::string_view key, std::string_view value);          // escaped
  SvgElement& attr_escaped(std::string_view key, std::string_view value);  // as it is
  SvgElement& num(std::string_view key, double v);                         // append_svg_num
  SvgElement& integer(std::string_view key, int64_t v);
  SvgElement& us(std::string_view key, int64_t ns);  // microseconds, exact (as the JSON traces)
  // x="X" y="Y" width="W" height="H".
  SvgElement& box(double x, double y, double w, double h);
  // transform="translate(X,Y)".
  SvgElement& translate(double x, double y);

  // "/>" then `tail`: an element without content.
  void close(std::string_view tail = "\n");
  // ">" then `tail`: its content and end tag follow (the caller writes them).
  void open(std::string_view tail = "\n");
  // ">", `content` escaped, "</name>", then `tail`.
  void text(std::string_view content, std::string_view tail = "\n");
  // The same with content that is already escaped (or markup).
  void text_escaped(std::string_view content, std::string_view tail = "\n");

 private:
  void key(std::string_view k);
  void end(std::string_view tail);

  std::string& out_;
  std::string_view name_;
};

// Path data ("M0,16V4H12V8..."): moves and horizontal/vertical lines, their
// numbers formatted as append_svg_num does.
class SvgPath {
 public:
  SvgPath& move(double x, double y);
  SvgPath& h(double x);
  SvgPath& v(double y);
  SvgPath& close_path();
  const std::string& str() const { return d_; }

 private:
  std::string d_;
};

}  // namespace ppt
