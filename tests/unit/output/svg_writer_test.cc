// The SVG picture: rows, rectangles and their data attributes, step choice,
// the size cap, escaping, and well-formed XML.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "output/outputs.h"
#include "output/svg_writer.h"
#include "passes/timeline_builder.h"
#include "support/test_support.h"

using namespace ppt;
using ppt::testing::parser;
using ppt::testing::job_line;
using ppt::testing::TempDir;

namespace {

Timeline from_logs(const std::vector<std::string>& logs) {
  std::vector<SourceFile> files;
  std::vector<FileScan> scans;
  for (size_t r = 0; r < logs.size(); ++r) {
    files.push_back({"logs/workerlog." + std::to_string(r), "", 0, static_cast<int32_t>(r), static_cast<int32_t>(r)});
    scans.push_back(scan_buffer(logs[r], static_cast<uint32_t>(r), parser()));
  }
  return build_from_scans(files, {""}, std::move(scans));
}

// `steps` steps of F0 F1 B0 B1 optimizer on `ranks` ranks, 1000 us apart;
// rank r starts r*5 us late. `first_type` replaces the first forward's type.
Timeline pipeline(int ranks, int steps, const std::string& first_type = "forward") {
  std::vector<std::string> logs;
  for (int r = 0; r < ranks; ++r) {
    std::string log;
    for (int s = 0; s < steps; ++s) {
      int64_t t = s * 1000 + r * 5;
      log += job_line(first_type, 0, t, t + 100) + job_line("forward", 1, t + 100, t + 200) +
             job_line("backward", 0, t + 250, t + 450) + job_line("backward", 1, t + 450, t + 650) +
             job_line("optimizer", 0, t + 700, t + 720);
    }
    logs.push_back(log);
  }
  return from_logs(logs);
}

std::string svg_of(const Timeline& tl, const SvgOptions& opt = {}) {
  StringSink sink;
  write_svg(tl, opt, sink);
  return sink.data;
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

// The values of attribute `attr` on every element that starts with `tag_prefix`.
std::vector<std::string> attrs(const std::string& svg, const std::string& tag_prefix, const std::string& attr) {
  std::vector<std::string> out;
  for (size_t p = svg.find(tag_prefix); p != std::string::npos; p = svg.find(tag_prefix, p + 1)) {
    size_t end = svg.find('>', p);
    std::string tag = svg.substr(p, end - p);
    std::smatch m;
    std::regex re(" " + attr + "=\"([^\"]*)\"");
    if (std::regex_search(tag, m, re)) out.push_back(m[1]);
  }
  return out;
}

// Well-formed XML, by Python's parser (python3 is a build requirement).
bool well_formed(const std::string& xml, std::string* why) {
  TempDir t;
  std::string path = t.write("p.svg", xml);
  std::string cmd = "python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' " + path +
                    " > " + t.path() + "/err 2>&1";
  int rc = std::system(cmd.c_str());
  std::ifstream in(t.path() + "/err");
  std::getline(in, *why, '\0');
  return rc == 0;
}

}  // namespace

TEST_CASE("the picture has one row per rank and one rectangle per job, with their data", "[svg]") {
  Timeline tl = pipeline(3, 2);
  std::string svg = svg_of(tl);
  CHECK(count(svg, "<g class=\"rank\"") == 3);
  CHECK(attrs(svg, "<g class=\"rank\"", "data-rank") == std::vector<std::string>{"0", "1", "2"});
  CHECK(count(svg, "<rect class=\"job\"") == tl.job_count());
  CHECK(count(svg, "<rect class=\"job\"") == 30);
  std::map<std::string, int> types;
  for (const std::string& t : attrs(svg, "<rect class=\"job\"", "data-type")) ++types[t];
  CHECK(types == std::map<std::string, int>{{"forward", 12}, {"backward", 12}, {"optimizer", 6}});
  std::multiset<std::string> steps;
  for (const std::string& s : attrs(svg, "<rect class=\"job\"", "data-step")) steps.insert(s);
  CHECK(steps.count("0") == 15);
  CHECK(steps.count("1") == 15);
  std::multiset<std::string> mbs;
  for (const std::string& s : attrs(svg, "<rect class=\"job\"", "data-mb")) mbs.insert(s);
  CHECK(mbs.count("0") == 18);  // forward 0, backward 0, optimizer
  CHECK(mbs.count("1") == 12);
  // Each job carries the name every output gives it, and its job id.
  std::multiset<std::string> names;
  for (const std::string& n : attrs(svg, "<rect class=\"job\"", "data-name")) names.insert(n);
  CHECK(names.count("forward mb1") == 6);
  CHECK(names.count("optimizer mb0") == 6);
  CHECK(attrs(svg, "<rect class=\"job\"", "data-job").size() == 30);
  // Times are exact microseconds since the origin; the source line is kept.
  std::vector<std::string> starts = attrs(svg, "<rect class=\"job\"", "data-start-us");
  CHECK(starts.front() == "0");
  CHECK(attrs(svg, "<rect class=\"job\"", "data-dur-us").front() == "100");
  CHECK(attrs(svg, "<rect class=\"job\"", "data-line").front() == "1");
  CHECK(attrs(svg, "<g class=\"rank\"", "data-src").front() == "logs/workerlog.0");
  // A legend entry per type, a line per step boundary (2 starts + the end).
  CHECK(count(svg, "class=\"legend-item\"") == 3);
  CHECK(count(svg, "<line class=\"step-line") == 3);
  std::string why;
  CHECK(well_formed(svg, &why));
  INFO(why);
}

TEST_CASE("rectangles are placed by time and idle gaps stay empty", "[svg]") {
  // One rank: a job 0-100 us and one 900-1000 us; the plot is 1000 px wide.
  Timeline tl = from_logs({job_line("forward", 0, 0, 100) + job_line("backward", 0, 900, 1000)});
  SvgOptions opt;
  opt.plot_width = 1000;
  std::string svg = svg_of(tl, opt);
  CHECK(attrs(svg, "<rect class=\"job\"", "x") == std::vector<std::string>{"0", "900"});
  CHECK(attrs(svg, "<rect class=\"job\"", "width") == std::vector<std::string>{"100", "100"});
  // The same scale for both pictures of a comparison: 2000 us across.
  opt.span_ns = 2'000'000;
  svg = svg_of(tl, opt);
  CHECK(attrs(svg, "<rect class=\"job\"", "x") == std::vector<std::string>{"0", "450"});
  CHECK(attrs(svg, "<g class=\"run\"", "data-span-us") == std::vector<std::string>{"2000"});
}

TEST_CASE("overlapping jobs go on a second lane inside their rank's row", "[svg]") {
  Timeline tl = from_logs({job_line("forward", 0, 0, 100) + job_line("forward", 1, 50, 150) +
                           job_line("optimizer", 0, 200, 210)});
  std::string svg = svg_of(tl);
  CHECK(count(svg, "<g class=\"rank\"") == 1);
  CHECK(attrs(svg, "<g class=\"rank\"", "data-lanes") == std::vector<std::string>{"2"});
  CHECK(count(svg, "data-lane=\"1\"") == 1);
  CHECK(count(svg, "<rect class=\"job\"") == 3);
}

TEST_CASE("the steps drawn are picked with --steps", "[svg]") {
  Timeline tl = pipeline(2, 5);
  struct Row {
    const char* range;
    size_t jobs;
    std::set<std::string> steps;
  };
  const Row rows[] = {
      {"1:2", 20, {"1", "2"}}, {"3", 10, {"3"}}, {"3:", 20, {"3", "4"}}, {":0", 10, {"0"}}, {"7:9", 0, {}},
  };
  for (const Row& row : rows) {
    DYNAMIC_SECTION(row.range) {
      std::string error;
      SvgOptions opt;
      opt.steps = parse_step_range(row.range, &error);
      REQUIRE(opt.steps);
      std::string svg = svg_of(tl, opt);
      CHECK(count(svg, "<rect class=\"job\"") == row.jobs);
      std::set<std::string> steps;
      for (const std::string& s : attrs(svg, "<rect class=\"job\"", "data-step")) steps.insert(s);
      CHECK(steps == row.steps);
      SvgSelection sel = select_for_svg(tl, opt);
      CHECK(sel.jobs == row.jobs);
      if (row.jobs == 0) {
        CHECK(sel.note == "no job in steps 7:9 (the timeline has steps 0 to 4)");
        CHECK(svg.find("nothing to draw") != std::string::npos);
      } else {
        CHECK(sel.note.empty());
      }
    }
  }
}

TEST_CASE("step ranges are read as A:B with both ends included", "[svg]") {
  struct Row {
    const char* text;
    bool ok;
    int32_t first, last;
  };
  const Row rows[] = {
      {"3:5", true, 3, 5},       {"3", true, 3, 3},          {"3:", true, 3, INT32_MAX}, {":5", true, INT32_MIN, 5},
      {"-1:2", true, -1, 2},     {"5:3", false, 0, 0},       {"", false, 0, 0},          {":", false, 0, 0},
      {"a:b", false, 0, 0},      {"1:2:3", false, 0, 0},     {"1.5", false, 0, 0},       {" 1", false, 0, 0},
      {"99999999999", false, 0, 0},
  };
  for (const Row& row : rows) {
    DYNAMIC_SECTION("'" << row.text << "'") {
      std::string error;
      auto r = parse_step_range(row.text, &error);
      CHECK(r.has_value() == row.ok);
      if (r) {
        CHECK(r->first == row.first);
        CHECK(r->last == row.last);
      } else {
        CHECK_FALSE(error.empty());
      }
    }
  }
}

TEST_CASE("a picture holds at most max_jobs, cut at a step boundary, and says so", "[svg]") {
  Timeline tl = pipeline(2, 10);  // 10 jobs per step
  SvgOptions opt;
  opt.max_jobs = 35;
  SvgSelection sel = select_for_svg(tl, opt);
  CHECK(sel.capped);
  CHECK(sel.jobs == 30);
  CHECK(sel.jobs_in_range == 100);
  REQUIRE(sel.runs.size() == 1);
  CHECK(sel.runs[0].first_step == 0);
  CHECK(sel.runs[0].last_step == 2);
  CHECK(sel.note ==
        "showing steps 0-2 (30 of 100 jobs): a picture holds at most 35 jobs; choose steps with --steps A:B");
  std::string svg = svg_of(tl, opt);
  CHECK(count(svg, "<rect class=\"job\"") == 30);
  CHECK(svg.find("showing steps 0-2 (30 of 100 jobs)") != std::string::npos);
  // A single step larger than the cap is still drawn whole.
  opt.max_jobs = 3;
  sel = select_for_svg(tl, opt);
  CHECK(sel.jobs == 10);
  CHECK(sel.runs[0].last_step == 0);
}

TEST_CASE("a rerun is drawn as a second section with its own axis", "[svg]") {
  std::string run1 = job_line("forward", 0, 0, 100) + job_line("optimizer", 0, 100, 110);
  // A new process (thread id) prints the second run.
  std::string run2 = job_line("forward", 0, 60'000'000, 60'000'100, -1, 5151) +
                     job_line("optimizer", 0, 60'000'100, 60'000'110, -1, 5151);
  Timeline tl = from_logs({run1 + run2, run1 + run2});
  REQUIRE(tl.runs.size() == 2);
  std::string svg = svg_of(tl);
  CHECK(count(svg, "<g class=\"run\"") == 2);
  CHECK(count(svg, "<g class=\"rank\"") == 4);
  CHECK(svg.find("run 2 of 2: step 0") != std::string::npos);
  // The second section's axis starts at 60 s after the origin.
  CHECK(attrs(svg, "<g class=\"run\"", "data-t0-us") == std::vector<std::string>{"0", "60000000"});
}

TEST_CASE("hostile text from a log is escaped and the picture stays well-formed", "[svg]") {
  const std::string hostile = "<img src=x onerror=alert(1)>";
  Timeline tl = pipeline(2, 1, hostile);
  tl.files[1].path = "logs/\"quoted' & <b>/workerlog.1";
  std::string svg = svg_of(tl);
  CHECK(svg.find("<img") == std::string::npos);
  CHECK(svg.find("<b>") == std::string::npos);
  CHECK(count(svg, "data-type=\"&lt;img src=x onerror=alert(1)&gt;\"") == 2);
  CHECK(svg.find(">&lt;img src=x onerror=alert(1)&gt;</text>") != std::string::npos);  // the legend
  CHECK(svg.find("data-src=\"logs/&quot;quoted&#39; &amp; &lt;b&gt;/workerlog.1\"") != std::string::npos);
  std::string why;
  CHECK(well_formed(svg, &why));
  INFO(why);
}

TEST_CASE("XML escaping replaces what XML cannot carry", "[svg]") {
  struct Row {
    std::string in, out;
  };
  const Row rows[] = {
      {"plain", "plain"},
      {"a<b>&\"'", "a&lt;b&gt;&amp;&quot;&#39;"},
      {"tab\tnl\ncr\r", "tab&#9;nl&#10;cr&#13;"},
      {std::string("nul\0x", 5), "nul\xEF\xBF\xBDx"},
      {"esc\x1b[31m", "esc\xEF\xBF\xBD[31m"},
      {"caf\xC3\xA9", "caf\xC3\xA9"},
      {"bad\xC3", "bad\xEF\xBF\xBD"},
      {"\xEF\xBF\xBE", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"},  // U+FFFE is not an XML character
      {"\xED\xA0\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"},  // a surrogate
      {"\xF0\x9F\x98\x80", "\xF0\x9F\x98\x80"},
  };
  for (const Row& row : rows) CHECK(xml_escaped(row.in) == row.out);
}

TEST_CASE(".svg and .html outputs are chosen by extension and written whole", "[svg]") {
  std::string error;
  CHECK(format_for_path("t.svg", &error) == OutputFormat::kSvg);
  CHECK(format_for_path("r.html", &error) == OutputFormat::kHtmlReport);
  TempDir t;
  Timeline tl = pipeline(2, 2);
  WriteOptions w;
  std::string path = t.path() + "/t.svg";
  size_t bytes = 0;
  CHECK(write_output(tl, {path, OutputFormat::kSvg}, w, &bytes) == "");
  std::ifstream in(path);
  std::string svg((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(svg.size() == bytes);
  CHECK(svg.rfind("<?xml", 0) == 0);
  CHECK(count(svg, "<rect class=\"job\"") == 20);
}
