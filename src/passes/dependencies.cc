#include "passes/dependencies.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "passes/pipeline.h"
#include "passes/pipeline_stage.h"
#include "util/bulk_memory.h"
#include "util/int_sort.h"
#include "util/ordered_parallel.h"
#include "util/parallel.h"

namespace ppt {
namespace {

// A job's place in the pipeline, packed so that a rank's jobs can be sorted
// and searched: (step, direction, chunk, micro-batch).
constexpr int64_t kStepBias = int64_t{1} << 23;  // steps in [-2^23, 2^23)
constexpr int32_t kMaxChunk = 127;

uint64_t pack_key(int32_t step, int dir, int32_t chunk, int32_t micro_batch) {
  uint64_t s = static_cast<uint64_t>(static_cast<int64_t>(step) + kStepBias) & 0xffffff;
  return (s << 40) | (uint64_t(dir & 1) << 39) | (uint64_t(chunk & 0x7f) << 32) | static_cast<uint32_t>(micro_batch);
}

bool packable(int32_t step, int32_t chunk) {
  return step >= -kStepBias && step < kStepBias && chunk >= 0 && chunk <= kMaxChunk;
}

// The jobs of one rank that take part in dependencies, grouped by key. A group
// holds more than one job only for the pieces of an overlapped job.
struct Group {
  uint64_t key;
  uint32_t first;  // the job that starts first: it consumes
  uint32_t last;   // the job that ends last: it produces
};

// A job's place in the pipeline, when it takes part in dependencies.
struct Place {
  int32_t step;
  int dir;  // 0 forward, 1 backward
  int32_t chunk;
  int32_t micro_batch;
};

enum class Takes { kNo, kNoMicroBatch, kYes };

// What a job type brings to place_of(), worked out once per type.
struct TypeRole {
  int dir = -1;  // 0 forward, 1 an input backward; -1 no part in dependencies
  int32_t chunk = 0;
};

std::vector<TypeRole> roles_of(const std::vector<JobClass>& classes) {
  std::vector<TypeRole> roles(classes.size());
  for (size_t k = 0; k < classes.size(); ++k) {
    const JobClass& c = classes[k];
    if (!c.role || (c.role != PlanRole::kForward && !is_input_backward(*c.role))) continue;
    roles[k] = {c.role == PlanRole::kForward ? 0 : 1, c.chunk < 0 ? 0 : c.chunk};
  }
  return roles;
}

[[gnu::always_inline]] inline Takes place_of(const Job& j, const std::vector<TypeRole>& roles, Place* place) {
  const TypeRole r = roles[j.type];
  if (r.dir < 0) return Takes::kNo;
  if (j.micro_batch < 0) return Takes::kNoMicroBatch;
  if (!packable(j.step, r.chunk)) return Takes::kNo;
  *place = {j.step, r.dir, r.chunk, j.micro_batch};
  return Takes::kYes;
}

// pack_key()'s inverse.
Place unpack_key(uint64_t key) {
  return {static_cast<int32_t>(static_cast<int64_t>((key >> 40) & 0xffffff) - kStepBias),
          static_cast<int>((key >> 39) & 1), static_cast<int32_t>((key >> 32) & 0x7f),
          static_cast<int32_t>(static_cast<uint32_t>(key))};
}

// A track's groups, one of two ways:
// - dense (the usual): a cell per (step, direction, chunk, micro-batch) in
//   the track's ranges, indexed directly. A track's keys fill most of that
//   box (each step runs every micro-batch), so no sort is needed, a lookup
//   is one index, and the consumers, walked in job order, give their edges
//   in consumer order.
// - sorted by key, with a search: when the box would be much larger than the
//   jobs (scattered steps or micro-batch ids).
struct TrackGroups {
  // Uninitialized when made (fill_cells() writes a table whole).
  struct Cell {
    uint32_t first_plus_one;  // 0: no job here
    uint32_t last;
  };
  uint32_t taking = 0;  // jobs that take part: at most one edge each
  bool dense = false;
  int32_t step0 = 0;
  uint32_t steps = 0, chunks = 0, micro_batches = 0;
  size_t box = 0;             // dense: the cells of the table
  Cell* cells = nullptr;      // dense: by index(place), in `own` or find_dependencies' one array
  std::vector<Cell> own;      // dense, in a small run: the table
  std::vector<Group> groups;  // otherwise: sorted by key

  bool in_box(const Place& p) const {
    return p.step >= step0 && static_cast<uint32_t>(p.step - step0) < steps &&
           static_cast<uint32_t>(p.chunk) < chunks && static_cast<uint32_t>(p.micro_batch) < micro_batches;
  }
  size_t index(const Place& p) const {
    return ((static_cast<size_t>(p.step - step0) * 2 + static_cast<size_t>(p.dir)) * chunks +
            static_cast<size_t>(p.chunk)) *
               micro_batches +
           static_cast<size_t>(p.micro_batch);
  }
  // The producing job of the group at `p`, or UINT32_MAX. `*hint` is where
  // the last search in this track ended (sorted groups): a consumer's places
  // mostly rise, so the next key wanted is mostly the next group.
  uint32_t producer(const Place& p, size_t* hint) const {
    if (dense) {
      if (!in_box(p)) return UINT32_MAX;
      const Cell& c = cells[index(p)];
      return c.first_plus_one != 0 ? c.last : UINT32_MAX;
    }
    const uint64_t key = pack_key(p.step, p.dir, p.chunk, p.micro_batch);
    size_t h = *hint;
    if (h < groups.size() && groups[h].key == key) {
      *hint = h + 1;
      return groups[h].last;
    }
    auto it = std::lower_bound(groups.begin(), groups.end(), key, [](const Group& g, uint64_t k) { return g.key < k; });
    *hint = static_cast<size_t>(it - groups.begin()) + 1;
    return it != groups.end() && it->key == key ? it->last : UINT32_MAX;
  }
};

struct Keyed {
  uint64_t key;
  uint32_t job;
};

// The box of a dense table may hold this many cells per job taking part.
constexpr uint64_t kCellsPerJob = 4;

// A track's groups: sorted, or, dense, the box of its table only (its cells
// are written by fill_cells).
TrackGroups group_track(const Track& t, const std::vector<TypeRole>& roles, uint64_t* without_mb) {
  TrackGroups out;
  // The ranges of the places, then the box they span.
  uint32_t& taking = out.taking;
  int32_t lo_step = INT32_MAX, hi_step = INT32_MIN, hi_chunk = 0, hi_mb = 0;
  for (const Job& j : t.jobs) {
    Place p;
    const Takes takes = place_of(j, roles, &p);
    if (takes == Takes::kNoMicroBatch) ++*without_mb;
    if (takes != Takes::kYes) continue;
    ++taking;
    lo_step = std::min(lo_step, p.step);
    hi_step = std::max(hi_step, p.step);
    hi_chunk = std::max(hi_chunk, p.chunk);
    hi_mb = std::max(hi_mb, p.micro_batch);
  }
  if (taking == 0) return out;
  const uint64_t box =
      (static_cast<uint64_t>(int64_t{hi_step} - lo_step) + 1) * 2 * (uint64_t(hi_chunk) + 1) * (uint64_t(hi_mb) + 1);
  if (box <= kCellsPerJob * taking + 64) {
    out.dense = true;
    out.step0 = lo_step;
    out.steps = static_cast<uint32_t>(hi_step - lo_step + 1);
    out.chunks = static_cast<uint32_t>(hi_chunk + 1);
    out.micro_batches = static_cast<uint32_t>(hi_mb + 1);
    out.box = box;
    return out;
  }
  std::vector<Keyed> keyed;
  keyed.reserve(taking);
  for (uint32_t i = 0; i < t.jobs.size(); ++i) {
    Place p;
    if (place_of(t.jobs[i], roles, &p) != Takes::kYes) continue;
    keyed.push_back({pack_key(p.step, p.dir, p.chunk, p.micro_batch), i});
  }
  // Jobs are in (start, line) order, and `keyed` in job order: a stable
  // sort by key orders ties by job, which keeps each group's pieces in
  // start order.
  std::vector<Keyed> scratch;
  radix_sort_by_key(keyed, scratch, [](const Keyed& k) { return k.key; });
  for (size_t i = 0; i < keyed.size();) {
    Group g{keyed[i].key, keyed[i].job, keyed[i].job};
    size_t k = i + 1;
    for (; k < keyed.size() && keyed[k].key == g.key; ++k) {
      if (t.jobs[keyed[k].job].end_ns > t.jobs[g.last].end_ns) g.last = keyed[k].job;
    }
    out.groups.push_back(g);
    i = k;
  }
  return out;
}

// A dense track's table, into `cells` (room for g.box cells).
void fill_cells(TrackGroups& g, const Track& t, const std::vector<TypeRole>& roles, TrackGroups::Cell* cells) {
  g.cells = cells;
  std::fill(cells, cells + g.box, TrackGroups::Cell{0, 0});
  // In job order, which is (start, line) order: a cell's first job starts
  // first; its last is the one that ends last (the first of those that
  // end together), as the sorted groups have it.
  for (uint32_t i = 0; i < t.jobs.size(); ++i) {
    Place p;
    if (place_of(t.jobs[i], roles, &p) != Takes::kYes) continue;
    TrackGroups::Cell& c = cells[g.index(p)];
    if (c.first_plus_one == 0) {
      c = {i + 1, i};
    } else if (t.jobs[i].end_ns > t.jobs[c.last].end_ns) {
      c.last = i;
    }
  }
}

std::string format_ms(int64_t ns) { return fmt::format("{:.3f} ms", static_cast<double>(ns) / 1e6); }

// The incoming edges of the tracks of one run: each consumer's group is
// matched with its producer's on the track of the producer's stage.
class RunSearch {
 public:
  RunSearch(const Timeline& tl, const Run& run, const std::vector<TrackGroups>& groups,
            const std::vector<TypeRole>& roles, ScheduleKind kind, int32_t p, int32_t stages)
      : tl_(tl), groups_(groups), roles_(roles), kind_(kind), p_(p), stages_(stages) {
    // (rank, track index) of this run, sorted by rank: the ranks present
    // only, not a table up to the highest rank (which may be far beyond the
    // logs read: docs/hardening.md, the index of a rank).
    for (uint32_t ti : run.tracks) {
      if (tl.tracks[ti].rank >= 0) track_of_rank_.emplace_back(tl.tracks[ti].rank, ti);
    }
    std::sort(track_of_rank_.begin(), track_of_rank_.end());
  }

  // The incoming edges of one track, sorted by consumer job.
  void search(uint32_t ti, std::vector<Dependency>& mine) const {
    const Track& t = tl_.tracks[ti];
    if (t.rank < 0) return;
    find_edges(ti, t, mine);
  }

 private:
  int64_t track_at(int32_t replica, int32_t stage) const {
    const int64_t rank = int64_t{replica} * p_ + stage;
    auto it = std::lower_bound(track_of_rank_.begin(), track_of_rank_.end(), std::make_pair(rank, int64_t{-1}));
    return it != track_of_rank_.end() && it->first == rank ? it->second : -1;
  }

  void find_edges(uint32_t ti, const Track& t, std::vector<Dependency>& mine) const {
    const int32_t stage = pipeline_stage(t.rank, p_);
    const int32_t replica = pipeline_replica(t.rank, p_);
    const TrackGroups& own = groups_[ti];
    // At most one edge a job that takes part: written by index into room
    // for all, then cut to those found (push_back was not inlined: 1% of a
    // conversion at 1024 ranks).
    mine.resize(own.taking);
    size_t found = 0;
    // Search hints by producer track: a handful of tracks feed one track.
    std::vector<std::pair<int64_t, size_t>> hints;
    // Where a group's producer is depends on its direction and chunk only
    // (the stage and replica are the track's): worked out once for each of
    // the 256 and kept, rather than per group.
    struct Source {
      bool known = false;
      int64_t track = -1;  // -1: no producer
      uint32_t chunk = 0;
      size_t hint = 0;  // into hints
    };
    std::array<Source, 256> sources{};
    auto source_of = [&](int dir, int32_t chunk) -> const Source& {
      Source& src = sources[static_cast<size_t>(dir << 7 | chunk)];
      if (src.known) return src;
      src.known = true;
      const int32_t v = virtual_stage(kind_, p_, stage, chunk);
      const int32_t from =
          producer_virtual_stage(dir == 0 ? DependencyKind::kForward : DependencyKind::kBackward, v, stages_);
      if (from < 0) return src;
      const StageChunk place = virtual_stage_place(kind_, p_, from);
      const int64_t pt = track_at(replica, place.stage);
      if (pt < 0) return src;
      src.track = pt;
      src.chunk = static_cast<uint32_t>(place.chunk & 0x7f);
      src.hint = hints.size();
      for (size_t h = 0; h < hints.size(); ++h) {
        if (hints[h].first == pt) src.hint = h;
      }
      if (src.hint == hints.size()) hints.emplace_back(pt, 0);
      return src;
    };
    // The edge into the group at `p`, whose first job is `consumer`.
    auto match = [&](uint32_t consumer, Place p) {
      const Source& src = source_of(p.dir, p.chunk);
      if (src.track < 0) return;
      p.chunk = static_cast<int32_t>(src.chunk);
      const uint32_t producer = groups_[src.track].producer(p, &hints[src.hint].second);
      if (producer == UINT32_MAX) return;
      Dependency e;
      e.producer = {static_cast<uint32_t>(src.track), producer};
      e.consumer = {ti, consumer};
      e.kind = p.dir == 0 ? DependencyKind::kForward : DependencyKind::kBackward;
      // check_dependencies()'s test, here: no second pass over the edges.
      e.contradicted = dependency_slack_ns(tl_, e) < 0;
      mine[found++] = e;
    };
    if (own.dense) {
      // Each cell's first job, in job order: the edges come in consumer order.
      for (uint32_t i = 0; i < t.jobs.size(); ++i) {
        Place p;
        if (place_of(t.jobs[i], roles_, &p) != Takes::kYes || own.cells[own.index(p)].first_plus_one != i + 1) {
          continue;
        }
        match(i, p);
      }
      mine.resize(found);
      return;
    }
    for (const Group& g : own.groups) match(g.first, unpack_key(g.key));
    mine.resize(found);
    sort_by_consumer(t, mine);
  }

  // By consumer job. A job is the first of at most one group, so it
  // consumes at most one edge: a scatter by job orders them.
  static void sort_by_consumer(const Track& t, std::vector<Dependency>& mine) {
    std::vector<uint32_t> at_job(t.jobs.size(), UINT32_MAX);
    for (uint32_t e = 0; e < mine.size(); ++e) at_job[mine[e].consumer.job] = e;
    std::vector<Dependency> sorted;
    sorted.reserve(mine.size());
    for (uint32_t e : at_job) {
      if (e != UINT32_MAX) sorted.push_back(mine[e]);
    }
    mine.swap(sorted);
  }

  const Timeline& tl_;
  const std::vector<TrackGroups>& groups_;
  const std::vector<TypeRole>& roles_;
  const ScheduleKind kind_;
  const int32_t p_;
  const int32_t stages_;
  std::vector<std::pair<int64_t, int64_t>> track_of_rank_;
};

// Tracks in parallel, appended in track order as each is done, with at
// most a few per thread found and not yet appended, so that the edges being
// found besides those kept stay few (20 bytes an edge, about one per job).
// (Windows of tracks searched by a parallel_for each left a thread waiting
// at every window's end and the appending to one thread between windows.)
void collect_edges(const Run& run, const RunSearch& search, const std::vector<TrackGroups>& groups, unsigned threads,
                   Dependencies& deps) {
  // At most one edge per job that takes part: room for all at once, not by
  // doubling.
  size_t most = deps.edges.size();
  for (uint32_t ti : run.tracks) most += groups[ti].taking;
  reserve_in_huge_pages(deps.edges, most);
  produce_in_parallel_consume_in_order<std::vector<Dependency>>(
      run.tracks.size(), threads, size_t{resolve_threads(threads)} * 8,
      [&](size_t k, std::vector<Dependency>& incoming) { search.search(run.tracks[k], incoming); },
      [&](size_t, std::vector<Dependency>& incoming) {
        for (const Dependency& e : incoming) deps.contradicted += e.contradicted ? 1 : 0;
        deps.edges.insert(deps.edges.end(), incoming.begin(), incoming.end());
        incoming.clear();
      });
}

}  // namespace

size_t Dependencies::count(DependencyKind kind) const {
  size_t n = 0;
  for (const Dependency& e : edges) n += e.kind == kind ? 1 : 0;
  return n;
}

Dependencies find_dependencies(const Timeline& tl, const PipelinePlan& plan, unsigned threads) {
  Dependencies deps;
  const std::vector<TypeRole> roles = roles_of(plan.classes);
  const PipelineShape& shape = plan.shape;
  const ScheduleInfo& schedule = plan.schedule;
  const int32_t p = std::max(1, shape.pp_degree);
  // V is the schedule's (schedule.h, recognize_schedule): one definition.
  const int32_t chunks = std::clamp(schedule.chunks, 1, kMaxChunk + 1);
  const int32_t stages = p * chunks;  // virtual stages

  // Each track's groups, then each track's incoming edges, are independent:
  // computed in parallel, stored by index and merged in order.
  std::vector<TrackGroups> groups(tl.tracks.size());
  std::vector<uint64_t> without_mb(tl.tracks.size(), 0);
  parallel_for(tl.tracks.size(), threads,
               [&](size_t i) { groups[i] = group_track(tl.tracks[i], roles, &without_mb[i]); });
  for (uint64_t n : without_mb) deps.jobs_without_micro_batch += n;
  // The dense tables of a large run in one array (20 MB at 1024 ranks), in
  // huge pages (util/bulk_memory.h): a vector a track took its fresh memory
  // 4 KB at a time, 3,000 page faults. Not initialized here: each table is
  // written whole by its track's task, on every thread. A small run's
  // tables are vectors of the heap, whose memory the writers reuse once
  // they are freed (one array of a few MB, a mapping of its own, was given
  // back and the writers' buffers faulted in afresh: 2-3% of a 64-rank
  // conversion).
  constexpr size_t kOneArrayBytes = size_t{16} << 20;
  std::vector<size_t> first_cell(tl.tracks.size(), 0);
  size_t cells = 0;
  for (size_t i = 0; i < groups.size(); ++i) {
    first_cell[i] = cells;
    cells += groups[i].dense ? groups[i].box : 0;
  }
  std::unique_ptr<TrackGroups::Cell[]> tables;
  if (cells * sizeof(TrackGroups::Cell) >= kOneArrayBytes) {
    tables.reset(new TrackGroups::Cell[cells]);
    prefer_huge_pages(tables.get(), cells * sizeof(TrackGroups::Cell));
  }
  parallel_for(tl.tracks.size(), threads, [&](size_t i) {
    TrackGroups& g = groups[i];
    if (!g.dense) return;
    if (!tables) g.own.resize(g.box);
    fill_cells(g, tl.tracks[i], roles, tables ? tables.get() + first_cell[i] : g.own.data());
  });

  for (const Run& run : tl.runs) {
    const RunSearch search(tl, run, groups, roles, schedule.kind, p, stages);
    collect_edges(run, search, groups, threads, deps);
  }
  return deps;
}

int64_t dependency_slack_ns(const Timeline& tl, const Dependency& e) {
  const Job& p = tl.tracks[e.producer.track].jobs[e.producer.job];
  const Job& c = tl.tracks[e.consumer.track].jobs[e.consumer.job];
  return c.start_ns - p.end_ns;
}

uint64_t check_dependencies(const Timeline& tl, Dependencies& deps, unsigned threads) {
  // In slices, in parallel: the count is a sum, the same for any split.
  constexpr size_t kSlice = size_t{1} << 16;
  const size_t slices = (deps.edges.size() + kSlice - 1) / kSlice;
  std::vector<uint64_t> counts(slices, 0);
  parallel_for(slices, threads, [&](size_t s) {
    const size_t end = std::min(deps.edges.size(), (s + 1) * kSlice);
    for (size_t i = s * kSlice; i < end; ++i) {
      Dependency& e = deps.edges[i];
      e.contradicted = dependency_slack_ns(tl, e) < 0;
      counts[s] += e.contradicted ? 1 : 0;
    }
  });
  uint64_t n = 0;
  for (uint64_t c : counts) n += c;
  deps.contradicted = n;
  return n;
}

std::string describe_job(const Timeline& tl, JobRef ref) {
  const Track& t = tl.tracks[ref.track];
  const Job& j = t.jobs[ref.job];
  std::string s = fmt::format("rank {} {}", t.rank, tl.types[j.type]);
  if (j.micro_batch >= 0) s += fmt::format(" micro-batch {}", j.micro_batch);
  s += fmt::format(" (step {})", j.step);
  return s;
}

void report_dependencies(Timeline& tl, const Dependencies& deps) {
  if (deps.jobs_without_micro_batch > 0) {
    std::vector<JobClass> classes = classify_types(tl.types);
    for (const Track& t : tl.tracks) {
      uint64_t n = 0;
      uint32_t first_line = 0;
      for (const Job& j : t.jobs) {
        const std::optional<PlanRole> r = classes[j.type].role;
        if (r && (r == PlanRole::kForward || is_input_backward(*r)) && j.micro_batch < 0) {
          if (n == 0) first_line = j.line;
          ++n;
        }
      }
      if (n == 0) continue;
      tl.diagnostics.add(IssueKind::kNoMicroBatch, t.file, first_line,
                         fmt::format("{} forward/backward jobs of rank {} have no micro_batch_id: no flow arrows "
                                     "for them, and they take no part in clock alignment",
                                     n, t.rank));
      if (n > 1) tl.diagnostics.count(IssueKind::kNoMicroBatch, n - 1);
    }
  }
  if (deps.contradicted == 0) return;  // the count is kept with the flags
  size_t kept = 0;
  for (const Dependency& e : deps.edges) {
    if (!e.contradicted) continue;
    if (kept >= Diagnostics::kKeepPerKind) {
      tl.diagnostics.count(IssueKind::kContradictedDependency);
      continue;
    }
    ++kept;
    const Track& pt = tl.tracks[e.producer.track];
    const Track& ct = tl.tracks[e.consumer.track];
    const Job& pj = pt.jobs[e.producer.job];
    const Job& cj = ct.jobs[e.consumer.job];
    tl.diagnostics.add(
        IssueKind::kContradictedDependency, ct.file, cj.line,
        fmt::format("{} starts {} before its input, {}, ends ({}:{})", describe_job(tl, e.consumer),
                    format_ms(pj.end_ns - cj.start_ns), describe_job(tl, e.producer), tl.files[pt.file].path, pj.line));
  }
}

DependencyIndex::DependencyIndex(const Timeline& tl, const Dependencies& deps) : deps_(deps) {
  auto before = [](const JobRef& a, const JobRef& b) { return a.track != b.track ? a.track < b.track : a.job < b.job; };
  const bool sorted =
      std::is_sorted(deps.edges.begin(), deps.edges.end(),
                     [&](const Dependency& a, const Dependency& b) { return before(a.consumer, b.consumer); });
  if (sorted) {
    track_first_.assign(tl.tracks.size() + 1, static_cast<uint32_t>(deps.edges.size()));
    for (size_t i = deps.edges.size(); i-- > 0;) track_first_[deps.edges[i].consumer.track] = static_cast<uint32_t>(i);
    for (size_t t = tl.tracks.size(); t-- > 0;) track_first_[t] = std::min(track_first_[t], track_first_[t + 1]);
    return;
  }
  track_base_.resize(tl.tracks.size() + 1, 0);
  for (size_t i = 0; i < tl.tracks.size(); ++i) track_base_[i + 1] = track_base_[i] + tl.tracks[i].jobs.size();
  const size_t jobs = track_base_.back();
  // Edges by consumer, in compressed rows.
  offsets_.assign(jobs + 1, 0);
  for (const Dependency& e : deps.edges) ++offsets_[track_base_[e.consumer.track] + e.consumer.job + 1];
  for (size_t k = 0; k < jobs; ++k) offsets_[k + 1] += offsets_[k];
  by_consumer_.resize(deps.edges.size());
  std::vector<uint32_t> fill(offsets_.begin(), offsets_.end() - 1);
  for (uint32_t i = 0; i < deps.edges.size(); ++i) {
    const JobRef& r = deps.edges[i].consumer;
    by_consumer_[fill[track_base_[r.track] + r.job]++] = i;
  }
}

DependencyIndex::Incoming DependencyIndex::incoming(JobRef job) const {
  if (!track_first_.empty()) {
    const auto first = deps_.edges.begin() + track_first_[job.track];
    const auto last = deps_.edges.begin() + track_first_[job.track + 1];
    auto lo =
        std::lower_bound(first, last, job.job, [](const Dependency& e, uint32_t j) { return e.consumer.job < j; });
    auto hi = std::upper_bound(lo, last, job.job, [](uint32_t j, const Dependency& e) { return j < e.consumer.job; });
    return {nullptr, static_cast<uint32_t>(lo - deps_.edges.begin()), static_cast<uint32_t>(hi - deps_.edges.begin())};
  }
  const size_t k = track_base_[job.track] + job.job;
  return {by_consumer_.data(), offsets_[k], offsets_[k + 1]};
}

}  // namespace ppt
