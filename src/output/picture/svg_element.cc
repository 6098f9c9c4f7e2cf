#include "output/picture/svg_element.h"

#include <charconv>
#include <cmath>

#include "output/picture/xml_escape.h"
#include "output/trace/chrome_json_writer.h"

namespace ppt {

void append_svg_num(std::string& out, double v) {
  if (std::fabs(v) < 0.0005) v = 0;  // no "-0"
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, 3);
  char* end = r.ptr;
  while (end > buf && end[-1] == '0') --end;
  if (end > buf && end[-1] == '.') --end;
  out.append(buf, end);
}

SvgElement::SvgElement(std::string& out, std::string_view name) : out_(out), name_(name) {
  out_ += '<';
  out_ += name_;
}

void SvgElement::key(std::string_view k) {
  out_ += ' ';
  out_ += k;
  out_ += "=\"";
}

SvgElement& SvgElement::attr(std::string_view k, std::string_view value) {
  key(k);
  append_xml_escaped(out_, value);
  out_ += '"';
  return *this;
}

SvgElement& SvgElement::attr_escaped(std::string_view k, std::string_view value) {
  key(k);
  out_ += value;
  out_ += '"';
  return *this;
}

SvgElement& SvgElement::num(std::string_view k, double v) {
  key(k);
  append_svg_num(out_, v);
  out_ += '"';
  return *this;
}

SvgElement& SvgElement::integer(std::string_view k, int64_t v) {
  key(k);
  append_int(out_, v);
  out_ += '"';
  return *this;
}

SvgElement& SvgElement::us(std::string_view k, int64_t ns) {
  key(k);
  append_us(out_, ns);
  out_ += '"';
  return *this;
}

SvgElement& SvgElement::box(double x, double y, double w, double h) {
  return num("x", x).num("y", y).num("width", w).num("height", h);
}

SvgElement& SvgElement::translate(double x, double y) {
  key("transform");
  out_ += "translate(";
  append_svg_num(out_, x);
  out_ += ',';
  append_svg_num(out_, y);
  out_ += ")\"";
  return *this;
}

void SvgElement::end(std::string_view tail) {
  out_ += "</";
  out_ += name_;
  out_ += '>';
  out_ += tail;
}

void SvgElement::close(std::string_view tail) {
  out_ += "/>";
  out_ += tail;
}

void SvgElement::open(std::string_view tail) {
  out_ += '>';
  out_ += tail;
}

void SvgElement::text(std::string_view content, std::string_view tail) {
  out_ += '>';
  append_xml_escaped(out_, content);
  end(tail);
}

void SvgElement::text_escaped(std::string_view content, std::string_view tail) {
  out_ += '>';
  out_ += content;
  end(tail);
}

SvgPath& SvgPath::move(double x, double y) {
  d_ += 'M';
  append_svg_num(d_, x);
  d_ += ',';
  append_svg_num(d_, y);
  return *this;
}

SvgPath& SvgPath::h(double x) {
  d_ += 'H';
  append_svg_num(d_, x);
  return *this;
}

SvgPath& SvgPath::v(double y) {
  d_ += 'V';
  append_svg_num(d_, y);
  return *this;
}

SvgPath& SvgPath::close_path() {
  d_ += 'Z';
  return *this;
}

}  // namespace ppt
