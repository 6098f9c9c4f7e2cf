#include "app/watch_alerts.h"

#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "util/median.h"

extern char** environ;

namespace ppt {
namespace {

std::string ms(double ns) { return fmt::format("{:.3f} ms", ns / 1e6); }

}  // namespace

std::string format_straggler(const Straggler& s) {
  return fmt::format("rank {} {} +{:.0f}%", s.rank, s.type, s.margin * 100);
}

WatchAlerts::WatchAlerts(double slower_pct, std::string command)
    : slower_pct_(slower_pct), command_(std::move(command)) {}

WatchAlerts::~WatchAlerts() { reap(true); }

double WatchAlerts::median_ns() const {
  std::vector<int64_t> v(periods_.begin(), periods_.end());
  std::sort(v.begin(), v.end());
  return median_of_sorted(v);
}

std::vector<Alert> WatchAlerts::observe(const WatchStep& w) {
  if (w.stats.run != run_) {
    // stats never pools runs: a new run starts its own median.
    run_ = w.stats.run;
    periods_.clear();
  }
  std::vector<Alert> alerts;
  const int64_t period = w.stats.period_ns;
  // Runs are counted from 1 in what the user reads (the messages and
  // PPT_ALERT_RUN), as --run and the dashboard count them; stats' run is an
  // index from 0.
  const uint32_t run = w.stats.run + 1;
  if (slower_pct_ >= 0 && period >= 0 && periods_.size() >= 3) {
    const double med = median_ns();
    if (static_cast<double>(period) > med * (1 + slower_pct_ / 100.0)) {
      Alert a;
      a.kind = "slow_step";
      a.run = run;
      a.step = w.stats.step;
      a.period_ns = period;
      a.median_ns = med;
      a.rank = w.slowest_rank;
      a.type = w.slowest_type;
      a.message = fmt::format("run {} step {}: period {} is {:.1f}% above the running median {} (slowest rank {}, {})",
                              run, w.stats.step, ms(static_cast<double>(period)),
                              (static_cast<double>(period) / med - 1) * 100, ms(med), w.slowest_rank, w.slowest_type);
      alerts.push_back(std::move(a));
    }
  }
  if (slower_pct_ >= 0) {
    for (const Straggler& s : w.stragglers) {
      if (!stragglers_seen_.emplace(s.rank, s.type).second) continue;
      Alert a;
      a.kind = "straggler";
      a.run = run;
      a.step = w.stats.step;
      a.period_ns = period;
      a.rank = s.rank;
      a.type = s.type;
      a.margin = s.margin;
      a.message = fmt::format("run {} step {}: straggler {}", run, w.stats.step, format_straggler(s));
      alerts.push_back(std::move(a));
    }
  }
  if (period >= 0) {
    periods_.push_back(period);
    if (periods_.size() > kMedianSteps) periods_.pop_front();
  }
  return alerts;
}

std::string WatchAlerts::run_command(const Alert& a) {
  if (command_.empty()) return "";
  // The child's environment: ours, then the alert's details.
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "PPT_ALERT_", 10) != 0) env.emplace_back(*e);
  }
  env.push_back("PPT_ALERT_KIND=" + a.kind);
  env.push_back(fmt::format("PPT_ALERT_RUN={}", a.run));
  env.push_back(fmt::format("PPT_ALERT_STEP={}", a.step));
  env.push_back(fmt::format("PPT_ALERT_PERIOD_US={:.3f}", static_cast<double>(a.period_ns) / 1000.0));
  env.push_back(fmt::format("PPT_ALERT_MEDIAN_US={:.3f}", a.median_ns / 1000.0));
  env.push_back(fmt::format("PPT_ALERT_RANK={}", a.rank));
  env.push_back("PPT_ALERT_TYPE=" + a.type);
  env.push_back("PPT_ALERT_MESSAGE=" + a.message);
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string sh = "sh", dash_c = "-c", cmd = command_;
  char* argv[] = {sh.data(), dash_c.data(), cmd.data(), nullptr};
  pid_t pid = 0;
  int rc = posix_spawn(&pid, "/bin/sh", nullptr, nullptr, argv, envp.data());
  if (rc != 0) return fmt::format("--exec: /bin/sh could not be started: {}", std::strerror(rc));
  children_.push_back(pid);
  return "";
}

void WatchAlerts::reap(bool wait) {
  std::erase_if(children_, [&](pid_t pid) {
    int status = 0;
    pid_t r = waitpid(pid, &status, wait ? 0 : WNOHANG);
    return r == pid || (r < 0 && errno != EINTR);
  });
}

}  // namespace ppt
