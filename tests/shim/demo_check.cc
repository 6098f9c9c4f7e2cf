#include "demo_check.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "passes/timeline_builder.h"

namespace ppt::demo_check {

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/ppt-demo-test-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

Command run_demo(const std::vector<std::string>& args) {
  TempDir out_dir;
  const std::string out_path = out_dir.path() + "/output";
  // PPT_DEMO_BINARY in the environment wins, for binaries moved to another
  // machine (scripts/gpu_check.sh --run).
  const char* binary = std::getenv("PPT_DEMO_BINARY");
  std::vector<std::string> argv_s{binary != nullptr && *binary != '\0' ? binary : PPT_DEMO_BINARY};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);

  Command result;
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::close(fd);
    }
    ::execv(argv[0], argv.data());
    std::_Exit(127);
  }
  int status = 0;
  if (pid > 0 && ::waitpid(pid, &status, 0) == pid && WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  }
  std::ifstream in(out_path);
  std::stringstream ss;
  ss << in.rdbuf();
  result.output = ss.str();
  return result;
}

LoadedRun load(const std::string& log_dir) {
  LoadedRun out;
  LayoutRequest request;
  request.log_dir = log_dir;
  BuildOptions options;
  options.threads = 1;
  LoadResult loaded = load_timeline(request, options);
  if (!loaded.timeline) {
    out.error = loaded.error.empty() ? "no timeline" : loaded.error;
    return out;
  }
  const Timeline& t = *loaded.timeline;
  out.runs = t.runs.size();
  out.rejected_lines = t.diagnostics.rejected_jobs();
  if (!t.runs.empty()) {
    out.has_marker = t.runs[0].has_marker;
    out.marker_start_step = t.runs[0].marker_start_step;
  }
  for (const Track& track : t.tracks) {
    if (track.rank < 0) continue;
    if (out.ranks.size() <= static_cast<size_t>(track.rank)) out.ranks.resize(track.rank + 1);
    auto& jobs = out.ranks[track.rank];
    int local = -1;
    int last_step = -1;
    for (const Job& j : track.jobs) {
      if (jobs.empty() || j.step != last_step) ++local;
      last_step = j.step;
      jobs.push_back(DemoJob{t.types[j.type], j.micro_batch, j.start_ns, j.end_ns, j.step, local});
    }
  }
  return out;
}

namespace {

std::string describe(int rank, const DemoJob& j) {
  std::ostringstream s;
  s << "rank " << rank << " step " << j.step << " " << j.type << " micro-batch " << j.micro_batch;
  return s.str();
}

}  // namespace

std::vector<std::string> check_order(const demo::PipelineShape& shape, int steps, const LoadedRun& run,
                                     int first_step) {
  std::vector<std::string> problems;
  if (static_cast<int>(run.ranks.size()) != shape.stages) {
    problems.push_back("expected " + std::to_string(shape.stages) + " ranks, read " + std::to_string(run.ranks.size()));
    return problems;
  }
  for (int r = 0; r < shape.stages; ++r) {
    const std::vector<demo::JobSpec> order = demo::stage_jobs(shape, r);
    const auto& got = run.ranks[r];
    const size_t want = order.size() * static_cast<size_t>(steps);
    if (got.size() != want) {
      problems.push_back("rank " + std::to_string(r) + ": " + std::to_string(got.size()) + " jobs, expected " +
                         std::to_string(want));
      continue;
    }
    for (size_t i = 0; i < got.size(); ++i) {
      const int local = static_cast<int>(i / order.size());
      const demo::JobSpec& spec = order[i % order.size()];
      const std::string type = demo::job_type(shape, spec);
      const DemoJob& g = got[i];
      if (g.type != type || g.micro_batch != spec.micro_batch || g.local_step != local) {
        std::ostringstream s;
        s << "rank " << r << " job " << i << ": read " << g.type << " micro-batch " << g.micro_batch << " as the job "
          << i % order.size() << " of its step " << g.local_step << " (numbered " << g.step << "), expected " << type
          << " micro-batch " << spec.micro_batch << " in its step " << local;
        problems.push_back(s.str());
        break;  // the rest of the rank would only repeat the shift
      }
      if (g.end_ns < g.start_ns) problems.push_back(describe(r, g) + " ends before it starts");
    }
    if (!got.empty() && got.front().step < first_step) {
      problems.push_back("rank " + std::to_string(r) + ": its first step is numbered " +
                         std::to_string(got.front().step) + ", before " + std::to_string(first_step));
    }
  }
  int earliest = std::numeric_limits<int>::max();
  for (const auto& jobs : run.ranks)
    if (!jobs.empty()) earliest = std::min(earliest, jobs.front().step);
  if (earliest != first_step) {
    problems.push_back("the first step is numbered " + std::to_string(earliest) + ", expected " +
                       std::to_string(first_step));
  }
  return problems;
}

std::vector<std::string> check_dependencies(const demo::PipelineShape& shape, const LoadedRun& run) {
  std::vector<std::string> problems;
  // (step, rank, type, micro-batch) -> job
  std::map<std::tuple<int, int, std::string, int>, const DemoJob*> index;
  for (size_t r = 0; r < run.ranks.size(); ++r) {
    for (const DemoJob& j : run.ranks[r]) {
      index[{j.local_step, static_cast<int>(r), j.type, j.micro_batch}] = &j;
    }
  }
  size_t checked = 0;
  for (size_t r = 0; r < run.ranks.size(); ++r) {
    for (const DemoJob& j : run.ranks[r]) {
      const auto spec = demo::parse_job_type(shape, j.type, j.micro_batch);
      if (!spec) {
        problems.push_back(describe(static_cast<int>(r), j) + ": a type the schedule lacks");
        continue;
      }
      const auto from = demo::input_from(shape, static_cast<int>(r), *spec);
      if (!from) continue;
      // A gradient comes from a whole backward or a backward_b (ZB-H1 runs
      // both kinds, so a stage's backward may be fed by a backward_b).
      demo::JobSpec sender = *spec;
      sender.chunk = from->chunk;
      auto it = index.find({j.local_step, from->stage, demo::job_type(shape, sender), j.micro_batch});
      if (it == index.end() && from->payload == demo::Payload::kGradient) {
        sender.role = sender.is(PlanRole::kBackward) ? PlanRole::kBackwardB : PlanRole::kBackward;
        it = index.find({j.local_step, from->stage, demo::job_type(shape, sender), j.micro_batch});
      }
      if (it == index.end()) {
        problems.push_back(describe(static_cast<int>(r), j) + ": its sender is missing");
        continue;
      }
      ++checked;
      if (j.start_ns < it->second->end_ns) {
        std::ostringstream s;
        s << describe(static_cast<int>(r), j) << " starts at " << j.start_ns << " ns, "
          << (it->second->end_ns - j.start_ns) << " ns before " << describe(from->stage, *it->second) << " ended";
        problems.push_back(s.str());
      }
    }
  }
  if (checked == 0 && shape.stages * shape.chunks > 1) {
    problems.push_back("no cross-stage dependency was found to check");
  }
  return problems;
}

}  // namespace ppt::demo_check
