#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "analysis/stats.h"
#include "input/dygraph_profile.h"
#include "input/log_layout.h"
#include "output/text/summary.h"
#include "passes/dependencies.h"
#include "passes/pipeline.h"
#include "passes/reruns.h"
#include "passes/timeline_builder.h"
#include "support/test_support.h"

using namespace ppt;

namespace {

// A record as Paddle's _record_format writes it.
std::string rec(const std::string& name, const char* ph, int tid, long long ts, const char* cat = "pipeline timeline") {
  return "{\"name\": \"" + name + "\", \"cat\": \"" + cat + "\", \"ph\": \"" + ph +
         "\", \"pid\": 0, \"tid\": " + std::to_string(tid) + ", \"ts\": " + std::to_string(ts) +
         ", \"cname\": \"thread_state_running\"}\n";
}

constexpr long long kT = 1697793307000;
constexpr int64_t kMs = 1'000'000;

uint64_t rejected(const FileScan& s) { return s.diagnostics.rejected_jobs(); }

}  // namespace

TEST_CASE("dygraph profile file names give the global rank", "[dygraph]") {
  CHECK(dygraph_profile_rank("profile_record_tmp_file_for_rank_0") == 0);
  CHECK(dygraph_profile_rank("profile_record_tmp_file_for_rank_17") == 17);
  CHECK(dygraph_profile_rank("profile_record_tmp_file_for_rank_17.gz") == 17);
  CHECK(dygraph_profile_rank("profile_record_tmp_file_for_rank_") == -1);
  CHECK(dygraph_profile_rank("profile_record_tmp_file_for_rank_x") == -1);
  CHECK(dygraph_profile_rank("profile_record_tmp_file_for_rank_3.txt") == -1);
  CHECK(dygraph_profile_rank("workerlog.3") == -1);
  CHECK(dygraph_profile_rank("pipeline_profile.json") == -1);
}

TEST_CASE("every record form becomes the job it describes", "[dygraph]") {
  struct Row {
    const char* what;
    std::string text;
    std::string type;
    int32_t micro;
    int64_t start_ms, end_ms;
  };
  std::string unterminated = rec("F0", "B", 1, kT) + rec("F0", "E", 1, kT + 1);
  unterminated.pop_back();
  std::vector<Row> rows = {
      {"1F1B forward", rec("F3", "B", 2, kT) + rec("F3", "E", 2, kT + 5), "forward", 3, 0, 5},
      {"1F1B backward", rec("B0", "B", 1, kT) + rec("B0", "E", 1, kT + 9), "backward", 0, 0, 9},
      {"interleaved forward",
       rec("F2_VP1", "B", 3, kT, "virtual pipeline timeline") +
           rec("F2_VP1", "E", 3, kT + 2, "virtual pipeline timeline"),
       "forward1", 2, 0, 2},
      {"interleaved backward",
       rec("B5_VP0", "B", 3, kT, "virtual pipeline timeline") +
           rec("B5_VP0", "E", 3, kT + 4, "virtual pipeline timeline"),
       "backward0", 5, 0, 4},
      {"zero length: B and E in the same ms", rec("F1", "B", 1, kT + 7) + rec("F1", "E", 1, kT + 7), "forward", 1, 7,
       7},
      {"CRLF",
       "{\"name\": \"F0\", \"ph\": \"B\", \"tid\": 1, \"ts\": 1697793307000}\r\n"
       "{\"name\": \"F0\", \"ph\": \"E\", \"tid\": 1, \"ts\": 1697793307001}\r\n",
       "forward", 0, 0, 1},
      {"a line of the merged array (trailing comma), float ts",
       "{\"name\": \"B2\", \"ph\": \"B\", \"tid\": 1, \"ts\": 1697793307000.0},\n"
       "{\"name\": \"B2\", \"ph\": \"E\", \"tid\": 1, \"ts\": 1697793307003.0},\n",
       "backward", 2, 0, 3},
      {"no newline after the last whole record", unterminated, "forward", 0, 0, 1},
      {"another letter keeps its name as the type", rec("W4", "B", 1, kT) + rec("W4", "E", 1, kT + 1), "W", 4, 0, 1},
  };
  for (const Row& row : rows) {
    INFO(row.what);
    FileScan s = scan_dygraph_buffer(row.text, 0);
    REQUIRE(s.jobs.size() == 1);
    CHECK(s.dygraph);
    CHECK(s.types[s.jobs[0].type] == row.type);
    CHECK(s.jobs[0].micro_batch == row.micro);
    CHECK(s.jobs[0].job_id == row.micro);
    CHECK(s.jobs[0].start_ns == (kT + row.start_ms) * kMs);
    CHECK(s.jobs[0].end_ns == (kT + row.end_ms) * kMs);
    CHECK(s.jobs[0].line == 1);
    CHECK(s.counts.profiler_lines == 1);
    CHECK(s.counts.profile_records == 2);
    CHECK(s.counts.jobs == 1);
    CHECK(rejected(s) == 0);
  }
}

TEST_CASE("every bad record form is counted by kind, with its line", "[dygraph]") {
  struct Row {
    const char* what;
    std::string text;
    IssueKind kind;
    uint64_t line;
    size_t jobs;  // drawn
    uint64_t seen;
  };
  const std::string ok = rec("F0", "B", 1, kT) + rec("F0", "E", 1, kT + 1);
  std::string cut = ok + rec("F1", "B", 1, kT + 1) + rec("F1", "E", 1, kT + 2).substr(0, 40);
  std::vector<Row> rows = {
      {"truncated last line", cut, IssueKind::kTruncatedProfileRecord, 4, 1, 3},
      {"B without E", ok + rec("B0", "B", 1, kT + 3), IssueKind::kUnmatchedBegin, 3, 1, 2},
      {"E without B", rec("B0", "E", 1, kT) + ok, IssueKind::kUnmatchedEnd, 1, 1, 2},
      {"not JSON", "Traceback (most recent call last):\n" + ok, IssueKind::kBadProfileRecord, 1, 1, 2},
      {"JSON but not an object", "[1, 2]\n" + ok, IssueKind::kBadProfileRecord, 1, 1, 2},
      {"name not F<n>/B<n>", ok + rec("forward", "B", 1, kT) + rec("forward", "E", 1, kT + 1),
       IssueKind::kBadProfileRecord, 3, 1, 2},
      {"ph neither B nor E", ok + "{\"name\": \"F1\", \"ph\": \"X\", \"tid\": 1, \"ts\": 1697793307000}\n",
       IssueKind::kBadProfileRecord, 3, 1, 2},
      {"ts a string: the pair is one bad job",
       ok + "{\"name\": \"F1\", \"ph\": \"B\", \"tid\": 1, \"ts\": \"now\"}\n" + rec("F1", "E", 1, kT + 2),
       IssueKind::kBadProfileRecord, 3, 1, 2},
      {"negative ts", ok + rec("F1", "B", 1, -5) + rec("F1", "E", 1, kT), IssueKind::kBadProfileRecord, 3, 1, 2},
      {"tid 0", ok + rec("F1", "B", 0, kT) + rec("F1", "E", 0, kT + 1), IssueKind::kBadProfileRecord, 3, 1, 2},
      {"E before B in time", ok + rec("F1", "B", 1, kT + 5) + rec("F1", "E", 1, kT + 4), IssueKind::kEndBeforeStart, 4,
       1, 2},
      {"a second B of the same name before its E", rec("F0", "B", 1, kT) + ok, IssueKind::kUnmatchedBegin, 1, 1, 2},
  };
  for (const Row& row : rows) {
    INFO(row.what);
    FileScan s = scan_dygraph_buffer(row.text, 3);
    CHECK(s.jobs.size() == row.jobs);
    CHECK(s.diagnostics.count_of(row.kind) == 1);
    CHECK(s.counts.profiler_lines == row.seen);
    // Nothing is lost: written + rejected = seen.
    CHECK(s.jobs.size() + rejected(s) == s.counts.profiler_lines);
    REQUIRE(!s.diagnostics.examples().empty());
    bool found = false;
    for (const Diagnostic& d : s.diagnostics.examples()) {
      if (d.kind == row.kind) {
        found = true;
        CHECK(d.line == row.line);
        CHECK(d.file == 3);
        CHECK(!d.detail.empty());
      }
    }
    CHECK(found);
  }
}

TEST_CASE("blank lines are lines, not records; an empty file says so", "[dygraph]") {
  FileScan s = scan_dygraph_buffer("\n  \n" + rec("F0", "B", 1, kT) + "\n" + rec("F0", "E", 1, kT + 1), 0);
  REQUIRE(s.jobs.size() == 1);
  CHECK(s.jobs[0].line == 3);
  CHECK(s.counts.lines == 5);
  CHECK(s.counts.profile_records == 2);
  FileScan empty = scan_dygraph_buffer("", 0);
  CHECK(empty.jobs.empty());
  CHECK(empty.diagnostics.count_of(IssueKind::kNoProfilerLines) == 1);
  CHECK(empty.counts.profiler_lines == 0);
}

TEST_CASE("the stage is the first record's tid - 1; another tid starts a new run", "[dygraph]") {
  std::string text = rec("F0", "B", 2, kT) + rec("F0", "E", 2, kT + 1) + rec("B0", "B", 2, kT + 1) +
                     rec("B0", "E", 2, kT + 3) +
                     // a restarted trainer on another stage appends
                     rec("F0", "B", 3, kT + 60000) + rec("F0", "E", 3, kT + 60001);
  FileScan s = scan_dygraph_buffer(text, 0);
  CHECK(s.stage == 1);
  REQUIRE(s.jobs.size() == 3);
  std::vector<RunSlice> runs = split_runs(s);
  REQUIRE(runs.size() == 2);
  CHECK(runs[1].begin == 2);
  CHECK(runs[1].why == RunStart::kNewStage);
  CHECK(runs[1].why_line == 5);
}

TEST_CASE("times that go back start a new run; steps restart at F0", "[dygraph]") {
  std::string step =
      rec("F0", "B", 1, kT) + rec("F0", "E", 1, kT + 2) + rec("B0", "B", 1, kT + 2) + rec("B0", "E", 1, kT + 5);
  std::string later =
      rec("F0", "B", 1, kT + 10) + rec("F0", "E", 1, kT + 12) + rec("B0", "B", 1, kT + 12) + rec("B0", "E", 1, kT + 15);
  std::string back = rec("F0", "B", 1, kT - 50000) + rec("F0", "E", 1, kT - 49999);
  FileScan s = scan_dygraph_buffer(step + later + back, 0);
  REQUIRE(s.jobs.size() == 5);
  std::vector<RunSlice> runs = split_runs(s);
  REQUIRE(runs.size() == 2);
  CHECK(runs[1].why == RunStart::kClockBack);
  CHECK(s.jobs[0].step == 0);
  CHECK(s.jobs[2].step == 1);
  CHECK(s.jobs[4].step == 0);
}

namespace {
namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / fs::path("ppt_dygraph_" + std::to_string(::getpid()) + "_" +
                                                std::to_string(reinterpret_cast<uintptr_t>(this)));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  void write(const std::string& rel, const std::string& text) const {
    fs::create_directories((path / rel).parent_path());
    std::ofstream(path / rel, std::ios::binary) << text;
  }
};

// One 1F1B step of P stages, M = 2, on rank r (stage r % P), at base ms.
std::string one_f_one_b(int stage, int p, long long base) {
  std::string out;
  long long t = base + stage;
  for (int mb = 0; mb < 2; ++mb) {
    out += rec("F" + std::to_string(mb), "B", stage + 1, t) + rec("F" + std::to_string(mb), "E", stage + 1, t + 1);
    t += 1;
  }
  t += 3 * (p - stage);
  for (int mb = 0; mb < 2; ++mb) {
    out += rec("B" + std::to_string(mb), "B", stage + 1, t) + rec("B" + std::to_string(mb), "E", stage + 1, t + 2);
    t += 2;
  }
  return out;
}
}  // namespace

TEST_CASE("a directory of profile files: ranks from names, launch logs beside are companions", "[dygraph][layout]") {
  TempDir dir;
  const int p = 2;
  for (int r = 0; r < 4; ++r) {
    dir.write("profile_record_tmp_file_for_rank_" + std::to_string(r),
              one_f_one_b(r % p, p, kT) + one_f_one_b(r % p, p, kT + 40));
  }
  dir.write("workerlog.0", "LAUNCH INFO nothing\n");
  dir.write("workerlog.1",
            "I1020 09:15:07.265326 22317 standalone_executor.cc:217] Profiler Info: Job (0), type = forward, "
            "micro_batch_id = 0, job_start_time = 1697793307213.760986, job_end_time = 1697793307254.006104\n");
  LayoutRequest req;
  req.log_dir = dir.path.string();
  LayoutResult found = discover_layout(req);
  REQUIRE(found.layout);
  const Layout& l = *found.layout;
  REQUIRE(l.files.size() == 6);
  for (int r = 0; r < 4; ++r) {
    CHECK(l.files[r].dygraph_profile);
    CHECK(l.files[r].global_rank == r);
  }
  CHECK(l.files[4].companion);
  CHECK(l.files[5].companion);
  CHECK(l.world_ranks == 4);
  CHECK(l.partial.empty());

  Timeline tl = build_timeline(l);
  CHECK(tl.resolution_ns == kMs);
  CHECK(tl.rank_files() == 4);
  CHECK(tl.tracks.size() == 4);
  CHECK(tl.runs.size() == 1);
  REQUIRE(tl.runs.size() == 1);
  CHECK(tl.runs[0].steps.size() == 2);
  CHECK(tl.job_count() == 4 * 2 * 4);
  // The static-graph line of workerlog.1 is counted and rejected, not drawn.
  CHECK(tl.diagnostics.count_of(IssueKind::kMixedFormats) == 1);
  CHECK(tl.counts.profiler_lines == tl.job_count() + tl.diagnostics.rejected_jobs());
  CHECK(tl.diagnostics.count_of(IssueKind::kNoProfilerLines) == 0);
  for (const Track& t : tl.tracks) {
    CHECK(t.stage == t.rank % p);
    CHECK(t.resolution_ns == kMs);
  }
  std::string summary = format_summary(tl);
  CHECK(summary.find("4 ranks, 2 steps") != std::string::npos);
  CHECK(summary.find("times to 1 ms") != std::string::npos);
  CHECK(summary.find("dynamic-graph profile records") != std::string::npos);

  // The stages of the records give P = 2, and the arrows follow them.
  PipelinePlan plan = decide_pipeline(tl, 0, 1);
  Dependencies deps = find_dependencies(tl, plan, 1);
  CHECK(plan.shape.pp_degree == 2);
  CHECK(plan.shape.source == "stages of the profile records");
  // Per replica and step: 2 forward and 2 backward edges.
  CHECK(deps.edges.size() == 2 * 2 * 4);
  CHECK(deps.contradicted == 0);

  // The bubble's bound: 1 ms * (jobs + 2 * steps) over the rank's span.
  Stats st = ppt::testing::stats_of(tl);
  CHECK(st.resolution_ns == kMs);
  REQUIRE(st.ranks.size() == 4);
  double sum_error = 0, sum_span = 0;
  for (const RankStats& r : st.ranks) {
    CHECK(r.jobs == 8);
    CHECK(r.steps == 2);
    CHECK(r.bubble_ratio_error == Approx(static_cast<double>(kMs) * (8 + 2 * 2) / static_cast<double>(r.span_ns)));
    sum_error += static_cast<double>(kMs) * (8 + 2 * 2);
    sum_span += static_cast<double>(r.span_ns);
  }
  CHECK(st.bubble_ratio_error == Approx(sum_error / sum_span));
}

TEST_CASE("profile files in machine folders; a missing rank is noted, not renumbered", "[dygraph][layout]") {
  TempDir dir;
  dir.write("machine0/profile_record_tmp_file_for_rank_0", one_f_one_b(0, 4, kT));
  dir.write("machine0/profile_record_tmp_file_for_rank_1", one_f_one_b(1, 4, kT));
  dir.write("machine1/profile_record_tmp_file_for_rank_3", one_f_one_b(3, 4, kT));
  LayoutRequest req;
  req.log_dir = dir.path.string();
  LayoutResult found = discover_layout(req);
  REQUIRE(found.layout);
  const Layout& l = *found.layout;
  REQUIRE(l.files.size() == 3);
  CHECK(l.files[2].global_rank == 3);
  CHECK(l.files[2].machine_name == "machine1");
  CHECK(l.machines == std::vector<std::string>{"machine0", "machine1"});
  CHECK(l.world_ranks == 4);
  CHECK(l.partial.find("ranks 0-1, 3 of 4") != std::string::npos);
  bool noted = false;
  for (const std::string& n : l.notes)
    noted = noted || n.find("profile_record_tmp_file_for_rank_2") != std::string::npos;
  CHECK(noted);
}

TEST_CASE("a rank whose records state another stage than rank mod P is reported", "[dygraph]") {
  TempDir dir;
  // Model parallelism inside the pipeline: ranks 0, 1 are stage 0; 2, 3 stage 1.
  for (int r = 0; r < 4; ++r) {
    dir.write("profile_record_tmp_file_for_rank_" + std::to_string(r), one_f_one_b(r / 2, 2, kT));
  }
  LayoutRequest req;
  req.log_dir = dir.path.string();
  Timeline tl = build_timeline(*discover_layout(req).layout);
  CHECK(tl.diagnostics.count_of(IssueKind::kStageMismatch) == 2);
}

TEST_CASE("a step whose first record was lost still ends at the next step's F0", "[dygraph]") {
  // Step 0 lost F0's "B"; step 1 begins with F0 as every step does.
  std::string text =
      rec("F0", "E", 1, kT + 1) + rec("F1", "B", 1, kT + 1) + rec("F1", "E", 1, kT + 2) + rec("B0", "B", 1, kT + 2) +
      rec("B0", "E", 1, kT + 4) + rec("B1", "B", 1, kT + 4) + rec("B1", "E", 1, kT + 6) +
      // step 1
      rec("F0", "B", 1, kT + 10) + rec("F0", "E", 1, kT + 11) + rec("F1", "B", 1, kT + 11) + rec("F1", "E", 1, kT + 12);
  FileScan s = scan_dygraph_buffer(text, 0);
  REQUIRE(s.jobs.size() == 5);
  CHECK(s.diagnostics.count_of(IssueKind::kUnmatchedEnd) == 1);
  split_runs(s);
  CHECK(s.jobs[0].step == 0);  // F1
  CHECK(s.jobs[2].step == 0);  // B1
  CHECK(s.jobs[3].step == 1);  // F0 of step 1
  CHECK(s.jobs[4].step == 1);
}

TEST_CASE("profile files named on the command line keep the ranks of their names", "[dygraph][layout]") {
  TempDir dir;
  dir.write("profile_record_tmp_file_for_rank_3", one_f_one_b(1, 2, kT));
  dir.write("profile_record_tmp_file_for_rank_2", one_f_one_b(0, 2, kT));
  dir.write("renamed.jsonl", one_f_one_b(0, 2, kT));
  LayoutRequest req;
  req.files = {(dir.path / "profile_record_tmp_file_for_rank_3").string(),
               (dir.path / "profile_record_tmp_file_for_rank_2").string()};
  LayoutResult found = discover_layout(req);
  REQUIRE(found.layout);
  REQUIRE(found.layout->files.size() == 2);
  CHECK(found.layout->files[0].global_rank == 2);
  CHECK(found.layout->files[1].global_rank == 3);
  CHECK(found.layout->files[0].dygraph_profile);
  CHECK(found.layout->world_ranks == 4);
  CHECK(found.layout->partial.find("ranks 2-3 of 4") != std::string::npos);
  // A profile file under another name is told by its first line; its rank is its place.
  CHECK(is_dygraph_profile_file((dir.path / "renamed.jsonl").string()));
  LayoutRequest one;
  one.files = {(dir.path / "renamed.jsonl").string()};
  LayoutResult renamed = discover_layout(one);
  REQUIRE(renamed.layout);
  CHECK(renamed.layout->files[0].dygraph_profile);
  CHECK(renamed.layout->files[0].global_rank == 0);
  Timeline tl = build_timeline(*renamed.layout);
  CHECK(tl.job_count() == 4);
  CHECK(tl.resolution_ns == kMs);
}
