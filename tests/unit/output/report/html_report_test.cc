// The HTML report: self-contained, its one script allowed by hash, log text
// never turned into markup, the stats and diff sections present.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "analysis/diff.h"
#include "analysis/stats.h"
#include "app/picture.h"
#include "output/report/html_report.h"
#include "passes/timeline_builder.h"
#include "support/memory_samples.h"
#include "support/test_support.h"

using namespace ppt;
using ppt::testing::job_line;
using ppt::testing::parser;
using ppt::testing::slurp;

namespace {

Timeline pipeline(int ranks, int steps, const std::string& first_type = "forward", int64_t slow_us = 0) {
  std::vector<SourceFile> files;
  std::vector<FileScan> scans;
  for (int r = 0; r < ranks; ++r) {
    std::string log;
    for (int s = 0; s < steps; ++s) {
      int64_t t = s * 1000 + r * 5;
      int64_t d = slow_us;  // the first job is longer and everything after it later
      log += job_line(first_type, 0, t, t + 100 + d) + job_line("forward", 1, t + 200 + d, t + 300 + d) +
             job_line("backward", 0, t + 350 + d, t + 550 + d) + job_line("backward", 1, t + 550 + d, t + 750 + d) +
             job_line("optimizer", 0, t + 800 + d, t + 820 + d);
    }
    files.push_back({"logs/workerlog." + std::to_string(r), "", 0, r, r});
    scans.push_back(scan_buffer(log, static_cast<uint32_t>(r), parser()));
  }
  return build_from_scans(files, {""}, std::move(scans));
}

// The page as the driver has it written: with the stats it computed.
std::string report_of(const Timeline& tl, ReportOptions opt = {}) {
  StringSink sink;
  Stats st;
  if (!opt.stats) {
    st = testing::stats_of(tl);
    opt.stats = &st;
  }
  PictureSelection picture = select_picture(tl, {});
  if (!opt.picture) opt.picture = &picture;
  write_html_report(tl, opt, sink);
  return sink.data;
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

std::string between(const std::string& s, const std::string& open, const std::string& close) {
  size_t a = s.find(open);
  if (a == std::string::npos) return "";
  a += open.size();
  size_t b = s.find(close, a);
  return b == std::string::npos ? "" : s.substr(a, b - a);
}

}  // namespace

TEST_CASE("the page carries report.js and report.css of the source tree byte for byte", "[html]") {
  // The hash itself is checked against Python's hashlib by tests/browser/check_assets.py.
  CHECK(report_script() == slurp(std::string(PPT_SOURCE_DIR) + "/src/output/report/report.js"));
  std::string css = slurp(std::string(PPT_SOURCE_DIR) + "/src/output/report/report.css");
  REQUIRE_FALSE(css.empty());
  CHECK(html_page_head("t").find("<style>" + css + "</style>") != std::string::npos);
  CHECK(report_script_csp_source().size() == std::string("'sha256-'").size() + 44);
}

TEST_CASE("the report is one self-contained page whose only script is allowed by its hash", "[html]") {
  Timeline tl = pipeline(3, 2);
  std::string page = report_of(tl);
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  // Nothing is fetched: no external script, style sheet, font or image.
  for (const char* bad :
       {"<link", "@import", "@font-face", " src=", "<img", "https://", "url(http", "<iframe", "<object"}) {
    INFO(bad);
    CHECK(page.find(bad) == std::string::npos);
  }
  std::string no_ns = std::regex_replace(page, std::regex("http://www\\.w3\\.org/2000/svg"), "");
  CHECK(no_ns.find("http://") == std::string::npos);
  CHECK(count(page, "<script") == 1);
  std::string csp = between(page, "http-equiv=\"Content-Security-Policy\" content=\"", "\"");
  CHECK(csp.find("default-src 'none'") != std::string::npos);
  std::string script = between(page, "<script>", "</script>");
  REQUIRE_FALSE(script.empty());
  CHECK(script == report_script());
  CHECK(csp.find("script-src " + report_script_csp_source()) != std::string::npos);
  CHECK(csp.find("unsafe-inline'; img") != std::string::npos);  // only for style, never for script
  CHECK(csp.find("script-src 'unsafe-inline'") == std::string::npos);
  // The script writes text, never markup.
  CHECK(script.find("innerHTML") == std::string::npos);
  CHECK(script.find("outerHTML") == std::string::npos);
  CHECK(script.find("insertAdjacentHTML") == std::string::npos);
  CHECK(script.find("document.write") == std::string::npos);
  CHECK(script.find("eval(") == std::string::npos);
  // The picture, the hover card and the controls are there.
  CHECK(count(page, "<svg ") == 1);
  CHECK(count(page, "<g class=\"rank\"") == 3);
  CHECK(count(page, "<rect class=\"job\"") == 30);
  CHECK(page.find("id=\"ppt-card\"") != std::string::npos);
  for (const char* f : {"job", "id", "type", "mb", "step", "start", "dur", "src"}) {
    CHECK(page.find(std::string("data-field=\"") + f + "\"") != std::string::npos);
  }
  CHECK(page.find("data-zoom=\"in\"") != std::string::npos);
  CHECK(page.find("<?xml") == std::string::npos);  // embedded: no prolog
}

TEST_CASE("the report carries the stats tables", "[html]") {
  Timeline tl = pipeline(2, 3);
  std::string page = report_of(tl);
  std::string stats = between(page, "<section class=\"stats\" id=\"stats\">", "</section>");
  REQUIRE_FALSE(stats.empty());
  CHECK(stats.find("<h3>Steps") != std::string::npos);
  CHECK(stats.find("<h3>Ranks, per step") != std::string::npos);
  CHECK(stats.find("<h3>Job types") != std::string::npos);
  CHECK(stats.find("<dt>bubble</dt>") != std::string::npos);
  // The same numbers as the stats: 3 steps in the steps table, 2 ranks in the ranks table.
  Stats st = testing::stats_of(tl);
  CHECK(st.steps.size() == 3);
  std::string steps_table = between(stats, "<h3>Steps", "</table>");
  CHECK(count(steps_table, "<tr>") == 1 + 3);
  std::string ranks_table = between(stats, "<h3>Ranks, per step", "</table>");
  CHECK(count(ranks_table, "<tr>") == 1 + 2);
  // Given stats are used as they are.
  st.source = "given <source>";
  ReportOptions opt;
  opt.stats = &st;
  page = report_of(tl, opt);
  CHECK(page.find("given &lt;source&gt;") != std::string::npos);
}

TEST_CASE("text from the logs never becomes markup in the report", "[html]") {
  const std::string hostile = "<img src=x onerror=document.title='PWNED'>";
  Timeline tl = pipeline(2, 2, hostile);
  tl.files[0].path = "logs/</script><script>alert(1)</script>/workerlog.0";
  ReportOptions opt;
  opt.source = "<b>source</b>";
  opt.notes = {"note with <i>markup</i>"};
  opt.title = "title </title><script>alert(2)</script>";
  std::string page = report_of(tl, opt);
  CHECK(count(page, "<script") == 1);
  CHECK(page.find("<img") == std::string::npos);
  CHECK(page.find("<b>") == std::string::npos);
  CHECK(page.find("<i>") == std::string::npos);
  CHECK(count(page, "</title>") == 2);  // the page's and the picture's, nothing injected
  CHECK(page.find("&lt;img src=x onerror=document.title=&#39;PWNED&#39;&gt;") != std::string::npos);
  CHECK(page.find("logs/&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;/workerlog.0") != std::string::npos);
  // The stats tables escape the type too.
  std::string stats = between(page, "<section class=\"stats\" id=\"stats\">", "</section>");
  CHECK(stats.find("&lt;img src=x") != std::string::npos);
}

TEST_CASE("the diff report shows both runs on one scale, zoomed together, with the deltas", "[html]") {
  Timeline a = pipeline(2, 3);
  Timeline b = pipeline(2, 3, "forward", 150);  // B's first forward is slower
  Stats sa = testing::stats_of(a), sb = testing::stats_of(b);
  sa.source = "base";
  sb.source = "new";
  DiffOptions busy;  // the steps start on a fixed grid: only the spans grow
  busy.metric = GateMetric::kBusy;
  Diff d = diff_stats(sa, sb, busy);
  DiffReportInput in{&a, &b, "base/", "new/", &d};
  PictureSelection pa = select_picture(a, {}), pb = select_picture(b, {});
  in.a_picture = &pa;
  in.b_picture = &pb;
  StringSink sink;
  write_diff_report(in, {}, sink);
  const std::string& page = sink.data;
  CHECK(count(page, "<svg ") == 2);
  CHECK(page.find("id=\"ppt-a\"") != std::string::npos);
  CHECK(page.find("id=\"ppt-b\"") != std::string::npos);
  CHECK(count(page, "data-sync=\"diff\"") == 2);
  // Distinct clip ids, one per picture.
  CHECK(count(page, "<clipPath id=\"ppt-a-clip\"") == 1);
  CHECK(count(page, "<clipPath id=\"ppt-b-clip\"") == 1);
  std::smatch m;
  std::vector<std::string> spans;
  std::string rest = page;
  std::regex re("data-span-us=\"([^\"]+)\"");
  while (std::regex_search(rest, m, re)) {
    spans.push_back(m[1]);
    rest = m.suffix();
  }
  REQUIRE(spans.size() == 2);
  CHECK(spans[0] == spans[1]);
  CHECK(page.find("<section class=\"stats diff\" id=\"diff\">") != std::string::npos);
  INFO(between(page, "<dl class=\"summary\">", "</dl>"));
  CHECK(page.find("<dt>verdict</dt><dd>slower") != std::string::npos);
  CHECK(count(page, "<rect class=\"job\"") == a.job_count() + b.job_count());
}

TEST_CASE("the report opens with a summary card of the run's figures", "[html]") {
  Timeline tl = pipeline(2, 3);
  Stats st = testing::stats_of(tl);
  st.stragglers.push_back({1, 1, "back<ward>", 1'300'000, 1'000'000, 0.30, 1.0, 6});
  st.stragglers.push_back({0, 0, "forward", 1'100'000, 1'000'000, 0.10, 0.8, 6});
  ReportOptions opt;
  opt.stats = &st;
  std::string page = report_of(tl, opt);
  std::string card = between(page, "<section id=\"overview\"", "</section>");
  REQUIRE_FALSE(card.empty());
  // Above the timeline and the stats: the first thing after the heading.
  CHECK(page.find("<section id=\"overview\"") < page.find("<section id=\"timeline\""));
  auto figure = [&](const std::string& name) { return between(card, "data-figure=\"" + name + "\"", "</div></div>"); };
  CHECK(figure("schedule").find(std::string(schedule_name(st.schedule.kind))) != std::string::npos);
  CHECK(figure("pp").find(">" + std::to_string(st.schedule.pp_degree) + "<") != std::string::npos);
  CHECK(figure("mb").find(">" + std::to_string(st.schedule.micro_batches) + "<") != std::string::npos);
  CHECK(figure("bubble").find(fmt::format("{:.1f}%", st.bubble_ratio * 100)) != std::string::npos);
  // Steps start every 1000 us in the logs: start of step k to start of k+1.
  CHECK(figure("period").find("1.000 ms") != std::string::npos);
  CHECK(figure("step-time").find(fmt::format("{:.3f} ms", st.step_time.median_ns / 1e6)) != std::string::npos);
  // The worst straggler, escaped, and how many others there are.
  std::string straggler = figure("straggler");
  CHECK(straggler.find("rank 1") != std::string::npos);
  CHECK(straggler.find("back&lt;ward&gt;") != std::string::npos);
  CHECK(straggler.find("+30%") != std::string::npos);
  CHECK(straggler.find("1 more") != std::string::npos);
  CHECK(figure("problems").find(">0<") != std::string::npos);
  CHECK(card.find("href=\"#problems\"") == std::string::npos);  // no section to link to
}

TEST_CASE("the card headlines the mean period, the figure diff, batch and whatif show, and names it", "[html]") {
  Timeline tl = pipeline(2, 3);
  Stats st = testing::stats_of(tl);
  // A slow step pulls the mean away from the median.
  st.step_period.mean_ns = 2'500'000;
  st.step_period.median_ns = 1'000'000;
  st.step_time.mean_ns = 1'700'000;
  st.step_time.median_ns = 800'000;
  ReportOptions opt;
  opt.stats = &st;
  std::string card = between(report_of(tl, opt), "<section id=\"overview\"", "</section>");
  auto figure = [&](const std::string& name) { return between(card, "data-figure=\"" + name + "\"", "</div></div>"); };
  auto value = [&](const std::string& name) { return between(figure(name), "class=\"value\">", "<"); };
  INFO(card);
  CHECK(value("period") == "2.500 ms");
  CHECK(figure("period").find("step period (mean)") != std::string::npos);
  CHECK(figure("period").find("median 1.000 ms") != std::string::npos);
  CHECK(value("step-time") == "1.700 ms");
  CHECK(figure("step-time").find("step time (mean)") != std::string::npos);
  CHECK(figure("step-time").find("median 0.800 ms") != std::string::npos);
}

TEST_CASE("the summary card counts the input problems and links to them", "[html]") {
  std::string log = testing::job_line("forward", 0, 0, 100) + "Profiler Info: Job (x), type = forward\n" +
                    testing::job_line("backward", 0, 200, 400) + testing::job_line("backward", 0, 200, 400);
  Timeline tl = build_from_scans({{"logs/workerlog.0", "", 0, 0, 0}}, {""}, [&] {
    std::vector<FileScan> scans;
    scans.push_back(scan_buffer(log, 0, parser()));
    return scans;
  }());
  std::string page = report_of(tl);
  std::string card = between(page, "<section id=\"overview\"", "</section>");
  std::string problems = between(card, "data-figure=\"problems\"", "</div></div>");
  CHECK(problems.find(">2<") != std::string::npos);  // a malformed line and a duplicate
  CHECK(problems.find("href=\"#problems\"") != std::string::npos);
  CHECK(page.find("<section id=\"problems\">") != std::string::npos);
  // A run of one step has no period.
  CHECK(between(card, "data-figure=\"period\"", "</div></div>").find("ms") == std::string::npos);
}

TEST_CASE("the report page lets the picture fill the window and pins a job's card", "[html]") {
  Timeline tl = pipeline(2, 2);
  std::string page = report_of(tl);
  std::string style = between(page, "<style>", "</style>");
  // The picture is laid out by the script at the window's width, one user
  // unit per pixel: never shrunk to fit (that made its text unreadable).
  std::string svg_rule = between(style, ".svg-wrap svg {", "}");
  REQUIRE_FALSE(svg_rule.empty());
  CHECK(svg_rule.find("max-width") == std::string::npos);
  CHECK(report_script().find("relayout") != std::string::npos);
  // The pinned card, beside the hover card, with a close button and the
  // micro-batch's count.
  std::string pin = between(page, "<div id=\"ppt-pin\"", "</div>");
  REQUIRE_FALSE(pin.empty());
  CHECK(pin.find("data-pin-close") != std::string::npos);
  for (const char* f : {"job", "rank", "type", "mb", "step", "start", "dur", "src", "peers"}) {
    CHECK(pin.find(std::string("data-field=\"") + f + "\"") != std::string::npos);
  }
  CHECK(style.find("rect.job.hl") != std::string::npos);
}

TEST_CASE("the critical path toggle hides the picture's critical path overlay", "[html]") {
  Timeline tl = pipeline(2, 2);
  std::string page = report_of(tl);
  CHECK(page.find("data-toggle=\"critical-path\"") != std::string::npos);
  std::string style = between(page, "<style>", "</style>");
  // The rule the toggle relies on: the class on the page root hides every
  // overlay element; the script toggles exactly that class on the root.
  CHECK(style.find(".ppt-no-critical .critical-path { display: none; }") != std::string::npos);
  CHECK(report_script().find("document.documentElement.classList.toggle('ppt-no-critical'") != std::string::npos);
  // A page with an overlay keeps it inside the picture, untouched by the page.
  std::string fragment = "<svg class=\"ppt-timeline\"><g class=\"critical-path\"><path d=\"M0 0L10 0\"/></g></svg>";
  std::string built = html_page_head("t") + fragment + html_page_tail();
  CHECK(built.find(fragment) != std::string::npos);
  CHECK(count(built, "<script") == 1);
}

TEST_CASE("the diff page names base and new and has a place for the per-step table", "[html]") {
  Timeline a = pipeline(2, 2);
  Timeline b = pipeline(2, 2, "forward", 150);
  Stats sa = testing::stats_of(a), sb = testing::stats_of(b);
  Diff d = diff_stats(sa, sb);
  DiffReportInput in{&a, &b, "base/", "new/", &d};
  PictureSelection pa = select_picture(a, {}), pb = select_picture(b, {});
  in.a_picture = &pa;
  in.b_picture = &pb;
  in.steps_html = "<section id=\"diff-steps\"><h2>Steps</h2></section>\n";
  StringSink sink;
  write_diff_report(in, {}, sink);
  const std::string& page = sink.data;
  CHECK(page.find("A (base): base/") != std::string::npos);
  CHECK(page.find("B (new): new/") != std::string::npos);
  size_t deltas = page.find("id=\"diff\""), steps = page.find("id=\"diff-steps\""),
         pictures = page.find("<section id=\"timeline\"");
  REQUIRE(steps != std::string::npos);
  CHECK(deltas < steps);
  CHECK(steps < pictures);
}

TEST_CASE("with memory samples the card names the peak and the picture draws each rank's strip", "[html][memory]") {
  Timeline tl = pipeline(2, 2);
  std::string plain = report_of(tl);
  CHECK(plain.find("data-figure=\"memory\"") == std::string::npos);
  CHECK(plain.find("<g class=\"memory\"") == std::string::npos);

  testing::add_memory_samples(tl, 0.25, 20'000);
  std::string page = report_of(tl);
  std::string card = between(page, "<section id=\"overview\"", "</section>");
  std::string memory = between(card, "data-figure=\"memory\"", "</div></div>");
  // Rank 1 holds 3 GiB and two micro-batches of 0.25 GiB at its peak, in step 0;
  // its reserved is 0.5 GiB above.
  CHECK(memory.find(">3.5 GiB<") != std::string::npos);
  CHECK(memory.find("rank 1 step 0") != std::string::npos);
  CHECK(memory.find("reserved 4 GiB") != std::string::npos);
  std::string picture = between(page, "<section id=\"timeline\"", "</section>");
  CHECK(count(picture, "<g class=\"memory\"") == 2);
  // The strip's tooltip is the page's only hint at its values: kept embedded.
  CHECK(count(picture, "memory: peak allocated") == 2);
}

TEST_CASE("the diff report draws both runs' memory strips on one memory scale", "[html][memory]") {
  Timeline a = pipeline(2, 2);
  Timeline b = pipeline(2, 2);
  testing::add_memory_samples(a, 0.25, 20'000);
  testing::add_memory_samples(b, 1.0, 20'000);  // B holds four times the activations
  Stats sa = testing::stats_of(a), sb = testing::stats_of(b);
  Diff d = diff_stats(sa, sb, {});
  DiffReportInput in{&a, &b, "base/", "new/", &d};
  PictureSelection pa = select_picture(a, {}), pb = select_picture(b, {});
  in.a_picture = &pa;
  in.b_picture = &pb;
  StringSink sink;
  write_diff_report(in, {}, sink);
  std::vector<std::string> scales;
  std::regex re("data-scale-bytes=\"([^\"]+)\"");
  for (std::sregex_iterator it(sink.data.begin(), sink.data.end(), re), e; it != e; ++it) scales.push_back((*it)[1]);
  // B's rank 1: 3 GiB and two micro-batches of 1 GiB, reserved 0.5 GiB above.
  const std::string top = std::to_string(std::llround(5.5 * 1073741824.0));
  CHECK(scales == std::vector<std::string>{top, top, top, top});
}
