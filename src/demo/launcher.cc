// Starts the demo's ranks as paddle.distributed.launch starts a job: one
// process per rank, its stdout and stderr in DIR/workerlog.<local rank>
// (DIR/machine<k>/ with several machines), the PADDLE_* variables set. The
// ranks of a pipeline are linked stage to stage by socket pairs made here
// before the processes start (a ring for interleaved schedules, whose last
// stage feeds the first stage's next chunk).
#include <fcntl.h>
#include <glog/logging.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "demo.h"
#include "schedule/schedules.h"

namespace ppt::demo {
namespace {

// "" when the configuration can run, else a sentence saying why not.
std::string validate(const DemoConfig& c) {
  if (c.log_dir.empty()) return "--log_dir is empty";
  if (std::string bad = validate(c.shape); !bad.empty()) return bad;
  if (c.steps < 1) return "--steps must be at least 1";
  if (c.machines < 1) return "--machines must be at least 1";
  if (c.shape.stages % c.machines != 0) {
    return "--ranks (" + std::to_string(c.shape.stages) + ") must be a multiple of --machines (" +
           std::to_string(c.machines) + ")";
  }
  if (c.work_us < 0) return "--work_us must not be negative";
  if (!(c.act_mb >= 0) || !(c.static_mb >= 0)) return "--act-mb and --static-mb must not be negative";
  if (c.timeout_s < 1) return "--timeout_s must be at least 1";
  if (std::string stuck = check_runs_to_completion(c.shape); !stuck.empty()) {
    return "the schedule cannot run: " + stuck;
  }
  return {};
}

// The log file of `rank`: DIR/workerlog.<local> or DIR/machine<k>/workerlog.<local>.
std::string log_path(const DemoConfig& c, int rank) {
  const int per_machine = c.shape.stages / c.machines;
  std::filesystem::path dir = c.log_dir;
  if (c.machines > 1) dir /= "machine" + std::to_string(rank / per_machine);
  return (dir / ("workerlog." + std::to_string(rank % per_machine))).string();
}

[[noreturn]] void child(const DemoConfig& c, const RankPlace& place, const std::string& path,
                        const std::vector<int>& other_fds) {
  for (int fd : other_fds) ::close(fd);
  const int log = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (log < 0) {
    std::fprintf(stderr, "pp-demo: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
    std::_Exit(1);
  }
  ::dup2(log, STDOUT_FILENO);
  ::dup2(log, STDERR_FILENO);
  ::close(log);
  const int per_machine = c.shape.stages / c.machines;
  ::setenv("PADDLE_TRAINER_ID", std::to_string(place.rank).c_str(), 1);
  ::setenv("PADDLE_TRAINERS_NUM", std::to_string(c.shape.stages).c_str(), 1);
  ::setenv("PADDLE_LOCAL_RANK", std::to_string(place.local_rank).c_str(), 1);
  ::setenv("PADDLE_LOCAL_SIZE", std::to_string(per_machine).c_str(), 1);
  // glog as Paddle sets it up: everything on stderr, with the usual prefix.
  FLAGS_logtostderr = true;
  google::InitGoogleLogging("pp-demo");
  const int status = run_rank(c, place);
  std::fflush(nullptr);
  std::_Exit(status);
}

}  // namespace

int launch(const DemoConfig& c) {
  if (std::string bad = validate(c); !bad.empty()) {
    std::fprintf(stderr, "pp-demo: %s\n", bad.c_str());
    return 2;
  }
  const int ranks = c.shape.stages;
  const int per_machine = ranks / c.machines;
  for (int r = 0; r < ranks; ++r) {
    std::error_code ec;
    const auto dir = std::filesystem::path(log_path(c, r)).parent_path();
    std::filesystem::create_directories(dir, ec);
    if (ec) {
      std::fprintf(stderr, "pp-demo: cannot make %s: %s\n", dir.c_str(), ec.message().c_str());
      return 2;
    }
  }

  // link[i] joins stage i (end 0) to stage (i + 1) % P (end 1).
  const bool ring = schedule_chunked(c.shape.schedule);  // the last stage feeds chunk c+1 on stage 0
  const int links = ranks == 1 ? 0 : (ring ? ranks : ranks - 1);
  std::vector<int> fds;
  std::vector<std::array<int, 2>> link(static_cast<size_t>(links));
  for (auto& l : link) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
      std::fprintf(stderr, "pp-demo: socketpair failed: %s\n", std::strerror(errno));
      return 2;
    }
    l = {sv[0], sv[1]};
    fds.push_back(sv[0]);
    fds.push_back(sv[1]);
  }

  // The start barrier (rank.cc): ranks write to `ready` once set up and
  // start when `go` is closed here.
  int ready[2], go[2];
  if (::pipe(ready) != 0 || ::pipe(go) != 0) {
    std::fprintf(stderr, "pp-demo: pipe failed: %s\n", std::strerror(errno));
    return 2;
  }

  std::fflush(nullptr);
  std::vector<pid_t> pids(static_cast<size_t>(ranks), -1);
  bool started_all = true;
  for (int r = 0; r < ranks; ++r) {
    RankPlace place;
    place.rank = r;
    place.machine = r / per_machine;
    place.local_rank = r % per_machine;
    if (r < links) place.next_fd = link[r][0];
    const int prev = (r - 1 + ranks) % ranks;
    if (r != prev && prev < links) place.prev_fd = link[prev][1];
    place.ready_fd = ready[1];
    place.go_fd = go[0];
    const pid_t pid = ::fork();
    if (pid < 0) {
      std::fprintf(stderr, "pp-demo: fork failed: %s\n", std::strerror(errno));
      started_all = false;
      break;
    }
    if (pid == 0) {
      std::vector<int> others{ready[0], go[1]};
      for (int fd : fds)
        if (fd != place.next_fd && fd != place.prev_fd) others.push_back(fd);
      child(c, place, log_path(c, r), others);
    }
    pids[r] = pid;
  }
  for (int fd : fds) ::close(fd);
  ::close(ready[1]);
  ::close(go[0]);

  std::vector<int> statuses(static_cast<size_t>(ranks), -1);
  int left = 0;
  for (pid_t p : pids) left += p > 0 ? 1 : 0;
  // Reaps one rank; blocks when `block`. Returns false when none was reaped.
  auto reap = [&](bool block) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, block ? 0 : WNOHANG);
    if (pid <= 0) return false;
    for (int r = 0; r < ranks; ++r) {
      if (pids[r] == pid) {
        pids[r] = -1;
        statuses[r] = status;
        --left;
      }
    }
    return true;
  };
  auto failed = [&](int r) { return statuses[r] != -1 && !(WIFEXITED(statuses[r]) && WEXITSTATUS(statuses[r]) == 0); };

  // Wait until every rank is ready; a rank that ends before is a failure.
  bool ready_all = started_all;
  for (int got = 0; ready_all && got < ranks;) {
    pollfd pfd{ready[0], POLLIN, 0};
    const int n = ::poll(&pfd, 1, 100);
    if (n > 0) {
      char buf[256];
      const ssize_t k = ::read(ready[0], buf, sizeof buf);
      if (k > 0) got += static_cast<int>(k);
    }
    while (reap(false)) {
    }
    for (int r = 0; r < ranks; ++r) ready_all = ready_all && statuses[r] == -1;
  }
  ::close(ready[0]);
  if (!ready_all) {
    for (pid_t p : pids)
      if (p > 0) ::kill(p, SIGTERM);
  }
  ::close(go[1]);  // go (or, after a failure, end the waiting ranks)

  // Wait for every rank; after the first failure, stop the others (they
  // would only time out waiting for it).
  bool stopped = !ready_all;
  while (left > 0) {
    if (!reap(true)) {
      if (errno == EINTR) continue;
      break;
    }
    bool any_failed = false;
    for (int r = 0; r < ranks; ++r) any_failed = any_failed || failed(r);
    if (any_failed && !stopped) {
      for (pid_t p : pids)
        if (p > 0) ::kill(p, SIGTERM);
      stopped = true;
    }
  }

  int result = started_all ? 0 : 2;
  for (int r = 0; r < ranks; ++r) {
    if (!failed(r)) continue;
    result = result == 0 ? 1 : result;
    const int status = statuses[r];
    if (WIFEXITED(status)) {
      std::fprintf(stderr, "pp-demo: rank %d exited with status %d; see %s\n", r, WEXITSTATUS(status),
                   log_path(c, r).c_str());
    } else if (WIFSIGNALED(status)) {
      std::fprintf(stderr, "pp-demo: rank %d ended by signal %d; see %s\n", r, WTERMSIG(status),
                   log_path(c, r).c_str());
    }
  }
  return result;
}

}  // namespace ppt::demo
