// The SVG element writer: attribute order, number formatting, escaping.
#include <catch2/catch.hpp>

#include "output/picture/svg_element.h"

using namespace ppt;

TEST_CASE("svg numbers have at most three decimals, no trailing zeros, no -0", "[svg_element]") {
  auto num = [](double v) {
    std::string s;
    append_svg_num(s, v);
    return s;
  };
  CHECK(num(12) == "12");
  CHECK(num(12.5) == "12.5");
  CHECK(num(1.0 / 3) == "0.333");
  CHECK(num(2.0 / 3) == "0.667");
  CHECK(num(-4.25) == "-4.25");
  CHECK(num(-0.0001) == "0");
  CHECK(num(-0.0) == "0");
  CHECK(num(0.0004) == "0");
  CHECK(num(1000000) == "1000000");
  CHECK(num(0.05) == "0.05");
}

TEST_CASE("svg elements write their attributes in order", "[svg_element]") {
  std::string out;
  SvgElement(out, "rect").attr("class", "job").box(1.5, 0, 12, 18).integer("data-mb", -1).us("data-us", 1500).close();
  CHECK(out == "<rect class=\"job\" x=\"1.5\" y=\"0\" width=\"12\" height=\"18\" data-mb=\"-1\" data-us=\"1.5\"/>\n");

  out.clear();
  SvgElement(out, "g").attr("class", "rows").translate(0, 20.25).open();
  CHECK(out == "<g class=\"rows\" transform=\"translate(0,20.25)\">\n");

  out.clear();
  SvgElement(out, "g").attr("class", "tick").open("");
  SvgElement(out, "text").num("x", 3).text("1 µs", "</g>\n");
  CHECK(out == "<g class=\"tick\"><text x=\"3\">1 µs</text></g>\n");
}

TEST_CASE("svg attributes and text are escaped unless said otherwise", "[svg_element]") {
  std::string out;
  SvgElement(out, "text").attr("data-src", "a\"<b>&'c").text("x < y & z");
  CHECK(out == "<text data-src=\"a&quot;&lt;b&gt;&amp;&#39;c\">x &lt; y &amp; z</text>\n");

  out.clear();
  SvgElement(out, "text").attr_escaped("data-type", "a&amp;b").text_escaped("<tspan>a</tspan>", "");
  CHECK(out == "<text data-type=\"a&amp;b\"><tspan>a</tspan></text>");

  out.clear();  // bytes that are not UTF-8 become U+FFFD
  SvgElement(out, "title").text(std::string("a\xff") + "b");
  CHECK(out == std::string("<title>a\xEF\xBF\xBD") + "b</title>\n");
}

TEST_CASE("svg path data", "[svg_element]") {
  SvgPath p;
  p.move(0, 16).v(4.5).h(12).v(16).close_path();
  CHECK(p.str() == "M0,16V4.5H12V16Z");
}
