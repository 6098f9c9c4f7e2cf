#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <chrono>
#include <ctime>
#include <string>
#include <vector>

#include "app/watch.h"

using namespace ppt;
using namespace std::chrono_literals;

namespace {

// Rank r's lines of step k of a 2-stage pipeline (2 micro-batches): times
// in whole microseconds, printed as Paddle does.
std::string step_lines(int rank, int step) {
  std::string out;
  int64_t t = 1697793307000000 + step * 10000 + rank * 100;
  const char* types[] = {"forward", "forward", "backward", "backward", "optimizer"};
  for (int i = 0; i < 5; ++i) {
    int64_t d = i < 2 ? 100 : i < 4 ? 200 : 50;
    out += fmt::format(
        "I1020 09:15:07.265326 4242 standalone_executor.cc:217] Profiler Info: Job ({}), type = {}, "
        "micro_batch_id = {}, job_start_time = {}.{:03}000, job_end_time = {}.{:03}000\n",
        i, types[i], i % 2, t / 1000, t % 1000, (t + d) / 1000, (t + d) % 1000);
    out += "I1020 09:15:07.265400 4242 other.cc:1] noise between the job lines\n";
    t += d + 10;
  }
  return out;
}

Layout two_ranks() {
  Layout l;
  for (int r = 0; r < 2; ++r) {
    SourceFile f;
    f.path = "logs/workerlog." + std::to_string(r);
    f.local_index = r;
    f.global_rank = r;
    l.files.push_back(f);
  }
  l.machines = {""};
  l.world_ranks = 2;
  return l;
}

std::vector<int32_t> numbers(const std::vector<WatchStep>& steps) {
  std::vector<int32_t> out;
  for (const WatchStep& s : steps) out.push_back(s.stats.step);
  return out;
}

}  // namespace

TEST_CASE("a step is reported once every rank has gone past it", "[watch]") {
  WatchOptions o;
  Watcher w(o);
  w.set_layout(two_ranks());
  auto t0 = WatchClock::now();
  w.add_lines("logs/workerlog.0", step_lines(0, 0) + step_lines(0, 1), t0);
  w.add_lines("logs/workerlog.1", step_lines(1, 0), t0);
  CHECK(w.update(t0, false).empty());  // rank 1 has not gone past step 0
  w.add_lines("logs/workerlog.1", step_lines(1, 1) + step_lines(1, 2), t0);
  CHECK(numbers(w.update(t0, false)) == std::vector<int32_t>{0});  // rank 0 is still in step 1
  CHECK(w.update(t0, false).empty());                              // never twice
  w.add_lines("logs/workerlog.0", step_lines(0, 2), t0);
  std::vector<WatchStep> s = w.update(t0, false);
  REQUIRE(numbers(s) == std::vector<int32_t>{1});
  CHECK(s[0].stats.ranks == 2);
  CHECK(s[0].ranks.size() == 2);
  CHECK(s[0].stats.period_ns == 10'000'000);
  CHECK(s[0].slowest_type == "backward");
  // The end: the open step is complete.
  std::vector<WatchStep> last = w.update(t0, true);
  REQUIRE(numbers(last) == std::vector<int32_t>{2});
  // The run's last step has no period, as stats has none for it (stats.h).
  CHECK(last[0].stats.period_ns == -1);
}

TEST_CASE("a rank that stops writing holds the others up for the idle timeout only", "[watch]") {
  WatchOptions o;
  o.idle_timeout = 10s;
  Watcher w(o);
  w.set_layout(two_ranks());
  auto t0 = WatchClock::now();
  w.add_lines("logs/workerlog.0", step_lines(0, 0), t0);
  w.add_lines("logs/workerlog.1", step_lines(1, 0) + step_lines(1, 1), t0);
  w.add_lines("logs/workerlog.0", step_lines(0, 1) + step_lines(0, 2), t0 + 5s);
  CHECK(numbers(w.update(t0 + 6s, false)) == std::vector<int32_t>{0});
  // Rank 1 has been silent for 11 s: its step 1 is finished; rank 0 wrote
  // 6 s ago and has no step 3, so step 2 stays open.
  CHECK(numbers(w.update(t0 + 11s, false)) == std::vector<int32_t>{1});
  CHECK(numbers(w.update(t0 + 16s, false)) == std::vector<int32_t>{2});
}

TEST_CASE("the window is cut as steps are reported, and the numbers and figures stay the run's", "[watch]") {
  const int kSteps = 40;
  WatchOptions small;
  small.keep_steps = 3;
  small.keep_all = true;
  WatchOptions big;
  big.keep_steps = 1000;
  Watcher cut(small), whole(big);
  cut.set_layout(two_ranks());
  whole.set_layout(two_ranks());
  auto t0 = WatchClock::now();
  std::vector<WatchStep> a, b;
  for (int k = 0; k < kSteps; ++k) {
    for (int r = 0; r < 2; ++r) {
      cut.add_lines("logs/workerlog." + std::to_string(r), step_lines(r, k), t0);
      whole.add_lines("logs/workerlog." + std::to_string(r), step_lines(r, k), t0);
    }
    for (WatchStep& s : cut.update(t0, k + 1 == kSteps)) a.push_back(std::move(s));
    for (WatchStep& s : whole.update(t0, k + 1 == kSteps)) b.push_back(std::move(s));
  }
  REQUIRE(a.size() == kSteps);
  REQUIRE(b.size() == kSteps);
  for (int k = 0; k < kSteps; ++k) {
    CAPTURE(k);
    CHECK(a[k].stats.step == k);
    CHECK(a[k].stats.start_ns == b[k].stats.start_ns);
    CHECK(a[k].stats.end_ns == b[k].stats.end_ns);
    CHECK(a[k].stats.busy_ns == b[k].stats.busy_ns);
    CHECK(a[k].stats.bubble_ratio == b[k].stats.bubble_ratio);
    CHECK(a[k].stats.period_ns == b[k].stats.period_ns);
  }
  // keep_all holds the whole run (every line, the noise as empty lines) ...
  std::optional<DriverResult> run = cut.whole_run(false);
  REQUIRE(run);
  CHECK(run->timeline->job_count() == 2u * 5 * kSteps);
  CHECK(run->timeline->tracks[0].jobs.back().line == 2u * 5 * kSteps - 1);
  // ... and the page's window is the last keep_steps steps, numbered as the
  // logs number them (its stats too), not from the window's first step.
  std::optional<DriverResult> window = cut.window();
  REQUIRE(window);
  REQUIRE(window->stats);
  std::vector<int32_t> shown, measured;
  for (const StepSpan& s : window->timeline->runs[0].steps) shown.push_back(s.number);
  for (const StepStats& s : window->stats->steps) measured.push_back(s.step);
  CHECK(shown == std::vector<int32_t>{kSteps - 3, kSteps - 2, kSteps - 1});
  CHECK(measured == shown);
  CHECK(window->timeline->job_count() == 2u * 5 * 3);
}

TEST_CASE("a --pp-degree that does not divide the run's ranks is refused as the layout is seen", "[watch]") {
  WatchOptions o;
  o.passes.pp_degree = 3;
  Watcher w(o);
  std::string error = w.set_layout(two_ranks());
  CHECK(error.find("--pp-degree 3") != std::string::npos);
  o.passes.pp_degree = 2;
  Watcher fine(o);
  CHECK(fine.set_layout(two_ranks()).empty());
}

TEST_CASE("the problems so far count every rejected job line, also after the window has moved past it", "[watch]") {
  WatchOptions o;
  o.keep_steps = 2;
  Watcher w(o);
  w.set_layout(two_ranks());
  auto t0 = WatchClock::now();
  const std::string bad =
      "I1020 09:15:07.265326 4242 standalone_executor.cc:217] Profiler Info: Job (9), type = forward, "
      "micro_batch_id = 0, job_start_time = 1697793307000.500000, job_end_time = oops\n";
  std::vector<WatchStep> seen;
  for (int k = 0; k < 12; ++k) {
    for (int r = 0; r < 2; ++r) {
      std::string lines = step_lines(r, k);
      if (k == 3 && r == 0) lines += bad;
      w.add_lines("logs/workerlog." + std::to_string(r), lines, t0);
    }
    for (WatchStep& s : w.update(t0, k == 11)) seen.push_back(std::move(s));
  }
  REQUIRE(seen.size() == 12);
  CHECK(seen.front().problems == 0);  // step 0 was reported before the bad line came
  CHECK(seen.back().problems == 1);   // step 11: the line is long out of the window
}

namespace {

// Rank r's `[Pipeline details]` lines of step k (F0 F1 B0 B1, 2 ms each).
std::string details_step(int rank, int step) {
  std::string out;
  int64_t ms = 1697793307000 + step * 100 + rank;
  auto line = [&](const std::string& msg) {
    std::time_t secs = static_cast<std::time_t>(ms / 1000);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &tm);
    out += fmt::format(
        "[{},{:03d}] [    INFO] pipeline_parallel.py:1187 - [Pipeline details] {}: "
        "memory_allocated_size=8.00, memory_reserved_size=10.00\n",
        stamp, ms % 1000, msg);
  };
  line("Start_forward_backward_pipeline");
  for (const char* dir : {"forward", "backward"}) {
    for (int mb = 0; mb < 2; ++mb) {
      ms += 1;
      line(fmt::format("Before_{}_step_chunk_None_step_{}", dir, mb));
      ms += 2;
      line(fmt::format("After_{}_step_chunk_None_step_{}", dir, mb));
    }
  }
  ms += 1;
  line("End_forward_backward_pipeline");
  return out;
}

}  // namespace

TEST_CASE("a cut window numbers the memory samples as the run numbers its steps", "[watch][details]") {
  WatchOptions o;
  o.keep_steps = 3;
  Watcher w(o);
  w.set_layout(two_ranks());
  auto t0 = WatchClock::now();
  const int kSteps = 12;
  for (int k = 0; k < kSteps; ++k) {
    for (int r = 0; r < 2; ++r) w.add_lines("logs/workerlog." + std::to_string(r), details_step(r, k), t0);
    w.update(t0, k + 1 == kSteps);
  }
  std::optional<DriverResult> window = w.window();
  REQUIRE(window);
  const Timeline& tl = *window->timeline;
  CHECK(tl.resolution_ns == 1'000'000);
  REQUIRE(!tl.runs.empty());
  REQUIRE(tl.runs[0].steps.back().number == kSteps - 1);
  size_t samples = 0;
  for (const Track& t : tl.tracks) {
    for (const MemorySample& m : t.memory) {
      bool in_window = false;
      for (const StepSpan& s : tl.runs[0].steps) in_window = in_window || s.number == m.step;
      CHECK(in_window);
      for (const Job& j : t.jobs) {
        if (j.line == m.line) CHECK(j.step == m.step);
      }
      ++samples;
    }
  }
  CHECK(samples >= 2u * (10 * 3 - 1));  // the window begins at the first job line: a Start line may be left out
}

TEST_CASE("the watch's account counts the jobs of details lines as the reader does", "[watch][details]") {
  Watcher w(WatchOptions{});
  w.set_layout(two_ranks());
  auto t0 = WatchClock::now();
  w.add_lines("logs/workerlog.0", details_step(0, 0), t0);
  std::string broken = details_step(1, 0);
  broken.erase(broken.find("[Pipeline details] After_forward") + 19, 5);  // "After" garbled: a bad line
  w.add_lines("logs/workerlog.1", broken, t0);
  // Rank 0: 4 pairs. Rank 1: 3 pairs, a bad line, and its Before left
  // unmatched when the next Before comes.
  CHECK(w.jobs_seen() == 4 + 3 + 2);
  CHECK(w.rejected_seen() == 2);
  CHECK(w.rejected_of(IssueKind::kBadDetailsLine) == 1);
  CHECK(w.rejected_of(IssueKind::kUnmatchedDetailsBefore) == 1);
}
