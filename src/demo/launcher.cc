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

// Each rank's log folder made; "" or why not.
std::string make_log_dirs(const DemoConfig& c) {
  for (int r = 0; r < c.shape.stages; ++r) {
    std::error_code ec;
    const auto dir = std::filesystem::path(log_path(c, r)).parent_path();
    std::filesystem::create_directories(dir, ec);
    if (ec) return "cannot make " + dir.string() + ": " + ec.message();
  }
  return "";
}

// The ranks started, followed until they end: which are running, how each
// ended.
class Ranks {
 public:
  explicit Ranks(int ranks) : pids_(static_cast<size_t>(ranks), -1), statuses_(static_cast<size_t>(ranks), -1) {}

  void started(int r, pid_t pid) {
    pids_[r] = pid;
    ++left_;
  }
  int left() const { return left_; }
  bool ended(int r) const { return statuses_[r] != -1; }
  // Reaps one rank; blocks when `block`. Returns false when none was reaped.
  bool reap(bool block) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, block ? 0 : WNOHANG);
    if (pid <= 0) return false;
    for (size_t r = 0; r < pids_.size(); ++r) {
      if (pids_[r] == pid) {
        pids_[r] = -1;
        statuses_[r] = status;
        --left_;
      }
    }
    return true;
  }
  bool failed(int r) const {
    return statuses_[r] != -1 && !(WIFEXITED(statuses_[r]) && WEXITSTATUS(statuses_[r]) == 0);
  }
  bool any_failed() const {
    for (size_t r = 0; r < pids_.size(); ++r) {
      if (failed(static_cast<int>(r))) return true;
    }
    return false;
  }
  void stop_all() const {
    for (pid_t p : pids_)
      if (p > 0) ::kill(p, SIGTERM);
  }
  int status(int r) const { return statuses_[r]; }

 private:
  std::vector<pid_t> pids_;
  std::vector<int> statuses_;
  int left_ = 0;
};

// The sockets between neighbouring stages: link[i] joins stage i (end 0) to
// stage (i + 1) % P (end 1), a ring for VPP. False when one cannot be made.
bool make_links(const DemoConfig& c, std::vector<std::array<int, 2>>& link, std::vector<int>& fds) {
  const int ranks = c.shape.stages;
  const bool ring = schedule_chunked(c.shape.schedule);  // the last stage feeds chunk c+1 on stage 0
  link.resize(static_cast<size_t>(ranks == 1 ? 0 : (ring ? ranks : ranks - 1)));
  for (auto& l : link) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return false;
    l = {sv[0], sv[1]};
    fds.push_back(sv[0]);
    fds.push_back(sv[1]);
  }
  return true;
}

// Every rank forked, each with its neighbours' sockets and the barrier's
// ends; false when a fork failed (the ranks started before it run on).
bool start_ranks(const DemoConfig& c, const std::vector<std::array<int, 2>>& link, const std::vector<int>& fds,
                 const int ready[2], const int go[2], Ranks& ranks) {
  const int count = c.shape.stages;
  const int per_machine = count / c.machines;
  const int links = static_cast<int>(link.size());
  for (int r = 0; r < count; ++r) {
    RankPlace place;
    place.rank = r;
    place.machine = r / per_machine;
    place.local_rank = r % per_machine;
    if (r < links) place.next_fd = link[r][0];
    const int prev = (r - 1 + count) % count;
    if (r != prev && prev < links) place.prev_fd = link[prev][1];
    place.ready_fd = ready[1];
    place.go_fd = go[0];
    const pid_t pid = ::fork();
    if (pid < 0) {
      std::fprintf(stderr, "pp-demo: fork failed: %s\n", std::strerror(errno));
      return false;
    }
    if (pid == 0) {
      std::vector<int> others{ready[0], go[1]};
      for (int fd : fds)
        if (fd != place.next_fd && fd != place.prev_fd) others.push_back(fd);
      child(c, place, log_path(c, r), others);
    }
    ranks.started(r, pid);
  }
  return true;
}

// Waits until every rank is ready (one byte each on `ready_fd`); a rank that
// ends before is a failure: false.
bool wait_ready(int ready_fd, int count, Ranks& ranks) {
  bool ready_all = true;
  for (int got = 0; ready_all && got < count;) {
    pollfd pfd{ready_fd, POLLIN, 0};
    const int n = ::poll(&pfd, 1, 100);
    if (n > 0) {
      char buf[256];
      const ssize_t k = ::read(ready_fd, buf, sizeof buf);
      if (k > 0) got += static_cast<int>(k);
    }
    while (ranks.reap(false)) {
    }
    for (int r = 0; r < count; ++r) ready_all = ready_all && !ranks.ended(r);
  }
  return ready_all;
}

// Waits for every rank; after the first failure, stops the others (they
// would only time out waiting for it). `stopped`: they were stopped already.
void wait_all(Ranks& ranks, bool stopped) {
  while (ranks.left() > 0) {
    if (!ranks.reap(true)) {
      if (errno == EINTR) continue;
      break;
    }
    if (ranks.any_failed() && !stopped) {
      ranks.stop_all();
      stopped = true;
    }
  }
}

// 0 when every rank exited 0, 1 when one failed (each named, with its log),
// 2 when not all could be started.
int exit_status(const DemoConfig& c, const Ranks& ranks, bool started_all) {
  int result = started_all ? 0 : 2;
  for (int r = 0; r < c.shape.stages; ++r) {
    if (!ranks.failed(r)) continue;
    result = result == 0 ? 1 : result;
    const int status = ranks.status(r);
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

}  // namespace

int launch(const DemoConfig& c) {
  if (std::string bad = validate(c); !bad.empty()) {
    std::fprintf(stderr, "pp-demo: %s\n", bad.c_str());
    return 2;
  }
  if (std::string bad = make_log_dirs(c); !bad.empty()) {
    std::fprintf(stderr, "pp-demo: %s\n", bad.c_str());
    return 2;
  }
  std::vector<std::array<int, 2>> link;
  std::vector<int> fds;
  if (!make_links(c, link, fds)) {
    std::fprintf(stderr, "pp-demo: socketpair failed: %s\n", std::strerror(errno));
    return 2;
  }
  // The start barrier (rank.cc): ranks write to `ready` once set up and
  // start when `go` is closed here.
  int ready[2], go[2];
  if (::pipe(ready) != 0 || ::pipe(go) != 0) {
    std::fprintf(stderr, "pp-demo: pipe failed: %s\n", std::strerror(errno));
    return 2;
  }
  std::fflush(nullptr);
  Ranks ranks(c.shape.stages);
  const bool started_all = start_ranks(c, link, fds, ready, go, ranks);
  for (int fd : fds) ::close(fd);
  ::close(ready[1]);
  ::close(go[0]);
  const bool ready_all = started_all && wait_ready(ready[0], c.shape.stages, ranks);
  ::close(ready[0]);
  if (!ready_all) ranks.stop_all();
  ::close(go[1]);  // go (or, after a failure, end the waiting ranks)
  wait_all(ranks, !ready_all);
  return exit_status(c, ranks, started_all);
}

}  // namespace ppt::demo
