// pp-timeline watch: follows a run's growing logs and reports every step as
// it completes: a live dashboard on a terminal, one JSON object per step
// otherwise (or with --jsonl), a self-reloading HTML page, alerts, and the
// whole run's trace when the watch ends.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <thread>
#include <variant>

#include "app/driver.h"
#include "app/picture.h"
#include "app/watch.h"
#include "app/watch_alerts.h"
#include "cli/finite_range.h"
#include "commands.h"
#include "input/log_follower.h"
#include "input/log_layout.h"
#include "model/diagnostics.h"
#include "output/outputs.h"
#include "output/report/html_report.h"
#include "output/sink/output_file.h"
#include "output/text/stats_json.h"
#include "reporter.h"
#include "util/escape.h"
#include "util/text.h"

namespace ppt::cli {
namespace {

struct WatchCommandOptions {
  InputOptions input;
  RunOptions run = one_thread();  // --threads (default 1 here), --pp-degree, --align-clocks, --strict, -q
  std::string jsonl;
  std::string report;
  size_t report_every = 10;
  std::vector<std::string> outputs;
  size_t stop_after = 0;
  std::string steps;  // refused: --steps is the selection elsewhere
  double alert_if_slower = -1;
  std::string exec;
  double idle_timeout_s = 10;
  size_t keep_steps = 20;
  int poll_ms = 200;
  std::string dashboard = "auto";

  static RunOptions one_thread() {
    RunOptions r;
    r.threads = kWatchThreads;  // beside a training run: one core unless asked
    return r;
  }
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

std::string ms(double ns) { return fmt::format("{:.3f} ms", ns / 1e6); }
// A step's period; the run's last step has none (stats.h).
std::string period_text(int64_t ns) {
  return ns < 0 ? std::string("none (the run's last step)") : ms(static_cast<double>(ns));
}
std::string pct(double r) { return r < 0 ? std::string("?") : fmt::format("{:.1f}%", r * 100); }

// The live view: redrawn in place after each batch of completed steps.
class Dashboard {
 public:
  explicit Dashboard(std::string source) : source_(std::move(source)) {}

  void add(const WatchStep& w, double median_ns) {
    last_ = w;
    median_ns_ = median_ns;
    ++steps_;
    for (const RankInStep& r : w.ranks) {
      std::deque<double>& h = history_[r.rank];
      h.push_back(r.busy_ratio);
      if (h.size() > kWidth) h.pop_front();
    }
  }
  // What the watch waits for until its first step ("" once one came).
  void set_waiting(std::string text) { waiting_ = std::move(text); }
  void alert(const std::string& text) {
    alerts_.push_back(text);
    if (alerts_.size() > 3) alerts_.erase(alerts_.begin());
    ++alert_count_;
  }

  std::string render(size_t ranks_shown) const {
    std::string s = "\x1b[H\x1b[2J";
    // What came from the input (the source's name, types, schedule, alert
    // texts) is terminal text (util/escape.h): it cannot move the cursor.
    s += fmt::format("pp-timeline watch  {}  {} steps reported\n", terminal_text(source_), steps_);
    if (!last_) return s + (waiting_.empty() ? std::string("waiting for the first complete step") : waiting_) + "...\n";
    const WatchStep& w = *last_;
    // Runs counted from 1, as --run counts them.
    s += fmt::format("step {} (run {})  period {}  median {}  span {}\n", w.stats.step, w.stats.run + 1,
                     period_text(w.stats.period_ns), ms(median_ns_), ms(static_cast<double>(w.stats.time_ns())));
    s += fmt::format("bubble {} measured, {} ideal ({})\n", pct(w.stats.bubble_ratio), pct(w.ideal_bubble_ratio),
                     terminal_text(w.schedule));
    s += fmt::format("slowest rank {} ({})", w.slowest_rank, terminal_text(w.slowest_type));
    if (!w.stragglers.empty()) {
      std::vector<std::string> named;
      for (const Straggler& g : w.stragglers) named.push_back(terminal_text(format_straggler(g)));
      s += fmt::format("  stragglers: {}", fmt::join(named, ", "));
    }
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
    for (const std::string& a : alerts_) s += "  " + terminal_text(a) + "\n";
    return s;
  }

 private:
  std::string waiting_;
  static constexpr size_t kWidth = 60;
  std::string source_;
  std::optional<WatchStep> last_;
  double median_ns_ = 0;
  size_t steps_ = 0;
  std::map<int32_t, std::deque<double>> history_;
  std::vector<std::string> alerts_;
  size_t alert_count_ = 0;
};

std::string write_report(const Watcher& watcher, const std::string& path, const std::string& source,
                         const std::vector<std::string>& inputs) {
  std::optional<DriverResult> a = watcher.window();
  if (!a || !a->ok()) return "";
  OutputFile file;
  if (std::string error = open_output(file, path, inputs); !error.empty()) return error;
  ReportOptions r;
  r.title = "pp-timeline watch";
  r.source = source + " (the last steps, while the run trains)";
  r.stats = a->stats ? &*a->stats : nullptr;
  r.refresh_seconds = 5;
  PictureSelection picture = select_picture(*a->timeline, PictureRequest{});
  r.picture = &picture;
  write_html_report(*a->timeline, r, file);
  if (!file.commit()) return file.error();
  return "";
}

// The request's checks (driver.h, check_request) against the logs there now:
// an output that is one of them, a --pp-degree that does not divide their
// ranks. A log that appears later under an output's name is refused when the
// output is written; P is checked again as the layout grows (Watcher).
std::string check_now(const DriverRequest& request) {
  LayoutResult now = discover_layout(request.input);
  if (!now.layout) return "";
  return check_request(request, *now.layout);
}

// What a watch follows and writes, from its options.
struct WatchPlan {
  LayoutRequest input;
  std::vector<OutputSpec> outputs;  // -o, written at the end
  DriverRequest request;            // the driver's request, as every command builds it from the run options
};

// The watch's plan, or the usage error its options make.
std::variant<WatchPlan, std::string> plan_watch(const WatchCommandOptions& o) {
  if (!o.steps.empty()) {
    return "--steps selects steps in the other commands; to stop after N completed steps, give --stop-after N";
  }
  WatchPlan plan;
  DriverRequest& request = plan.request;
  std::vector<OutputSpec> none;  // -o is checked below, after the input
  auto no_outputs = [](const LayoutRequest&, std::vector<OutputSpec>*) { return std::string(); };
  if (std::string error = decide_run("watch", o.input, o.run, SelectionOptions{}, no_outputs, &request, &none);
      !error.empty()) {
    return error;
  }
  LayoutRequest& input = plan.input;
  input = request.input;
  for (const std::string& f : input.files) {
    if (is_stdin_path(f)) return "watch follows files; standard input cannot be followed (give the log files)";
  }
  for (const std::string& path : o.outputs) {
    std::string error;
    std::optional<OutputFormat> format = format_for_path(path, &error);
    if (!format) return error;
    plan.outputs.push_back({path, *format});
  }
  if (o.alert_if_slower < 0 && !o.exec.empty()) return "--exec runs on alerts: give --alert-if-slower PCT too";

  request.outputs = o.outputs;
  if (!o.jsonl.empty() && o.jsonl != "-") request.outputs.push_back(o.jsonl);
  if (!o.report.empty()) request.outputs.push_back(o.report);
  // -o, --jsonl and --report name three files: one named twice would lose one.
  std::vector<OutputSpec> named;
  for (const std::string& path : request.outputs) {
    if (std::string error = check_output_path(path, named); !error.empty()) return error;
    named.push_back({path, OutputFormat::kChromeJson});
  }
  if (std::string error = check_now(request); !error.empty()) return error;
  return plan;
}

// The account at the end, as convert's: written + rejected (by kind) = seen,
// and the truncations and rotations seen.
std::string watch_account(const Watcher& watcher, const LogFollower& follower) {
  uint64_t truncations = 0, rotations = 0;
  for (const auto& f : follower.files()) {
    truncations += f->truncations();
    rotations += f->replacements();
  }
  uint64_t seen = watcher.jobs_seen(), rejected = watcher.rejected_seen();
  std::string account = fmt::format("{} profiler lines: {} jobs written, {} rejected", with_commas(seen),
                                    with_commas(seen - rejected), with_commas(rejected));
  std::string kinds;
  for (size_t k = 0; k < kIssueKindCount; ++k) {
    uint64_t n = watcher.rejected_of(static_cast<IssueKind>(k));
    if (n > 0)
      kinds +=
          fmt::format("{}{} {}", kinds.empty() ? "" : ", ", with_commas(n), issue_info(static_cast<IssueKind>(k)).name);
  }
  if (!kinds.empty()) account += " (" + kinds + ")";
  if (truncations + rotations > 0) {
    account += fmt::format("; {} truncation{} and {} rotation{} seen", truncations, truncations == 1 ? "" : "s",
                           rotations, rotations == 1 ? "" : "s");
  }
  return account;
}

// The -o outputs of the whole run, at the end: each path written is added to
// `written`, each failure to `errors`.
void write_whole_run(const Watcher& watcher, const std::vector<OutputSpec>& outputs, const std::string& source,
                     std::vector<std::string>& written, std::vector<std::string>& errors) {
  std::optional<DriverResult> whole = watcher.whole_run(needs_stats(outputs));
  if (!whole || !whole->ok()) {
    errors.push_back("no job was read: the whole-run outputs were not written; " PPT_PROFILER_ON_HINT);
    return;
  }
  WriteOptions wopt;
  wopt.source = source;
  std::vector<WrittenOutput> results = write_outputs(*whole, outputs, wopt);
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!results[i].error.empty())
      errors.push_back(results[i].error);
    else
      written.push_back(outputs[i].path);
  }
}

// What the watch waits for before its first step, said at once: the folder
// to be created, logs to appear in it, job lines, the first complete step.
std::string waiting_for(const LayoutRequest& input, const LogFollower& follower, const Watcher& watcher,
                        const std::string& source) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!input.log_dir.empty() && !fs::exists(input.log_dir, ec)) {
    return fmt::format("waiting for {} to be created (the --log_dir of the training run)", terminal_text(source));
  }
  size_t files = follower.layout().files.size();
  if (files == 0) {
    if (input.log_dir.empty()) return fmt::format("waiting for {} to be created", terminal_text(source));
    std::string why = follower.layout_error();
    return fmt::format("waiting for workerlog.<i> files in {}{}", terminal_text(source),
                       why.empty() ? std::string() : " (" + terminal_text(why) + ")");
  }
  if (watcher.jobs_seen() == 0) {
    return fmt::format("waiting for job lines: {} followed, no 'Profiler Info: Job' line yet",
                       counted(files, "log file"));
  }
  return fmt::format("waiting for the first complete step: {}, {} read", counted(files, "log file"),
                     counted(watcher.jobs_seen(), "job"));
}

// One watch from its plan to its end: the logs followed, each completed step
// reported (the dashboard, the step lines, the page, the alerts), then the
// outputs and the account. run_watch() below calls its steps in order.
class WatchSession {
 public:
  WatchSession(const WatchCommandOptions& o, const Reporter& say, const WatchPlan& plan)
      : o_(o),
        say_(say),
        input_(plan.input),
        outputs_(plan.outputs),
        watcher_(watch_options(o, plan)),
        follower_(plan.input),
        source_(input_.log_dir.empty() ? fmt::format("{}", fmt::join(input_.files, " ")) : input_.log_dir),
        dashboard_on_(o.dashboard == "on" || (o.dashboard == "auto" && isatty(STDOUT_FILENO) == 1)),
        dash_(source_),
        alerts_(o.alert_if_slower, o.exec) {}

  // --jsonl's file opened, or standard output chosen; 0 or the exit status.
  int open_jsonl() {
    if (!o_.jsonl.empty() && o_.jsonl != "-") {
      jsonl_ = std::fopen(o_.jsonl.c_str(), "w");
      if (jsonl_ == nullptr) {
        say_.error(fmt::format("{}: cannot be written: {}", o_.jsonl, std::strerror(errno)));
        return kExitInput;
      }
      jsonl_owned_ = true;
    } else if (o_.jsonl == "-" || !dashboard_on_) {
      jsonl_ = stdout;
    }
    jsonl_file_ = jsonl_;
    return kExitOk;
  }

  // Until a stop signal, --stop-after or a failure: each poll's lines fed,
  // each completed step reported. False on a usage error (said).
  bool follow() {
    WatchClock::time_point last_update = WatchClock::now();
    while (!done()) {
      bool news = feed(false);
      if (usage_error_.empty()) say_waiting();
      WatchClock::time_point now = WatchClock::now();
      if (usage_error_.empty() && (news || now - last_update >= std::chrono::seconds(1))) {
        std::vector<WatchStep> steps = watcher_.update(now, false);
        last_update = now;
        handle(steps);
        if (dashboard_on_ && (news || !steps.empty())) draw();
      }
      alerts_.reap(false);
      if (done()) break;
      // A burst is read a budget at a time (log_follower.h), each part through
      // an update, so the window is cut as its steps are reported: no sleep
      // while a log holds more.
      if (!follower_.more()) std::this_thread::sleep_for(std::chrono::milliseconds(std::max(o_.poll_ms, 1)));
    }
    if (usage_error_.empty()) return true;
    say_.error(usage_error_);
    return false;
  }

  // The end: what was written until now, every step complete.
  void drain() {
    if (stopped_by_count() || watcher_.failure() != DriverFailure::kNone) return;
    // What the logs held when the end came, a budget at a time; a writer
    // that keeps appending cannot hold the end off (what it adds after that
    // is not read, as convert does not read a file past its size at open).
    const uint64_t until = follower_.bytes_read() + follower_.waiting_bytes();
    while (follower_.more() && follower_.bytes_read() < until && watcher_.failure() == DriverFailure::kNone &&
           !stopped_by_count()) {
      feed(false);
      std::vector<WatchStep> steps = watcher_.update(WatchClock::now(), false);
      handle(steps);
    }
    feed(true);
    std::vector<WatchStep> steps = watcher_.update(WatchClock::now(), true);
    handle(steps);
  }

  // The step lines closed, the page and -o written, the account said; the
  // exit status.
  int finish() {
    close_jsonl();
    if (dashboard_on_) draw();
    if (watcher_.failure() == DriverFailure::kStrict) {
      errors_.push_back("input problems found and --strict given; the watch stopped");
    }
    std::vector<std::string> written;
    if (jsonl_owned_ && jsonl_ && reported_ > 0) written.push_back(o_.jsonl);
    if (!o_.report.empty() && watcher_.failure() == DriverFailure::kNone) rewrite_report();
    if (report_written_) written.push_back(o_.report);
    if (!outputs_.empty() && watcher_.failure() == DriverFailure::kNone) {
      write_whole_run(watcher_, outputs_, source_, written, errors_);
    }
    alerts_.reap(true);
    for (const std::string& e : errors_) say_.error(e);
    if (!ever_found_) {
      say_.error(follower_.layout_error().empty() ? std::string("no log file was found") : follower_.layout_error());
      return kExitInput;
    }
    say_account(written);
    if (!errors_.empty()) return kExitInput;
    return alert_fired_ ? kExitInput : kExitOk;
  }

 private:
  static WatchOptions watch_options(const WatchCommandOptions& o, const WatchPlan& plan) {
    WatchOptions wo;
    wo.passes = plan.request;
    wo.keep_steps = o.keep_steps;
    wo.idle_timeout = std::chrono::milliseconds(static_cast<int64_t>(o.idle_timeout_s * 1000));
    wo.keep_all = !plan.outputs.empty();
    return wo;
  }

  bool stopped_by_count() const { return o_.stop_after > 0 && reported_ >= o_.stop_after; }
  bool done() const { return g_stop.load() || stopped_by_count() || watcher_.failure() != DriverFailure::kNone; }

  void rewrite_report() {
    std::string e = write_report(watcher_, o_.report, source_, input_paths(follower_.layout().files));
    if (!e.empty()) {
      errors_.push_back(e);
    } else {
      report_written_ = true;
    }
  }

  // Each completed step: its line, the alerts it raised, the dashboard; the
  // page every --report-every steps.
  void handle(std::vector<WatchStep>& steps) {
    for (WatchStep& w : steps) {
      if (stopped_by_count()) break;  // the flush below still runs
      ++reported_;
      ++since_report_;
      if (jsonl_) {
        std::string line = format_step_json(w.stats, watcher_.origin_ns()) + "\n";
        std::fwrite(line.data(), 1, line.size(), jsonl_);
      }
      std::vector<Alert> raised = alerts_.observe(w);
      dash_.add(w, alerts_.median_ns());
      for (const Alert& a : raised) {
        alert_fired_ = true;
        say_.warning("alert: " + a.message);
        dash_.alert(a.message);
        if (std::string e = alerts_.run_command(a); !e.empty()) say_.warning(e);
      }
    }
    if (jsonl_ && (std::fflush(jsonl_) != 0 || std::ferror(jsonl_))) {
      // A closed pipe or a full disk: nobody reads the steps any more.
      errors_.push_back(
          fmt::format("{}: cannot be written", jsonl_ == stdout ? std::string("standard output") : o_.jsonl));
      jsonl_ = nullptr;
      g_stop.store(true);
    }
    if (!o_.report.empty() && since_report_ >= std::max<size_t>(o_.report_every, 1)) {
      since_report_ = 0;
      rewrite_report();
    }
  }

  // A line over 1 MB, skipped by the follower in constant memory: a job line
  // among them is counted rejected (line_too_long) and named, as convert does.
  void skipped_line(const std::string& path, const FileFollower::LongLine& l) {
    watcher_.add_skipped_line(l.has_marker);
    if (!l.has_marker) return;
    say_.warning(fmt::format("{}: a profiler line longer than {} MB skipped{}: {}", path, kMaxLineBytes >> 20,
                             l.terminated ? "" : " (the file ends inside it)", printable_excerpt(l.head)));
  }

  // One poll of the logs into the watcher; whether any line came. `ending`:
  // each log's last line counts though it has no newline.
  bool feed(bool ending) {
    std::vector<LogFollower::Update> updates = follower_.poll();
    WatchClock::time_point now = WatchClock::now();
    if (!follower_.layout().files.empty()) ever_found_ = true;
    if (std::string e = watcher_.set_layout(follower_.layout()); !e.empty()) {
      usage_error_ = e;
      g_stop.store(true);
      return false;
    }
    bool news = false;
    for (const LogFollower::Update& u : updates) {
      const std::string& path = follower_.files()[u.file]->path();
      watcher_.add_lines(path, u.lines, now);
      for (const FileFollower::LongLine& l : u.long_lines) skipped_line(path, l);
      news = news || !u.lines.empty();
    }
    // A log, or the whole log directory, gone (or back): said as it happens.
    for (const std::string& n : follower_.take_notices()) say_.warning(n);
    if (ending) {
      for (const auto& f : follower_.files()) {
        if (f->more()) continue;  // it grew past what the end reads: its last line is not the file's
        if (std::optional<FileFollower::LongLine> l = f->partial_too_long())
          skipped_line(f->path(), *l);
        else
          watcher_.add_unterminated(f->path(), f->partial());
      }
    }
    return news;
  }

  void draw() {
    std::string screen = dash_.render(32);
    std::fwrite(screen.data(), 1, screen.size(), stdout);
    std::fflush(stdout);
  }

  // Until the first step, what the watch waits for, said when it changes:
  // on the dashboard, or (without one) as a note while no log is found.
  void say_waiting() {
    std::string now_waiting = reported_ > 0 ? std::string() : waiting_for(input_, follower_, watcher_, source_);
    if (now_waiting == waiting_) return;
    waiting_ = now_waiting;
    if (dashboard_on_) {
      dash_.set_waiting(waiting_);
      draw();
    } else if (!waiting_.empty() && !ever_found_) {
      say_.note(waiting_);
    }
  }

  // The last lines are written here: a full disk or a closed pipe found by
  // this flush (or the close) is an error like one found between steps.
  void close_jsonl() {
    const std::string jsonl_name = jsonl_file_ == stdout ? std::string("standard output") : o_.jsonl;
    if (jsonl_ && (std::fflush(jsonl_) != 0 || std::ferror(jsonl_))) {
      errors_.push_back(fmt::format("{}: cannot be written", jsonl_name));
      jsonl_ = nullptr;
    }
    if (jsonl_owned_ && std::fclose(jsonl_file_) != 0 && jsonl_) {
      errors_.push_back(fmt::format("{}: cannot be written: {}", jsonl_name, std::strerror(errno)));
      jsonl_ = nullptr;
    }
  }

  // The same account as convert's: logs that could not be read and ranks
  // that are missing named, then the counts.
  void say_account(const std::vector<std::string>& written) {
    for (const std::string& note : follower_.layout().notes) say_.warning(note);
    for (const auto& f : follower_.files()) {
      if (!f->error().empty()) say_.error(f->error());
    }
    std::string account = watch_account(watcher_, follower_);
    std::string arrows;
    for (const std::string& path : written) arrows += " -> " + path;
    say_.info(fmt::format("{} reported from {}, {}{}{}", counted(reported_, "step"),
                          counted(follower_.files().size(), "file"), account, alert_fired_ ? "; an alert fired" : "",
                          arrows));
  }

  const WatchCommandOptions& o_;
  const Reporter& say_;
  const LayoutRequest& input_;
  const std::vector<OutputSpec>& outputs_;
  Watcher watcher_;
  LogFollower follower_;
  const std::string source_;
  const bool dashboard_on_;
  Dashboard dash_;
  WatchAlerts alerts_;
  std::FILE* jsonl_ = nullptr;       // where the step lines go; null once it failed
  std::FILE* jsonl_file_ = nullptr;  // the same, kept to close it
  bool jsonl_owned_ = false;
  bool alert_fired_ = false;
  size_t reported_ = 0, since_report_ = 0;
  std::vector<std::string> errors_;
  std::string usage_error_;
  bool ever_found_ = false;
  bool report_written_ = false;
  std::string waiting_;
};

int run_watch(const WatchCommandOptions& o) {
  Reporter say("watch", o.run.quiet);
  std::variant<WatchPlan, std::string> planned = plan_watch(o);
  if (const std::string* error = std::get_if<std::string>(&planned)) {
    say.error(*error);
    return kExitUsage;
  }
  WatchSession session(o, say, std::get<WatchPlan>(planned));
  if (int code = session.open_jsonl(); code != kExitOk) return code;
  install_stop_handlers();
  if (!session.follow()) return kExitUsage;
  session.drain();
  return session.finish();
}

}  // namespace

void setup_watch(CLI::App& app, Runner& chosen) {
  auto o = std::make_shared<WatchCommandOptions>();
  CLI::App* sub =
      add_command(app, "watch",
                  "Follow a training run's growing logs and report every step as it completes: a live dashboard on a "
                  "terminal, one JSON object per step otherwise.\n"
                  "  pp-timeline watch --log_dir logs/ [--jsonl steps.jsonl] [--report live.html] [-o run.pftrace]",
                  chosen, run_watch, o);
  add_input_options(*sub, o->input);
  sub->add_option("--jsonl", o->jsonl,
                  "write one JSON object per completed step here ('-': standard output; the default when "
                  "standard output is not a terminal); the keys of `stats --json`'s steps");
  sub->add_option(
      "--report", o->report,
      "rewrite this HTML page (the last steps; it reloads itself) every --report-every steps and at the end");
  sub->add_option("--report-every", o->report_every, "steps between two rewrites of --report (default 10)")
      ->check(CLI::Range(size_t{1}, size_t{1000000}));
  sub->add_option("-o,--output", o->outputs,
                  "when the watch ends, write the whole run here (.pftrace, .json, .svg, .html); repeatable");
  sub->add_option("--stop-after", o->stop_after, "stop after this many completed steps (0: until SIGINT or SIGTERM)");
  // --steps is the other commands' selection; here it is refused with a
  // message that names --stop-after (hidden from the help).
  sub->add_option("--steps", o->steps)->group("");
  sub->add_option("--alert-if-slower", o->alert_if_slower,
                  "alert when a step's period is more than PCT % above the running median, or a rank "
                  "straggles; exit 1 at the end if an alert fired")
      ->check(finite_range(0.0, 1e6));
  sub->add_option("--exec", o->exec,
                  "run this shell command on each alert, with PPT_ALERT_KIND, _RUN, _STEP, _PERIOD_US, "
                  "_MEDIAN_US, _RANK, _TYPE and _MESSAGE in its environment");
  sub->add_option("--idle-timeout", o->idle_timeout_s,
                  "seconds after which a rank that wrote nothing has finished its step (default 10)")
      ->check(finite_range(0.0, 86400.0));
  sub->add_option("--keep-steps", o->keep_steps,
                  "reported steps kept in memory, for the page and as the next steps' context (default 20)")
      ->check(CLI::Range(size_t{2}, size_t{100000}));
  sub->add_option("--dashboard", o->dashboard, "auto (on a terminal), on or off")
      ->check(CLI::IsMember({"auto", "on", "off"}));
  sub->add_option("--poll-ms", o->poll_ms, "milliseconds between two looks at the logs")
      ->check(CLI::Range(1, 60000))
      ->group("");
  add_threads_option(*sub, o->run.threads);
  sub->get_option("--threads")
      ->description(
          "threads for the passes on each update (default 1, so that the watch takes one core beside the "
          "training; 0: all cores)");
  add_pp_degree_option(*sub, o->run.pp_degree);
  add_align_clocks_option(*sub, o->run.align_clocks);
  add_strict_option(*sub, o->run.strict);
  add_quiet_option(*sub, o->run.quiet);
}

}  // namespace ppt::cli
