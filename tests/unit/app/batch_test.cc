// Batch conversion: finding runs in folders and archives, one bad artifact
// among good ones, the index files, and gzipped logs found by the layout.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>
#include <zlib.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "app/batch.h"
#include "input/log_layout.h"
#include "passes/timeline_builder.h"
#include "support/test_support.h"

using namespace ppt;
using ppt::testing::job_line;
using ppt::testing::slurp;
using ppt::testing::TempDir;
namespace fs = std::filesystem;

namespace {

// A rank's log: `steps` steps of F B optimizer, 1000 us apart.
std::string rank_log(int rank, int steps) {
  std::string log = "I1020 09:15:00.000000  4242 launch.py:1] starting\n";
  for (int s = 0; s < steps; ++s) {
    int64_t t = s * 1000 + rank * 10;
    log += job_line("forward", 0, t, t + 100) + job_line("backward", 0, t + 200, t + 400) +
           job_line("optimizer", 0, t + 500, t + 520);
  }
  return log;
}

void write_gz(const fs::path& p, const std::string& data) {
  fs::create_directories(p.parent_path());
  gzFile f = gzopen(p.c_str(), "wb");
  gzwrite(f, data.data(), static_cast<unsigned>(data.size()));
  gzclose(f);
}

int sh(const std::string& cmd) { return std::system(("(" + cmd + ") >/dev/null 2>&1").c_str()); }

}  // namespace

TEST_CASE("gzipped workerlog files are found by the layout and read", "[batch]") {
  TempDir t;
  t.write("logs/workerlog.0", rank_log(0, 2));
  write_gz(fs::path(t.path()) / "logs/workerlog.1.gz", rank_log(1, 2));
  LoadResult r = load_timeline({t.path() + "/logs", {}, {}});
  REQUIRE(r.timeline);
  REQUIRE(r.timeline->files.size() == 2);
  CHECK(r.timeline->files[1].path == t.path() + "/logs/workerlog.1.gz");
  CHECK(r.timeline->job_count() == 12);
  for (const Track& tr : r.timeline->tracks) CHECK(tr.jobs.size() == 6);
}

TEST_CASE("log directories are found below a folder, in natural order, without following links", "[batch]") {
  TempDir t;
  fs::path root(t.path());
  t.write("runs/job10/logs/workerlog.0", "x");
  t.write("runs/job9/logs/workerlog.0", "x");
  t.write("runs/multi/machine0/workerlog.0", "x");
  t.write("runs/multi/machine1/workerlog.0", "x");
  t.write("runs/multi/unrelated/workerlog.0", "x");  // inside a log directory: part of it, not a run
  t.write("runs/gz/workerlog.3.gz", "x");
  t.write("runs/notes/readme.txt", "x");
  t.write("runs/machine_empty/machine0/other.txt", "x");
  t.write("elsewhere/logs/workerlog.0", "x");
  fs::create_directory_symlink(root / "elsewhere", root / "runs" / "link");
  t.write("runs/a/b/c/d/workerlog.0", "x");
  CHECK(find_log_dirs((root / "runs").string()) ==
        std::vector<std::string>{"a/b/c/d", "gz", "job9/logs", "job10/logs", "multi"});
  CHECK(find_log_dirs((root / "runs").string(), 2) ==
        std::vector<std::string>{"gz", "job9/logs", "job10/logs", "multi"});
  CHECK(find_log_dirs((root / "runs/multi").string()) == std::vector<std::string>{"."});
  CHECK(find_log_dirs((root / "runs/notes").string()).empty());
}

TEST_CASE("folders named by IP address are the machines of one run, not runs", "[batch]") {
  TempDir t;
  fs::path root(t.path());
  t.write("runs/ipmulti/10.0.0.2/workerlog.0", "x");
  t.write("runs/ipmulti/10.0.0.10/workerlog.0", "x");
  t.write("runs/ipmulti/10.0.0.10/envlog.0", "x");
  t.write("runs/base/workerlog.0", "x");
  t.write("runs/node-a/workerlog.0", "x");  // a host name: a run of its own in a batch
  CHECK(find_log_dirs((root / "runs").string()) == std::vector<std::string>{"base", "ipmulti", "node-a"});
  CHECK(find_log_dirs((root / "runs/ipmulti").string()) == std::vector<std::string>{"."});
}

TEST_CASE("run folder names are safe", "[batch]") {
  struct Row {
    const char* in;
    const char* out;
  };
  const Row rows[] = {{"nightly-42", "nightly-42"}, {"a/b c", "a_b_c"}, {"../../etc", "etc"},
                      {".hidden", "hidden"},        {"", "run"},        {"<script>", "script"},
                      {"x\xC3\xA9y", "x_y"},        {"ok_.", "ok"}};
  for (const Row& r : rows) CHECK(safe_run_name(r.in) == r.out);
  CHECK(safe_run_name(std::string(300, 'a')).size() == 96);
}

TEST_CASE("runs are named by one rule for folders and archives", "[batch]") {
  // The folder main/log, and main.zip holding main/log, are one name.
  CHECK(run_name("main-log", "") == "main-log");
  CHECK(run_name("main", "log") == "main-log");
  CHECK(run_name("main", "main/log") == "main-log");
  CHECK(run_name("ci1-logs", "logs/run2") == "ci1-logs-run2");
  CHECK(run_name("art", "a/./b/") == "art-a-b");
  CHECK(safe_run_name(run_name("art", "r\xC3\xA9sultats")) == "art-r_sultats");
}

TEST_CASE("a batch converts directories, archives and folders of runs; bad artifacts do not stop it", "[batch]") {
  TempDir t;
  fs::path in = fs::path(t.path()) / "in";
  // 1. a log directory
  t.write("in/plain/workerlog.0", rank_log(0, 3));
  t.write("in/plain/workerlog.1", rank_log(1, 3));
  // 2. a .tar.gz of a log directory whose logs are gzipped
  write_gz(in / "src/logs/workerlog.0.gz", rank_log(0, 2));
  write_gz(in / "src/logs/workerlog.1.gz", rank_log(1, 2));
  REQUIRE(sh("cd '" + (in / "src").string() + "' && tar -czf ../ci-123.tar.gz logs") == 0);
  // 3. a folder holding two runs (one of them across two machines)
  t.write("in/many/jobA/logs/workerlog.0", rank_log(0, 4));
  t.write("in/many/jobB/machine0/workerlog.0", rank_log(0, 1));
  t.write("in/many/jobB/machine1/workerlog.0", rank_log(1, 1));
  // 4. bad ones: missing, corrupt archive, no logs, logs without job lines, a plain file
  t.write("in/broken.tar.gz", "\x1f\x8b this is not gzip data at all");
  t.write("in/empty/readme.txt", "nothing here");
  t.write("in/quiet/workerlog.0", "I1020 09:15:00.000000  4242 launch.py:1] no profiler here\n");
  t.write("in/notes.txt", "hello");

  std::vector<std::string> artifacts = {(in / "plain").string(),         (in / "ci-123.tar.gz").string(),
                                        (in / "many").string(),          (in / "missing").string(),
                                        (in / "broken.tar.gz").string(), (in / "empty").string(),
                                        (in / "quiet").string(),         (in / "notes.txt").string()};
  BatchOptions opt;
  opt.out_dir = t.path() + "/out";
  opt.passes.threads = 2;
  std::vector<std::string> progress;
  opt.progress = [&](const BatchProgress& p) {
    progress.push_back(std::to_string(p.done) + "/" + std::to_string(p.total));
  };
  BatchResult r = run_batch(artifacts, opt);
  CHECK(r.error.empty());
  CHECK(r.any_failed());
  REQUIRE(r.runs.size() == 9);
  CHECK(progress.size() == 9);
  CHECK(progress.back() == "9/9");

  struct Want {
    const char* name;
    BatchStatus status;
    uint32_t steps;
  };
  const Want want[] = {
      {"plain", BatchStatus::kOk, 3},     {"ci-123-logs", BatchStatus::kOk, 2}, {"many-jobA-logs", BatchStatus::kOk, 4},
      {"many-jobB", BatchStatus::kOk, 1}, {"", BatchStatus::kBadArtifact, 0},   {"", BatchStatus::kBadArtifact, 0},
      {"", BatchStatus::kNoLogs, 0},      {"quiet", BatchStatus::kNoJobs, 0},   {"", BatchStatus::kBadArtifact, 0},
  };
  for (size_t i = 0; i < r.runs.size(); ++i) {
    INFO(i << " " << r.runs[i].source << ": " << r.runs[i].error);
    CHECK(r.runs[i].name == want[i].name);
    CHECK(r.runs[i].status == want[i].status);
    CHECK(r.runs[i].steps == want[i].steps);
    CHECK(r.runs[i].error.empty() == (want[i].status == BatchStatus::kOk));
  }
  CHECK(r.runs[1].source == (in / "ci-123.tar.gz").string() + ":logs");
  CHECK(r.runs[3].ranks == 2);
  CHECK(r.runs[4].error == (in / "missing").string() + ": no such file or directory");
  CHECK(r.runs[5].error.rfind((in / "broken.tar.gz").string() + ": ", 0) == 0);
  CHECK(r.runs[6].error.find("no workerlog.<i> files") != std::string::npos);
  CHECK(r.runs[8].error.find("neither a directory nor an archive") != std::string::npos);
  CHECK(r.runs[0].step_time_us > 0);
  CHECK(r.runs[0].bubble_ratio > 0);
  CHECK(r.runs[0].bubble_ratio < 1);

  // Per run: the default outputs (not the large Chrome JSON); for the
  // batch: the index files and the manifest of what it wrote.
  fs::path out(opt.out_dir);
  for (const char* name : {"plain", "ci-123-logs", "many-jobA-logs", "many-jobB"}) {
    for (const char* file : {"report.html", "timeline.svg", "trace.pftrace", "stats.json"}) {
      INFO(name << "/" << file);
      CHECK(fs::file_size(out / name / file) > 0);
    }
    CHECK_FALSE(fs::exists(out / name / "trace.json"));
  }
  CHECK(r.runs[0].outputs.at("report") == "plain/report.html");
  // Archives were extracted under the output directory and removed after.
  for (const auto& e : fs::directory_iterator(out)) CHECK(e.path().filename().string().rfind(".extract", 0) != 0);

  auto index = nlohmann::json::parse(slurp(out / "index.json"));
  REQUIRE(index["runs"].size() == 9);
  CHECK(index["ok"] == 4);
  CHECK(index["failed"] == 5);
  const auto& first = index["runs"][0];
  for (const char* key : {"name", "source", "status", "error", "steps", "step_time_us", "bubble_ratio", "outputs"}) {
    CHECK(first.contains(key));
  }
  CHECK(first["status"] == "ok");
  CHECK(first["error"].is_null());
  CHECK(first["steps"] == 3);
  CHECK(first["outputs"]["svg"] == "plain/timeline.svg");
  CHECK(index["runs"][4]["status"] == "bad_artifact");
  CHECK(index["runs"][4]["error"] == (in / "missing").string() + ": no such file or directory");
  CHECK(index["runs"][7]["status"] == "no_jobs");

  std::string md = slurp(out / "summary.md");
  CHECK(md.rfind("## pp-timeline batch: 9 runs, 4 ok, 5 failed", 0) == 0);
  CHECK(md.find("[plain](plain/report.html)") != std::string::npos);
  CHECK(md.find("### Failed") != std::string::npos);
  std::string html = slurp(out / "index.html");
  CHECK(html.find("<a href=\"plain/report.html\">plain</a>") != std::string::npos);
  CHECK(html.find("data-status=\"no_logs\"") != std::string::npos);
}

TEST_CASE("the batch index does not depend on the number of threads", "[batch]") {
  TempDir t;
  for (int run = 0; run < 5; ++run) {
    for (int r = 0; r < 2; ++r) {
      t.write("in/run" + std::to_string(run) + "/workerlog." + std::to_string(r), rank_log(r, 2 + run));
    }
  }
  std::string first;
  for (unsigned threads : {1u, 4u}) {
    BatchOptions opt;
    opt.out_dir = t.path() + "/out" + std::to_string(threads);
    opt.passes.threads = threads;
    BatchResult r = run_batch({t.path() + "/in", t.path() + "/in/run3"}, opt);
    CHECK_FALSE(r.any_failed());
    REQUIRE(r.runs.size() == 6);
    CHECK(r.runs[5].name == "run3");
    CHECK(r.runs[3].name == "in-run3");
    std::string index = slurp(fs::path(opt.out_dir) / "index.json");
    if (first.empty())
      first = index;
    else
      CHECK(index == first);
  }
}

TEST_CASE("the summary escapes what a source path could smuggle into Markdown", "[batch]") {
  BatchResult r;
  BatchRun run;
  run.name = "x";
  run.source = "ci/a|b <img src=x> *bold*";
  run.status = BatchStatus::kNoLogs;
  run.error = "line1\nline2 | `code`";
  r.runs.push_back(run);
  std::string md = batch_summary_markdown(r);
  CHECK(md.find("<img") == std::string::npos);
  CHECK(md.find("a\\|b &lt;img src=x&gt; \\*bold\\*") != std::string::npos);
  // A line break reads as its terminal escape, "\n" (util/escape.h).
  CHECK(md.find("line1\\\\nline2 \\| \\`code\\`") != std::string::npos);
  std::string html = batch_index_html(r);
  CHECK(html.find("<img") == std::string::npos);
  auto j = nlohmann::json::parse(batch_index_json(r));
  CHECK(j["runs"][0]["source"] == run.source);
}

TEST_CASE("runs are named by the parts of their paths that tell them apart", "[batch]") {
  TempDir t;
  for (const char* dir : {"ci1/logs", "ci2/logs", "a/x/logs", "b/x/logs", "solo"}) {
    t.write(std::string("in/") + dir + "/workerlog.0", rank_log(0, 2));
  }
  std::string in = t.path() + "/in/";
  BatchOptions opt;
  opt.out_dir = t.path() + "/out";
  opt.passes.threads = 1;
  opt.outputs = BatchOutputs{false, true, false, false, false};
  BatchResult r =
      run_batch({in + "ci1/logs", in + "ci2/logs", in + "a/x/logs", in + "b/x/logs", in + "solo", in + "solo"}, opt);
  std::vector<std::string> names;
  for (const BatchRun& run : r.runs) names.push_back(run.name);
  CHECK(names == std::vector<std::string>{"ci1-logs", "ci2-logs", "a-x-logs", "b-x-logs", "solo", "solo-2"});
}

TEST_CASE("a reused output directory loses the files batch wrote there, and nothing else", "[batch]") {
  TempDir t;
  fs::path root(t.path());
  t.write("in/one/workerlog.0", rank_log(0, 2));
  t.write("in/two/workerlog.0", rank_log(0, 2));
  BatchOptions opt;
  opt.out_dir = t.path() + "/out";
  opt.passes.threads = 1;
  opt.outputs = BatchOutputs{false, true, false, false, false};
  REQUIRE_FALSE(run_batch({t.path() + "/in/one", t.path() + "/in/two"}, opt).any_failed());
  fs::path out(opt.out_dir);
  REQUIRE(fs::exists(out / "two" / "timeline.svg"));
  // Things batch did not write: a folder of the user's, a file of the user's in a run folder batch
  // wrote, and a link to a marked folder elsewhere.
  t.write("out/mine/notes.txt", "keep");
  t.write("out/one/notes.txt", "keep too");
  t.write("elsewhere/marked/" + std::string(kRunMarker), "x");
  t.write("elsewhere/marked/data", "keep");
  fs::create_directory_symlink(root / "elsewhere" / "marked", out / "linked");
  t.write("out/fake/" + std::string(kRunMarker) + "/inside", "a folder, not the marker file");
  REQUIRE_FALSE(run_batch({t.path() + "/in/one"}, opt).any_failed());
  CHECK(fs::exists(out / "one" / "timeline.svg"));
  CHECK_FALSE(fs::exists(out / "two"));
  CHECK(slurp(out / "mine" / "notes.txt") == "keep");
  CHECK(slurp(out / "one" / "notes.txt") == "keep too");
  CHECK(fs::is_symlink(out / "linked"));
  CHECK(slurp(root / "elsewhere" / "marked" / "data") == "keep");
  CHECK(fs::exists(out / "fake" / kRunMarker / "inside"));
  auto index = nlohmann::json::parse(slurp(out / "index.json"));
  CHECK(index["runs"].size() == 1);
}

TEST_CASE("a user's files in a folder batch once wrote into survive every later batch", "[batch]") {
  TempDir t;
  t.write("in/main/workerlog.0", rank_log(0, 2));
  BatchOptions opt;
  opt.out_dir = t.path() + "/out";
  opt.passes.threads = 1;
  opt.outputs = BatchOutputs{false, true, false, true, false};
  // The user's folder, which the run's name falls on.
  t.write("out/main/mine.txt", "the user's");
  t.write("out/main/sub/deep.txt", "the user's too");
  REQUIRE_FALSE(run_batch({t.path() + "/in/main"}, opt).any_failed());
  fs::path out(opt.out_dir);
  REQUIRE(fs::exists(out / "main" / "timeline.svg"));
  // A file the user put in later, and one in a folder batch made.
  t.write("in/other/workerlog.0", rank_log(0, 2));
  REQUIRE_FALSE(run_batch({t.path() + "/in/other"}, opt).any_failed());
  t.write("out/other/later.txt", "the user's, written after");
  REQUIRE_FALSE(run_batch({t.path() + "/in/main"}, opt).any_failed());
  REQUIRE_FALSE(run_batch({t.path() + "/in/main"}, opt).any_failed());
  CHECK(slurp(out / "main" / "mine.txt") == "the user's");
  CHECK(slurp(out / "main" / "sub" / "deep.txt") == "the user's too");
  CHECK(slurp(out / "other" / "later.txt") == "the user's, written after");
  // What batch wrote for "other" is gone; the folder stays for the user's file.
  CHECK_FALSE(fs::exists(out / "other" / "timeline.svg"));
  CHECK(fs::exists(out / "main" / "timeline.svg"));
  // A manifest naming a file outside the output directory, or through a link, removes nothing there.
  t.write("precious/keep.txt", "outside");
  fs::create_directory_symlink(fs::path(t.path()) / "precious", out / "via-link");
  t.write("out/.pp-timeline-batch.json",
          R"({"schema": "pp-timeline-batch-manifest/1", "files": ["../precious/keep.txt", "via-link/keep.txt",
              "/etc/hostname"], "dirs": ["../precious", "via-link"]})");
  REQUIRE_FALSE(run_batch({t.path() + "/in/main"}, opt).any_failed());
  CHECK(slurp(fs::path(t.path()) / "precious" / "keep.txt") == "outside");
  CHECK(fs::is_symlink(out / "via-link"));
}

TEST_CASE("a second batch into an output directory another batch holds is refused, and writes nothing", "[batch]") {
  TempDir t;
  t.write("in/main/workerlog.0", rank_log(0, 2));
  t.write("out/keep.txt", "x");
  BatchOptions opt;
  opt.out_dir = t.path() + "/out";
  opt.passes.threads = 1;
  // The first batch's lock, as it holds it while it runs.
  int fd = ::open((t.path() + "/out/.pp-timeline-batch.lock").c_str(), O_RDWR | O_CREAT, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::flock(fd, LOCK_EX) == 0);
  BatchResult r = run_batch({t.path() + "/in/main"}, opt);
  CHECK(r.runs.empty());
  CHECK(r.error.find("another pp-timeline batch is writing into this output directory") != std::string::npos);
  CHECK_FALSE(fs::exists(fs::path(opt.out_dir) / "index.json"));
  CHECK_FALSE(fs::exists(fs::path(opt.out_dir) / "main"));
  ::close(fd);
  r = run_batch({t.path() + "/in/main"}, opt);
  CHECK(r.error.empty());
  CHECK(fs::exists(fs::path(opt.out_dir) / "main" / "timeline.svg"));
  CHECK(slurp(fs::path(opt.out_dir) / "keep.txt") == "x");
}

TEST_CASE("with a baseline every run gets its change, and the gate fails past the limit", "[batch]") {
  TempDir t;
  // rank_log's steps are 1000 us apart; a run with every time 1.3 times as long is 30% slower.
  auto slow_log = [](int rank, int steps) {
    std::string log;
    for (int s = 0; s < steps; ++s) {
      int64_t t = s * 1300 + rank * 13;  // every time 1.3 times rank_log's
      log += job_line("forward", 0, t, t + 130) + job_line("backward", 0, t + 260, t + 520) +
             job_line("optimizer", 0, t + 650, t + 676);
    }
    return log;
  };
  for (int r = 0; r < 2; ++r) {
    t.write("base/workerlog." + std::to_string(r), rank_log(r, 4));
    t.write("same/workerlog." + std::to_string(r), rank_log(r, 4));
    t.write("slow/workerlog." + std::to_string(r), slow_log(r, 4));
  }
  BatchOptions opt;
  opt.out_dir = t.path() + "/out";
  opt.passes.threads = 2;
  opt.outputs = BatchOutputs{true, false, false, false, false};
  opt.baseline = t.path() + "/base";
  opt.fail_if_slower_pct = 10;
  BatchResult r = run_batch({t.path() + "/same", t.path() + "/slow"}, opt);
  REQUIRE(r.runs.size() == 3);
  CHECK_FALSE(r.any_failed());
  CHECK(r.gate_failed());
  CHECK(r.runs[0].is_baseline);
  CHECK(r.runs[0].name == "base");
  CHECK_FALSE(r.runs[0].change);
  REQUIRE(r.runs[1].change);
  REQUIRE(r.runs[2].change);
  CHECK(r.runs[1].change->verdict == Verdict::kSame);
  CHECK_FALSE(r.runs[1].change->gate_failed);
  CHECK(r.runs[2].change->verdict == Verdict::kSlower);
  CHECK(r.runs[2].change->step_time_delta_pct == Approx(30.0).margin(0.5));
  CHECK(r.runs[2].change->gate_failed);
  std::string md = batch_summary_markdown(r);
  CHECK(md.find("| vs base |") != std::string::npos);
  CHECK(md.find("+30.0% (slower), gate") != std::string::npos);
  CHECK(md.find("**Slower than the baseline by more than 10%:** slow") != std::string::npos);
  auto index = nlohmann::json::parse(slurp(fs::path(opt.out_dir) / "index.json"));
  CHECK(index["baseline"] == "base");
  CHECK(index["gate_failed"] == true);
  CHECK(index["runs"][0]["role"] == "baseline");
  CHECK(index["runs"][2]["baseline"]["verdict"] == "slower");

  // A baseline that holds two runs is refused, and the others still convert, uncompared.
  t.write("two/a/workerlog.0", rank_log(0, 2));
  t.write("two/b/workerlog.0", rank_log(0, 2));
  opt.baseline = t.path() + "/two";
  opt.out_dir = t.path() + "/out2";
  r = run_batch({t.path() + "/same"}, opt);
  REQUIRE(r.runs.size() == 2);
  CHECK(r.runs[0].status == BatchStatus::kBadArtifact);
  CHECK(r.runs[0].error.find("the baseline holds 2 runs") != std::string::npos);
  CHECK(r.runs[1].status == BatchStatus::kOk);
  CHECK_FALSE(r.runs[1].change);
}

TEST_CASE("summary links are relative, absolute under a base, or name the CI run and the artifact", "[batch]") {
  BatchResult r;
  BatchRun run;
  run.name = "ci1-logs";
  run.outputs["report"] = "ci1-logs/report.html";
  r.runs.push_back(run);
  CHECK(batch_summary_markdown(r).find("[ci1-logs](ci1-logs/report.html)") != std::string::npos);
  r.links.base = "https://ci.example/pages/42/";
  CHECK(batch_summary_markdown(r).find("[ci1-logs](https://ci.example/pages/42/ci1-logs/report.html)") !=
        std::string::npos);
  r.links.base.clear();
  r.links.run_page = "https://github.com/o/r/actions/runs/7";
  r.links.artifact = "pp-reports";
  std::string md = batch_summary_markdown(r);
  CHECK(md.find("](ci1-logs/") == std::string::npos);
  CHECK(md.find("artifact `pp-reports` of [this workflow run](https://github.com/o/r/actions/runs/7)") !=
        std::string::npos);
  CHECK(md.find("ci1-logs (`ci1-logs/report.html`)") != std::string::npos);
}

TEST_CASE("the words of batch --outputs", "[batch]") {
  BatchOutputs o;
  CHECK(parse_batch_outputs("svg,json", &o).empty());
  CHECK((o.svg && o.chrome_json && !o.report && !o.perfetto_trace && !o.stats_json));
  CHECK(parse_batch_outputs("html,pftrace,stats-json", &o).empty());
  CHECK((o.report && o.perfetto_trace && o.stats_json && !o.svg && !o.chrome_json));
  CHECK(parse_batch_outputs("svg,xml", &o).find("'xml' is none of") != std::string::npos);
  CHECK(parse_batch_outputs("", &o).find("'' is none of") != std::string::npos);
}

TEST_CASE("index.json rounds ratios as stats --json does", "[batch]") {
  BatchResult r;
  BatchRun run;
  run.name = "x";
  run.bubble_ratio = 0.2896329854036887;
  run.step_time_us = 1234.56789;
  r.runs.push_back(run);
  auto j = nlohmann::json::parse(batch_index_json(r));
  CHECK(j["runs"][0]["bubble_ratio"].get<double>() == 0.289633);
  CHECK(j["runs"][0]["step_time_us"].get<double>() == 1234.568);
  CHECK(j["version"] == 1);
}
