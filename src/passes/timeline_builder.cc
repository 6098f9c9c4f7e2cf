#include "passes/timeline_builder.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <unordered_map>

#include "input/dygraph_profile.h"
#include "input/pipeline_details.h"
#include "passes/lanes.h"
#include "passes/reruns.h"
#include "passes/steps.h"
#include "util/parallel.h"

namespace ppt {
namespace {

struct FileRuns {
  std::vector<RunSlice> slices;
};

using Groups = std::vector<std::vector<std::pair<uint32_t, uint32_t>>>;  // (file, slice) per run

// Groups the runs of the given files by time. Runs of one file follow each
// other in time and ranks of one run work at the same time, so runs are
// groups of overlapping time ranges. If that grouping would put two runs of
// one file together (clocks broken beyond repair), the k-th run of every file
// forms run k instead.
Groups group_by_time(const std::vector<FileRuns>& files, const std::vector<uint32_t>& which) {
  struct Item {
    int64_t first, last;
    uint32_t file, slice;
  };
  std::vector<Item> items;
  size_t max_slices = 0;
  for (uint32_t f : which) {
    max_slices = std::max(max_slices, files[f].slices.size());
    for (uint32_t s = 0; s < files[f].slices.size(); ++s) {
      items.push_back({files[f].slices[s].first_ns, files[f].slices[s].last_ns, f, s});
    }
  }
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    return a.first != b.first ? a.first < b.first : a.file != b.file ? a.file < b.file : a.slice < b.slice;
  });
  Groups groups;
  int64_t group_end = std::numeric_limits<int64_t>::min();
  bool ok = true;
  std::vector<int64_t> file_group(files.size(), -1);
  for (const Item& it : items) {
    if (groups.empty() || it.first > group_end) {
      groups.emplace_back();
      group_end = it.last;
    } else {
      group_end = std::max(group_end, it.last);
    }
    int64_t g = static_cast<int64_t>(groups.size()) - 1;
    if (file_group[it.file] == g) ok = false;
    file_group[it.file] = g;
    groups.back().push_back({it.file, it.slice});
  }
  if (ok) return groups;
  groups.assign(max_slices, {});
  for (uint32_t f : which) {
    for (uint32_t s = 0; s < files[f].slices.size(); ++s) groups[s].push_back({f, s});
  }
  return groups;
}

// Groups the runs of all files into global runs. Only the files of one
// machine share a clock; machines' clocks can be seconds apart (never
// synchronised), so that runs of different machines no longer overlap. When
// grouping every file by time leaves a run without some machine, and every
// machine has the same number of runs (each grouped by time on its own
// clock), the k-th run of every machine forms run k.
Groups group_runs(const std::vector<FileRuns>& files, const std::vector<SourceFile>& sources) {
  std::vector<uint32_t> all(files.size());
  for (uint32_t f = 0; f < files.size(); ++f) all[f] = f;
  Groups by_time = group_by_time(files, all);
  std::vector<std::vector<uint32_t>> files_of;  // by machine, machines that have a run
  std::vector<int32_t> machine_ids;
  for (uint32_t f = 0; f < files.size(); ++f) {
    if (files[f].slices.empty()) continue;
    int32_t m = sources[f].machine;
    auto it = std::find(machine_ids.begin(), machine_ids.end(), m);
    if (it == machine_ids.end()) {
      machine_ids.push_back(m);
      files_of.emplace_back();
      it = machine_ids.end() - 1;
    }
    files_of[it - machine_ids.begin()].push_back(f);
  }
  if (machine_ids.size() < 2) return by_time;
  bool complete = true;
  for (const auto& g : by_time) {
    std::vector<int32_t> present;
    for (auto [f, s] : g) present.push_back(sources[f].machine);
    std::sort(present.begin(), present.end());
    present.erase(std::unique(present.begin(), present.end()), present.end());
    complete = complete && present.size() == machine_ids.size();
  }
  if (complete) return by_time;
  std::vector<Groups> per_machine;
  for (const auto& fs : files_of) {
    per_machine.push_back(group_by_time(files, fs));
    if (per_machine.back().size() != per_machine.front().size()) return by_time;
  }
  Groups zipped(per_machine.front().size());
  for (const Groups& g : per_machine) {
    for (size_t k = 0; k < g.size(); ++k) zipped[k].insert(zipped[k].end(), g[k].begin(), g[k].end());
  }
  return zipped;
}

// Each run's memory samples, by slice: a sample belongs to the run whose
// lines it falls in, a later run beginning at its first job's line or at the
// line that showed it (a start-up line), whichever comes first. Sorted by
// (ts_ns, line), as Track::memory promises.
std::vector<std::vector<MemorySample>> split_memory(const FileScan& scan, const std::vector<RunSlice>& slices) {
  std::vector<std::vector<MemorySample>> out(slices.size());
  if (slices.empty()) return out;
  std::vector<uint32_t> begins(slices.size(), 0);
  for (size_t k = 1; k < slices.size(); ++k) {
    uint32_t first_line = scan.jobs[slices[k].begin].line;
    begins[k] = slices[k].why_line > 0 ? std::min(slices[k].why_line, first_line) : first_line;
  }
  for (const MemorySample& m : scan.memory) {
    size_t k = static_cast<size_t>(std::upper_bound(begins.begin() + 1, begins.end(), m.line) - begins.begin()) - 1;
    out[k].push_back(m);
  }
  for (auto& v : out) {
    std::sort(v.begin(), v.end(), [](const MemorySample& a, const MemorySample& b) {
      return a.ts_ns != b.ts_ns ? a.ts_ns < b.ts_ns : a.line < b.line;
    });
  }
  return out;
}

// A companion launch log (SourceFile::companion): one without job lines is
// dropped from the account (a dynamic-graph run's launch log); one with job
// lines keeps its counts, and its jobs are rejected as mixed_formats.
void reject_companion(FileScan& scan, uint32_t file_index, const std::string& path) {
  (void)path;
  if (scan.counts.profiler_lines == 0 && scan.readable) {
    // A launch log of a dynamic-graph run: no job lines, nothing to say.
    scan = FileScan{};
    return;
  }
  if (!scan.jobs.empty()) {
    const size_t n = scan.jobs.size();
    scan.diagnostics.add(IssueKind::kMixedFormats, file_index, scan.jobs.front().line,
                         fmt::format("{} static-graph job line{} in a launch log beside dynamic-graph profile "
                                     "records: not drawn",
                                     n, n == 1 ? "" : "s"));
    if (n > 1) scan.diagnostics.count(IssueKind::kMixedFormats, n - 1);
    scan.counts.jobs -= n;
    scan.jobs.clear();
  }
}

// One file's counts, resolutions and diagnostics added to the timeline's.
void merge_counts(Timeline& tl, const FileScan& s) {
  tl.counts.files += s.counts.files;
  tl.counts.bytes += s.counts.bytes;
  tl.counts.lines += s.counts.lines;
  tl.counts.profiler_lines += s.counts.profiler_lines;
  tl.counts.jobs += s.counts.jobs;
  tl.counts.profile_records += s.counts.profile_records;
  tl.counts.details_lines += s.counts.details_lines;
  tl.counts.memory_samples += s.counts.memory_samples;
  if (s.dygraph) tl.resolution_ns = std::max(tl.resolution_ns, kDygraphResolutionNs);
  if (s.details_jobs) tl.resolution_ns = std::max(tl.resolution_ns, kDetailsResolutionNs);
  tl.diagnostics.merge(s.diagnostics);
}

// A file that holds more than one run says so: where each later run begins,
// and the evidence (the first three).
void report_reruns(Timeline& tl, uint32_t f, const std::vector<RunSlice>& sl) {
  if (sl.size() <= 1) return;
  std::string where;
  for (size_t k = 1; k < sl.size() && k <= 3; ++k) {
    where +=
        fmt::format("{}run {} at line {}: {}", k > 1 ? "; " : "", k + 1, sl[k].why_line, run_start_reason(sl[k].why));
  }
  if (sl.size() > 4) where += "; ...";
  tl.diagnostics.add(IssueKind::kRerun, f, sl[1].why_line,
                     fmt::format("holds {} runs appended ({}); each is shown separately", sl.size(), where));
}

// Merges the scans in file order: counts, diagnostics, interned types.
// Returns each file's type ids in the timeline's.
std::vector<std::vector<uint32_t>> merge_scans(Timeline& tl, const std::vector<FileScan>& scans,
                                               const std::vector<FileRuns>& runs_of) {
  std::unordered_map<std::string, uint32_t> type_ids;
  std::vector<std::vector<uint32_t>> type_map(scans.size());
  for (uint32_t f = 0; f < scans.size(); ++f) {
    const FileScan& s = scans[f];
    merge_counts(tl, s);
    report_reruns(tl, f, runs_of[f].slices);
    for (const std::string& t : s.types) {
      auto [it, inserted] = type_ids.emplace(t, static_cast<uint32_t>(tl.types.size()));
      if (inserted) tl.types.push_back(t);
      type_map[f].push_back(it->second);
    }
  }
  return type_map;
}

// Memory samples, split as the jobs are.
std::vector<std::vector<std::vector<MemorySample>>> split_all_memory(Timeline& tl, const std::vector<FileScan>& scans,
                                                                     const std::vector<FileRuns>& runs_of) {
  std::vector<std::vector<std::vector<MemorySample>>> memory_of(scans.size());
  for (uint32_t f = 0; f < scans.size(); ++f) {
    if (scans[f].memory.empty()) continue;
    memory_of[f] = split_memory(scans[f], runs_of[f].slices);
    tl.memory_resolution_bytes = kDetailsResolutionBytes;
  }
  return memory_of;
}

// The scans and their per-file parts, as the global runs take them.
struct ScanParts {
  std::vector<FileScan>& scans;
  const std::vector<FileRuns>& runs_of;
  std::vector<std::vector<std::vector<MemorySample>>>& memory_of;
  const std::vector<std::vector<uint32_t>>& type_map;
};

// The track of slice `s` of file `f` in run `g`: its jobs moved (or copied,
// for one of several runs) out of the scan, their types the timeline's.
Track make_track(const Timeline& tl, ScanParts& parts, uint32_t f, uint32_t s, uint32_t g) {
  FileScan& scan = parts.scans[f];
  const RunSlice& slice = parts.runs_of[f].slices[s];
  Track t;
  t.file = f;
  t.run = g;
  t.rank = tl.files[f].global_rank;
  t.machine = tl.files[f].machine;
  t.local_index = tl.files[f].local_index;
  t.stage = scan.stage;
  t.resolution_ns = scan.dygraph ? kDygraphResolutionNs : scan.details_jobs ? kDetailsResolutionNs : 1;
  if (!parts.memory_of[f].empty()) t.memory = std::move(parts.memory_of[f][s]);
  JobList& src = scan.jobs;
  if (slice.begin == 0 && slice.end == src.size()) {
    t.jobs = std::move(src);  // the common case: one run per file, no copy
  } else {
    t.jobs.assign(src.begin() + slice.begin, src.begin() + slice.end);
  }
  // A file that met its types in the timeline's order (the usual: every
  // rank prints the same kinds first) keeps its numbers: no pass over its
  // jobs, which took a serial eleven milliseconds at 1024 ranks.
  const std::vector<uint32_t>& types = parts.type_map[f];
  bool same = true;
  for (uint32_t k = 0; k < types.size(); ++k) same = same && types[k] == k;
  if (!same) {
    for (Job& j : t.jobs) j.type = types[j.type];
  }
  return t;
}

// Global runs, ordered by time; tracks ordered by (run, rank).
void build_runs(Timeline& tl, ScanParts& parts) {
  auto groups = group_runs(parts.runs_of, tl.files);
  for (uint32_t g = 0; g < groups.size(); ++g) {
    auto& members = groups[g];
    std::sort(members.begin(), members.end());
    Run run;
    run.index = g;
    run.first_ns = std::numeric_limits<int64_t>::max();
    run.last_ns = std::numeric_limits<int64_t>::min();
    for (auto [f, s] : members) {
      const RunSlice& slice = parts.runs_of[f].slices[s];
      if (slice.has_marker && !run.has_marker) {
        run.has_marker = true;
        run.marker_start_step = slice.marker_start_step;
      }
      run.first_ns = std::min(run.first_ns, slice.first_ns);
      run.last_ns = std::max(run.last_ns, slice.last_ns);
      run.tracks.push_back(static_cast<uint32_t>(tl.tracks.size()));
      tl.tracks.push_back(make_track(tl, parts, f, s, g));
    }
    tl.runs.push_back(std::move(run));
  }
}

// Stages the records state against rank = replica * P + stage (one
// message per file).
void report_stage_mismatches(Timeline& tl) {
  int32_t max_stage = -1;
  for (const Track& t : tl.tracks) max_stage = std::max(max_stage, t.stage);
  if (max_stage < 0) return;
  const int32_t p = max_stage + 1;
  std::vector<uint8_t> told(tl.files.size(), 0);
  for (const Track& t : tl.tracks) {
    if (t.stage < 0 || t.rank % p == t.stage || told[t.file]) continue;
    told[t.file] = 1;
    tl.diagnostics.add(IssueKind::kStageMismatch, t.file, t.jobs.empty() ? 0 : t.jobs.front().line,
                       fmt::format("rank {} records stage {} (tid {}), but rank mod {} stages is {}", t.rank, t.stage,
                                   t.stage + 1, p, t.rank % p));
  }
}

}  // namespace

Timeline build_from_scans(std::vector<SourceFile> files, std::vector<std::string> machines, std::vector<FileScan> scans,
                          unsigned threads) {
  Timeline tl;
  tl.files = std::move(files);
  tl.machines = std::move(machines);

  // Per file: runs and rank-local steps (independent, so in parallel).
  std::vector<FileRuns> runs_of(scans.size());
  parallel_for(scans.size(), threads, [&](size_t i) { runs_of[i].slices = split_runs(scans[i]); });

  const std::vector<std::vector<uint32_t>> type_map = merge_scans(tl, scans, runs_of);
  std::vector<std::vector<std::vector<MemorySample>>> memory_of = split_all_memory(tl, scans, runs_of);
  ScanParts parts{scans, runs_of, memory_of, type_map};
  build_runs(tl, parts);
  // The per-file job vectors are copied into tracks; free them before the
  // passes that follow.
  scans.clear();
  scans.shrink_to_fit();
  report_stage_mismatches(tl);

  parallel_for(tl.tracks.size(), threads, [&](size_t i) { assign_lanes(tl.tracks[i]); });
  for (Run& run : tl.runs) number_steps(tl, run, threads);

  set_origin(tl);
  uint64_t overlapping = 0;
  for (const Track& t : tl.tracks) overlapping += t.overlapping_jobs;
  if (overlapping > 0) tl.diagnostics.count(IssueKind::kOverlap, overlapping);
  return tl;
}

Timeline build_timeline(const Layout& layout, const BuildOptions& options) {
  using Clock = std::chrono::steady_clock;
  auto t0 = Clock::now();
  LineParser parser;
  std::vector<FileScan> scans(layout.files.size());
  parallel_for(layout.files.size(), options.threads, [&](size_t i) {
    const SourceFile& f = layout.files[i];
    if (f.dygraph_profile) {
      scans[i] = scan_dygraph_profile(f.path, static_cast<uint32_t>(i));
      return;
    }
    scans[i] =
        scan_file(f.standard_input ? std::string(kStdinPath) : f.path, static_cast<uint32_t>(i), parser, options.scan);
    if (f.companion) reject_companion(scans[i], static_cast<uint32_t>(i), f.path);
  });
  auto t1 = Clock::now();
  Timeline tl = build_from_scans(layout.files, layout.machines, std::move(scans), options.threads);
  tl.world_ranks = layout.world_ranks;
  tl.partial = layout.partial;
  if (options.timings != nullptr) {
    auto t2 = Clock::now();
    options.timings->push_back({"scan", std::chrono::duration<double>(t1 - t0).count()});
    options.timings->push_back({"build", std::chrono::duration<double>(t2 - t1).count()});
  }
  return tl;
}

LoadResult load_timeline(const LayoutRequest& request, const BuildOptions& options) {
  LoadResult result;
  LayoutResult found = discover_layout(request);
  if (!found.layout) {
    result.error = found.error;
    result.usage_error = found.usage_error;
    return result;
  }
  result.notes = found.layout->notes;
  result.timeline = build_timeline(*found.layout, options);
  return result;
}

}  // namespace ppt
