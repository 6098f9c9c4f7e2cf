// The SVG picture: rows, rectangles and their data attributes, step choice,
// the size cap, escaping, and well-formed XML.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "analysis/stats.h"
#include "app/picture.h"
#include "app/selection.h"
#include "output/outputs.h"
#include "output/picture/block_label.h"
#include "output/picture/palette.h"
#include "output/picture/svg_writer.h"
#include "passes/timeline_builder.h"
#include "support/memory_samples.h"
#include "support/test_support.h"

using namespace ppt;
using ppt::testing::job_line;
using ppt::testing::parser;
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

// The picture of the steps the driver's rule picks for `req` (app/picture.h).
std::string svg_of(const Timeline& tl, const SvgOptions& opt = {}, const PictureRequest& req = {}) {
  StringSink sink;
  write_svg(tl, select_picture(tl, req), opt, sink);
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
  std::string cmd = "python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' " + path + " > " +
                    t.path() + "/err 2>&1";
  int rc = std::system(cmd.c_str());
  *why = testing::slurp(t.path() + "/err");
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
  Timeline tl = from_logs(
      {job_line("forward", 0, 0, 100) + job_line("forward", 1, 50, 150) + job_line("optimizer", 0, 200, 210)});
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
    StepRange steps_drawn;
    size_t jobs;
    std::set<std::string> steps;
  };
  const Row rows[] = {
      {"1:2", {1, 2}, 20, {"1", "2"}},   {"3", {3, 3}, 10, {"3"}}, {"3:", {3, INT32_MAX}, 20, {"3", "4"}},
      {":0", {INT32_MIN, 0}, 10, {"0"}}, {"7:9", {7, 9}, 0, {}},
  };
  for (const Row& row : rows) {
    DYNAMIC_SECTION(row.range) {
      PictureRequest req;
      req.steps = row.steps_drawn;
      std::string svg = svg_of(tl, {}, req);
      CHECK(count(svg, "<rect class=\"job\"") == row.jobs);
      std::set<std::string> steps;
      for (const std::string& s : attrs(svg, "<rect class=\"job\"", "data-step")) steps.insert(s);
      CHECK(steps == row.steps);
      PictureSelection sel = select_picture(tl, req);
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

TEST_CASE("a picture holds at most max_jobs, cut at a step boundary, and says so", "[svg]") {
  Timeline tl = pipeline(2, 10);  // 10 jobs per step
  PictureRequest req;
  req.max_jobs = 35;
  PictureSelection sel = select_picture(tl, req);
  CHECK(sel.capped());
  CHECK(sel.jobs == 30);
  CHECK(sel.jobs_in_range == 100);
  REQUIRE(sel.runs.size() == 1);
  CHECK(sel.runs[0].first_step == 0);
  CHECK(sel.runs[0].last_step == 2);
  CHECK(sel.note ==
        "showing steps 0-2 (30 of 100 jobs): a picture holds at most 35 jobs; choose steps with --steps A:B");
  std::string svg = svg_of(tl, {}, req);
  CHECK(count(svg, "<rect class=\"job\"") == 30);
  CHECK(svg.find("showing steps 0-2 (30 of 100 jobs)") != std::string::npos);
  // A single step larger than the cap: its first jobs by start time, at
  // most the cap, and the picture says which.
  req.max_jobs = 3;
  sel = select_picture(tl, req);
  CHECK(sel.capped());
  CHECK(sel.jobs == 3);
  REQUIRE(sel.runs.size() == 1);
  CHECK(sel.runs[0].first_step == 0);
  CHECK(sel.runs[0].last_step == 0);
  CHECK(sel.runs[0].until_ns == tl.origin_ns + 105'000);  // rank 1's F1, the fourth start
  CHECK(sel.note ==
        "showing the first 3 of step 0's 10 jobs, those starting in its first 0.105 ms: a picture holds at most 3 "
        "jobs; the traces hold every job");
  svg = svg_of(tl, {}, req);
  CHECK(count(svg, "<rect class=\"job\"") == 3);
  CHECK(svg.find("showing the first 3 of step 0") != std::string::npos);
}

TEST_CASE("the slowest step of a dense run is cut to the job cap too", "[svg]") {
  // 40 ranks x 10 steps, so dense that only the slowest step is drawn; that
  // step alone holds 200 jobs, over a cap of 50.
  Timeline tl = pipeline(40, 10);
  PictureRequest req;
  req.max_jobs = 50;
  req.plot_width = 100;
  PictureSelection sel = select_picture(tl, req);
  CHECK(sel.slowest());
  CHECK(sel.jobs <= 50);
  CHECK(sel.jobs > 0);
  CHECK(sel.note.find("a picture holds at most 50 jobs") != std::string::npos);
  CHECK(count(svg_of(tl, {}, req), "<rect class=\"job\"") == sel.jobs);
  // The critical path's outlines stop at the cut as the jobs do.
  // A path through every job of the drawn step (200 hops): only the hops
  // before the cut are drawn.
  Stats st = testing::stats_of(tl);
  const int32_t drawn = sel.runs.at(0).first_step;
  StepStats* step = nullptr;
  for (StepStats& s : st.steps) {
    if (s.step == drawn) step = &s;
  }
  REQUIRE(step != nullptr);
  step->critical_path.hops.clear();
  for (const Track& t : tl.tracks) {
    for (const Job& j : t.jobs) {
      if (j.step == drawn) step->critical_path.hops.push_back({t.rank, "forward", 0, j.start_ns, j.end_ns, 0, false});
    }
  }
  std::sort(step->critical_path.hops.begin(), step->critical_path.hops.end(),
            [](const CriticalHop& a, const CriticalHop& b) { return a.start_ns < b.start_ns; });
  REQUIRE(step->critical_path.hops.size() == 200);
  SvgOptions opt;
  opt.stats = &st;
  const std::string svg = svg_of(tl, opt, req);
  CHECK(count(svg, "<rect class=\"cp-hop\"") > 0);
  CHECK(count(svg, "<rect class=\"cp-hop\"") <= sel.jobs);
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
  PictureSelection picture = select_picture(tl, {});
  w.picture = &picture;
  std::string path = t.path() + "/t.svg";
  size_t bytes = 0;
  CHECK(write_output(tl, {path, OutputFormat::kSvg}, w, &bytes) == "");
  std::string svg = testing::slurp(path);
  CHECK(svg.size() == bytes);
  CHECK(svg.rfind("<?xml", 0) == 0);
  CHECK(count(svg, "<rect class=\"job\"") == 20);
}

namespace {

// The text of every <text> inside the first element that starts with `open`.
std::vector<std::string> texts_in(const std::string& svg, const std::string& open, size_t from = 0) {
  std::vector<std::string> out;
  size_t p = svg.find(open, from);
  if (p == std::string::npos) return out;
  size_t end = svg.find("</g>", p);
  std::regex re("<text[^>]*>([^<]*)</text>");
  std::string part = svg.substr(p, end - p);
  for (std::sregex_iterator it(part.begin(), part.end(), re), e; it != e; ++it) out.push_back((*it)[1]);
  return out;
}

// Four ranks, two stages by two replicas, as the stats say.
Stats two_by_two(const Timeline& tl) {
  Stats st;
  st.schedule.kind = ScheduleKind::k1F1B;
  st.schedule.pp_degree = 2;
  st.schedule.replicas = 2;
  st.schedule.micro_batches = 2;
  st.schedule.ideal_bubble_ratio = 1.0 / 3;
  for (int r = 0; r < 4; ++r) {
    RankStats rs;
    rs.rank = r;
    rs.stage = r % 2;
    rs.replica = r / 2;
    st.ranks.push_back(rs);
  }
  for (const StepSpan& s : tl.runs[0].steps) {
    StepStats ss;
    ss.step = s.number;
    ss.start_ns = s.start_ns;
    ss.end_ns = s.end_ns;
    ss.busy_ns = 3000;
    ss.idle_ns = 1000;
    st.steps.push_back(ss);
  }
  return st;
}

}  // namespace

TEST_CASE("blocks wide enough carry their micro-batch and chunk; narrow ones stay blank", "[svg]") {
  // F0 F1 B0 B1 optimizer: 100-200 us jobs across 720 us on 1200 px.
  Timeline tl = pipeline(1, 1);
  std::string svg = svg_of(tl);
  CHECK(texts_in(svg, "<g class=\"job-labels\"") == std::vector<std::string>{"F0", "F1", "B0", "B1", "opt"});
  // A label sits in the middle of its block.
  CHECK(attrs(svg, "<g class=\"job-labels\"", "text-anchor") == std::vector<std::string>{"middle"});
  // Chunks: forward1 is chunk 1 of micro-batch 0; a 1 us job has no room.
  tl = from_logs({job_line("forward0", 0, 0, 500) + job_line("forward1", 0, 500, 1000) +
                  job_line("backward_w1", 3, 1000, 1001) + job_line("optimizer", 0, 1001, 1500)});
  svg = svg_of(tl);
  CHECK(texts_in(svg, "<g class=\"job-labels\"") == std::vector<std::string>{"F0c0", "F0c1", "opt"});
  CHECK(attrs(svg, "<rect class=\"job\"", "data-chunk") == std::vector<std::string>{"0", "1", "1"});
  SvgOptions opt;
  opt.labels = false;
  CHECK(svg_of(tl, opt).find("job-labels") == std::string::npos);
}

TEST_CASE("every block at least as wide as its shortest label carries one, two-digit and VPP blocks too", "[svg]") {
  // Forward and backward blocks of micro-batches 0 to 15, 1, 2 or 3 chunks,
  // at widths from 8 to 40 px (the plot is 1 us per pixel).
  for (int chunks : {0, 2, 3}) {
    std::string log;
    int64_t t = 0;
    int n = 0;
    for (int mb = 0; mb < 16; ++mb) {
      for (int c = 0; c < std::max(chunks, 1); ++c) {
        for (const char* base : {"forward", "backward", "backward_w"}) {
          int64_t w = 8 + (n++ * 7) % 33;
          std::string type = chunks ? base + std::to_string(c) : std::string(base);
          log += job_line(type, mb, t, t + w);
          t += w;
        }
      }
    }
    log += job_line("optimizer", 0, t, t + 25);
    t += 25;
    Timeline tl = from_logs({log});
    SvgOptions opt;
    opt.plot_width = static_cast<double>(t);
    std::string svg = svg_of(tl, opt);
    std::vector<std::string> widths = attrs(svg, "<rect class=\"job\"", "width");
    std::vector<std::string> types = attrs(svg, "<rect class=\"job\"", "data-type");
    std::vector<std::string> mbs = attrs(svg, "<rect class=\"job\"", "data-mb");
    std::vector<std::string> xs = attrs(svg, "<rect class=\"job\"", "x");
    REQUIRE(widths.size() == types.size());
    // The labels by the x of their block's middle.
    std::map<double, std::string> label_at;
    std::regex re("<text x=\"([0-9.]+)\" y=\"[0-9.]+\" fill=\"#[0-9a-f]+\">([^<]*)</text>");
    for (std::sregex_iterator it(svg.begin(), svg.end(), re), e; it != e; ++it) {
      label_at[std::round(std::stod((*it)[1]) * 100)] = (*it)[2];
    }
    size_t labelled = 0;
    for (size_t i = 0; i < widths.size(); ++i) {
      double w = std::stod(widths[i]), x = std::stod(xs[i]);
      std::vector<std::string> forms = label_forms(split_type(types[i]), std::stoi(mbs[i]));
      auto it = label_at.find(std::round((x + w / 2) * 100));
      INFO(types[i] << " mb" << mbs[i] << " " << w << " px, chunks " << chunks);
      if (w >= narrowest_labelled(forms)) {
        REQUIRE(it != label_at.end());
        // The longest form that fits, and it does fit.
        CHECK(it->second == fitting_label(forms, w));
        CHECK(label_text_width(it->second) + 2 * kLabelPadPx <= w);
        ++labelled;
      } else {
        CHECK(it == label_at.end());
      }
    }
    // Two-digit micro-batches and every chunk are labelled somewhere (a
    // chunk's label keeps its chunk, so fewer of its 8-40 px blocks fit one).
    CHECK(labelled > widths.size() / 3);
    CHECK(std::regex_search(svg, std::regex(">[FBW]?1[0-5](c[0-9])?</text>")));
  }
}

TEST_CASE("a label drops what the colour tells before it is dropped", "[svg]") {
  CHECK(label_forms(split_type("forward"), 12) == std::vector<std::string>{"F12", "12"});
  // A chunk's block never drops its chunk: no row mixes "4c0" and a bare "5".
  CHECK(label_forms(split_type("backward0"), 0).size() == 2);
  CHECK(label_forms(split_type("backward1"), 0) == std::vector<std::string>{"B0c1", "0c1"});
  CHECK(label_forms(split_type("forward0"), 5) == std::vector<std::string>{"F5c0", "5c0"});
  CHECK(label_forms(split_type("backward_w"), 2) == std::vector<std::string>{"W2", "2"});
  CHECK(label_forms(split_type("optimizer"), 0) == std::vector<std::string>{"opt"});
  CHECK(label_forms(split_type("recv_forward"), 1).empty());
  // Widths from the font's advances: a digit is 0.636 em of DejaVu Sans.
  CHECK(label_text_width("12") == Approx(12.72).epsilon(0.01));
  CHECK(fitting_label({"F12", "12"}, 23) == "F12");
  CHECK(fitting_label({"F12", "12"}, 22) == "12");
  CHECK(fitting_label({"F12", "12"}, 17) == "12");
  CHECK(fitting_label({"F12", "12"}, 16) == "");
}

TEST_CASE("touching jobs are parted by a hairline and every job has a tooltip", "[svg]") {
  Timeline tl = from_logs(
      {job_line("forward", 0, 0, 500) + job_line("forward", 1, 500, 1000) + job_line("forward", 2, 1000, 1001)});
  std::string svg = svg_of(tl);
  // The hairline is a white stroke of every job rectangle that does not hide a thin one.
  CHECK(svg.find("rect.job { stroke: #ffffff; stroke-width: 0.75px;") != std::string::npos);
  CHECK(count(svg, "style=\"stroke:none\"") == 1);
  // One <title> per job after the picture's own, naming the job, its step, row and time.
  CHECK(count(svg, "<title>") == 4);
  CHECK(svg.find("><title>forward mb1 · step 0 · GPU 0 · 500.0 µs at 500.0 µs</title></rect>") != std::string::npos);
  // The fills are the palette's, shared with the JSON traces.
  CHECK(attrs(svg, "<rect class=\"job\"", "fill").front() == hex(type_fill("forward")));
  std::string why;
  CHECK(well_formed(svg, &why));
  INFO(why);
}

TEST_CASE("rows are grouped by replica, in stage order, with short labels", "[svg]") {
  Timeline tl = pipeline(4, 2);
  Stats st = two_by_two(tl);
  st.ranks[0].stage = 1;  // ranks 0 and 1 swap stages: rank 1 comes first
  st.ranks[1].stage = 0;
  SvgOptions opt;
  opt.stats = &st;
  std::string svg = svg_of(tl, opt);
  CHECK(attrs(svg, "<g class=\"rank\"", "data-rank") == std::vector<std::string>{"1", "0", "2", "3"});
  CHECK(attrs(svg, "<g class=\"rank\"", "data-stage") == std::vector<std::string>{"0", "1", "0", "1"});
  CHECK(attrs(svg, "<g class=\"rank\"", "data-replica") == std::vector<std::string>{"0", "0", "1", "1"});
  std::vector<std::string> labels;
  std::regex re("class=\"rank-label\"[^>]*>([^<]*)<");
  for (std::sregex_iterator it(svg.begin(), svg.end(), re), e; it != e; ++it) labels.push_back((*it)[1]);
  CHECK(labels == std::vector<std::string>{"s0 · GPU 1", "s1 · GPU 0", "s0 · GPU 2", "s1 · GPU 3"});
  CHECK(count(svg, "<g class=\"group\" data-replica=") == 2);
  CHECK(svg.find(">replica 1</text>") != std::string::npos);  // no machine names to add
  // The full name stays in the data.
  CHECK(attrs(svg, "<g class=\"rank\"", "data-label").front() == "GPU:1");
  // Without stats: one group of plain rows, no heading.
  svg = svg_of(tl);
  CHECK(count(svg, "<g class=\"group\"") == 0);
  CHECK(svg.find(">GPU 3</text>") != std::string::npos);
}

TEST_CASE("the title names the schedule, P, M, the steps and the bubble, measured and ideal", "[svg]") {
  Timeline tl = pipeline(4, 2);
  Stats st = two_by_two(tl);
  SvgOptions opt;
  opt.stats = &st;
  // The bubble is the stats' figure: the run's, and the step's when one step is drawn.
  st.bubble_ratio = 0.25;
  std::string svg = svg_of(tl, opt);
  std::smatch m;
  REQUIRE(std::regex_search(svg, m, std::regex("<text class=\"title\"[^>]*>([^<]*)<")));
  CHECK(m[1] == "1F1B · P=2 · M=2 · 2 replicas · steps 0-1 of 2 · bubble 25.0% (ideal 33.3%) · 40 jobs");
  PictureRequest req;
  req.steps = StepRange{1, 1};
  st.steps[1].bubble_ratio = 0.5;
  svg = svg_of(tl, opt, req);
  REQUIRE(std::regex_search(svg, m, std::regex("<text class=\"title\"[^>]*>([^<]*)<")));
  CHECK(m[1] == "1F1B · P=2 · M=2 · 2 replicas · step 1 of 2 · bubble 50.0% (ideal 33.3%) · 20 jobs");
}

TEST_CASE("critical-path hops that follow each other on one rank are one outline, not a black bar", "[svg]") {
  Timeline tl = pipeline(4, 2);
  Stats st = two_by_two(tl);
  const int64_t t1 = tl.runs[0].steps[1].start_ns;
  // Rank 0: ten hops of 1 us back to back (under a pixel each across 1000 px
  // of the run), then rank 1 after a wide gap, then rank 1 again 200 us later.
  std::vector<CriticalHop> hops;
  for (int k = 0; k < 10; ++k) hops.push_back({0, "forward", k, t1 + k * 1'000, t1 + (k + 1) * 1'000, 0, false});
  hops.push_back({1, "backward", 0, t1 + 400'000, t1 + 450'000, 390'000, true});
  hops.push_back({1, "backward", 1, t1 + 650'000, t1 + 700'000, 200'000, false});
  // Wide hops back to back keep their own outlines.
  hops.push_back({1, "forward", 2, t1 + 700'000, t1 + 750'000, 0, false});
  st.steps[1].critical_path.hops = hops;
  SvgOptions opt;
  opt.stats = &st;
  opt.plot_width = 1000;
  std::string svg = svg_of(tl, opt);
  CHECK(attrs(svg, "<rect class=\"cp-hop\"", "data-rank") == std::vector<std::string>{"0", "1", "1", "1"});
  CHECK(attrs(svg, "<rect class=\"cp-hop\"", "data-hops") == std::vector<std::string>{"10"});
  CHECK(count(svg, "<line class=\"cp-link\"") == 3);
  // The merged outline spans its hops: 10 us at the run's scale.
  std::vector<std::string> w = attrs(svg, "<rect class=\"cp-hop\"", "width");
  REQUIRE(w.size() == 4);
  CHECK(std::stod(w[0]) == Approx(std::stod(w[2]) / 5).margin(0.05));
}

TEST_CASE("the critical path of each drawn step is an overlay of outlined hops", "[svg]") {
  Timeline tl = pipeline(4, 2);
  Stats st = two_by_two(tl);
  // Step 1: rank 0's forward mb0, then rank 1's backward mb1 (from another rank).
  const int64_t t1 = tl.runs[0].steps[1].start_ns;
  st.steps[1].critical_path.hops = {
      {0, "forward", 0, t1, t1 + 100'000, 0, false},
      {1, "backward", 1, t1 + 455'000, t1 + 655'000, 355'000, true},
  };
  SvgOptions opt;
  opt.stats = &st;
  opt.plot_width = 1000;
  std::string svg = svg_of(tl, opt);
  CHECK(count(svg, "<g class=\"critical-path\"") == 1);
  CHECK(count(svg, "<g class=\"critical-step\"") == 1);
  CHECK(attrs(svg, "<g class=\"critical-step\"", "data-step") == std::vector<std::string>{"1"});
  CHECK(attrs(svg, "<rect class=\"cp-hop\"", "data-rank") == std::vector<std::string>{"0", "1"});
  CHECK(count(svg, "<line class=\"cp-link\"") == 1);
  CHECK(svg.find("stroke-dasharray=\"3 2\"/>", svg.find("<line class=\"cp-link\"")) != std::string::npos);
  // Placed on the same scale as the jobs: the first hop where rank 0's step-1 forward is.
  std::vector<std::string> xs = attrs(svg, "<rect class=\"cp-hop\"", "x");
  std::vector<std::string> job_x = attrs(svg, "<rect class=\"job\"", "x");
  CHECK(xs.front() == job_x[5]);  // rank 0's sixth job: step 1's first forward
  CHECK(svg.find("class=\"legend-critical\"") != std::string::npos);
  // A step not drawn draws no path.
  PictureRequest req;
  req.steps = StepRange{0, 0};
  CHECK(svg_of(tl, opt, req).find("critical-path") == std::string::npos);
}

TEST_CASE("the title counts the drawn steps against the run, not against the selection", "[svg]") {
  // Ten steps of two ranks; --steps 2:4, 3:3 and --skip-warmup 1 keep some.
  std::vector<std::string> logs(2);
  for (int r = 0; r < 2; ++r) {
    for (int s = 0; s < 10; ++s) {
      int64_t t = s * 1000;
      logs[r] += job_line("forward", 0, t, t + 300) + job_line("backward", 0, t + 300, t + 900);
    }
  }
  auto title = [&](const Selection& sel) {
    Timeline tl = from_logs(logs);
    REQUIRE(apply_selection(tl, sel) == "");
    std::string svg = svg_of(tl);
    size_t from = svg.find("<text class=\"title\"");
    REQUIRE(from != std::string::npos);
    return svg.substr(from, svg.find("</text>", from) - from);
  };
  CHECK(svg_of(from_logs(logs)).find("steps 0-9 of 10") != std::string::npos);
  Selection sel;
  sel.steps = StepRange{2, 4};
  CHECK(title(sel).find("steps 2-4 of 10") != std::string::npos);
  sel.steps = StepRange{3, 3};
  CHECK(title(sel).find("step 3 of 10") != std::string::npos);
  Selection warm;
  warm.skip_warmup = 1;
  CHECK(title(warm).find("steps 1-9 of 10") != std::string::npos);
}

TEST_CASE("the legend explains block labels only on a picture that has some", "[svg]") {
  // 300 steps of 1000 us: every block under a pixel wide when all are drawn.
  std::vector<std::string> logs(2);
  for (int r = 0; r < 2; ++r) {
    for (int s = 0; s < 300; ++s) {
      int64_t t = s * 1000;
      logs[r] += job_line("forward", 0, t, t + 300) + job_line("backward", 0, t + 300, t + 900);
    }
  }
  Timeline tl = from_logs(logs);
  PictureRequest all;
  all.steps = StepRange{0, 299};
  std::string dense = svg_of(tl, {}, all);
  CHECK(dense.find(">F0</text>") == std::string::npos);  // no block carries a label
  CHECK(dense.find(">B0</text>") == std::string::npos);
  CHECK(dense.find("legend-key") == std::string::npos);
  // The slowest step alone: wide blocks, labelled, and the key.
  std::string one = svg_of(tl);
  CHECK(one.find(">F0</text>") != std::string::npos);
  CHECK(one.find("legend-key") != std::string::npos);
  // Without labels at all, no key either.
  SvgOptions bare;
  bare.labels = false;
  CHECK(svg_of(tl, bare).find("legend-key") == std::string::npos);
}

TEST_CASE("a run too dense to read is drawn as its slowest step, unless steps are chosen", "[svg]") {
  // 300 steps of 1000 us with 100 us jobs: 0.4 px each across 1200 px. Step 7 is the slowest.
  std::vector<std::string> logs(2);
  for (int r = 0; r < 2; ++r) {
    int64_t t = 0;
    for (int s = 0; s < 300; ++s) {
      int64_t slow = s == 7 ? 400 : 0;
      logs[r] += job_line("forward", 0, t, t + 100) + job_line("backward", 0, t + 100, t + 300 + slow) +
                 job_line("optimizer", 0, t + 300 + slow, t + 320 + slow);
      t += 1000 + slow;
    }
  }
  Timeline tl = from_logs(logs);
  PictureRequest req;
  PictureSelection sel = select_picture(tl, req);
  CHECK(sel.slowest());
  REQUIRE(sel.runs.size() == 1);
  CHECK(sel.runs[0].first_step == 7);
  CHECK(sel.runs[0].last_step == 7);
  CHECK(sel.jobs == 6);
  CHECK(sel.note.rfind("drawing step 7, the slowest of 300 steps (0.720 ms)", 0) == 0);
  std::string svg = svg_of(tl, {}, req);
  CHECK(count(svg, "<rect class=\"job\"") == 6);
  CHECK(svg.find("step 7 (slowest of 300)") != std::string::npos);
  // --steps overrides; so does a picture that is readable.
  req.steps = StepRange{0, 299};
  CHECK(!select_picture(tl, req).slowest());
  CHECK(select_picture(tl, req).jobs == 1800);
  CHECK(select_picture(tl, req).why == PictureReason::kChosen);
  req.steps.reset();
  CHECK(!select_picture(pipeline(2, 2), req).slowest());
}

TEST_CASE("a width sets the whole picture's width", "[svg]") {
  Timeline tl = pipeline(2, 1);
  SvgOptions opt;
  opt.width = 800;
  std::string svg = svg_of(tl, opt);
  CHECK(attrs(svg, "<svg", "width") == std::vector<std::string>{"800"});
  double plot_x = std::stod(attrs(svg, "<g class=\"run\"", "data-plot-x").front());
  double plot_w = std::stod(attrs(svg, "<g class=\"run\"", "data-plot-w").front());
  CHECK(plot_x + plot_w + 16 == Approx(800));
}

TEST_CASE("a rank with memory samples gets a strip under its row: allocated area, reserved line, peak",
          "[svg][memory]") {
  Timeline plain = pipeline(2, 2);
  const std::string before = svg_of(plain);
  CHECK(before.find("class=\"memory") == std::string::npos);
  CHECK(before.find("legend-memory") == std::string::npos);

  Timeline tl = plain;
  ppt::testing::add_memory_samples(tl, 0.25, 20'000);
  // Without samples the picture is as it was; with them each rank has a strip.
  CHECK(svg_of(plain) == before);
  std::string svg = svg_of(tl);
  CHECK(count(svg, "<g class=\"memory\"") == 2);
  CHECK(count(svg, "<path class=\"memory-allocated\"") == 2);
  CHECK(count(svg, "<path class=\"memory-reserved\"") == 2);
  CHECK(count(svg, "<line class=\"memory-peak\"") == 2);
  CHECK(count(svg, "class=\"legend-memory-allocated\"") == 1);
  CHECK(count(svg, "class=\"legend-memory-reserved\"") == 1);
  // The peaks: rank r holds 2 + r GiB and two micro-batches of 0.25 GiB at
  // its peak; reserved is 0.5 GiB above; every strip is scaled to the run's
  // highest reserved (rank 1's 3.5 + 0.5 GiB).
  auto gib = [](double g) { return std::to_string(std::llround(g * 1073741824.0)); };
  CHECK(attrs(svg, "<g class=\"memory\"", "data-peak-allocated-bytes") == std::vector<std::string>{gib(2.5), gib(3.5)});
  CHECK(attrs(svg, "<g class=\"memory\"", "data-peak-reserved-bytes") == std::vector<std::string>{gib(3.0), gib(4.0)});
  CHECK(attrs(svg, "<g class=\"memory\"", "data-scale-bytes") == std::vector<std::string>{gib(4.0), gib(4.0)});
  std::vector<std::string> labels;
  std::regex label_re("<text class=\"memory-label\"[^>]*>([^<]*)</text>");
  for (std::sregex_iterator it(svg.begin(), svg.end(), label_re), e; it != e; ++it) labels.push_back((*it)[1]);
  CHECK(labels == std::vector<std::string>{"peak 2.5 GiB", "peak 3.5 GiB"});
  // Two steps of a Start sample and 4 Before/After pairs each.
  CHECK(attrs(svg, "<g class=\"memory\"", "data-samples") == std::vector<std::string>{"18", "18"});
  // The strip takes room under the row: the picture is taller by two strips.
  auto height = [](const std::string& s) { return std::stod(attrs(s, "<svg ", "height").front()); };
  CHECK(height(svg) == Approx(height(before) + 2 * 18));
  // Each area starts at its Start sample, before the run's first job: off
  // the plot's left edge, drawn under the clip.
  std::vector<std::string> areas = attrs(svg, "<path class=\"memory-allocated\"", "d");
  REQUIRE(areas.size() == 2);
  CHECK(areas[0].rfind("M-", 0) == 0);
  CHECK(areas[1].rfind("M-", 0) == 0);
  CHECK(areas[0].back() == 'Z');
  std::string why;
  CHECK(well_formed(svg, &why));
  INFO(why);
}

TEST_CASE("a memory strip is drawn for the drawn steps only, with the value held into them", "[svg][memory]") {
  Timeline tl = pipeline(1, 3);
  ppt::testing::add_memory_samples(tl, 0.5, 10'000);
  PictureRequest req;
  req.steps = StepRange{1, 1};
  std::string svg = svg_of(tl, {}, req);
  // Step 1's Start sample (before its first job, its value held into the
  // drawn range) and its 4 Before and 4 After samples; none of steps 0 and 2.
  CHECK(attrs(svg, "<g class=\"memory\"", "data-samples") == std::vector<std::string>{"9"});
  CHECK(attrs(svg, "<g class=\"memory\"", "data-peak-step") == std::vector<std::string>{"1"});
}
