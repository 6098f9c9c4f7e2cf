// What watch says about the steps it reports, beyond their figures: the
// running median of the step period (per run, as stats measures one run at a
// time; util/median.h's median_of_sorted, the median stats uses), and the alerts: a step
// whose period is more than a threshold above that median, and a rank that
// stats names a straggler for a job type (once per rank and type). An alert
// can run a shell command with its details in the environment (PPT_ALERT_*),
// started with posix_spawn and reaped later, never waited for while the
// watch goes on.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "app/watch.h"

namespace ppt {

struct Alert {
  std::string kind;  // slow_step, straggler
  uint32_t run = 1;  // counted from 1, as --run counts (the message and PPT_ALERT_RUN)
  int32_t step = 0;
  int64_t period_ns = -1;  // the step's period; -1: the run's last step has none
  double median_ns = 0;    // the running median it was compared with (slow_step)
  int32_t rank = -1;
  std::string type;
  double margin = 0;  // straggler: its median / the others' - 1
  std::string message;
};

class WatchAlerts {
 public:
  // slower_pct < 0: no alert is raised (the median is kept all the same).
  // `command`: the shell command run on each alert ("" for none).
  WatchAlerts(double slower_pct, std::string command);
  ~WatchAlerts();

  // The alerts `step` raises, then the step's period joins the median.
  std::vector<Alert> observe(const WatchStep& step);
  // The median period of the current run's last steps (at most 200); 0
  // before any.
  double median_ns() const;
  // Runs the command for `alert`, if there is one; "" or why it could not start.
  std::string run_command(const Alert& alert);
  // Reaps the commands that have ended; `wait`: all of them, waiting.
  void reap(bool wait);

 private:
  static constexpr size_t kMedianSteps = 200;
  double slower_pct_;
  std::string command_;
  uint32_t run_ = 0;
  std::deque<int64_t> periods_;
  std::set<std::pair<int32_t, std::string>> stragglers_seen_;
  std::vector<pid_t> children_;
};

// "rank 3 forward +12%".
std::string format_straggler(const Straggler& s);

}  // namespace ppt
