#include "passes/steps.h"

#include <algorithm>
#include <limits>
#include <map>

#include "input/pipeline_details.h"
#include "model/job_types.h"
#include "util/checked.h"
#include "util/parallel.h"

namespace ppt {

StepSplitter::StepSplitter(const std::vector<std::string>& types, bool first_forward_starts) {
  is_optimizer_.reserve(types.size());
  for (const std::string& t : types) {
    is_optimizer_.push_back(job_kind(t) == JobKind::kOptimizer ? 1 : 0);
    if (first_forward_starts) is_first_forward_.push_back(is_first_chunk_forward(t) ? 1 : 0);
  }
}

void StepSplitter::reset() {
  clear_seen();
  first_ = true;
  after_optimizer_ = false;
}

bool StepSplitter::seen(uint32_t type, int64_t micro_batch, uint64_t key) const {
  if (micro_batch >= 0 && micro_batch < kDirectIds) {
    return type < stamps_.size() && static_cast<size_t>(micro_batch) < stamps_[type].size() &&
           stamps_[type][micro_batch] == generation_;
  }
  return seen_.count(key) > 0;
}

void StepSplitter::mark(uint32_t type, int64_t micro_batch, uint64_t key) {
  if (micro_batch >= 0 && micro_batch < kDirectIds) {
    if (type >= stamps_.size()) stamps_.resize(type + 1);
    std::vector<uint32_t>& v = stamps_[type];
    if (static_cast<size_t>(micro_batch) >= v.size()) v.resize(micro_batch + 1, 0);
    v[micro_batch] = generation_;
  } else {
    seen_.insert(key);
  }
}

void StepSplitter::clear_seen() {
  if (++generation_ == 0) {  // wrapped: old stamps could match again
    for (auto& v : stamps_) std::fill(v.begin(), v.end(), 0);
    generation_ = 1;
  }
  if (!seen_.empty()) seen_.clear();
}

bool StepSplitter::starts_new_step(const Job& job) {
  bool optimizer = job.type < is_optimizer_.size() && is_optimizer_[job.type];
  int64_t mb = job.micro_batch;
  int64_t id = mb >= 0 ? mb : (int64_t{1} << 33) + job.job_id;
  uint64_t key = (static_cast<uint64_t>(job.type) << 40) ^ static_cast<uint64_t>(id);
  bool fresh = first_ || (after_optimizer_ && !optimizer) || seen(job.type, mb, key) ||
               (mb == 0 && job.type < is_first_forward_.size() && is_first_forward_[job.type]);
  if (fresh) clear_seen();
  first_ = false;
  mark(job.type, mb, key);
  after_optimizer_ = optimizer;
  return fresh;
}

namespace {

struct LocalStep {
  int64_t start = std::numeric_limits<int64_t>::max();
  int64_t end = std::numeric_limits<int64_t>::min();
};

// One rank-local step: its span and where it belongs.
struct Entry {
  int64_t start, end;
  uint32_t track_pos;  // position in run.tracks
  int32_t local;
};

bool by_start(const Entry& a, const Entry& b) {
  return a.start != b.start           ? a.start < b.start
         : a.track_pos != b.track_pos ? a.track_pos < b.track_pos
                                      : a.local < b.local;
}

// Greedy clustering of entries sorted by start: ranks work on one step at a
// time and every rank's step overlaps the others' (stage 0 feeds them and
// finishes last), so a step that begins after everything in the current
// cluster ended, or on a rank already in the cluster, begins the next step.
// Calls emit(entry, cluster) in order; returns the number of clusters.
template <typename Emit>
int32_t cluster_by_time(const std::vector<Entry>& sorted, size_t tracks, Emit emit) {
  int32_t cluster = -1;
  int64_t cluster_end = 0;
  std::vector<int32_t> last_cluster_of_track(tracks, -1);
  for (const Entry& e : sorted) {
    bool fresh = cluster < 0 || e.start >= cluster_end || last_cluster_of_track[e.track_pos] == cluster;
    if (fresh) {
      ++cluster;
      cluster_end = e.end;
    }
    cluster_end = std::max(cluster_end, e.end);
    last_cluster_of_track[e.track_pos] = cluster;
    emit(e, cluster);
  }
  return cluster + 1;
}

// A candidate shift of one machine's step starts onto the reference's.
struct Fit {
  int64_t shift = 0;
  size_t matched = 0;
  int64_t index_shift = 0;  // reference index minus own index of the first matched step
};

// How many of `mine` (sorted), shifted by `d`, land within `tol` of a time
// of `ref` (sorted), each reference step taken at most once. `gaps`, when
// given, receives ref - mine of every matched pair.
Fit evaluate_shift(const std::vector<int64_t>& ref, const std::vector<int64_t>& mine, int64_t d, int64_t tol,
                   std::vector<int64_t>* gaps = nullptr) {
  Fit f;
  f.shift = d;
  bool first = true;
  size_t k = 0;
  // In 128 bits: times are anywhere in [0, 2^63) and a shift spans that too.
  auto distance = [&](size_t k, __int128 x) {
    __int128 v = static_cast<__int128>(ref[k]) - x;
    return v < 0 ? -v : v;
  };
  for (size_t i = 0; i < mine.size(); ++i) {
    __int128 x = static_cast<__int128>(mine[i]) + d;
    while (k + 1 < ref.size() && distance(k + 1, x) <= distance(k, x)) ++k;
    if (k < ref.size() && distance(k, x) <= tol) {
      ++f.matched;
      if (first) f.index_shift = static_cast<int64_t>(k) - static_cast<int64_t>(i);
      first = false;
      if (gaps) gaps->push_back(ref[k] - mine[i]);
      ++k;  // taken
      if (k >= ref.size()) break;
    }
  }
  return f;
}

int64_t median(std::vector<int64_t> v) {
  if (v.empty()) return std::numeric_limits<int64_t>::max();
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// A machine's steps, clustered on its own clock.
struct MachineSteps {
  std::vector<int64_t> starts, ends;
  // The middle of each step: later stages start a step later than stage 0
  // and end it earlier, so the middles agree better than the starts do.
  std::vector<int64_t> middles() const {
    std::vector<int64_t> out(starts.size());
    for (size_t i = 0; i < starts.size(); ++i) out[i] = starts[i] + (ends[i] - starts[i]) / 2;
    return out;
  }
  // The median time from one step's start to the next, and of a step's length.
  int64_t scale() const {
    std::vector<int64_t> periods, lengths;
    for (size_t i = 0; i < starts.size(); ++i) {
      lengths.push_back(ends[i] - starts[i]);
      if (i > 0) periods.push_back(starts[i] - starts[i - 1]);
    }
    return std::min(median(periods), median(lengths));
  }
};

// The shift that brings a machine's steps (its own clock) onto the reference
// machine's: the pairing that matches the most step middles within half a
// step (length or period, the shorter); ties go to no shift at all, then to
// the pairing of the first steps, then to the smallest shift. Candidates pair
// one of the first two steps of either machine with any of the other's first
// 64. The shift is the median difference of the matched pairs.
int64_t coarse_shift(const MachineSteps& reference, const MachineSteps& own) {
  const std::vector<int64_t> ref = reference.middles();
  const std::vector<int64_t> mine = own.middles();
  if (ref.empty() || mine.empty()) return 0;
  int64_t tol = std::max<int64_t>(std::min(reference.scale(), own.scale()) / 2, 1);
  constexpr size_t kFirst = 2, kAny = 64;
  std::vector<int64_t> candidates;
  for (size_t i = 0; i < std::min(kFirst, mine.size()); ++i) {
    for (size_t j = 0; j < std::min(kAny, ref.size()); ++j) candidates.push_back(ref[j] - mine[i]);
  }
  for (size_t j = 0; j < std::min(kFirst, ref.size()); ++j) {
    for (size_t i = 0; i < std::min(kAny, mine.size()); ++i) candidates.push_back(ref[j] - mine[i]);
  }
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  Fit best = evaluate_shift(ref, mine, 0, tol);
  for (int64_t d : candidates) {
    Fit f = evaluate_shift(ref, mine, d, tol);
    if (f.matched < best.matched) continue;
    if (f.matched == best.matched) {
      if (best.shift == 0) continue;
      if (std::llabs(f.index_shift) > std::llabs(best.index_shift)) continue;
      if (std::llabs(f.index_shift) == std::llabs(best.index_shift) && std::llabs(f.shift) >= std::llabs(best.shift)) {
        continue;
      }
    }
    best = f;
  }
  if (best.shift == 0) return 0;
  std::vector<int64_t> gaps;
  evaluate_shift(ref, mine, best.shift, tol, &gaps);
  return median(gaps);
}

// The greedy clustering puts a rank's step into the current cluster while it
// overlaps it. Neighbouring stages' steps do overlap (stage 0 begins step k+1
// while a later stage's optimizer still runs step k), so a rank that lacks
// step k has its step k+1 taken into step k's cluster, and every later step
// of that rank one number early. Each cluster is therefore summed up by its
// core, the median start and the median end of its members (one misplaced
// member cannot move them), and each rank's steps are assigned again, in
// order, to the cluster whose core they overlap most.
void refine_clusters(const std::vector<Entry>& entries, int32_t clusters,
                     std::vector<std::vector<int32_t>>& cluster_of) {
  if (clusters < 2) return;
  std::vector<std::vector<int64_t>> starts(clusters), ends(clusters);
  for (const Entry& e : entries) {
    int32_t c = cluster_of[e.track_pos][e.local];
    starts[c].push_back(e.start);
    ends[c].push_back(e.end);
  }
  std::vector<int64_t> core_start(clusters), core_end(clusters);
  for (int32_t c = 0; c < clusters; ++c) {
    core_start[c] = median(std::move(starts[c]));
    core_end[c] = median(std::move(ends[c]));
  }
  // The cores are in time order (clusters are made in order of start), so
  // the cores overlapping a span are found by a binary search on the ends.
  std::vector<int64_t> running_end(clusters);  // the latest core end up to c
  for (int32_t c = 0; c < clusters; ++c) running_end[c] = std::max(core_end[c], c ? running_end[c - 1] : core_end[c]);
  // Entries of each track, in local order (entries are sorted by start).
  std::vector<std::vector<const Entry*>> by_track(cluster_of.size());
  for (const Entry& e : entries) by_track[e.track_pos].push_back(&e);
  for (uint32_t p = 0; p < by_track.size(); ++p) {
    std::vector<const Entry*>& mine = by_track[p];
    std::sort(mine.begin(), mine.end(), [](const Entry* a, const Entry* b) { return a->local < b->local; });
    int32_t previous = -1;
    for (const Entry* e : mine) {
      int32_t& c = cluster_of[p][e->local];
      int32_t best = -1;
      int64_t best_overlap = 0;
      int32_t k = static_cast<int32_t>(std::upper_bound(running_end.begin(), running_end.end(), e->start) -
                                       running_end.begin());
      for (k = std::max(k, previous + 1); k < clusters && core_start[k] < e->end; ++k) {
        int64_t overlap = std::min(e->end, core_end[k]) - std::max(e->start, core_start[k]);
        if (overlap > best_overlap) {
          best_overlap = overlap;
          best = k;
        }
      }
      // A span that overlaps no core later than the rank's previous step
      // keeps the greedy cluster (the order fix-up below still applies).
      if (best >= 0) c = best;
      previous = c;
    }
  }
}

// Steps no rank has a job in are dropped; each span starts no earlier than
// the one before ends (disjoint, in order).
void settle_step_spans(std::vector<StepSpan>& steps) {
  std::erase_if(steps, [](const StepSpan& s) { return s.ranks == 0; });
  for (size_t i = 1; i < steps.size(); ++i) {
    StepSpan& s = steps[i];
    s.start_ns = std::max(s.start_ns, steps[i - 1].end_ns);
    s.end_ns = std::max(s.end_ns, s.start_ns);
  }
}

}  // namespace

void finalize_step_spans(const Timeline& timeline, Run& run, unsigned threads) {
  std::vector<StepSpan>& steps = run.steps;
  if (steps.empty()) return;
  // Numbers are usually consecutive: index directly, else search.
  const int32_t first = steps.front().number;
  const bool dense = static_cast<int64_t>(steps.back().number) - first + 1 == static_cast<int64_t>(steps.size());
  auto find = [&](int32_t number) -> int64_t {
    if (dense) {
      int64_t k = static_cast<int64_t>(number) - first;
      return k >= 0 && k < static_cast<int64_t>(steps.size()) ? k : -1;
    }
    auto it =
        std::lower_bound(steps.begin(), steps.end(), number, [](const StepSpan& s, int32_t n) { return s.number < n; });
    return it != steps.end() && it->number == number ? it - steps.begin() : -1;
  };
  // The tracks in a few blocks, each block's spans and rank counts apart,
  // then added up: minima, maxima and counts, the same in any order. A block
  // holds a span per step, so there are at most as many blocks as threads.
  struct Part {
    int64_t start = std::numeric_limits<int64_t>::max();
    int64_t end = std::numeric_limits<int64_t>::min();
    uint32_t ranks = 0;
  };
  const size_t tracks = run.tracks.size();
  const size_t blocks = std::max<size_t>(1, std::min<size_t>(resolve_threads(threads), tracks));
  std::vector<std::vector<Part>> parts(blocks);
  parallel_for(blocks, threads, [&](size_t b) {
    std::vector<Part>& part = parts[b];
    part.assign(steps.size(), Part{});
    std::vector<uint32_t> seen_by(steps.size(), 0);  // 1 + the last track position counted
    for (size_t p = tracks * b / blocks; p < tracks * (b + 1) / blocks; ++p) {
      for (const Job& j : timeline.tracks[run.tracks[p]].jobs) {
        int64_t k = j.step < 0 ? -1 : find(j.step);
        if (k < 0) continue;
        Part& s = part[k];
        s.start = std::min(s.start, j.start_ns);
        s.end = std::max(s.end, j.end_ns);
        if (seen_by[k] != p + 1) {
          seen_by[k] = static_cast<uint32_t>(p + 1);
          ++s.ranks;
        }
      }
    }
  });
  for (size_t k = 0; k < steps.size(); ++k) {
    StepSpan& s = steps[k];
    s.start_ns = std::numeric_limits<int64_t>::max();
    s.end_ns = std::numeric_limits<int64_t>::min();
    s.ranks = 0;
    for (const std::vector<Part>& part : parts) {
      s.start_ns = std::min(s.start_ns, part[k].start);
      s.end_ns = std::max(s.end_ns, part[k].end);
      s.ranks += part[k].ranks;
    }
  }
  settle_step_spans(steps);
}

namespace {

// Each track's local steps, with their spans (`locals`), and one entry per
// local step, sorted by start.
std::vector<Entry> local_step_entries(const Timeline& timeline, const Run& run,
                                      std::vector<std::vector<LocalStep>>& locals, unsigned threads) {
  // Each track's local steps apart (in parallel), then their entries in
  // track order.
  parallel_for(run.tracks.size(), threads, [&](size_t p) {
    for (const Job& j : timeline.tracks[run.tracks[p]].jobs) {
      if (j.step < 0) continue;
      if (static_cast<size_t>(j.step) >= locals[p].size()) locals[p].resize(j.step + 1);
      LocalStep& s = locals[p][j.step];
      s.start = std::min(s.start, j.start_ns);
      s.end = std::max(s.end, j.end_ns);
    }
  });
  std::vector<Entry> entries;
  for (uint32_t p = 0; p < run.tracks.size(); ++p) {
    for (int32_t k = 0; k < static_cast<int32_t>(locals[p].size()); ++k) {
      const LocalStep& s = locals[p][k];
      if (s.end < s.start) continue;  // no job had this index (cannot happen)
      entries.push_back({s.start, s.end, p, k});
    }
  }
  std::sort(entries.begin(), entries.end(), by_start);
  return entries;
}

// Each machine's steps, clustered by time on its own clock.
std::vector<MachineSteps> steps_by_machine(const std::vector<Entry>& entries, const std::vector<int32_t>& machine_of,
                                           const std::vector<int32_t>& machines, size_t tracks) {
  std::vector<MachineSteps> steps(machines.size());
  for (size_t mi = 0; mi < machines.size(); ++mi) {
    std::vector<Entry> own;
    for (const Entry& e : entries) {
      if (machine_of[e.track_pos] == machines[mi]) own.push_back(e);
    }
    MachineSteps& ms = steps[mi];
    cluster_by_time(own, tracks, [&](const Entry& e, int32_t c) {
      if (static_cast<size_t>(c) >= ms.starts.size()) {  // sorted: the first entry starts earliest
        ms.starts.push_back(e.start);
        ms.ends.push_back(e.end);
      }
      ms.ends.back() = std::max(ms.ends.back(), e.end);
    });
  }
  return steps;
}

// Machines' clocks can be any amount apart (never synchronised: seconds),
// while the ranks of one machine share a clock. So the steps are clustered
// by time within each machine first; each machine's step starts are then
// matched to the reference machine's (the one with the most steps) to find
// the shift that lines them up, and all ranks are clustered together on
// the shifted times. The shift serves the matching only; the times stay as
// logged (clock_align.h moves them, from the dependencies).
void shift_machine_clocks(const Timeline& timeline, const Run& run, std::vector<Entry>& entries) {
  std::vector<int32_t> machine_of(run.tracks.size());
  std::vector<int32_t> machines;
  for (uint32_t p = 0; p < run.tracks.size(); ++p) {
    machine_of[p] = timeline.tracks[run.tracks[p]].machine;
    machines.push_back(machine_of[p]);
  }
  std::sort(machines.begin(), machines.end());
  machines.erase(std::unique(machines.begin(), machines.end()), machines.end());
  if (machines.size() <= 1) return;
  auto slot = [&](int32_t m) { return std::lower_bound(machines.begin(), machines.end(), m) - machines.begin(); };
  const std::vector<MachineSteps> steps = steps_by_machine(entries, machine_of, machines, run.tracks.size());
  size_t ref = 0;
  for (size_t mi = 1; mi < machines.size(); ++mi) {
    if (steps[mi].starts.size() > steps[ref].starts.size()) ref = mi;
  }
  std::vector<int64_t> shift(machines.size(), 0);
  bool any = false;
  for (size_t mi = 0; mi < machines.size(); ++mi) {
    if (mi != ref) shift[mi] = coarse_shift(steps[ref], steps[mi]);
    any = any || shift[mi] != 0;
  }
  if (!any) return;
  auto shifted = [](int64_t t, int64_t d) {
    int64_t out;
    if (__builtin_add_overflow(t, d, &out)) out = d > 0 ? std::numeric_limits<int64_t>::max() : 0;
    return out;
  };
  for (Entry& e : entries) {
    int64_t d = shift[slot(machine_of[e.track_pos])];
    e.start = shifted(e.start, d);
    e.end = shifted(e.end, d);
  }
  std::sort(entries.begin(), entries.end(), by_start);
}

// A rank's steps must keep their order; if clock noise broke that, fall back
// to the rank's own order from its first cluster. Returns the clusters then.
int32_t keep_rank_order(std::vector<std::vector<int32_t>>& cluster_of, int32_t clusters) {
  for (std::vector<int32_t>& c : cluster_of) {
    for (size_t k = 1; k < c.size(); ++k) {
      if (c[k] >= 0 && c[k - 1] >= 0 && c[k] <= c[k - 1]) c[k] = c[k - 1] + 1;
    }
    for (int32_t v : c) clusters = std::max(clusters, v + 1);
  }
  return clusters;
}

// Each job's step, the run's numbering (from its marker's first step, else
// 0); a rank with no job in a step is reported.
void renumber_jobs(Timeline& timeline, Run& run, const std::vector<std::vector<int32_t>>& cluster_of, int32_t clusters,
                   unsigned threads) {
  int32_t base = run.has_marker ? run.marker_start_step : 0;
  run.steps.assign(clusters, StepSpan{});
  for (int32_t i = 0; i < clusters; ++i) run.steps[i].number = base + i;
  // Tracks in parallel; the steps each misses are said after, in track order.
  std::vector<std::vector<int32_t>> missing(run.tracks.size());
  parallel_for(run.tracks.size(), threads, [&](size_t p) {
    Track& t = timeline.tracks[run.tracks[p]];
    std::vector<uint8_t> present(clusters, 0);
    for (Job& j : t.jobs) {
      if (j.step < 0) continue;
      int32_t c = cluster_of[p][j.step];
      j.step = base + c;
      present[c] = 1;
    }
    for (int32_t c = 0; c < clusters; ++c) {
      if (!present[c] && !t.jobs.empty()) missing[p].push_back(c);
    }
  });
  for (uint32_t p = 0; p < run.tracks.size(); ++p) {
    const Track& t = timeline.tracks[run.tracks[p]];
    for (int32_t c : missing[p]) {
      timeline.diagnostics.add(IssueKind::kMissingStep, t.file, 0,
                               "rank " + std::to_string(t.rank) + " has no job in step " + std::to_string(base + c));
    }
  }
}

// What finalize_step_spans() works out from the jobs, from each track's
// local steps instead: a step's span is the union of the local steps it
// took, and its ranks the tracks that have one. The jobs' times have not
// changed since the local steps were taken, so the spans are the same, and
// the jobs are not read a third time (a tenth of the step numbering).
void spans_from_local_steps(Run& run, const std::vector<std::vector<LocalStep>>& locals,
                            const std::vector<std::vector<int32_t>>& cluster_of) {
  std::vector<StepSpan>& steps = run.steps;
  std::vector<uint32_t> seen_by(steps.size(), 0);  // 1 + the last track position counted
  for (size_t p = 0; p < locals.size(); ++p) {
    for (size_t k = 0; k < locals[p].size(); ++k) {
      const LocalStep& l = locals[p][k];
      const int32_t c = cluster_of[p][k];
      if (l.end < l.start || c < 0) continue;  // no job had this index
      StepSpan& s = steps[c];
      if (seen_by[c] == 0) {
        s.start_ns = l.start;
        s.end_ns = l.end;
      } else {
        s.start_ns = std::min(s.start_ns, l.start);
        s.end_ns = std::max(s.end_ns, l.end);
      }
      if (seen_by[c] != p + 1) {
        seen_by[c] = static_cast<uint32_t>(p + 1);
        ++s.ranks;
      }
    }
  }
  settle_step_spans(steps);
}

}  // namespace

void number_steps(Timeline& timeline, Run& run, unsigned threads) {
  std::vector<std::vector<LocalStep>> locals(run.tracks.size());
  std::vector<Entry> entries = local_step_entries(timeline, run, locals, threads);
  run.steps.clear();
  if (entries.empty()) return;
  shift_machine_clocks(timeline, run, entries);

  std::vector<std::vector<int32_t>> cluster_of(run.tracks.size());
  for (uint32_t p = 0; p < run.tracks.size(); ++p) cluster_of[p].assign(locals[p].size(), -1);
  int32_t clusters = cluster_by_time(entries, run.tracks.size(),
                                     [&](const Entry& e, int32_t c) { cluster_of[e.track_pos][e.local] = c; });
  refine_clusters(entries, clusters, cluster_of);
  clusters = keep_rank_order(cluster_of, clusters);
  renumber_jobs(timeline, run, cluster_of, clusters, threads);
  for (uint32_t track : run.tracks) assign_memory_steps(timeline.tracks[track]);
  // Spans from the local steps; clusters that ended up empty (only possible
  // after the order fix-up) are dropped.
  spans_from_local_steps(run, locals, cluster_of);
}

namespace {

// The step of each sample by line alone (see steps.h).
void memory_steps_by_line(Track& track, size_t first, size_t last) {
  std::vector<std::pair<uint32_t, int32_t>> by_line;  // (line, step) of every job
  by_line.reserve(track.jobs.size());
  for (const Job& j : track.jobs) by_line.emplace_back(j.line, j.step);
  std::sort(by_line.begin(), by_line.end());
  for (size_t i = first; i < last; ++i) {
    MemorySample& m = track.memory[i];
    m.step = -1;
    if (by_line.empty()) continue;
    bool looks_ahead = m.point == MemoryPoint::kStartPipeline || m.point == MemoryPoint::kBeforeForward ||
                       m.point == MemoryPoint::kBeforeBackward;
    auto at_or_after = std::lower_bound(by_line.begin(), by_line.end(), std::make_pair(m.line, INT32_MIN));
    auto at_or_before = std::upper_bound(by_line.begin(), by_line.end(), std::make_pair(m.line, INT32_MAX));
    bool has_after = at_or_after != by_line.end();
    bool has_before = at_or_before != by_line.begin();
    if ((looks_ahead && has_after) || !has_before) {
      m.step = at_or_after->second;
    } else {
      m.step = std::prev(at_or_before)->second;
    }
  }
}

// The step most of the track's jobs that start within [from, to) have; -1
// when none does.
int32_t step_of_window(const Track& track, int64_t from, int64_t to) {
  std::map<int32_t, uint32_t> votes;
  auto first = std::lower_bound(track.jobs.begin(), track.jobs.end(), from,
                                [](const Job& j, int64_t t) { return j.start_ns < t; });
  for (auto it = first; it != track.jobs.end() && it->start_ns < to; ++it) {
    if (it->step >= 0) ++votes[it->step];
  }
  int32_t best = -1;
  uint32_t most = 0;
  for (const auto& [step, n] : votes) {
    if (n > most) best = step, most = n;
  }
  return best;
}

}  // namespace

void assign_memory_steps(Track& track) {
  if (track.memory.empty()) return;
  // The samples from one Start line to the next are one call of the
  // pipeline: one step. Its step is that of the jobs that start within the
  // call's stamps (widened by the stamps' millisecond), so a log that prints a
  // step's job lines only after the next step's Start line (a profiler that
  // flushes late) numbers them right; a call without such jobs, and samples
  // before any Start line, go by line.
  const size_t n = track.memory.size();
  size_t begin = 0;
  while (begin < n) {
    size_t end = begin + 1;
    while (end < n && track.memory[end].point != MemoryPoint::kStartPipeline) ++end;
    const bool call = track.memory[begin].point == MemoryPoint::kStartPipeline;
    const int32_t step = call ? step_of_window(track, track.memory[begin].ts_ns,
                                               add_ns(track.memory[end - 1].ts_ns, kDetailsResolutionNs))
                              : -1;
    if (step >= 0) {
      for (size_t i = begin; i < end; ++i) track.memory[i].step = step;
    } else {
      memory_steps_by_line(track, begin, end);
    }
    begin = end;
  }
}

void set_origin(Timeline& timeline) {
  int64_t origin = std::numeric_limits<int64_t>::max();
  for (const Run& r : timeline.runs) origin = std::min(origin, r.first_ns);
  if (timeline.runs.empty()) origin = 0;
  for (const Track& t : timeline.tracks) {
    if (!t.memory.empty()) origin = std::min(origin, t.memory.front().ts_ns);
  }
  timeline.origin_ns = origin;
}

}  // namespace ppt
