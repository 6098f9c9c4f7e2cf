// pp-timeline batch: convert many CI artifacts at once (batch.h).
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "app/batch.h"
#include "cli/finite_range.h"
#include "commands.h"
#include "model/diagnostics.h"
#include "reporter.h"
#include "util/text.h"

namespace ppt::cli {
namespace {

struct BatchCommandOptions {
  std::vector<std::string> artifacts;
  std::string out_dir;
  RunOptions run;              // --threads, --pp-degree, --align-clocks, -q (no --strict, --timings)
  SelectionOptions selection;  // --run, --steps, --skip-warmup: as in stats and diff
  size_t max_jobs = PictureRequest{}.max_jobs;
  uint64_t max_extract_mb = ArchiveLimits{}.max_bytes >> 20;
  uint64_t max_entries = ArchiveLimits{}.max_entries;
  double max_ratio = ArchiveLimits{}.max_ratio;
  std::string outputs = "html,svg,pftrace,stats-json";
  std::string link_base;
  std::string artifact_name;
  std::string baseline;
  double fail_if_slower = -1;
  size_t max_depth = 8;
  bool keep_extracted = false;
  std::string progress = "auto";
};

std::string run_line(const BatchRun& r) {
  std::string name = printable_excerpt(r.name.empty() ? r.source : r.name, 120);
  if (r.status == BatchStatus::kOk) {
    std::string change;
    if (r.is_baseline) change = " (the baseline)";
    if (r.change) {
      change = fmt::format(", {} {} against the baseline ({})", r.change->metric,
                           format_percent(r.change->step_time_delta_pct, PercentSign::kAlways),
                           verdict_name(r.change->verdict));
    }
    // The step figure in the gate's metric, as the index files show it.
    return fmt::format("{}: ok, {} steps, step {} {:.3f} ms (mean), bubble {:.1f}%{}", name, r.steps, r.step_metric,
                       r.step_metric_us / 1000.0, r.bubble_ratio * 100.0, change);
  }
  return fmt::format("{}: {}: {}", name, batch_status_name(r.status), printable_excerpt(r.error, 300));
}

// The output directory must not be, nor hold, an input, nor be a log
// directory: a log file named as --out, an artifact inside it (its index
// files and run folders could land on the artifact), or --out naming one of
// the runs of an artifact (the batch would write into that run's logs and
// skip the run when it searches the artifact).
std::string check_out_dir(const std::string& out_dir, const std::vector<std::string>& artifacts) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path out = fs::weakly_canonical(out_dir, ec);
  if (ec) return "";
  auto within = [](const fs::path& inner, const fs::path& outer) {
    auto [end, _] = std::mismatch(outer.begin(), outer.end(), inner.begin(), inner.end());
    return end == outer.end();
  };
  for (const std::string& a : artifacts) {
    std::error_code aec;
    fs::path art = fs::weakly_canonical(a, aec);
    if (aec) continue;
    bool art_is_dir = fs::is_directory(art, aec);
    if (out == art) {
      return art_is_dir ? fmt::format("{}: refusing to write into an input (the artifact {})", out_dir, a)
                        : fmt::format("{}: refusing to write onto an input log", out_dir);
    }
    // --out names a file inside an artifact directory.
    if (art_is_dir && fs::is_regular_file(out, aec) && within(out, art)) {
      return fmt::format("{}: refusing to write onto an input log", out_dir);
    }
    // An artifact inside the output directory.
    if (within(art, out)) {
      return fmt::format("{}: refusing to write into a folder that holds the input {}", out_dir, a);
    }
  }
  // --out is itself a folder of logs (one run of an artifact, or any log
  // directory): its logs are inputs, and would be read as a run of their own.
  if (fs::is_directory(out, ec) && !find_log_dirs(out.string(), 0).empty()) {
    return fmt::format("{}: refusing to write into a log directory (it holds logs, which are inputs)", out_dir);
  }
  return "";
}

// In GitHub Actions, summary.md goes to the step summary, where a relative
// link leads nowhere and an artifact's files have no address of their own:
// the run's page (where its artifacts are listed) is named instead. "" elsewhere.
std::string actions_run_page() {
  auto env = [](const char* name) {
    const char* v = std::getenv(name);
    return std::string(v ? v : "");
  };
  if (env("GITHUB_ACTIONS") == "true" && !env("GITHUB_SERVER_URL").empty() && !env("GITHUB_REPOSITORY").empty() &&
      !env("GITHUB_RUN_ID").empty()) {
    return fmt::format("{}/{}/actions/runs/{}", env("GITHUB_SERVER_URL"), env("GITHUB_REPOSITORY"),
                       env("GITHUB_RUN_ID"));
  }
  return "";
}

// The batch's options as app/batch.h takes them; "" or the usage error.
std::string decide_batch(const BatchCommandOptions& o, BatchOptions* opt) {
  if (o.fail_if_slower >= 0 && o.baseline.empty())
    return "--fail-if-slower compares with a baseline: give --baseline DIR";
  std::vector<std::string> inputs = o.artifacts;
  if (!o.baseline.empty()) inputs.push_back(o.baseline);
  if (std::string error = check_out_dir(o.out_dir, inputs); !error.empty()) return error;
  if (std::string error = parse_batch_outputs(o.outputs, &opt->outputs); !error.empty()) return error;
  opt->baseline = o.baseline;
  opt->fail_if_slower_pct = o.fail_if_slower;
  opt->limits.max_ratio = o.max_ratio;
  opt->links.base = o.link_base;
  opt->links.artifact = o.artifact_name;
  opt->links.run_page = actions_run_page();
  opt->passes = driver_request({}, o.run);
  opt->out_dir = o.out_dir;
  opt->picture.max_jobs = o.max_jobs;
  opt->limits.max_bytes = o.max_extract_mb << 20;
  opt->limits.max_entries = o.max_entries;
  opt->max_depth = o.max_depth;
  opt->keep_extracted = o.keep_extracted;
  return parse_selection(o.selection, &opt->passes.selection);
}

// The progress: a bar on a terminal, a line per run otherwise, nothing
// under -q or --progress off. Returns whether it is the bar.
bool set_progress(const BatchCommandOptions& o, const Reporter& say, BatchOptions* opt) {
  bool tty = o.progress == "bar" || (o.progress == "auto" && isatty(fileno(stderr)));
  bool lines = !o.run.quiet && !tty && o.progress != "off";
  if (tty && !o.run.quiet) {
    opt->progress = [](const BatchProgress& p) {
      constexpr int kWidth = 30;
      int filled = p.total ? static_cast<int>(p.done * kWidth / p.total) : kWidth;
      std::string name = p.run ? printable_excerpt(p.run->name.empty() ? p.run->source : p.run->name, 40) : "";
      std::fprintf(stderr, "\r\x1b[K[%s%s] %zu/%zu %s", std::string(filled, '#').c_str(),
                   std::string(kWidth - filled, '.').c_str(), p.done, p.total, name.c_str());
      std::fflush(stderr);
    };
  } else if (lines) {
    opt->progress = [say](const BatchProgress& p) {
      if (p.run) say.info(fmt::format("[{}/{}] {}", p.done, p.total, run_line(*p.run)));
    };
  }
  return tty;
}

// The gate: each run slower than allowed, or that it passed.
void report_gate(const BatchCommandOptions& o, const Reporter& say, const BatchResult& result) {
  for (const BatchRun& r : result.runs) {
    if (r.change && r.change->gate_failed) {
      say.line(fmt::format("{}: {}: {} slower than the baseline (metric: {}), more than --fail-if-slower {:g}%",
                           say.prefix(), printable_excerpt(r.name, 120), format_percent(r.change->step_time_delta_pct),
                           r.change->metric, o.fail_if_slower));
    }
  }
  if (o.baseline.empty() || o.fail_if_slower < 0 || result.gate_failed()) return;
  size_t compared = 0;
  for (const BatchRun& r : result.runs) compared += r.change ? 1 : 0;
  say.line(
      fmt::format("{}: gate passed: {} run{} compared with the baseline, none more than --fail-if-slower {:g}% "
                  "slower{}",
                  say.prefix(), compared, compared == 1 ? "" : "s", o.fail_if_slower,
                  result.selection.empty() ? std::string() : " (" + result.selection + ")"));
}

int run_batch_command(const BatchCommandOptions& o) {
  Reporter say("batch", o.run.quiet);
  BatchOptions opt;
  if (std::string error = decide_batch(o, &opt); !error.empty()) {
    say.error(error);
    return kExitUsage;
  }
  const bool tty = set_progress(o, say, &opt);
  BatchResult result = run_batch(o.artifacts, opt);
  if (tty && !o.run.quiet) std::fprintf(stderr, "\r\x1b[K");
  if (!result.error.empty() && result.runs.empty()) {
    say.error(result.error);
    return kExitInput;
  }
  for (const std::string& w : result.search_warnings) say.warning(w);
  size_t ok = 0;
  for (const BatchRun& r : result.runs) {
    if (r.status == BatchStatus::kOk) {
      ++ok;
    } else if (tty || o.run.quiet) {
      // Failures were not printed as they happened.
      say.line(say.prefix() + ": " + run_line(r));
    }
  }
  if (!result.error.empty()) say.error(result.error);
  report_gate(o, say, result);
  say.line(fmt::format("{}: {} run{}: {} ok, {} failed -> {}/index.html", say.prefix(), result.runs.size(),
                       result.runs.size() == 1 ? "" : "s", ok, result.runs.size() - ok, o.out_dir));
  return result.any_failed() || result.gate_failed() ? kExitInput : kExitOk;
}

}  // namespace

void setup_batch(CLI::App& app, Runner& chosen) {
  auto o = std::make_shared<BatchCommandOptions>();
  CLI::App* sub = add_command(
      app, "batch",
      "Convert many runs at once, such as a CI job's log artifacts: each ARTIFACT is a log directory, a .zip, "
      ".tar, .tar.gz or .tar.zst of one, or a folder holding many runs (every directory below it with "
      "workerlog.<i> files is one). Writes per run the --outputs, and index.html, index.json and summary.md for "
      "the batch; with --baseline, each run's change against it.\n"
      "  pp-timeline batch artifacts/*.zip --out reports/\n"
      "  pp-timeline batch --baseline main/logs pr/logs --out reports/ --fail-if-slower 5",
      chosen, run_batch_command, o);
  sub->add_option("artifacts", o->artifacts, "log directories, .zip/.tar/.tar.gz/.tar.zst archives, or folders of runs")
      ->required();
  sub->add_option("--outputs", o->outputs,
                  "what each run gets, comma-separated: html (report.html), svg (timeline.svg), pftrace "
                  "(trace.pftrace), json (trace.json, the Chrome trace: large), stats-json (stats.json)")
      ->capture_default_str();
  sub->add_option("--baseline", o->baseline,
                  "a log directory or archive of one run: converted too, and every other run is compared with it "
                  "(the step period and bubble, as diff does)");
  sub->add_option("--fail-if-slower", o->fail_if_slower,
                  "exit 1 when a run is more than PCT percent slower than the baseline in diff's gate metric (the step "
                  "period: a step's start to the next one's)")
      ->check(finite_range(0.0, 1e6));
  sub->add_option("--link-base", o->link_base,
                  "links in summary.md are URL/<run>/report.html (where the output directory is published); "
                  "default: relative, or in GitHub Actions the run's page");
  sub->add_option("--artifact-name", o->artifact_name,
                  "the name the output directory is uploaded under, for summary.md in GitHub Actions");
  sub->add_option("--out", o->out_dir, "output directory (created)")->required();
  add_threads_option(*sub, o->run.threads);
  add_pp_degree_option(*sub, o->run.pp_degree);
  add_align_clocks_option(*sub, o->run.align_clocks);
  add_selection_options(*sub, o->selection);
  add_max_jobs_option(*sub, o->max_jobs);
  sub->add_option("--max-extract-mb", o->max_extract_mb,
                  "an archive whose content is larger (once decompressed) is refused")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 30));
  sub->add_option("--max-ratio", o->max_ratio,
                  "an archive that extracts to more than this many times its size (past 64 MiB) is refused")
      ->capture_default_str()
      ->check(finite_range(1.0, 1e9));
  sub->add_option("--max-entries", o->max_entries, "an archive with more entries is refused")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{1}, uint64_t{100'000'000}));
  sub->add_option("--max-depth", o->max_depth, "how deep to look for log directories inside a folder or archive")
      ->capture_default_str()
      ->check(CLI::Range(size_t{0}, size_t{64}));
  sub->add_flag("--keep-extracted", o->keep_extracted, "keep the extracted archives (OUT/.extract-*) for inspection");
  sub->add_option("--progress", o->progress, "auto: a bar on a terminal, a line per run otherwise; bar; lines; off")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "bar", "lines", "off"}));
  add_quiet_option(*sub, o->run.quiet);
}

}  // namespace ppt::cli
