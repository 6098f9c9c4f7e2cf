// What the stats and diff reports say to a reader: numbers without "-0.0%",
// colours that mean what is good or bad for the run, and a legend for them.
#include <catch2/catch.hpp>

#include <regex>
#include <string>

#include "analysis/diff.h"
#include "app/picture.h"
#include "output/report/html_report.h"
#include "output/text/stats_writers.h"
#include "support/test_support.h"

namespace ppt {
namespace {

// Two ranks, A against B, with the per-step times given (ms).
RankDelta rank_delta(int32_t rank, double busy_a, double busy_b, double idle_a, double idle_b) {
  RankDelta r;
  r.rank = rank;
  r.stage = rank;
  r.busy_a_ns = busy_a * 1e6;
  r.busy_b_ns = busy_b * 1e6;
  r.idle_a_ns = idle_a * 1e6;
  r.idle_b_ns = idle_b * 1e6;
  r.busy_delta_pct = (busy_b - busy_a) / busy_a * 100;
  r.idle_delta_pct = (idle_b - idle_a) / idle_a * 100;
  r.bubble_a = idle_a / (busy_a + idle_a);
  r.bubble_b = idle_b / (busy_b + idle_b);
  r.bubble_delta = r.bubble_b - r.bubble_a;
  return r;
}

Diff a_diff() {
  Diff d;
  d.a_source = "a";
  d.b_source = "b";
  d.a_schedule = d.b_schedule = "1F1B P=2 M=4";
  d.step_time.a_ns = 100e6;
  d.step_time.b_ns = 100e6;
  d.step_time.noise_pct = 1.0;
  return d;
}

// The class of the cell in column `column` of the row of `rank` in the
// diff page's ranks table ("" when none).
std::string cell_class(const std::string& html, int32_t rank, size_t column) {
  std::smatch m;
  std::regex row("<tr><td>" + std::to_string(rank) + "</td>(.*?)</tr>");
  if (!std::regex_search(html, m, row)) return "?";
  std::string cells = "<td>" + std::to_string(rank) + "</td>" + m[1].str();
  std::regex cell("<td( class=\"([^\"]*)\")?>");
  size_t i = 0;
  for (auto it = std::sregex_iterator(cells.begin(), cells.end(), cell); it != std::sregex_iterator(); ++it, ++i) {
    if (i == column) return (*it)[2].str();
  }
  return "?";
}

}  // namespace

TEST_CASE("a change that rounds to zero is 0.0%, never -0.0%", "[stats][diff]") {
  Diff d = a_diff();
  d.step_time.delta_pct = -0.04;
  d.fail_if_slower_pct = 3;
  RankDelta r = rank_delta(0, 50, 49.99, 50, 49.98);
  d.ranks.push_back(r);
  d.bubble_a = 0.30;
  d.bubble_b = 0.2999;
  for (const std::string& out : {format_diff_text(d), format_diff_markdown(d), format_diff_html(d)}) {
    INFO(out);
    CHECK(out.find("-0.0") == std::string::npos);
    CHECK(out.find("+0.0") == std::string::npos);
    CHECK(out.find("0.0%") != std::string::npos);
  }
}

TEST_CASE("diff colours say what a change means for the run, not which way a number moved", "[diff]") {
  // Rank 1 got slower (busy +20%): it waits less, and that is not good news.
  // Rank 0 does the same work and waits for rank 1: that is bad.
  Diff d = a_diff();
  d.step_time.b_ns = 110e6;
  d.step_time.delta_pct = 10;
  d.verdict = Verdict::kSlower;
  d.ranks.push_back(rank_delta(0, 60, 60, 40, 50));
  d.ranks.push_back(rank_delta(1, 50, 60, 50, 40));
  std::string html = format_diff_html(d);
  // Columns: rank, stage, busy A, busy B, busy, idle A, idle B, idle, bubble A, bubble B, bubble.
  CHECK(cell_class(html, 1, 4) == "bad");  // busy +20%
  CHECK(cell_class(html, 1, 7) == "");     // idle -20%: the other side of its busy time
  CHECK(cell_class(html, 1, 10) == "");    // bubble down, for the same reason
  CHECK(cell_class(html, 0, 4) == "");     // busy the same
  CHECK(cell_class(html, 0, 7) == "bad");  // idle +25%: it waits for rank 1
  CHECK(cell_class(html, 0, 10) == "bad");
  CHECK(html.find("<td class=\"good\"") == std::string::npos);

  // The other way round: rank 1 got faster; rank 0 waits less because of it.
  Diff f = a_diff();
  f.step_time.b_ns = 90e6;
  f.step_time.delta_pct = -10;
  f.verdict = Verdict::kFaster;
  f.ranks.push_back(rank_delta(0, 60, 60, 50, 40));
  f.ranks.push_back(rank_delta(1, 60, 50, 40, 50));
  std::string faster = format_diff_html(f);
  CHECK(cell_class(faster, 1, 4) == "good");
  CHECK(cell_class(faster, 1, 7) == "");  // idle up because its own work shrank
  CHECK(cell_class(faster, 0, 7) == "good");
  CHECK(faster.find("<td class=\"bad\"") == std::string::npos);
}

TEST_CASE("stats colours what a rank costs the step: the straggler's busy time, not the waiting ranks' bubble",
          "[stats]") {
  // Rank 1 is slow: it hardly waits (a low bubble) while ranks 0 and 2 wait
  // for it (high bubbles). Against the ideal bubble that read as rank 1
  // green and ranks 0 and 2 red.
  Stats st;
  st.source = "logs";
  st.schedule.kind = ScheduleKind::k1F1B;
  st.schedule.pp_degree = 3;
  st.schedule.micro_batches = 4;
  st.schedule.ideal_bubble_ratio = 0.2;
  st.bubble_ratio = 0.3;
  for (int32_t r = 0; r < 3; ++r) {
    RankStats rank;
    rank.rank = r;
    rank.stage = r;
    rank.steps = 1;
    rank.busy_ns = r == 1 ? 95'000'000 : 60'000'000;
    rank.idle_ns = 100'000'000 - rank.busy_ns;
    rank.span_ns = 100'000'000;
    rank.bubble_ratio = static_cast<double>(rank.idle_ns) / 1e8;
    st.ranks.push_back(rank);
  }
  st.stragglers.push_back({1, 1, "forward", 3e6, 2e6, 0.5, 1.0, 4});
  std::string html = format_stats_html(st);
  INFO(html);
  // Columns: rank, stage, steps, busy, idle, bubble.
  CHECK(cell_class(html, 1, 3) == "bad");  // the straggler's busy time: what costs the step
  CHECK(cell_class(html, 1, 5) == "");     // its low bubble is no good news
  CHECK(cell_class(html, 0, 5) == "");     // the others wait for it: not their fault
  CHECK(cell_class(html, 2, 5) == "");
  CHECK(cell_class(html, 0, 3) == "");
  // The legend says what the colours measure.
  CHECK(html.find("a straggler&#39;s busy time and margin") != std::string::npos);
}

TEST_CASE("diff names its headline period the mean, the statistic every output headlines", "[diff]") {
  Diff d = a_diff();
  d.period.a_steps = d.period.b_steps = 3;
  d.period.a_ns = 2.5e6;
  d.period.b_ns = 2.5e6;
  d.period.a_median_ns = d.period.b_median_ns = 1e6;
  for (const std::string& out : {format_diff_text(d), format_diff_markdown(d), format_diff_html(d)}) {
    INFO(out);
    CHECK(out.find("A mean 2.500 ms (3 steps, median 1.000 ms)") != std::string::npos);
  }
}

TEST_CASE("the stats and diff pages explain their colours", "[stats][diff]") {
  testing::TempDir dir;
  dir.write("logs/workerlog.0", testing::job_line("forward", 0, 0, 10) + testing::job_line("backward", 0, 20, 30));
  Stats st = testing::stats_of(testing::load_dir(dir.path() + "/logs"));
  st.source = "logs";
  std::string stats = format_stats_html(st);
  CHECK(stats.find("class=\"legend\"") != std::string::npos);
  CHECK(stats.find("class=\"good\"") != std::string::npos);  // the legend's own samples, at least
  std::string diff = format_diff_html(a_diff());
  CHECK(diff.find("class=\"legend\"") != std::string::npos);
}

TEST_CASE("the report page's stats heading names what was read", "[stats]") {
  testing::TempDir dir;
  dir.write("logs/workerlog.0", testing::job_line("forward", 0, 0, 10) + testing::job_line("backward", 0, 20, 30));
  Timeline tl = testing::load_dir(dir.path() + "/logs");
  Stats st = testing::stats_of(tl);  // no source of its own
  ReportOptions opt;
  opt.source = "logs";
  opt.stats = &st;
  PictureSelection picture = select_picture(tl, {});
  opt.picture = &picture;
  StringSink page;
  write_html_report(tl, opt, page);
  CHECK(page.data.find("<h2>pp-timeline stats: logs (1 rank,") != std::string::npos);
  CHECK(page.data.find("stats:  (") == std::string::npos);
  // Without any source, no empty slot.
  CHECK(format_stats_text(st).rfind("pp-timeline stats (1 rank,", 0) == 0);
}

TEST_CASE("a coloured summary line is coloured on a terminal, and the input text in it stays escaped",
          "[stats][diff]") {
  // The bubble figure of stats and the verdict and failed gate of diff are
  // painted; the rest of their lines is terminal text. Painting the text and
  // then escaping the line printed the colour codes as "\x1b[32m" text.
  Stats st;
  st.bubble_ratio = 0.28;
  st.schedule.ideal_bubble_ratio = 0.27;
  std::string text = format_stats_text(st, TextStyle{true});
  CHECK(text.find("measured \x1b[") != std::string::npos);
  CHECK(text.find("\\x1b") == std::string::npos);
  CHECK(format_stats_text(st, TextStyle{false}).find('\x1b') == std::string::npos);

  Diff d = a_diff();
  d.b_label = "B\x1b[31m";  // a label from the command line, with an escape
  d.verdict = Verdict::kSlower;
  d.fail_if_slower_pct = 5;
  d.gate_failed = true;
  d.slower_pct = 10;
  std::string diff = format_diff_text(d, TextStyle{true});
  CHECK(diff.find("verdict    \x1b[") != std::string::npos);            // the verdict coloured
  CHECK(diff.find("gate       \x1b[") != std::string::npos);            // the failed gate coloured
  CHECK(diff.find("B\\x1b[31m is 10.0% slower") != std::string::npos);  // the label's escape written out
  CHECK(diff.find("B\x1b[31m") == std::string::npos);
}

}  // namespace ppt
