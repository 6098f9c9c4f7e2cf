#include "app/batch.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <tuple>

#include "analysis/diff.h"
#include "app/driver.h"
#include "input/dygraph_profile.h"
#include "input/log_layout.h"
#include "model/diagnostics.h"
#include "output/outputs.h"
#include "output/report/html_report.h"
#include "output/sink/output_file.h"
#include "output/sink/signal_cleanup.h"
#include "output/text/stats_writers.h"
#include "output/text/summary.h"
#include "util/escape.h"
#include "util/parallel.h"
#include "util/text.h"

namespace ppt {
namespace fs = std::filesystem;

std::string parse_batch_outputs(std::string_view list, BatchOutputs* out) {
  BatchOutputs o{false, false, false, false, false};
  size_t i = 0;
  while (i <= list.size()) {
    size_t j = std::min(list.find(',', i), list.size());
    std::string_view word = list.substr(i, j - i);
    if (word == "html")
      o.report = true;
    else if (word == "svg")
      o.svg = true;
    else if (word == "pftrace")
      o.perfetto_trace = true;
    else if (word == "json")
      o.chrome_json = true;
    else if (word == "stats-json")
      o.stats_json = true;
    else
      return fmt::format("--outputs: '{}' is none of html, svg, pftrace, json, stats-json",
                         printable_excerpt(word, 40));
    i = j + 1;
  }
  *out = o;
  return "";
}

std::string safe_run_name(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
    char x = ok ? static_cast<char>(c) : '_';
    if (x == '_' && !out.empty() && out.back() == '_') continue;  // one '_' per run of odd bytes
    out.push_back(x);
  }
  while (!out.empty() && (out.back() == '_' || out.back() == '.')) out.pop_back();
  size_t lead = 0;
  while (lead < out.size() && (out[lead] == '.' || out[lead] == '_')) ++lead;  // no hidden folders
  out.erase(0, lead);
  if (out.size() > 96) out.resize(96);
  if (out.empty()) out = "run";
  return out;
}

std::string run_name(std::string_view stem, std::string_view inside) {
  std::string name(stem);
  for (const fs::path& part : fs::path(std::string(inside)).lexically_normal()) {
    std::string p = part.string();
    if (p.empty() || p == "." || p == "/") continue;
    // An archive usually holds its own folder (main.zip: main/log): said
    // once, main.zip:main/log is named as the folder main/log is.
    if (name == p || name.ends_with("-" + p)) continue;
    name += (name.empty() ? "" : "-") + p;
  }
  return name;
}

// ---------------------------------------------------------------------------
// The batch

namespace {

// "a, b and 3 more": the first few of a list, for a message.
std::string first_few(const std::vector<std::string>& items, size_t shown = 3) {
  std::string text;
  for (size_t i = 0; i < items.size() && i < shown; ++i) {
    text += fmt::format("{}{}", i == 0 ? "" : ", ", items[i]);
  }
  if (items.size() > shown) text += fmt::format(" and {} more", items.size() - shown);
  return text;
}

// The parts of an artifact's path, last first, the archive extension taken
// off the file name: "ci1/logs.tar.gz" -> {"logs", "ci1", <the folders above>}.
std::vector<std::string> artifact_parts(const std::string& path) {
  // As given (a link keeps its own name), made absolute so that "." and ".."
  // have names.
  std::error_code ec;
  fs::path p = fs::absolute(path, ec).lexically_normal();
  if (ec) p = fs::path(path).lexically_normal();
  std::vector<std::string> parts;
  for (const fs::path& part : p) {
    std::string s = part.string();
    if (!s.empty() && s != "/" && s != ".") parts.push_back(s);
  }
  std::reverse(parts.begin(), parts.end());
  if (parts.empty()) parts.push_back("run");
  for (std::string_view ext : {".tar.gz", ".tgz", ".tar.zst", ".tzst", ".tar", ".zip"}) {
    if (parts[0].ends_with(ext) && parts[0].size() > ext.size()) {
      parts[0].resize(parts[0].size() - ext.size());
      break;
    }
  }
  return parts;
}

// The name each artifact's runs start with: the last part of its path, or as
// many of the last parts as tell it from the others ("ci1/logs", "ci2/logs"
// -> "ci1-logs", "ci2-logs"). The same path twice stays the same name here
// (made unique with -2 later).
std::vector<std::string> artifact_stems(const std::vector<std::string>& paths) {
  std::vector<std::vector<std::string>> parts;
  for (const std::string& p : paths) parts.push_back(artifact_parts(p));
  std::vector<size_t> used(paths.size(), 1);
  auto stem = [&](size_t i) {
    std::string s;
    for (size_t k = std::min(used[i], parts[i].size()); k-- > 0;) s += (s.empty() ? "" : "-") + parts[i][k];
    return s;
  };
  for (bool changed = true; changed;) {
    changed = false;
    std::map<std::string, std::vector<size_t>> by_stem;
    for (size_t i = 0; i < paths.size(); ++i) by_stem[stem(i)].push_back(i);
    for (auto& [name, group] : by_stem) {
      if (group.size() < 2) continue;
      bool all_same = std::all_of(group.begin(), group.end(), [&](size_t g) { return parts[g] == parts[group[0]]; });
      if (all_same) continue;
      for (size_t i : group) {
        if (used[i] < parts[i].size()) {
          ++used[i];
          changed = true;
        }
      }
    }
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < paths.size(); ++i) out.push_back(stem(i));
  return out;
}

struct Artifact {
  std::string path;
  std::string stem;
  std::string root;               // where its logs are looked for
  std::string extract_dir;        // "" when nothing was extracted
  int cleanup_slot = -1;          // extract_dir on the signal handler's list
  std::vector<std::string> dirs;  // log directories below root
  BatchStatus status = BatchStatus::kOk;
  std::string error;
  std::vector<std::string> warnings;
  std::vector<std::string> search_warnings;  // what the search passed over (also in `warnings`)
  std::atomic<size_t> remaining{0};          // runs still being converted (for the early clean-up)
};

bool make_extraction_dir(Artifact& a, const BatchOptions& opt) {
  static constexpr char kChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  thread_local std::mt19937_64 random{std::random_device{}() ^ static_cast<uint64_t>(::getpid())};
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string name = ".extract-";
    for (int i = 0; i < 6; ++i) name += kChars[random() % (sizeof kChars - 1)];
    std::string path = (fs::path(opt.out_dir) / name).string();
    struct stat st;
    if (::lstat(path.c_str(), &st) == 0) continue;  // never a name already there on the list
    int slot = opt.keep_extracted ? -1 : register_signal_cleanup_dir(path);
    if (::mkdir(path.c_str(), 0700) == 0) {
      a.extract_dir = path;
      a.cleanup_slot = slot;
      int marker =
          ::open((fs::path(path) / kExtractMarker).c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (marker >= 0) ::close(marker);
      return true;
    }
    int e = errno;
    unregister_signal_cleanup_dir(slot);
    if (e != EEXIST) {
      errno = e;
      return false;
    }
  }
  errno = EEXIST;
  return false;
}

// The folder to search: the artifact's, or the archive extracted; false
// with the status and error set when there is none.
bool open_artifact(Artifact& a, const BatchOptions& opt) {
  std::error_code ec;
  fs::file_status st = fs::status(a.path, ec);
  if (ec || !fs::exists(st)) {
    a.status = BatchStatus::kBadArtifact;
    a.error = fmt::format("{}: no such file or directory", a.path);
    return false;
  }
  if (fs::is_directory(st)) {
    a.root = a.path;
  } else if (fs::is_regular_file(st) && (looks_like_archive_name(a.path) || looks_like_archive_data(a.path))) {
    // The folder is on the signal handler's list before it exists (a name
    // of our own, then mkdir, which fails on a name taken), so a signal at
    // any moment leaves none behind; and it is marked as batch's own for the
    // next batch, should this one be killed outright.
    if (!make_extraction_dir(a, opt)) {
      a.status = BatchStatus::kOutputError;
      a.error = fmt::format("{}: cannot make a directory to extract into: {}", opt.out_dir, std::strerror(errno));
      return false;
    }
    ArchiveResult t = extract_archive(a.path, a.extract_dir, opt.limits);
    for (const std::string& s : t.skipped) a.warnings.push_back(s);
    if (!t.ok) {
      a.status = BatchStatus::kBadArtifact;
      a.error = t.error;
      return false;
    }
    a.root = a.extract_dir;
  } else {
    a.status = BatchStatus::kBadArtifact;
    a.error = fmt::format("{}: neither a directory nor an archive (.zip, .tar, .tar.gz, .tar.zst)", a.path);
    return false;
  }
  return true;
}

// The runs below the artifact's folder, what the search could not look
// into (warnings), and why none was found, if none was.
void search_artifact(Artifact& a, const BatchOptions& opt, const std::set<fs::path>& skip) {
  SearchNotes notes;
  a.dirs = find_log_dirs_skipping(a.root, opt.max_depth, skip, &notes);
  const std::string& unlisted = notes.unlisted;
  const std::string inside = a.extract_dir.empty() ? a.path : a.path + ":";
  auto within = [&](const std::string& rel) { return a.extract_dir.empty() ? a.path + "/" + rel : inside + rel; };
  if (!notes.too_deep.empty()) {
    std::vector<std::string> named;
    for (const std::string& d : notes.too_deep) named.push_back(within(d));
    a.search_warnings.push_back(
        fmt::format("{}: not searched below --max-depth {}: the sub-folders of {}; give --max-depth {} "
                    "to look deeper",
                    a.path, opt.max_depth, first_few(named), opt.max_depth * 2));
  }
  if (!notes.archives.empty()) {
    std::vector<std::string> named;
    for (const std::string& r : notes.archives) named.push_back(within(r));
    a.search_warnings.push_back(fmt::format(
        "{} holds {} {} that batch does not open inside an artifact: {}; extract {}, or "
        "give {} to batch",
        a.path, notes.archives.size(), notes.archives.size() == 1 ? "archive" : "archives", first_few(named),
        notes.archives.size() == 1 ? "it" : "them", notes.archives.size() == 1 ? "it" : "each"));
  }
  if (!unlisted.empty()) {
    // The search is incomplete: what it found may be one machine of a run
    // taken for a run of its own.
    a.dirs.clear();
    a.status = BatchStatus::kBadArtifact;
    a.error = fmt::format("{}: cannot list the folder (raise the limit on open files, ulimit -n)", unlisted);
  } else if (a.dirs.empty()) {
    a.status = BatchStatus::kNoLogs;
    a.error = fmt::format("{}: no workerlog.<i> files (nor machine folders of them) found{}", a.path,
                          a.extract_dir.empty() ? " below it" : " in the archive");
    // A folder of logs under other names (the shim's shim.<rank>.log, a
    // trainer's own): the layout's message names them and the command line
    // that reads them (a folder only: an archive's entries have no path to
    // name on a command line).
    if (a.extract_dir.empty()) {
      LayoutRequest top;
      top.log_dir = a.root;
      LayoutResult layout = discover_layout(top);
      if (layout.error.find("other log file") != std::string::npos) a.error = layout.error;
    }
    if (!notes.archives.empty()) a.error += fmt::format("; it holds an archive: {}", within(notes.archives.front()));
    if (!notes.too_deep.empty())
      a.error += fmt::format("; folders below --max-depth {} were not searched", opt.max_depth);
  }
  for (const std::string& w : a.search_warnings) a.warnings.push_back(w);
}

void resolve(Artifact& a, const BatchOptions& opt, const std::set<fs::path>& skip) {
  if (open_artifact(a, opt)) search_artifact(a, opt, skip);
}

// Removes an artifact's extraction folder (and takes it off the signal
// handler's list).
void remove_extraction(Artifact& a, const BatchOptions& opt) {
  if (opt.keep_extracted || a.extract_dir.empty()) return;
  std::error_code ec;
  fs::remove_all(a.extract_dir, ec);
  unregister_signal_cleanup_dir(a.cleanup_slot);
  a.cleanup_slot = -1;
}

// Messages about files of an extracted archive name the archive and the
// entry ("ci/logs.zip:run/workerlog.0:3: ..."), never the temporary folder
// they were read from.
std::string archive_names(std::string text, const Artifact& a) {
  if (a.extract_dir.empty()) return text;
  const std::string from = a.extract_dir + "/";
  const std::string to = a.path + ":";
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

struct RunJob {
  Artifact* artifact = nullptr;
  std::string dir;  // the log directory to read
};

// The one place batch compares two runs: `run` against the baseline `base`.
BatchRun::Change compare_with_baseline(const Stats& base, const Stats& run, double fail_if_slower_pct) {
  DiffOptions options;
  options.fail_if_slower_pct = fail_if_slower_pct;
  Diff d = diff_stats(base, run, options);
  return {d.slower_pct, d.noise_pct,  std::string(gate_metric_name(d.metric)), d.bubble_b - d.bubble_a,
          d.verdict,    d.gate_failed};
}

// The driver's run of one log directory, through the same driver as
// `convert`: the passes, then the stats for the report. Paths and messages
// name the archive's entries; the layout's notes are the run's warnings.
DriverResult drive(const RunJob& job, BatchRun& run, const BatchOptions& opt, unsigned threads) {
  DriverRequest request = opt.passes;
  request.input = LayoutRequest{};
  request.input.log_dir = job.dir;
  request.threads = threads;
  request.stats = true;
  request.picture = opt.picture;
  DriverResult result = run_driver(request);
  const Artifact& art = *job.artifact;
  result.error = archive_names(result.error, art);
  if (result.timeline) {
    for (SourceFile& f : result.timeline->files) f.path = archive_names(f.path, art);
  }
  if (result.layout) {
    for (const std::string& n : result.layout->notes) run.warnings.push_back(archive_names(n, art));
  }
  return result;
}

// The run's counts and warnings from its timeline; false, with the status
// and error set, when the driver gave no stats.
bool take_timeline(const DriverResult& result, BatchRun& run) {
  if (result.failure == DriverFailure::kUsage) {
    run.status = BatchStatus::kBadArtifact;  // an option does not fit this run (--pp-degree, no step selected)
    run.error = result.error;
    return false;
  }
  if (!result.timeline) {
    run.status = BatchStatus::kNoLogs;
    run.error = result.error;
    return false;
  }
  const Timeline& tl = *result.timeline;
  run.ranks = static_cast<uint32_t>(tl.rank_files());
  run.jobs = tl.job_count();
  run.rejected_lines = tl.diagnostics.rejected_jobs();
  for (const DiagnosticLine& line : format_diagnostics(tl)) {
    if (!line.example) run.warnings.push_back(line.text);  // the count of each kind, not every example
  }
  if (result.failure == DriverFailure::kNoJobs) {
    run.status = BatchStatus::kNoJobs;
    run.error = fmt::format("{} file{} read, no 'Profiler Info: Job' line in them; " PPT_PROFILER_ON_HINT,
                            tl.files.size(), tl.files.size() == 1 ? "" : "s");
    return false;
  }
  return true;
}

// The report's figures of the run, and its change against the baseline.
void take_stats(const Stats& stats, BatchRun& run, const BatchOptions& opt, const Stats* base,
                std::optional<Stats>* keep) {
  run.steps = static_cast<uint32_t>(stats.steps.size());
  run.step_time_us = static_cast<double>(stats.step_time.median_ns) / 1000.0;
  bool period = stats.step_period.count > 0;
  run.step_metric = std::string(gate_metric_name(period ? GateMetric::kPeriod : GateMetric::kBusy));
  run.step_metric_us = (period ? stats.step_period.mean_ns : stats.step_time.mean_ns) / 1000.0;
  run.bubble_ratio = stats.bubble_ratio;
  run.schedule = schedule_label(stats.schedule);
  if (base) run.change = compare_with_baseline(*base, stats, opt.fail_if_slower_pct);
  if (keep) *keep = stats;
}

// The run's folder under --out; false, with the status and error set, when
// it cannot be made or must not be written into.
bool make_run_dir(const fs::path& dir, BatchRun& run, const BatchOptions& opt) {
  std::error_code ec;
  // A run folder an artifact planted as a link (say into the user's home)
  // is never written into: --out may lie inside the artifact's own folder.
  if (std::string why = link_inside(opt.out_dir, dir.string()); !why.empty()) {
    run.status = BatchStatus::kOutputError;
    run.error = why;
    return false;
  }
  fs::create_directories(dir, ec);
  if (ec) {
    run.status = BatchStatus::kOutputError;
    run.error = fmt::format("{}: cannot create: {}", dir.string(), ec.message());
    return false;
  }
  return true;
}

// The outputs asked for, into the run's folder: the report first (it
// carries the stats), then the picture and the traces. The first error
// stops them.
void write_run_outputs(DriverResult& result, const Stats& stats, const fs::path& dir, BatchRun& run,
                       const BatchOptions& opt) {
  WriteOptions w;
  w.title = "pp-timeline report: " + run.name;
  w.source = run.source;
  w.confine = opt.out_dir;
  const BatchOutputs& want = opt.outputs;
  if (want.stats_json) {
    std::string error = write_text_output((dir / "stats.json").string(), format_stats_json(stats), {}, opt.out_dir);
    if (!error.empty()) {
      run.status = BatchStatus::kOutputError;
      run.error = error;
      return;
    }
    run.outputs["stats_json"] = run.name + "/stats.json";
  }
  for (auto [kind, file, format, wanted] :
       {std::tuple{"report", "report.html", OutputFormat::kHtmlReport, want.report},
        std::tuple{"svg", "timeline.svg", OutputFormat::kSvg, want.svg},
        std::tuple{"chrome_json", "trace.json", OutputFormat::kChromeJson, want.chrome_json},
        std::tuple{"perfetto_trace", "trace.pftrace", OutputFormat::kPerfettoTrace, want.perfetto_trace}}) {
    if (!wanted) continue;
    std::vector<WrittenOutput> written = write_outputs(result, {OutputSpec{(dir / file).string(), format}}, w);
    if (!written[0].error.empty()) {
      run.status = BatchStatus::kOutputError;
      run.error = written[0].error;
      return;
    }
    run.outputs[kind] = run.name + "/" + file;
  }
}

// Converts one run; `base` (the baseline's stats) is compared with, and
// `keep` receives this run's stats (for the baseline run), when not null.
void convert(const RunJob& job, BatchRun& run, const BatchOptions& opt, unsigned threads, const Stats* base,
             std::optional<Stats>* keep) {
  DriverResult result = drive(job, run, opt, threads);
  if (!take_timeline(result, run)) return;
  Stats& stats = *result.stats;
  stats.source = run.source;
  take_stats(stats, run, opt, base, keep);
  const fs::path dir = fs::path(opt.out_dir) / run.name;
  if (!make_run_dir(dir, run, opt)) return;
  write_run_outputs(result, stats, dir, run, opt);
}

// Each artifact (the baseline first, when there is one) found: extracted
// if an archive, searched for runs; the baseline must hold one.
std::vector<std::unique_ptr<Artifact>> find_artifacts(const std::vector<std::string>& artifacts,
                                                      const BatchOptions& opt, unsigned threads, BatchResult& result) {
  std::error_code ec;
  // The output directory is never searched for logs (it holds the archives
  // being extracted).
  std::set<fs::path> skip{fs::weakly_canonical(opt.out_dir, ec)};
  std::vector<std::string> paths;
  if (result.has_baseline) paths.push_back(opt.baseline);
  paths.insert(paths.end(), artifacts.begin(), artifacts.end());
  std::vector<std::string> stems = artifact_stems(paths);
  std::vector<std::unique_ptr<Artifact>> arts;
  for (size_t i = 0; i < paths.size(); ++i) {
    auto a = std::make_unique<Artifact>();
    a->path = paths[i];
    a->stem = stems[i];
    arts.push_back(std::move(a));
  }
  parallel_for(arts.size(), threads, [&](size_t i) { resolve(*arts[i], opt, skip); });
  for (const auto& a : arts) {
    for (const std::string& w : a->search_warnings) result.search_warnings.push_back(w);
  }
  if (result.has_baseline && arts[0]->status == BatchStatus::kOk && arts[0]->dirs.size() > 1) {
    Artifact& b = *arts[0];
    b.status = BatchStatus::kBadArtifact;
    b.error = fmt::format("{}: the baseline holds {} runs ({}, {}...); give it one", b.path, b.dirs.size(), b.dirs[0],
                          b.dirs[1]);
    b.dirs.clear();
  }
  return arts;
}

// One entry per run found, or one per artifact that gave none (its job
// empty); names are unique within the batch.
std::vector<RunJob> plan_runs(std::vector<std::unique_ptr<Artifact>>& arts, const BatchOptions& opt,
                              BatchResult& result) {
  std::vector<RunJob> jobs;
  std::set<std::string> taken{"index.html", "index.json", "summary.md"};
  auto unique = [&](std::string name) {
    std::string base = name;
    for (int k = 2; taken.count(name); ++k) name = fmt::format("{}-{}", base, k);
    taken.insert(name);
    return name;
  };
  for (auto& a : arts) {
    bool is_baseline = result.has_baseline && a.get() == arts[0].get();
    if (a->status != BatchStatus::kOk) {
      BatchRun r;
      r.is_baseline = is_baseline;
      r.source = a->path;
      r.status = a->status;
      r.error = a->error;
      r.warnings = a->warnings;
      result.runs.push_back(std::move(r));
      jobs.push_back({nullptr, ""});
      remove_extraction(*a, opt);
      continue;
    }
    a->remaining = a->dirs.size();
    for (const std::string& rel : a->dirs) {
      BatchRun r;
      r.is_baseline = is_baseline;
      bool top = rel == ".";
      r.source = top ? a->path : a->path + ":" + rel;
      r.name = unique(safe_run_name(run_name(a->stem, top ? "" : rel)));
      r.warnings = a->warnings;
      result.runs.push_back(std::move(r));
      jobs.push_back({a.get(), top ? a->root : (fs::path(a->root) / rel).string()});
    }
  }
  return jobs;
}

// The manifest lists what this batch may write before it writes any of it,
// so that a batch killed part-way is cleaned up after by the next; it is
// rewritten at the end with what was written. Sets `made_dirs` (the run
// folders it creates); "" or the error.
std::string write_planned_manifest(const BatchOptions& opt, const BatchResult& result,
                                   std::vector<std::string>& made_dirs) {
  fs::path out(opt.out_dir);
  std::vector<std::string> planned{"index.json", "summary.md", "index.html"};
  for (const BatchRun& r : result.runs) {
    if (r.name.empty()) continue;
    std::error_code dec;
    if (!fs::exists(fs::symlink_status(out / r.name, dec))) made_dirs.push_back(r.name);
    const BatchOutputs& w = opt.outputs;
    for (auto [file, wanted] :
         {std::pair{"stats.json", w.stats_json}, std::pair{"report.html", w.report}, std::pair{"timeline.svg", w.svg},
          std::pair{"trace.json", w.chrome_json}, std::pair{"trace.pftrace", w.perfetto_trace}}) {
      if (wanted) planned.push_back(r.name + "/" + file);
    }
  }
  return write_text_output((out / kManifestFile).string(), manifest_text(planned, made_dirs), {}, opt.out_dir);
}

// Every run converted, side by side: the baseline first, on every thread
// (the others are compared with it), then the others, the threads shared
// among them; each reported to the progress as it ends.
void convert_runs(const std::vector<RunJob>& jobs, const BatchOptions& opt, unsigned threads, BatchResult& result) {
  size_t pending = 0;
  for (const RunJob& j : jobs) pending += j.artifact ? 1 : 0;
  unsigned inner =
      std::max<unsigned>(1, threads / static_cast<unsigned>(std::max<size_t>(1, std::min<size_t>(pending, threads))));
  std::mutex progress_mutex;
  size_t done = 0;
  auto report = [&](size_t i) {
    std::lock_guard<std::mutex> lock(progress_mutex);
    ++done;
    if (opt.progress) opt.progress({done, result.runs.size(), &result.runs[i]});
  };
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (!jobs[i].artifact) report(i);
  }
  std::optional<Stats> base_stats;
  auto convert_one = [&](size_t i, unsigned run_threads) {
    const RunJob& job = jobs[i];
    if (!job.artifact) return;
    bool is_base = result.runs[i].is_baseline;
    const Stats* base = !is_base && base_stats ? &*base_stats : nullptr;
    try {
      convert(job, result.runs[i], opt, run_threads, base, is_base ? &base_stats : nullptr);
    } catch (const std::exception& e) {
      // A bug, not the input's fault; still, the other runs go on.
      result.runs[i].status = BatchStatus::kOutputError;
      result.runs[i].error = fmt::format("internal error: {}", e.what());
    }
    if (--job.artifact->remaining == 0) remove_extraction(*job.artifact, opt);
    report(i);
  };
  size_t first = 0;
  if (result.has_baseline && !jobs.empty() && result.runs[0].is_baseline) {
    convert_one(0, threads);
    first = 1;
  }
  parallel_for(jobs.size() - first, threads, [&](size_t k) { convert_one(first + k, inner); });
}

// index.json, summary.md and index.html, then the manifest of what was
// written; the first error into `result.error`.
void write_index_files(const BatchOptions& opt, const std::vector<std::string>& made_dirs, BatchResult& result) {
  fs::path out(opt.out_dir);
  std::vector<std::string> written;
  for (const BatchRun& r : result.runs) {
    for (const auto& [kind, rel] : r.outputs) written.push_back(rel);
  }
  for (auto [file, text] :
       {std::pair{"index.json", batch_index_json(result)}, std::pair{"summary.md", batch_summary_markdown(result)},
        std::pair{"index.html", batch_index_html(result)}}) {
    std::string error = write_text_output((out / file).string(), text, {}, opt.out_dir);
    if (!error.empty() && result.error.empty()) result.error = error;
    if (error.empty()) written.push_back(file);
  }
  std::string error =
      write_text_output((out / kManifestFile).string(), manifest_text(written, made_dirs), {}, opt.out_dir);
  if (!error.empty() && result.error.empty()) result.error = error;
}

}  // namespace

BatchResult run_batch(const std::vector<std::string>& artifacts, const BatchOptions& opt) {
  BatchResult result;
  std::error_code ec;
  fs::create_directories(opt.out_dir, ec);
  if (ec || !fs::is_directory(opt.out_dir)) {
    result.error =
        fmt::format("{}: cannot create the output directory{}", opt.out_dir, ec ? ": " + ec.message() : std::string());
    return result;
  }
  unsigned threads = resolve_threads(opt.passes.threads);
  result.has_baseline = !opt.baseline.empty();
  result.fail_if_slower_pct = opt.fail_if_slower_pct;
  result.selection = opt.passes.selection.empty() ? std::string() : opt.passes.selection.options_text();
  result.links = opt.links;
  OutLock lock;
  if (std::string error = lock.take(opt.out_dir); !error.empty()) {
    result.error = error;
    return result;
  }
  remove_stale_extractions(opt.out_dir);
  remove_previous_outputs(opt.out_dir);
  std::vector<std::unique_ptr<Artifact>> arts = find_artifacts(artifacts, opt, threads, result);
  std::vector<RunJob> jobs = plan_runs(arts, opt, result);
  std::vector<std::string> made_dirs;
  if (std::string error = write_planned_manifest(opt, result, made_dirs); !error.empty()) {
    result.error = error;
    return result;
  }
  convert_runs(jobs, opt, threads, result);
  for (auto& a : arts) remove_extraction(*a, opt);
  write_index_files(opt, made_dirs, result);
  return result;
}

}  // namespace ppt
