// pp-timeline batch: convert many CI artifacts at once (batch.h).
#include <unistd.h>

#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "commands.h"
#include "app/batch.h"
#include "model/diagnostics.h"

namespace ppt::cli {
namespace {

struct BatchCommandOptions {
  std::vector<std::string> artifacts;
  std::string out_dir;
  unsigned threads = 0;
  std::string steps;
  size_t max_jobs = SvgOptions{}.max_jobs;
  uint64_t max_extract_mb = TarLimits{}.max_bytes >> 20;
  uint64_t max_entries = TarLimits{}.max_entries;
  size_t max_depth = 8;
  bool keep_extracted = false;
  std::string progress = "auto";
  bool quiet = false;
};

void err_line(const std::string& s) { std::fprintf(stderr, "%s\n", s.c_str()); }

std::string run_line(const BatchRun& r) {
  std::string name = printable_excerpt(r.name.empty() ? r.source : r.name, 120);
  if (r.status == BatchStatus::kOk) {
    return fmt::format("{}: ok, {} steps, step time {:.3f} ms, bubble {:.1f}%", name, r.steps, r.step_time_us / 1000.0,
                       r.bubble_ratio * 100.0);
  }
  return fmt::format("{}: {}: {}", name, batch_status_name(r.status), printable_excerpt(r.error, 300));
}

int run_batch_command(const BatchCommandOptions& o) {
  BatchOptions opt;
  opt.out_dir = o.out_dir;
  opt.threads = o.threads;
  opt.svg.max_jobs = o.max_jobs;
  opt.limits.max_bytes = o.max_extract_mb << 20;
  opt.limits.max_entries = o.max_entries;
  opt.max_depth = o.max_depth;
  opt.keep_extracted = o.keep_extracted;
  if (!o.steps.empty()) {
    std::string error;
    opt.svg.steps = parse_step_range(o.steps, &error);
    if (!opt.svg.steps) {
      err_line("pp-timeline batch: error: --steps " + error);
      return kExitUsage;
    }
  }
  bool tty = o.progress == "bar" || (o.progress == "auto" && isatty(fileno(stderr)));
  bool lines = !o.quiet && !tty && o.progress != "off";
  if (tty && !o.quiet) {
    opt.progress = [](const BatchProgress& p) {
      constexpr int kWidth = 30;
      int filled = p.total ? static_cast<int>(p.done * kWidth / p.total) : kWidth;
      std::string name = p.run ? printable_excerpt(p.run->name.empty() ? p.run->source : p.run->name, 40) : "";
      std::fprintf(stderr, "\r\x1b[K[%s%s] %zu/%zu %s", std::string(filled, '#').c_str(),
                   std::string(kWidth - filled, '.').c_str(), p.done, p.total, name.c_str());
      std::fflush(stderr);
    };
  } else if (lines) {
    opt.progress = [](const BatchProgress& p) {
      if (p.run) err_line(fmt::format("pp-timeline batch: [{}/{}] {}", p.done, p.total, run_line(*p.run)));
    };
  }
  BatchResult result = run_batch(o.artifacts, opt);
  if (tty && !o.quiet) std::fprintf(stderr, "\r\x1b[K");
  if (!result.error.empty() && result.runs.empty()) {
    err_line("pp-timeline batch: error: " + result.error);
    return kExitInput;
  }
  size_t ok = 0;
  for (const BatchRun& r : result.runs) {
    if (r.status == BatchStatus::kOk) {
      ++ok;
    } else if (tty || o.quiet) {
      // Failures were not printed as they happened.
      err_line("pp-timeline batch: " + run_line(r));
    }
  }
  if (!result.error.empty()) err_line("pp-timeline batch: error: " + result.error);
  err_line(fmt::format("pp-timeline batch: {} run{}: {} ok, {} failed -> {}/index.html", result.runs.size(),
                       result.runs.size() == 1 ? "" : "s", ok, result.runs.size() - ok, o.out_dir));
  return result.any_failed() ? kExitInput : kExitOk;
}

}  // namespace

void setup_batch(CLI::App& app, Runner& chosen) {
  auto o = std::make_shared<BatchCommandOptions>();
  CLI::App* sub = app.add_subcommand(
      "batch",
      "Convert many runs at once, such as a CI job's log artifacts: each ARTIFACT is a log directory, a .tar or "
      ".tar.gz of one, or a folder holding many runs (every directory below it with workerlog.<i> files is one). "
      "Writes per run a report, a picture and traces, and index.html, index.json and summary.md for the batch.\n"
      "  pp-timeline batch artifacts/*.tar.gz --out reports/");
  sub->add_option("artifacts", o->artifacts, "log directories, .tar/.tar.gz archives, or folders of runs")
      ->required();
  sub->add_option("--out", o->out_dir, "output directory (created)")->required();
  sub->add_option("--threads", o->threads, "runs converted in parallel (default: all cores)")
      ->check(CLI::Range(0u, 1024u));
  sub->add_option("--steps", o->steps, "steps to draw in the pictures and reports: A:B (A to B included), A:, :B or A");
  sub->add_option("--max-jobs", o->max_jobs, "job rectangles at most per picture")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1}, size_t{10'000'000}));
  sub->add_option("--max-extract-mb", o->max_extract_mb,
                  "an archive whose content is larger (once decompressed) is refused")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 30));
  sub->add_option("--max-entries", o->max_entries, "an archive with more entries is refused")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{1}, uint64_t{100'000'000}));
  sub->add_option("--max-depth", o->max_depth, "how deep to look for log directories inside a folder or archive")
      ->capture_default_str()
      ->check(CLI::Range(size_t{0}, size_t{64}));
  sub->add_flag("--keep-extracted", o->keep_extracted, "keep the extracted archives (OUT/.extract-*) for inspection");
  sub->add_option("--progress", o->progress,
                  "auto: a bar on a terminal, a line per run otherwise; bar; lines; off")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "bar", "lines", "off"}));
  sub->add_flag("-q,--quiet", o->quiet, "print only failures and the last line");
  sub->footer("Exit status: 0 every artifact converted; 1 one or more failed (each is listed, with its error, in\n"
              "index.json and summary.md; the others are converted all the same); 2 usage error.");
  sub->callback([o, &chosen] { chosen = [o] { return run_batch_command(*o); }; });
}

}  // namespace ppt::cli
