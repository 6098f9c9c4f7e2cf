// What the unit tests share: a temporary folder, reading a whole file, job lines as Paddle prints
// them, hand-made and generated logs loaded into a Timeline. One definition
// of each, header-only (every function inline), so that no two test files
// can disagree about what a TempDir or a job line is.
#pragma once

#include <fmt/format.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "analysis/stats.h"
#include "input/file_scanner.h"
#include "input/line_parser.h"
#include "passes/dependencies.h"
#include "passes/pipeline.h"
#include "passes/timeline_builder.h"
#include "pp_timeline/log_line.h"

namespace ppt::testing {

// ---------------------------------------------------------------------------
// Files

// A temporary folder, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string templ = (std::filesystem::temp_directory_path() / "ppt-unit-XXXXXX").string();
    char* p = mkdtemp(templ.data());
    path_ = p ? std::string(p) : std::string();
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // Writes `content` to path()/rel (folders made as needed); returns its path.
  std::string write(const std::string& rel, const std::string& content) const {
    std::filesystem::path p = std::filesystem::path(path_) / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
    return p.string();
  }

 private:
  std::string path_;
};

// The whole of a file's bytes ("" when it cannot be read).
inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Runs a command; returns its exit status and stdout.
inline int run_command(const std::string& command, std::string* out = nullptr) {
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return -1;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) {
    if (out) out->append(buf, n);
  }
  int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

inline bool have_python() { return run_command("python3 -c 'pass' 2>/dev/null") == 0; }

// ---------------------------------------------------------------------------
// Job lines

inline constexpr int64_t kEpochNs = 1697793307000000000;  // 2023-10-20 09:15:07 UTC

// A glog-prefixed job line (newline included) at `start_us`..`end_us`
// microseconds after kEpochNs. The job id is `id`, or the micro-batch when
// id < 0; micro_batch < 0 leaves the micro_batch_id field out.
inline std::string job_line(const std::string& type, int micro_batch, int64_t start_us, int64_t end_us, int64_t id = -1,
                            int tid = 4242) {
  return "I1020 09:15:07.265326 " + std::to_string(tid) + " standalone_executor.cc:217] " +
         log_line::format_job_line(id >= 0 ? id : micro_batch, type, micro_batch, kEpochNs + start_us * 1000,
                                   kEpochNs + end_us * 1000) +
         "\n";
}

// Paddle's start-up lines, printed once per process (gpu_resources.cc).
inline std::string startup_lines(int tid) {
  return "W1020 09:15:00.197323 " + std::to_string(tid) +
         " gpu_resources.cc:119] Please NOTE: device: 0, GPU Compute Capability: 9.0, Driver API Version: 12.4, "
         "Runtime API Version: 12.3\n"
         "W1020 09:15:00.197400 " +
         std::to_string(tid) + " gpu_resources.cc:164] device: 0, cuDNN Version: 8.9.\n";
}

// One parser for the tests that scan text themselves.
inline const LineParser& parser() {
  static const LineParser p;
  return p;
}

// A rank's plan, as "forward:0 backward:0 optimizer:0" tokens: type and
// micro-batch (0 when left out).
struct PlanJob {
  std::string type;
  int mb;
};

inline std::vector<PlanJob> plan(const std::string& spec) {
  std::vector<PlanJob> out;
  size_t i = 0;
  while (i < spec.size()) {
    size_t j = spec.find(' ', i);
    if (j == std::string::npos) j = spec.size();
    std::string tok = spec.substr(i, j - i);
    size_t colon = tok.find(':');
    out.push_back({tok.substr(0, colon), colon == std::string::npos ? 0 : std::stoi(tok.substr(colon + 1))});
    i = j + 1;
  }
  return out;
}

// `steps` repetitions of a plan, `step_us` apart from `offset_us` on, each
// job 10 us; returns the log text.
inline std::string plan_log(const std::vector<PlanJob>& p, int steps, int64_t step_us = 1000, int64_t offset_us = 0) {
  std::string log;
  for (int s = 0; s < steps; ++s) {
    int64_t t = offset_us + s * step_us;
    for (const PlanJob& j : p) {
      log += job_line(j.type, j.mb, t, t + 10);
      t += 10;
    }
  }
  return log;
}

// ---------------------------------------------------------------------------
// Hand-made timelines

// A rank's log lines (each a whole line, newline optional), on `machine`.
struct RankLines {
  int32_t machine = 0;
  std::vector<std::string> lines;
};

// Ranks in order (global rank = position); machines named machine<k>; built
// in memory, without files.
inline Timeline timeline_from_lines(const std::vector<RankLines>& ranks) {
  LineParser parser;
  std::vector<SourceFile> files;
  std::vector<FileScan> scans;
  int32_t machines = 0;
  std::vector<int32_t> local_count;
  for (size_t r = 0; r < ranks.size(); ++r) {
    int32_t m = ranks[r].machine;
    machines = std::max(machines, m + 1);
    if (local_count.size() <= static_cast<size_t>(m)) local_count.resize(m + 1, 0);
    SourceFile f;
    f.machine = m;
    f.machine_name = fmt::format("machine{}", m);
    f.local_index = local_count[m]++;
    f.global_rank = static_cast<int32_t>(r);
    f.path = fmt::format("logs/{}/workerlog.{}", f.machine_name, f.local_index);
    files.push_back(f);
    std::string text;
    for (const std::string& l : ranks[r].lines) text += l.ends_with('\n') ? l : l + "\n";
    scans.push_back(scan_buffer(text, static_cast<uint32_t>(r), parser));
  }
  std::vector<std::string> names;
  for (int32_t m = 0; m < machines; ++m) names.push_back(fmt::format("machine{}", m));
  return build_from_scans(files, names, std::move(scans), 1);
}

// One job of a hand-made run; ranks print their jobs in the order given.
struct HandJob {
  int32_t rank;
  std::string type;
  int32_t mb;
  int64_t start_us;
  int64_t end_us;
};

// `one` step's jobs `steps` times, step k moved by k * period_us.
inline std::vector<HandJob> repeated_steps(const std::vector<HandJob>& one, int steps, int64_t period_us) {
  std::vector<HandJob> all;
  for (int step = 0; step < steps; ++step) {
    for (HandJob j : one) {
      j.start_us += period_us * step;
      j.end_us += period_us * step;
      all.push_back(j);
    }
  }
  return all;
}

// Loads a log folder with one thread, as the command line would.
inline Timeline load_dir(const std::string& log_dir) {
  LayoutRequest request;
  request.log_dir = log_dir;
  BuildOptions build;
  build.threads = 1;
  LoadResult loaded = load_timeline(request, build);
  REQUIRE(loaded.timeline);
  return std::move(*loaded.timeline);
}

// Writes the jobs as dir/name/workerlog.<rank> and loads that folder.
inline Timeline load_hand_run(const TempDir& dir, const std::string& name, const std::vector<HandJob>& jobs) {
  std::map<int32_t, std::string> text;
  for (const HandJob& j : jobs) text[j.rank] += job_line(j.type, j.mb, j.start_us, j.end_us);
  for (const auto& [rank, t] : text) dir.write(name + "/workerlog." + std::to_string(rank), t);
  return load_dir(dir.path() + "/" + name);
}

// ---------------------------------------------------------------------------
// Generated logs (scripts/gen_logs.py, seeded: the same arguments give the
// same logs; gen_logs.py --help describes them and their ground truth)

// Runs the generator into dir/name; returns the log directory.
inline std::string generate_log_dir(const TempDir& dir, const std::string& name, const std::string& args) {
  std::string out = dir.path() + "/" + name;
  std::string cmd = "python3 '" PPT_SOURCE_DIR "/scripts/gen_logs.py' --quiet --jobs 1 --out '" + out + "' " + args;
  INFO(cmd);
  REQUIRE(std::system(cmd.c_str()) == 0);
  return out;
}

// Generated logs loaded into a Timeline, with the generator's ground truth.
struct GeneratedLogs {
  TempDir dir;
  std::string logs;
  nlohmann::json truth;
  Timeline timeline;
};

inline std::unique_ptr<GeneratedLogs> generate_logs(const std::string& args) {
  auto g = std::make_unique<GeneratedLogs>();
  g->logs = g->dir.path() + "/logs";
  std::string truth = g->dir.path() + "/truth.json";
  std::string cmd = fmt::format("python3 {}/scripts/gen_logs.py --out {} --truth {} --quiet --jobs 1 {} 2>&1",
                                PPT_SOURCE_DIR, g->logs, truth, args);
  std::string out;
  if (run_command(cmd, &out) != 0) throw std::runtime_error("gen_logs.py failed: " + out);
  std::ifstream in(truth);
  g->truth = nlohmann::json::parse(in);
  LoadResult loaded = load_timeline(LayoutRequest{g->logs, {}, {}}, BuildOptions{1, {}});
  if (!loaded.timeline) throw std::runtime_error("load_timeline: " + loaded.error);
  g->timeline = std::move(*loaded.timeline);
  return g;
}

// ---------------------------------------------------------------------------
// Looking things up

// The job of `tl` on `rank` with this type and micro-batch in `step` (its
// first, in start order), or nullptr.
inline const Job* find_job(const Timeline& tl, int32_t rank, const std::string& type, int32_t micro_batch, int32_t step,
                           uint32_t run = 0) {
  for (const Track& t : tl.tracks) {
    if (t.rank != rank || t.run != run) continue;
    for (const Job& j : t.jobs) {
      if (tl.types[j.type] == type && j.micro_batch == micro_batch && j.step == step) return &j;
    }
  }
  return nullptr;
}

inline const RankStats& rank_of(const Stats& st, int32_t rank) {
  for (const RankStats& r : st.ranks) {
    if (r.rank == rank) return r;
  }
  FAIL("no rank " << rank);
  return st.ranks.front();
}

// Stats as the driver computes them (app/driver.h): the pipeline decided once,
// the dependencies found with it, then the stats with both.
inline Stats stats_of(const Timeline& tl, const StatsOptions& options = {}, int32_t pp_degree = 0) {
  PipelinePlan plan = decide_pipeline(tl, pp_degree, 1);
  Dependencies deps = find_dependencies(tl, plan, 1);
  return compute_stats(tl, plan, &deps, options);
}

}  // namespace ppt::testing
