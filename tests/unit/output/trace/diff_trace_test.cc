// The two-run trace of `diff -o`: its tracks obey the viewers' rule that
// slices on one track nest or are disjoint.
#include "output/trace/diff_trace.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "output/trace/chrome_json_writer.h"
#include "output/trace/trace_naming.h"
#include "support/memory_samples.h"
#include "support/test_support.h"

namespace ppt {
namespace {

const std::string kRun = "--schedule 1f1b --stages 4 --micro-batches 8 --steps 4 --seed 21";

// Every (pid, tid) track's X slices, each [ts, ts + dur].
std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<double, double>>> tracks_of(const nlohmann::json& doc) {
  std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<double, double>>> out;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] != "X") continue;
    double ts = e["ts"].get<double>();
    out[{e["pid"].get<int64_t>(), e["tid"].get<int64_t>()}].push_back({ts, ts + e["dur"].get<double>()});
  }
  return out;
}

TEST_CASE("every track of the diff trace nests when a log holds two runs whose clocks overlap", "[diff][trace]") {
  // One file, two runs: the second starts 1.5 s after the first began, while
  // the first still runs (its clock jumped back by more than a second), so
  // their jobs overlap in time.
  testing::TempDir dir;
  std::vector<testing::HandJob> jobs;
  for (int64_t base : {int64_t{0}, int64_t{1'500'000}}) {
    for (int32_t rank : {0, 1}) {
      int64_t t = base + rank * 100'000;
      jobs.push_back({rank, "forward", 0, t, t + 1'000'000});
      jobs.push_back({rank, "backward", 0, t + 1'000'000, t + 2'000'000});
      jobs.push_back({rank, "optimizer", 0, t + 2'000'000, t + 2'500'000});
      jobs.push_back({rank, "forward", 0, t + 2'600'000, t + 2'700'000});
      jobs.push_back({rank, "optimizer", 0, t + 2'700'000, t + 2'800'000});
    }
  }
  Timeline tl = testing::load_hand_run(dir, "two_runs", jobs);
  REQUIRE(tl.runs.size() == 2);
  StringSink sink;
  write_diff_trace(tl, "a", tl, "b", sink);
  nlohmann::json doc = nlohmann::json::parse(sink.data);
  size_t slices = 0;
  for (auto& [track, spans] : tracks_of(doc)) {
    std::sort(spans.begin(), spans.end(), [](const auto& x, const auto& y) {
      return x.first != y.first ? x.first < y.first : x.second > y.second;
    });
    std::vector<double> open;  // ends of the enclosing slices
    for (const auto& [start, end] : spans) {
      while (!open.empty() && open.back() <= start) open.pop_back();
      INFO("pid " << track.first << " tid " << track.second << " slice " << start << ".." << end);
      if (!open.empty()) CHECK(end <= open.back());
      open.push_back(end);
      ++slices;
    }
  }
  CHECK(slices == 2 * (tl.job_count() + tl.runs[0].steps.size() + tl.runs[1].steps.size()));
}

TEST_CASE("the diff trace holds both runs as two processes aligned at their first common step", "[diff][trace]") {
  testing::TempDir dir;
  Timeline a = testing::load_dir(testing::generate_log_dir(dir, "a", kRun + " --start-step 10"));
  Timeline b = testing::load_dir(
      testing::generate_log_dir(dir, "b", kRun + " --start-step 12 --epoch-ms 1700000000000 --slow 0:1.1"));
  StringSink sink;
  DiffTraceInfo info = write_diff_trace(a, "a", b, "b", sink);
  CHECK(info.common_step);
  CHECK(info.step == 12);
  nlohmann::json doc = nlohmann::json::parse(sink.data);
  std::map<int, std::string> processes;
  std::map<int, double> step12_ts;
  size_t jobs = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") processes[e["pid"].get<int>()] = e["args"]["name"];
    if (e["ph"] == "X" && e["cat"] == "step" && e["args"]["step"] == 12) step12_ts[e["pid"].get<int>()] = e["ts"];
    if (e["ph"] == "X" && e["cat"] != "step") ++jobs;
  }
  CHECK(processes == std::map<int, std::string>{{1, "A: a"}, {2, "B: b"}});
  CHECK(step12_ts == std::map<int, double>{{1, 0.0}, {2, 0.0}});
  CHECK(jobs == a.job_count() + b.job_count());
}

TEST_CASE("the diff trace names steps, threads and job args as the Chrome trace does", "[diff][trace]") {
  testing::TempDir dir;
  Timeline a = testing::load_dir(testing::generate_log_dir(dir, "a", kRun + " --start-step 10"));
  StringSink chrome_sink, diff_sink;
  write_chrome_json(a, {}, chrome_sink);
  write_diff_trace(a, "a", a, "b", diff_sink);
  nlohmann::json chrome = nlohmann::json::parse(chrome_sink.data);
  nlohmann::json diff = nlohmann::json::parse(diff_sink.data);
  // (thread names, step slice names, the args keys of jobs) of one side.
  auto names = [](const nlohmann::json& doc, int pid) {
    std::set<std::string> threads, steps, arg_keys;
    for (const auto& e : doc["traceEvents"]) {
      if (pid > 0 && e["pid"] != pid) continue;
      if (e["ph"] == "M" && e["name"] == "thread_name") threads.insert(e["args"]["name"].get<std::string>());
      if (e["ph"] == "X" && e["cat"] == "step") steps.insert(e["name"].get<std::string>());
      if (e["ph"] == "X" && e["cat"] != "step") {
        for (const auto& [key, value] : e["args"].items()) arg_keys.insert(key);
      }
    }
    return std::make_tuple(threads, steps, arg_keys);
  };
  auto [threads, steps, keys] = names(chrome, 0);
  auto [diff_threads, diff_steps, diff_keys] = names(diff, 1);
  CHECK(steps.count("step10") == 1);
  CHECK(diff_steps == steps);
  CHECK(diff_threads == threads);
  CHECK(diff_keys == keys);
  CHECK(diff_keys.count("source") == 1);
}

TEST_CASE("the diff trace carries each side's memory counters, named as in the Chrome trace", "[diff][trace][memory]") {
  testing::TempDir dir;
  Timeline a = testing::load_dir(testing::generate_log_dir(dir, "a", kRun));
  Timeline b = a;
  testing::add_memory_samples(b);
  StringSink sink;
  write_diff_trace(a, "a", b, "b", sink);
  nlohmann::json diff = nlohmann::json::parse(sink.data);
  std::map<int, std::map<std::string, size_t>> counters;  // pid -> name -> events
  for (const auto& e : diff["traceEvents"]) {
    if (e["ph"] == "C") ++counters[e["pid"].get<int>()][e["name"].get<std::string>()];
  }
  // Only side b (pid 2) has samples: two counters a rank, one event a sample.
  REQUIRE(counters.size() == 1);
  REQUIRE(counters.count(2) == 1);
  TraceNaming naming(b);
  CHECK(counters[2].size() == 2 * b.tracks.size());
  for (const Track& t : b.tracks) {
    CHECK(counters[2][naming.thread_name(t, 0) + " memory allocated"] == t.memory.size());
    CHECK(counters[2][naming.thread_name(t, 0) + " memory reserved"] == t.memory.size());
  }
}

}  // namespace
}  // namespace ppt
