// pp-timeline watch: follows a run's growing logs and reports every step as
// it completes: a live dashboard on a terminal, one JSON object per step
// otherwise (or with --jsonl), a self-reloading HTML page, alerts, and the
// whole run's trace when the watch ends.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "app/watch.h"
#include "commands.h"
#include "input/log_follower.h"
#include "output/html_report.h"
#include "output/output_file.h"
#include "output/outputs.h"
#include "output/stats_writers.h"
#include "reporter.h"
#include "util/text.h"

namespace ppt::cli {
namespace {

struct WatchCommandOptions {
  InputOptions input;
  unsigned threads = 1;
  int32_t pp_degree = 0;
  std::string align_clocks = "auto";
  bool quiet = false;
  std::string jsonl;
  std::string report;
  size_t report_every = 10;
  std::vector<std::string> outputs;
  size_t steps = 0;
  double alert_if_slower = -1;
  std::string exec;
  double idle_timeout_s = 10;
  size_t keep_steps = 20;
  int poll_ms = 200;
  std::string dashboard = "auto";
};

std::atomic<bool> g_stop{false};
struct sigaction g_previous[3];
constexpr int kStopSignals[3] = {SIGINT, SIGTERM, SIGHUP};

// The first SIGINT/SIGTERM ends the watch cleanly (outputs written); the
// handler before it (which removes temporary files and dies) takes a second.
void on_stop_signal(int sig) {
  g_stop.store(true);
  for (int i = 0; i < 3; ++i) {
    if (kStopSignals[i] == sig) sigaction(sig, &g_previous[i], nullptr);
  }
}

void install_stop_handlers() {
  for (int i = 0; i < 3; ++i) {
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(kStopSignals[i], &sa, &g_previous[i]);
  }
}

std::string ms(int64_t ns) { return fmt::format("{:.3f} ms", static_cast<double>(ns) / 1e6); }
std::string pct(double r) { return r < 0 ? std::string("?") : fmt::format("{:.1f}%", r * 100); }

int64_t median_of(std::deque<int64_t> values) {
  std::vector<int64_t> v(values.begin(), values.end());
  std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

struct Alert {
  std::string kind;  // slow_step, straggler
  uint32_t run = 0;
  int32_t step = 0;
  int64_t period_ns = 0;
  int64_t median_ns = 0;
  int32_t rank = -1;
  std::string type;
  std::string message;
};

void run_alert_command(const std::string& cmd, const Alert& a) {
  pid_t pid = fork();
  if (pid != 0) return;  // the parent reaps it later; a failed fork is no alert command
  setenv("PPT_ALERT_KIND", a.kind.c_str(), 1);
  setenv("PPT_ALERT_RUN", std::to_string(a.run).c_str(), 1);
  setenv("PPT_ALERT_STEP", std::to_string(a.step).c_str(), 1);
  setenv("PPT_ALERT_PERIOD_US", fmt::format("{:.3f}", a.period_ns / 1000.0).c_str(), 1);
  setenv("PPT_ALERT_MEDIAN_US", fmt::format("{:.3f}", a.median_ns / 1000.0).c_str(), 1);
  setenv("PPT_ALERT_RANK", std::to_string(a.rank).c_str(), 1);
  setenv("PPT_ALERT_TYPE", a.type.c_str(), 1);
  setenv("PPT_ALERT_MESSAGE", a.message.c_str(), 1);
  execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
  _exit(127);
}

// The live view: redrawn in place after each batch of completed steps.
class Dashboard {
 public:
  explicit Dashboard(std::string source) : source_(std::move(source)) {}

  void add(const WatchStep& w, int64_t median_ns) {
    last_ = w;
    median_ns_ = median_ns;
    ++steps_;
    for (const RankInStep& r : w.ranks) {
      std::deque<double>& h = history_[r.rank];
      h.push_back(r.busy_ratio);
      if (h.size() > kWidth) h.pop_front();
    }
  }
  void alert(const std::string& text) {
    alerts_.push_back(text);
    if (alerts_.size() > 3) alerts_.erase(alerts_.begin());
    ++alert_count_;
  }

  std::string render(size_t ranks_shown) const {
    std::string s = "\x1b[H\x1b[2J";
    s += fmt::format("pp-timeline watch  {}  {} steps reported\n", source_, steps_);
    if (!last_) return s + "waiting for the first complete step...\n";
    const WatchStep& w = *last_;
    s += fmt::format("step {} (run {})  period {}  median {}  span {}\n", w.stats.step, w.stats.run, ms(w.period_ns),
                     ms(median_ns_), ms(w.stats.time_ns()));
    s += fmt::format("bubble {} measured, {} ideal ({})\n", pct(w.stats.bubble_ratio), pct(w.ideal_bubble_ratio),
                     w.schedule);
    s += fmt::format("slowest rank {} ({})", w.slowest_rank, w.slowest_type);
    if (!w.stragglers.empty()) s += fmt::format("  stragglers: {}", fmt::join(w.stragglers, ", "));
    s += "\nrank  busy share of the last steps (low = waiting)\n";
    static const char* kBars[] = {"\u2581", "\u2582", "\u2583", "\u2584", "\u2585", "\u2586", "\u2587", "\u2588"};
    size_t shown = 0;
    for (const auto& [rank, h] : history_) {
      if (shown++ == ranks_shown) {
        s += fmt::format("  ... {} more ranks\n", history_.size() - ranks_shown);
        break;
      }
      s += fmt::format("{:>4}  ", rank);
      for (double v : h) s += kBars[std::clamp(static_cast<int>(v * 8), 0, 7)];
      s += "\n";
    }
    s += fmt::format("problems: {} alerts, {} rejected job lines so far\n", alert_count_, w.problems);
    for (const std::string& a : alerts_) s += "  " + a + "\n";
    return s;
  }

 private:
  static constexpr size_t kWidth = 60;
  std::string source_;
  std::optional<WatchStep> last_;
  int64_t median_ns_ = 0;
  size_t steps_ = 0;
  std::map<int32_t, std::deque<double>> history_;
  std::vector<std::string> alerts_;
  size_t alert_count_ = 0;
};

std::string write_report(const Watcher& watcher, const std::string& path, const std::string& source,
                         const std::vector<std::string>& inputs) {
  std::optional<WatchAnalysis> a = watcher.window();
  if (!a) return "";
  OutputFile file;
  if (std::string error = open_output(file, path, inputs); !error.empty()) return error;
  ReportOptions r;
  r.title = "pp-timeline watch";
  r.source = source + " (the last steps, while the run trains)";
  r.stats = a->stats ? &*a->stats : nullptr;
  r.refresh_seconds = 5;
  write_html_report(a->timeline, r, file);
  if (!file.commit()) return file.error();
  return "";
}

int run_watch(const WatchCommandOptions& o) {
  Reporter say("watch", o.quiet);
  LayoutRequest request = o.input.request();
  if (std::string error = resolve_positional_dir(request); !error.empty()) {
    say.error(error);
    return kExitUsage;
  }
  if (request.log_dir.empty() && request.files.empty()) {
    say.error("give --log_dir DIR or log files (see pp-timeline watch --help)");
    return kExitUsage;
  }
  for (const std::string& f : request.files) {
    if (is_stdin_path(f)) {
      say.error("watch follows files; standard input cannot be followed (give the log files)");
      return kExitUsage;
    }
  }
  std::vector<OutputSpec> outputs;
  for (const std::string& path : o.outputs) {
    std::string error;
    std::optional<OutputFormat> format = format_for_path(path, &error);
    if (!format) {
      say.error(error);
      return kExitUsage;
    }
    outputs.push_back({path, *format});
  }
  if (o.alert_if_slower < 0 && !o.exec.empty()) {
    say.error("--exec runs on alerts: give --alert-if-slower PCT too");
    return kExitUsage;
  }

  // No output may be one of the logs (those there now; a log that appears
  // later under an output's name is refused when the output is written).
  if (LayoutResult now = discover_layout(request); now.layout) {
    std::vector<std::string> inputs = input_paths(now.layout->files);
    std::vector<std::string> written = o.outputs;
    if (!o.jsonl.empty() && o.jsonl != "-") written.push_back(o.jsonl);
    if (!o.report.empty()) written.push_back(o.report);
    for (const std::string& path : written) {
      if (std::string error = check_not_an_input(path, inputs); !error.empty()) {
        say.error(error);
        return kExitUsage;
      }
    }
  }

  WatchOptions wo;
  wo.threads = o.threads == 0 ? 1 : o.threads;
  wo.pp_degree = o.pp_degree;
  wo.align_clocks = o.align_clocks != "off";
  wo.keep_steps = o.keep_steps;
  wo.idle_timeout = std::chrono::milliseconds(static_cast<int64_t>(o.idle_timeout_s * 1000));
  wo.keep_all = !outputs.empty();
  Watcher watcher(wo);
  LogFollower follower(request);
  const std::string source = request.log_dir.empty() ? fmt::format("{}", fmt::join(request.files, " ")) : request.log_dir;

  const bool tty = isatty(STDOUT_FILENO) == 1;
  const bool dashboard_on = o.dashboard == "on" || (o.dashboard == "auto" && tty);
  std::FILE* jsonl = nullptr;
  bool jsonl_owned = false;
  if (!o.jsonl.empty() && o.jsonl != "-") {
    jsonl = std::fopen(o.jsonl.c_str(), "w");
    if (jsonl == nullptr) {
      say.error(fmt::format("{}: cannot be written: {}", o.jsonl, std::strerror(errno)));
      return kExitInput;
    }
    jsonl_owned = true;
  } else if (o.jsonl == "-" || !dashboard_on) {
    jsonl = stdout;
  }
  std::FILE* const jsonl_file = jsonl;

  install_stop_handlers();
  Dashboard dash(source);
  std::deque<int64_t> periods;  // the running median's last 200 steps
  std::set<std::string> stragglers_seen;
  bool alert_fired = false;
  size_t reported = 0, since_report = 0;
  std::vector<std::string> errors;
  bool ever_found = false;

  auto handle = [&](std::vector<WatchStep>& steps) {
    for (WatchStep& w : steps) {
      if (o.steps > 0 && reported >= o.steps) return;
      ++reported;
      ++since_report;
      if (jsonl) {
        std::string line = format_step_json(w.stats, watcher.origin_ns()) + "\n";
        std::fwrite(line.data(), 1, line.size(), jsonl);
      }
      std::vector<Alert> alerts;
      if (o.alert_if_slower >= 0 && periods.size() >= 3) {
        int64_t med = median_of(periods);
        if (static_cast<double>(w.period_ns) > static_cast<double>(med) * (1 + o.alert_if_slower / 100.0)) {
          Alert a{"slow_step", w.stats.run, w.stats.step, w.period_ns, med, w.slowest_rank, w.slowest_type, ""};
          a.message = fmt::format("run {} step {}: period {} is {:.1f}% above the running median {} (slowest rank {}, {})",
                                  w.stats.run, w.stats.step, ms(w.period_ns),
                                  (static_cast<double>(w.period_ns) / static_cast<double>(med) - 1) * 100, ms(med),
                                  w.slowest_rank, w.slowest_type);
          alerts.push_back(a);
        }
      }
      if (o.alert_if_slower >= 0) {
        for (const std::string& s : w.stragglers) {
          std::string key = s.substr(0, s.rfind(' '));
          if (!stragglers_seen.insert(key).second) continue;
          Alert a{"straggler", w.stats.run, w.stats.step, w.period_ns, 0, -1, "", ""};
          std::sscanf(s.c_str(), "rank %d", &a.rank);
          a.type = key.substr(key.find(' ', 5) + 1);
          a.message = fmt::format("run {} step {}: straggler {}", w.stats.run, w.stats.step, s);
          alerts.push_back(a);
        }
      }
      periods.push_back(w.period_ns);
      if (periods.size() > 200) periods.pop_front();
      dash.add(w, median_of(periods));
      for (const Alert& a : alerts) {
        alert_fired = true;
        say.warning("alert: " + a.message);
        dash.alert(a.message);
        if (!o.exec.empty()) run_alert_command(o.exec, a);
      }
    }
    if (jsonl && (std::fflush(jsonl) != 0 || std::ferror(jsonl))) {
      // A closed pipe or a full disk: nobody reads the steps any more.
      errors.push_back(fmt::format("{}: cannot be written", jsonl == stdout ? std::string("standard output") : o.jsonl));
      jsonl = nullptr;
      g_stop.store(true);
    }
    if (!o.report.empty() && since_report >= std::max<size_t>(o.report_every, 1)) {
      since_report = 0;
      if (std::string e = write_report(watcher, o.report, source, input_paths(follower.layout().files)); !e.empty()) {
        errors.push_back(e);
      }
    }
  };

  auto feed = [&](bool ending) {
    std::vector<LogFollower::Update> updates = follower.poll();
    WatchClock::time_point now = WatchClock::now();
    if (!follower.layout().files.empty()) ever_found = true;
    watcher.set_layout(follower.layout());
    bool news = false;
    for (const LogFollower::Update& u : updates) {
      const std::string& path = follower.files()[u.file]->path();
      watcher.add_lines(path, u.lines, now);
      news = news || !u.lines.empty();
    }
    if (ending) {
      for (const auto& f : follower.files()) watcher.add_unterminated(f->path(), f->partial());
    }
    return news;
  };

  WatchClock::time_point last_update = WatchClock::now();
  while (!g_stop.load() && (o.steps == 0 || reported < o.steps)) {
    bool news = feed(false);
    WatchClock::time_point now = WatchClock::now();
    if (news || now - last_update >= std::chrono::seconds(1)) {
      std::vector<WatchStep> steps = watcher.update(now, false);
      last_update = now;
      handle(steps);
      if (dashboard_on && (news || !steps.empty())) {
        std::string screen = dash.render(32);
        std::fwrite(screen.data(), 1, screen.size(), stdout);
        std::fflush(stdout);
      }
    }
    while (waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    if (g_stop.load() || (o.steps > 0 && reported >= o.steps)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(std::max(o.poll_ms, 1)));
  }

  // The end: what was written until now, every step complete.
  const bool stopped_by_count = o.steps > 0 && reported >= o.steps;
  if (!stopped_by_count) {
    feed(true);
    std::vector<WatchStep> steps = watcher.update(WatchClock::now(), true);
    handle(steps);
  }
  if (jsonl) std::fflush(jsonl);
  if (jsonl_owned) std::fclose(jsonl_file);
  if (dashboard_on) {
    std::string screen = dash.render(32);
    std::fwrite(screen.data(), 1, screen.size(), stdout);
    std::fflush(stdout);
  }
  if (!o.report.empty()) {
    if (std::string e = write_report(watcher, o.report, source, input_paths(follower.layout().files)); !e.empty()) {
      errors.push_back(e);
    }
  }
  std::string written;
  if (!outputs.empty()) {
    std::optional<WatchAnalysis> whole = watcher.whole_run();
    if (!whole) {
      errors.push_back("no job was read: the whole-run outputs were not written");
    } else {
      if (needs_stats(outputs)) whole->stats = compute_stats(whole->timeline, whole->plan, &whole->dependencies);
      WriteOptions wopt;
      wopt.dependencies = &whole->dependencies;
      wopt.threads = wo.threads;
      wopt.source = source;
      wopt.stats = whole->stats ? &*whole->stats : nullptr;
      for (const OutputSpec& spec : outputs) {
        size_t bytes = 0;
        std::string e = write_output(whole->timeline, spec, wopt, &bytes);
        if (!e.empty()) errors.push_back(e);
        else written += fmt::format(" -> {}", spec.path);
      }
    }
  }
  while (waitpid(-1, nullptr, 0) > 0) {
  }
  for (const std::string& e : errors) say.error(e);
  if (!ever_found) {
    say.error(follower.layout_error().empty() ? std::string("no log file was found") : follower.layout_error());
    return kExitInput;
  }
  // The same account as convert's: logs that could not be read and ranks
  // that are missing named, then written + rejected (by kind) = seen, and
  // the truncations and rotations seen.
  for (const std::string& note : follower.layout().notes) say.warning(note);
  uint64_t truncations = 0, rotations = 0;
  for (const auto& f : follower.files()) {
    if (!f->error().empty()) say.error(f->error());
    truncations += f->truncations();
    rotations += f->replacements();
  }
  uint64_t seen = watcher.jobs_seen(), rejected = watcher.rejected_seen();
  std::string account = fmt::format("{} profiler lines: {} jobs written, {} rejected", with_commas(seen),
                                    with_commas(seen - rejected), with_commas(rejected));
  std::string kinds;
  for (size_t k = 0; k < kIssueKindCount; ++k) {
    uint64_t n = watcher.rejected_of(static_cast<IssueKind>(k));
    if (n > 0) kinds += fmt::format("{}{} {}", kinds.empty() ? "" : ", ", with_commas(n), issue_info(static_cast<IssueKind>(k)).name);
  }
  if (!kinds.empty()) account += " (" + kinds + ")";
  if (truncations + rotations > 0) {
    account += fmt::format("; {} truncation{} and {} rotation{} seen", truncations, truncations == 1 ? "" : "s",
                           rotations, rotations == 1 ? "" : "s");
  }
  say.info(fmt::format("{} steps reported from {} files, {}{}{}", reported, follower.files().size(), account,
                       alert_fired ? "; an alert fired" : "", written));
  if (!errors.empty()) return kExitInput;
  return alert_fired ? kExitInput : kExitOk;
}

}  // namespace

void setup_watch(CLI::App& app, Runner& chosen) {
  auto o = std::make_shared<WatchCommandOptions>();
  CLI::App* sub = app.add_subcommand(
      "watch",
      "Follow a training run's growing logs and report every step as it completes: a live dashboard on a "
      "terminal, one JSON object per step otherwise.\n"
      "  pp-timeline watch --log_dir logs/ [--jsonl steps.jsonl] [--report live.html] [-o run.pftrace]");
  add_input_options(*sub, o->input);
  sub->add_option("--jsonl", o->jsonl,
                  "write one JSON object per completed step here ('-': standard output; the default when "
                  "standard output is not a terminal); the keys of `stats --json`'s steps");
  sub->add_option("--report", o->report, "rewrite this HTML page (the last steps; it reloads itself) every --report-every steps and at the end");
  sub->add_option("--report-every", o->report_every, "steps between two rewrites of --report (default 10)")
      ->check(CLI::Range(size_t{1}, size_t{1000000}));
  sub->add_option("-o,--output", o->outputs,
                  "when the watch ends, write the whole run here (.pftrace, .json, .svg, .html); repeatable");
  sub->add_option("--steps", o->steps, "stop after this many completed steps (0: until SIGINT or SIGTERM)");
  sub->add_option("--alert-if-slower", o->alert_if_slower,
                  "alert when a step's period is more than PCT % above the running median, or a rank "
                  "straggles; exit 1 at the end if an alert fired");
  sub->add_option("--exec", o->exec,
                  "run this shell command on each alert, with PPT_ALERT_KIND, _RUN, _STEP, _PERIOD_US, "
                  "_MEDIAN_US, _RANK, _TYPE and _MESSAGE in its environment");
  sub->add_option("--idle-timeout", o->idle_timeout_s,
                  "seconds after which a rank that wrote nothing has finished its step (default 10)")
      ->check(CLI::Range(0.0, 86400.0));
  sub->add_option("--keep-steps", o->keep_steps,
                  "reported steps kept in memory, for the page and as the next steps' context (default 20)")
      ->check(CLI::Range(size_t{2}, size_t{100000}));
  sub->add_option("--dashboard", o->dashboard, "auto (on a terminal), on or off")
      ->check(CLI::IsMember({"auto", "on", "off"}));
  sub->add_option("--poll-ms", o->poll_ms, "milliseconds between two looks at the logs")
      ->check(CLI::Range(1, 60000))
      ->group("");
  add_threads_option(*sub, o->threads);
  add_pp_degree_option(*sub, o->pp_degree);
  add_align_clocks_option(*sub, o->align_clocks);
  add_quiet_option(*sub, o->quiet);
  sub->footer("Exit status: 0 done; 1 an alert fired, no log was found, or an output could not be written;\n"
              "2 usage error; 3 internal error.");
  sub->callback([o, &chosen] { chosen = [o] { return run_watch(*o); }; });
}

}  // namespace ppt::cli
