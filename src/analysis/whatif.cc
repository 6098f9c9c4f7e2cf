#include "analysis/whatif.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>

#include "model/job_types.h"
#include "passes/pipeline_stage.h"
#include "schedule/schedules.h"
#include "util/bulk_memory.h"
#include "util/checked.h"
#include "util/int_sort.h"
#include "util/median.h"
#include "util/parallel.h"
#include "util/rounding.h"
#include "util/text.h"

namespace ppt {
namespace {

constexpr size_t kF = static_cast<size_t>(PlanRole::kForward);
constexpr size_t kB = static_cast<size_t>(PlanRole::kBackward);
constexpr size_t kBb = static_cast<size_t>(PlanRole::kBackwardB);
constexpr size_t kBw = static_cast<size_t>(PlanRole::kBackwardW);

// The plan role of a job class; -1 for jobs that are not forward or backward
// work (the optimizer, lr, communication) and for pieces of overlapped jobs.
int role_of(const JobClass& c) {
  if (c.piece || c.no_pipeline || !c.role) return -1;
  switch (*c.role) {
    case PlanRole::kForward: return static_cast<int>(kF);
    case PlanRole::kBackward: return static_cast<int>(kB);
    case PlanRole::kBackwardB: return static_cast<int>(kBb);
    case PlanRole::kBackwardW: return static_cast<int>(kBw);
  }
  return -1;
}

// median_of_sorted's value without sorting (nth_element: O(n), where the
// fit's hundreds of thousands of durations made a sort a tenth of stats).
double median_unsorted(std::vector<int64_t>& v) {
  const size_t n = v.size();
  if (n == 0) return 0;
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (n % 2 == 1) return static_cast<double>(*mid);
  return (static_cast<double>(*std::max_element(v.begin(), mid)) + static_cast<double>(*mid)) / 2;
}

// Per type of the timeline: its plan role (role_of), kPlanRoles for the
// optimizer, -1 for anything else; once per type, as job_kind reads the
// type's name.
std::vector<int8_t> roles_by_type(const Timeline& tl, const PipelinePlan& plan) {
  std::vector<int8_t> out(tl.types.size());
  for (size_t i = 0; i < tl.types.size(); ++i) {
    out[i] = job_kind(tl.types[i]) == JobKind::kOptimizer ? static_cast<int8_t>(kPlanRoles)
                                                          : static_cast<int8_t>(role_of(plan.classes[i]));
  }
  return out;
}

// The run's tracks by stage, in run.tracks' order within a stage: the fit
// walks one stage at a time, holding only that stage's samples.
using StageTracks = std::map<int32_t, std::vector<uint32_t>>;
StageTracks tracks_by_stage(const Timeline& tl, const Run& run, int32_t stages) {
  StageTracks out;
  for (uint32_t ti : run.tracks) out[pipeline_stage(tl.tracks[ti].rank, stages)].push_back(ti);
  return out;
}

// Sorted once (a radix sort: a kind's durations lie within a few
// milliseconds, two or three passes), the median, p10 and p90 are read off
// and the mean between them is one run of the list; three selections over
// the whole list cost more than the sort.
DurationFit fit_durations(std::vector<int64_t> d, std::vector<int64_t>& scratch) {
  DurationFit f;
  f.count = d.size();
  if (d.empty()) return f;
  sort_int64(d, scratch);
  f.median_ns = std::llround(median_of_sorted(d));
  f.p10_ns = percentile_of_sorted(d, 0.10);
  f.p90_ns = percentile_of_sorted(d, 0.90);
  const auto lo = std::lower_bound(d.begin(), d.end(), f.p10_ns);
  const auto hi = std::upper_bound(lo, d.end(), f.p90_ns);
  double sum = 0;
  for (auto it = lo; it != hi; ++it) sum += static_cast<double>(*it);
  const auto n = static_cast<size_t>(hi - lo);
  f.cost_ns = n > 0 ? std::llround(sum / static_cast<double>(n)) : f.median_ns;
  return f;
}

int64_t median_rounded(std::vector<int64_t> v) { return std::llround(median_unsorted(v)); }

// The cost of every job of a target, per stage.
struct TargetCosts {
  std::vector<std::vector<std::array<int64_t, kPlanRoles>>> jobs;  // [stage][chunk][role]
  std::vector<int64_t> optimizer;                                  // by stage
  std::vector<std::array<int64_t, kPlanRoles + 1>> host_gap;       // [stage][role, kPlanRoles: optimizer]
};

// A link's lag under the changes: the pair's fitted lag, or the median of
// the measured pairs for a pair never measured.
int64_t target_link_ns(const CostModel& m, const WhatifChanges& ch, int32_t from, int32_t to) {
  if (from == to) return 0;
  auto it = m.link_ns.find({from, to});
  const int64_t l = it != m.link_ns.end() ? it->second : m.median_link_ns;
  return std::llround(static_cast<double>(l) * ch.link_scale);
}

int64_t measured(const CostModel& m, int32_t stage, size_t chunk, size_t role) {
  if (stage >= static_cast<int32_t>(m.jobs.size()) || chunk >= m.jobs[stage].size()) return -1;
  const DurationFit& f = m.jobs[stage][chunk][role];
  return f.count > 0 ? f.cost_ns : -1;
}

// A whole backward of the chunk: measured, else its two halves; -1 when neither.
int64_t whole_backward(const CostModel& m, int32_t stage, size_t chunk) {
  int64_t b = measured(m, stage, chunk, kB);
  if (b >= 0) return b;
  int64_t bb = measured(m, stage, chunk, kBb), bw = measured(m, stage, chunk, kBw);
  return bb >= 0 && bw >= 0 ? bb + bw : -1;
}

// One measured stage's costs of the target's jobs (target_costs): the
// measured chunk's when the target has the measured V, else the stage's
// total over the target's V; a split backward from the measured halves,
// else the whole one split by `w`; and its optimizer with the other work.
void stage_target_costs(const CostModel& m, int32_t s, size_t V, bool same_v, bool halves_from_w, double w,
                        TargetCosts& t) {
  const size_t mv = m.jobs[s].size();
  int64_t f_tot = 0, b_tot = 0, bb_tot = 0, bw_tot = 0;
  bool have_f = false, have_b = false, have_bb = false, have_bw = false;
  for (size_t c = 0; c < mv; ++c) {
    if (int64_t f = measured(m, s, c, kF); f >= 0) f_tot += f, have_f = true;
    if (int64_t b = whole_backward(m, s, c); b >= 0) b_tot += b, have_b = true;
    if (int64_t b = measured(m, s, c, kBb); b >= 0) bb_tot += b, have_bb = true;
    if (int64_t b = measured(m, s, c, kBw); b >= 0) bw_tot += b, have_bw = true;
  }
  const double share = static_cast<double>(V);
  for (size_t c = 0; c < V; ++c) {
    std::array<int64_t, kPlanRoles>& j = t.jobs[s][c];
    int64_t f = same_v ? measured(m, s, c, kF) : -1;
    int64_t b = same_v ? whole_backward(m, s, c) : -1;
    if (f < 0 && have_f) f = std::llround(f_tot / share);
    if (b < 0 && have_b) b = std::llround(b_tot / share);
    j[kF] = f;
    j[kB] = b;
    if (halves_from_w || !have_bb || !have_bw) {
      j[kBb] = b >= 0 ? std::llround(b * (1 - w)) : -1;
      j[kBw] = b >= 0 ? std::llround(b * w) : -1;
    } else {
      int64_t bb = same_v ? measured(m, s, c, kBb) : -1;
      int64_t bw = same_v ? measured(m, s, c, kBw) : -1;
      j[kBb] = bb >= 0 ? bb : std::llround(bb_tot / share);
      j[kBw] = bw >= 0 ? bw : std::llround(bw_tot / share);
    }
  }
  if (s < static_cast<int32_t>(m.optimizer.size()) && m.optimizer[s].count > 0) {
    t.optimizer[s] = m.optimizer[s].cost_ns + (s < static_cast<int32_t>(m.other_ns.size()) ? m.other_ns[s] : 0);
  }
}

// The median over the stages 0..P-1 of get(stage), leaving out the stages
// without one (< 0); 0 when none has one.
template <class Get>
int64_t median_over_stages(int32_t P, Get get) {
  std::vector<int64_t> v;
  for (int32_t s = 0; s < P; ++s) {
    if (int64_t x = get(s); x >= 0) v.push_back(x);
  }
  return v.empty() ? int64_t{0} : median_rounded(v);
}

// What a stage lacks (or, balanced, every stage) is the median stage's; then
// the stages the changes scale.
void fill_and_scale_stages(const WhatifChanges& ch, int32_t P, size_t V, TargetCosts& t) {
  for (size_t c = 0; c < V; ++c) {
    for (size_t r = 0; r < kPlanRoles; ++r) {
      int64_t med = median_over_stages(P, [&](int32_t s) { return t.jobs[s][c][r]; });
      for (int32_t s = 0; s < P; ++s) {
        if (ch.balance || t.jobs[s][c][r] < 0) t.jobs[s][c][r] = med;
      }
    }
  }
  int64_t opt_med = median_over_stages(P, [&](int32_t s) { return t.optimizer[s]; });
  for (int32_t s = 0; s < P; ++s) {
    if (ch.balance || t.optimizer[s] < 0) t.optimizer[s] = opt_med;
  }
  for (auto [stage, factor] : ch.stage_scale) {
    if (stage < 0 || stage >= P) continue;
    for (auto& j : t.jobs[stage]) {
      for (int64_t& x : j) x = std::llround(static_cast<double>(x) * factor);
    }
    t.optimizer[stage] = std::llround(static_cast<double>(t.optimizer[stage]) * factor);
  }
}

// Host gaps: a kind the stage never showed (its jobs of that kind always
// waited for their input, or the run has none) takes its split half's or
// whole backward's, else the median over the stages that showed it, else 0.
void target_host_gaps(const CostModel& m, int32_t P, TargetCosts& t) {
  t.host_gap.assign(P, {});
  for (int32_t s = 0; s < P; ++s) {
    const auto measured = s < m.stages ? m.host_gap_ns.find(s) : m.host_gap_ns.end();
    for (size_t r = 0; r <= kPlanRoles; ++r) {
      t.host_gap[s][r] = measured != m.host_gap_ns.end() ? measured->second[r] : -1;
    }
    const int64_t b = t.host_gap[s][kB];
    if (t.host_gap[s][kBb] < 0) t.host_gap[s][kBb] = b;
    if (t.host_gap[s][kBw] < 0) t.host_gap[s][kBw] = b;
    if (t.host_gap[s][kB] < 0 && t.host_gap[s][kBb] >= 0) t.host_gap[s][kB] = t.host_gap[s][kBb];
  }
  for (size_t r = 0; r <= kPlanRoles; ++r) {
    int64_t med = median_over_stages(P, [&](int32_t s) { return t.host_gap[s][r]; });
    for (int32_t s = 0; s < P; ++s) {
      if (t.host_gap[s][r] < 0) t.host_gap[s][r] = med;
    }
  }
}

// Per stage, the costs of a target's jobs from the model (stage_target_costs
// for the measured stages; the median stage's for the others, and with
// --balance for all), scaled by the changes, and the stages' host gaps.
TargetCosts target_costs(const CostModel& m, const PlanShape& shape, const WhatifChanges& ch, double w) {
  TargetCosts t;
  const int32_t P = shape.stages;
  const size_t V = static_cast<size_t>(std::max(1, shape.chunks));
  const bool same_v = shape.chunks == m.chunks;
  const bool halves_from_w = ch.w_share >= 0 || m.w_share < 0;
  t.jobs.assign(P, std::vector<std::array<int64_t, kPlanRoles>>(V, std::array<int64_t, kPlanRoles>{-1, -1, -1, -1}));
  t.optimizer.assign(P, -1);
  for (int32_t s = 0; s < P && s < m.stages; ++s) stage_target_costs(m, s, V, same_v, halves_from_w, w, t);
  fill_and_scale_stages(ch, P, V, t);
  target_host_gaps(m, P, t);
  return t;
}

// The measured run's jobs as ratios to their fitted costs, per step of the
// run (at most kSampledSteps, the last ones) and data-parallel replica: a
// replay of one step of one replica charges each job its target cost times
// the ratio its measured counterpart had in that step, so the jitter the run
// had, where the step's critical path picks the longer jobs, and the step's
// wait for its slowest replica are both replayed instead of averaged away.
constexpr size_t kSampledSteps = 32;

struct JitterSamples {
  int32_t replicas = 0, stages = 0, chunks = 1, micro_batches = 0;
  // [step * per_step + (((replica * P + stage) * V + chunk) * 4 + role) * M + mb]; < 0: none.
  // One array for every step (20 MB at 1024 ranks and M = 64), in huge pages
  // (util/bulk_memory.h), where a vector per step took a fresh 4 KB page at
  // a time: 4,000 page faults of a stats run at that size.
  std::vector<float> jobs;
  size_t per_step = 0;
  size_t steps = 0;
  std::vector<std::vector<float>> optimizer;  // [step][replica * P + stage]; < 0: none
  // [index(replica, stage, chunk, role, 0) / M]: the mean ratio of that rank's
  // jobs of the kind over the steps: what sets a rank apart from its stage's
  // other replicas (a slow GPU), which --balance takes away.
  std::vector<double> rank_factor;
  bool empty() const { return steps == 0; }
  const float* step_jobs(size_t step) const { return jobs.data() + step * per_step; }

  size_t index(int32_t replica, int32_t stage, size_t chunk, size_t role, int32_t mb) const {
    return (((static_cast<size_t>(replica) * stages + stage) * chunks + chunk) * kPlanRoles + role) * micro_batches +
           mb;
  }
  // The measured roles a target job of `role` reads, in order: its own, then
  // a split half's whole backward or a whole backward's halves.
  static std::array<size_t, 3> roles_tried(size_t role) {
    return role == kF    ? std::array<size_t, 3>{kF, kF, kF}
           : role == kB  ? std::array<size_t, 3>{kB, kBb, kBw}
           : role == kBb ? std::array<size_t, 3>{kBb, kB, kB}
                         : std::array<size_t, 3>{kBw, kB, kB};
  }
  // The ratio of the measured job a target job stands for: the same stage,
  // micro-batch (modulo the measured M) and role (a split half from a whole
  // backward and back), its chunk when V is the measured one, else the mean
  // over the measured chunks; 1 when none was measured.
  double ratio(size_t step, int32_t replica, int32_t stage, const PlanShape& shape, const PlanJob& job,
               bool jitter_only) const {
    if (micro_batches <= 0 || stage >= stages) return 1;
    const int32_t mb = job.micro_batch % micro_batches;
    const std::array<size_t, 3> roles = roles_tried(static_cast<size_t>(job.role));
    const float* v = step_jobs(step);
    for (size_t r : roles) {
      double sum = 0;
      int n = 0;
      for (size_t c = 0; c < static_cast<size_t>(chunks); ++c) {
        if (shape.chunks == chunks && c != static_cast<size_t>(job.chunk)) continue;
        const size_t i = index(replica, stage, c, r, mb);
        const float x = v[i];
        if (x >= 0) sum += jitter_only ? x / rank_factor[i / micro_batches] : x, ++n;
      }
      if (n > 0) return sum / n;
    }
    return 1;
  }
  // ratio()'s search for each job of a target's plan, made once for all the
  // replicas and steps the target replays (the per-replica replays spent
  // most of their time finding the same indices again), in flat arrays (a
  // vector of vectors held one or more allocations a job, each made and
  // freed again). Job j's groups are [first_group[j], first_group[j +
  // 1]), one per role ratio() tries, in its order; group g's indices are
  // [first_index[g], first_index[g + 1]) of `indices`: replica 0's measured
  // jobs (a replica's are replica 0's plus replica_offset()). No group: the
  // ratio is 1. single[j]: the index when job j's first group has one
  // (the usual case: its own chunk and role), else kNoSingle.
  struct Lookups {
    static constexpr uint32_t kNoSingle = std::numeric_limits<uint32_t>::max();
    std::vector<uint32_t> first_group{0}, first_index{0}, indices, single;
  };
  size_t replica_offset(int32_t replica) const { return index(replica, 0, 0, 0, 0); }
  // Appends the next job's groups to `l`.
  void add_lookup(Lookups& l, int32_t stage, const PlanShape& shape, const PlanJob& job) const {
    if (micro_batches > 0 && stage < stages) {
      const int32_t mb = job.micro_batch % micro_batches;
      const std::array<size_t, 3> roles = roles_tried(static_cast<size_t>(job.role));
      for (size_t k = 0; k < roles.size(); ++k) {
        if (k > 0 && roles[k] == roles[k - 1]) continue;  // the same indices: no more found than before
        for (size_t c = 0; c < static_cast<size_t>(chunks); ++c) {
          if (shape.chunks == chunks && c != static_cast<size_t>(job.chunk)) continue;
          l.indices.push_back(static_cast<uint32_t>(index(0, stage, c, roles[k], mb)));
        }
        l.first_index.push_back(static_cast<uint32_t>(l.indices.size()));
      }
    }
    const uint32_t g = l.first_group.back();
    l.first_group.push_back(static_cast<uint32_t>(l.first_index.size() - 1));
    const bool one = g + 1 < l.first_index.size() && l.first_index[g + 1] - l.first_index[g] == 1;
    l.single.push_back(one ? l.indices[l.first_index[g]] : Lookups::kNoSingle);
  }
  // For every job of the plan `l` was made for: round_to_int64(its base
  // cost (`base_ns`) x ratio(step, replica, ...)) into `out`, in one pass
  // (the per-replica replays' inner loop).
  void scaled_costs(size_t step, int32_t replica, const Lookups& l, bool jitter_only,
                    const std::vector<double>& base_ns, std::vector<int64_t>& out) const {
    const size_t base = replica_offset(replica);
    const float* v = step_jobs(step) + base;
    const uint32_t* first_group = l.first_group.data();
    const uint32_t* first_index = l.first_index.data();
    const uint32_t* indices = l.indices.data();
    const uint32_t* single = l.single.data();
    for (size_t j = 0; j < base_ns.size(); ++j) {
      // One measured job: the ratio is its own (sum / n with n = 1, exactly).
      if (const uint32_t i = single[j]; i != Lookups::kNoSingle && v[i] >= 0) {
        const double x = jitter_only ? v[i] / rank_factor[(base + i) / micro_batches] : v[i];
        out[j] = round_to_int64(base_ns[j] * x);
        continue;
      }
      double ratio = 1;
      for (uint32_t g = first_group[j]; g < first_group[j + 1]; ++g) {
        double sum = 0;
        int n = 0;
        for (uint32_t k = first_index[g]; k < first_index[g + 1]; ++k) {
          const uint32_t i = indices[k];
          const float x = v[i];
          if (x >= 0) sum += jitter_only ? x / rank_factor[(base + i) / micro_batches] : x, ++n;
        }
        if (n > 0) {
          ratio = sum / n;
          break;
        }
      }
      out[j] = round_to_int64(base_ns[j] * ratio);
    }
  }
};

JitterSamples collect_samples(const Timeline& tl, const PipelinePlan& plan, const CostModel& m, uint32_t run_index,
                              unsigned threads) {
  JitterSamples js;
  if (run_index >= tl.runs.size() || m.micro_batches <= 0) return js;
  const Run& run = tl.runs[run_index];
  if (run.steps.empty()) return js;
  const std::vector<int8_t> roles = roles_by_type(tl, plan);
  js.stages = m.stages;
  js.chunks = std::max(1, m.chunks);
  js.micro_batches = m.micro_batches;
  for (uint32_t ti : run.tracks)
    js.replicas = std::max(js.replicas, pipeline_replica(tl.tracks[ti].rank, m.stages) + 1);
  const size_t first = run.steps.size() > kSampledSteps ? run.steps.size() - kSampledSteps : 0;
  // The sampled steps by number, sorted, for a binary search; a track's jobs
  // come step after step, so most find the previous job's step again.
  std::vector<std::pair<int32_t, size_t>> step_index;
  for (size_t k = first; k < run.steps.size(); ++k) step_index.emplace_back(run.steps[k].number, k - first);
  std::sort(step_index.begin(), step_index.end());
  step_index.erase(std::unique(step_index.begin(), step_index.end(),
                               [](const auto& a, const auto& b) { return a.first == b.first; }),
                   step_index.end());
  const size_t per_step = js.index(js.replicas, 0, 0, 0, 0);
  js.per_step = per_step;
  js.steps = run.steps.size() - first;
  reserve_in_huge_pages(js.jobs, js.steps * per_step);
  js.jobs.assign(js.steps * per_step, -1.0F);
  js.optimizer.assign(run.steps.size() - first, std::vector<float>(static_cast<size_t>(js.replicas) * m.stages, -1.0F));
  // A track writes the cells of its (replica, stage) only: the tracks side
  // by side when no two of the run share a rank and none is negative
  // (run.tracks is by rank).
  bool distinct = run.tracks.empty() || tl.tracks[run.tracks.front()].rank >= 0;
  for (size_t i = 1; i < run.tracks.size(); ++i) {
    distinct = distinct && tl.tracks[run.tracks[i]].rank != tl.tracks[run.tracks[i - 1]].rank;
  }
  parallel_for(run.tracks.size(), distinct ? threads : 1, [&](size_t track) {
    const Track& t = tl.tracks[run.tracks[track]];
    const int32_t s = pipeline_stage(t.rank, m.stages), rep = pipeline_replica(t.rank, m.stages);
    auto k = step_index.end();
    for (const Job& j : t.jobs) {
      if (k == step_index.end() || k->first != j.step) {
        k = std::lower_bound(step_index.begin(), step_index.end(), j.step,
                             [](const auto& e, int32_t step) { return e.first < step; });
        if (k != step_index.end() && k->first != j.step) k = step_index.end();
      }
      if (k == step_index.end()) continue;
      const double d = static_cast<double>(j.end_ns - j.start_ns);
      const int role = roles[j.type];
      if (role == static_cast<int>(kPlanRoles)) {
        const int64_t cost = m.optimizer[s].cost_ns;
        if (cost > 0) js.optimizer[k->second][static_cast<size_t>(rep) * m.stages + s] = static_cast<float>(d / cost);
        continue;
      }
      const int32_t c = std::max(0, plan.classes[j.type].chunk);
      if (role < 0 || c >= js.chunks || j.micro_batch < 0 || j.micro_batch >= js.micro_batches) continue;
      const int64_t cost = m.jobs[s][static_cast<size_t>(c)][static_cast<size_t>(role)].cost_ns;
      if (cost <= 0) continue;
      js.jobs[k->second * per_step + js.index(rep, s, static_cast<size_t>(c), static_cast<size_t>(role),
                                              j.micro_batch)] = static_cast<float>(d / cost);
    }
  });
  // Each factor a sum over the steps, in step order: in slices of the
  // factors, in parallel, the same sums for any split.
  const size_t factors = per_step / js.micro_batches;
  js.rank_factor.assign(factors, 0.0);
  constexpr size_t kFactorSlice = 4096;
  parallel_for((factors + kFactorSlice - 1) / kFactorSlice, threads, [&](size_t slice) {
    const size_t lo = slice * kFactorSlice, hi = std::min(factors, lo + kFactorSlice);
    std::vector<uint32_t> counts(hi - lo, 0);
    const size_t mb = static_cast<size_t>(js.micro_batches);
    for (size_t k = 0; k < js.steps; ++k) {
      const float* step = js.step_jobs(k);
      for (size_t i = lo * mb; i < hi * mb; ++i) {
        if (step[i] >= 0) js.rank_factor[i / mb] += step[i], ++counts[i / mb - lo];
      }
    }
    for (size_t f = lo; f < hi; ++f) js.rank_factor[f] = counts[f - lo] > 0 ? js.rank_factor[f] / counts[f - lo] : 1;
  });
  return js;
}

// Moves every time of a replayed step by `d`.
void shift_step(ReplayedStep& step, int64_t d) {
  step.start_ns += d;
  step.end_ns += d;
  for (auto& stage : step.stages) {
    for (ReplayedJob& j : stage) j.start_ns += d, j.end_ns += d;
  }
  for (auto& [start, end] : step.optimizer) start += d, end += d;
}

// The period's range from the per-step replays alone: the mean less and
// plus twice its standard error (run_whatif widens it by the model's error).
void set_period_range(WhatifOutcome& o) {
  o.period_lo_ns = o.period_hi_ns = o.period_ns;
  const size_t n = o.step_periods_ns.size();
  if (n < 2 || o.period_ns <= 0) return;
  double mean = 0, sq = 0;
  for (double x : o.step_periods_ns) mean += x;
  mean /= static_cast<double>(n);
  for (double x : o.step_periods_ns) sq += (x - mean) * (x - mean);
  const double se = std::sqrt(sq / static_cast<double>(n - 1) / static_cast<double>(n));
  o.period_lo_ns = o.period_ns - 2 * se;
  o.period_hi_ns = o.period_ns + 2 * se;
}

// Widens an outcome's range by the model's own error (a fraction).
void widen_by_model_error(WhatifOutcome& o, double error) {
  if (!std::isfinite(error) || o.period_ns <= 0) return;
  o.period_lo_ns -= std::abs(error) * o.period_ns;
  o.period_hi_ns += std::abs(error) * o.period_ns;
}

// Which measured steps and replicas a target replays, as the measured plan's
// replay (the base) chose them:
//  - the steps: the base replays the measured steps from the last one back,
//    and stops once the range its mean needs is reached (twice the standard
//    error of the per-step periods within kRangeTarget of the mean, after at
//    least kMinSteps steps), or the steps run out; targets replay the same
//    steps, so the per-step figures pair up;
//  - the replicas: a step lasts as long as its slowest replica, and a
//    replica that was well ahead of the slowest under the measured plan (by
//    more than kReplicaMargin of the step) carries the same jobs' deviations
//    under any other plan, so it is not the slowest there either; a target
//    replays only the others (every replica with --balance, which takes the
//    ranks' own factors out and so can change which replica is slowest).
constexpr double kReplicaMargin = 0.03;
constexpr double kRangeTarget = 0.005;
constexpr size_t kMinSteps = 4;
struct StepChoice {
  size_t first = 0;                            // the first measured step (index into the samples) replayed
  std::vector<std::vector<int32_t>> replicas;  // [step index]: the replicas worth replaying
};

// The replay's costs from a target's costs (`t`, which must outlive them).
ReplayCosts replay_costs(const CostModel& m, const WhatifChanges& ch, const TargetCosts& t) {
  ReplayCosts costs;
  costs.duration_ns = [&t](int32_t stage, const PlanJob& job) {
    const auto& chunks = t.jobs[stage];
    size_t c = std::min(static_cast<size_t>(std::max(0, job.chunk)), chunks.size() - 1);
    return std::max<int64_t>(0, chunks[c][static_cast<size_t>(job.role)]);
  };
  costs.link_ns = [&m, &ch](int32_t from, int32_t to, PlanRole) { return target_link_ns(m, ch, from, to); };
  costs.optimizer_ns = t.optimizer;
  costs.step_gap_ns = m.step_gap_ns;
  costs.host_gap_ns = [&t](int32_t stage, const PlanJob& job) {
    return t.host_gap[stage][static_cast<size_t>(job.role)];
  };
  for (const auto& g : t.host_gap) costs.optimizer_gap_ns.push_back(g[kPlanRoles]);
  return costs;
}

// An outcome's figures from a replay of the fitted costs alone (no measured
// steps to replay).
void set_fitted_figures(WhatifOutcome& o) {
  o.period_ns = replay_period_ns(o.replay);
  double busy = 0;
  for (const ReplayedStep& s : o.replay.steps) busy += static_cast<double>(s.end_ns - s.start_ns);
  o.busy_ns = o.replay.steps.empty() ? 0 : busy / static_cast<double>(o.replay.steps.size());
  o.bubble_ratio = replay_bubble_ratio(o.replay);
}

// A target's replays of the measured steps (replay_outcome with samples):
// each measured step, each replica on its own with that step's jitter; the
// step lasts as long as its slowest replica. The slowest replica's steps, one
// after the other with the gap between them, are the prediction written out
// (-o): its mean period is this one.
//
// Each replica's replay of a step needs only its length and the stages' busy
// times: the plan's one order of waits (flatten_replay) is walked with the
// replica's durations, and the slowest replica's step alone is replayed in
// full for the prediction written out. The same figures as a full replay of
// every replica, a fraction of the time.
class StepReplays {
 public:
  StepReplays(const CostModel& m, const PlanShape& shape, const WhatifChanges& ch, const JitterSamples& samples,
              const TargetCosts& t, const ReplayCosts& costs, const std::vector<std::vector<PlanJob>>& plans,
              const PreparedReplay& prepared, const StepChoice* only, StepChoice* found, bool keep_steps)
      : m_(m),
        shape_(shape),
        ch_(ch),
        samples_(samples),
        t_(t),
        costs_(costs),
        prepared_(prepared),
        only_(only),
        found_(found),
        keep_steps_(keep_steps),
        total_(samples.steps) {
    all_.resize(static_cast<size_t>(std::max(0, samples.replicas)));
    for (size_t i = 0; i < all_.size(); ++i) all_[i] = static_cast<int32_t>(i);
    if (found_) found_->replicas.assign(total_, {});
    flat_ = flatten_replay(prepared, costs);
    flat_base_.resize(flat_.items.size());
    lookups_.first_group.reserve(flat_.items.size() + 1);
    lookups_.first_index.reserve(flat_.items.size() + 1);
    lookups_.indices.reserve(flat_.items.size());
    lookups_.single.reserve(flat_.items.size());
    for (size_t i = 0; i < flat_.items.size(); ++i) {
      const FlatReplay::Item& it = flat_.items[i];
      const PlanJob& job = plans[it.stage][it.index];
      const auto& chunks = t.jobs[it.stage];
      const size_t c = std::min(static_cast<size_t>(std::max(0, job.chunk)), chunks.size() - 1);
      flat_base_[i] = static_cast<double>(std::max<int64_t>(0, chunks[c][static_cast<size_t>(job.role)]));
      samples.add_lookup(lookups_, it.stage, shape, job);
    }
    durations_.resize(flat_.items.size());
  }

  // The steps `only` names, in order; without it (the base), from the last
  // step back until the range is reached (StepChoice), the steps it chose
  // then kept in `found`.
  void replay_steps() {
    if (only_) {
      for (size_t k = std::min(only_->first, total_); k < total_; ++k) replay_step(k);
      return;
    }
    size_t k = total_;
    while (k > 0) {
      replay_step(--k);
      const double n = static_cast<double>(periods_.size()), mean = sum_ / n;
      if (periods_.size() >= kMinSteps && mean > 0) {
        const double se = std::sqrt(std::max(0.0, (sq_ - n * mean * mean) / (n - 1)) / n);
        if (2 * se <= kRangeTarget * mean) break;
      }
    }
    if (found_) found_->first = k;
    std::reverse(periods_.begin(), periods_.end());
    std::reverse(slowest_steps_.begin(), slowest_steps_.end());
  }

  // The outcome's replay (the slowest replicas' steps stitched; without
  // keep_steps, the one replay of the fitted costs stays) and figures.
  void write(WhatifOutcome& o, int32_t steps) {
    if (keep_steps_) stitch(o, steps);
    o.step_periods_ns = std::move(periods_);
    const double n = static_cast<double>(std::max<size_t>(1, o.step_periods_ns.size()));
    o.busy_ns = span_sum_ / n;
    o.period_ns = o.busy_ns + static_cast<double>(m_.step_gap_ns);
    o.bubble_ratio = room_ > 0 ? idle_ / room_ : 0;
  }

 private:
  void stitch(WhatifOutcome& o, int32_t steps) {
    ReplayResult stitched;
    stitched.shape = shape_;
    stitched.peak_in_flight = o.replay.peak_in_flight;
    int64_t at = 0;
    for (ReplayedStep& st : slowest_steps_) {
      if (st.stages.empty()) continue;
      shift_step(st, at - st.start_ns);
      at = st.end_ns + std::max<int64_t>(0, m_.step_gap_ns);
      stitched.steps.push_back(std::move(st));
    }
    if (!stitched.steps.empty()) {
      o.replay = std::move(stitched);
    } else {
      o.replay = replay_prepared(prepared_, costs_, std::max(2, steps));  // as without measured steps
    }
  }

  // The costs of step k on replica `rep`: the fitted ones times the jitter.
  ReplayCosts replica_costs(size_t k, int32_t rep) const {
    ReplayCosts one = costs_;
    one.duration_ns = [this, k, rep](int32_t stage, const PlanJob& job) {
      // costs.duration_ns's figure, read here without its call.
      const auto& chunks = t_.jobs[stage];
      const size_t c = std::min(static_cast<size_t>(std::max(0, job.chunk)), chunks.size() - 1);
      const double base = static_cast<double>(std::max<int64_t>(0, chunks[c][static_cast<size_t>(job.role)]));
      return std::llround(base * samples_.ratio(k, rep, stage, shape_, job, ch_.balance));
    };
    replica_optimizer(k, rep, one.optimizer_ns);
    return one;
  }

  // replica_costs' optimizer costs alone, into `out` (the per-replica
  // replays read no more of them).
  void replica_optimizer(size_t k, int32_t rep, std::vector<int64_t>& out) const {
    out = costs_.optimizer_ns;
    for (int32_t st = 0; st < shape_.stages && st < samples_.stages; ++st) {
      const float r = samples_.optimizer[k][static_cast<size_t>(rep) * samples_.stages + st];
      if (r >= 0 && !ch_.balance) out[st] = std::llround(static_cast<double>(t_.optimizer[st]) * r);
    }
  }

  void replay_step(size_t k) {
    int64_t span = -1;
    int32_t slowest_rep = -1;
    std::vector<int64_t> busy;
    ReplayedStep slowest;
    const std::vector<int32_t>& reps =
        only_ && !ch_.balance && k < only_->replicas.size() && !only_->replicas[k].empty() ? only_->replicas[k] : all_;
    spans_.assign(all_.size(), -1);
    for (int32_t rep : reps) {
      if (!flat_.error.empty()) continue;  // not after replay_outcome's first replay, which walked the same waits
      samples_.scaled_costs(k, rep, lookups_, ch_.balance, flat_base_, durations_);
      replica_optimizer(k, rep, optimizer_);
      const int64_t len = replay_flat_step(flat_, durations_, optimizer_, stage_busy_, free_at_, ends_);
      busy.insert(busy.end(), stage_busy_.begin(), stage_busy_.end());
      spans_[static_cast<size_t>(rep)] = len;
      if (len > span) span = len, slowest_rep = rep;
    }
    if (keep_steps_ && slowest_rep >= 0) {
      ReplayResult rr = replay_prepared(prepared_, replica_costs(k, slowest_rep), 1);
      if (rr.error.empty() && !rr.steps.empty()) slowest = std::move(rr.steps[0]);
    }
    if (span < 0) span = 0;
    if (found_) keep_close_replicas(k, span);
    const double period = static_cast<double>(span + m_.step_gap_ns);
    span_sum_ += static_cast<double>(span);
    periods_.push_back(period);
    sum_ += period;
    sq_ += period * period;
    for (int64_t b : busy) idle_ += static_cast<double>(span - b);
    room_ += static_cast<double>(span) * static_cast<double>(busy.size());
    slowest_steps_.push_back(std::move(slowest));
  }

  // The replicas of step k within kReplicaMargin of its slowest (StepChoice).
  void keep_close_replicas(size_t k, int64_t span) {
    for (size_t rep = 0; rep < spans_.size(); ++rep) {
      if (spans_[rep] >= 0 && static_cast<double>(spans_[rep]) >= (1 - kReplicaMargin) * static_cast<double>(span)) {
        found_->replicas[k].push_back(static_cast<int32_t>(rep));
      }
    }
  }

  const CostModel& m_;
  const PlanShape& shape_;
  const WhatifChanges& ch_;
  const JitterSamples& samples_;
  const TargetCosts& t_;
  const ReplayCosts& costs_;
  const PreparedReplay& prepared_;
  const StepChoice* only_;
  StepChoice* found_;
  const bool keep_steps_;  // the slowest replicas' steps replayed in full and kept (o.replay)
  const size_t total_;
  std::vector<int32_t> all_;
  std::vector<int64_t> spans_;
  std::vector<ReplayedStep> slowest_steps_;  // in the order replayed
  std::vector<double> periods_;
  double span_sum_ = 0, idle_ = 0, room_ = 0, sum_ = 0, sq_ = 0;
  FlatReplay flat_;
  std::vector<double> flat_base_;  // costs.duration_ns's figure per item
  JitterSamples::Lookups lookups_;
  std::vector<int64_t> durations_, optimizer_, stage_busy_, free_at_, ends_;
};

WhatifOutcome replay_outcome(const CostModel& m, const PlanShape& shape, const WhatifChanges& ch, double w,
                             int32_t steps, const JitterSamples& samples, PlanCache& plan_cache,
                             const StepChoice* only = nullptr, StepChoice* found = nullptr, bool keep_steps = true) {
  WhatifOutcome o;
  o.shape = shape;
  if (std::string why = check_plan_shape(shape, &plan_cache); !why.empty()) {
    o.error = why;
    return o;
  }
  const TargetCosts t = target_costs(m, shape, ch, w);
  const ReplayCosts costs = replay_costs(m, ch, t);
  // The plans are built, checked and their waits found once for every
  // replay below. With measured steps to
  // replay, this replay of the fitted costs only says whether the plan runs
  // and its peak in flight (both the plan's, whatever the costs and steps):
  // one step does; the per-step replays below are the prediction.
  const std::vector<std::vector<PlanJob>> plans = pipeline_plan(shape, &plan_cache);
  const PreparedReplay prepared = prepare_replay(shape, plans);  // checked and its waits found once
  o.replay = replay_prepared(prepared, costs, samples.empty() ? std::max(2, steps) : 1);
  if (!o.replay.error.empty()) {
    o.error = o.replay.error;
    return o;
  }
  o.peak_in_flight = o.replay.peak_in_flight;
  if (samples.empty()) {
    set_fitted_figures(o);
  } else {
    StepReplays replays(m, shape, ch, samples, t, costs, plans, prepared, only, found, keep_steps);
    replays.replay_steps();
    replays.write(o, steps);
  }
  set_period_range(o);
  if (o.period_ns > 0) {
    o.micro_batches_per_second = 1e9 / o.period_ns * shape.micro_batches * std::max(1, m.replicas);
    o.time_per_micro_batch_ns = o.period_ns / shape.micro_batches;
  }
  return o;
}

// The measured plan's shape; `why` says what stops it from being replayed.
PlanShape measured_shape(const CostModel& m, std::string* why, PlanCache& plans) {
  PlanShape s;
  s.schedule = m.schedule;
  s.stages = std::max(1, m.stages);
  s.micro_batches = std::max(1, m.micro_batches);
  s.chunks = std::max(1, m.chunks);
  if (m.schedule == ScheduleKind::kUnknown || m.schedule == ScheduleKind::kNoPipeline) {
    *why = fmt::format("the measured schedule is {}: there is no plan to replay", schedule_name(m.schedule));
  } else if (m.micro_batches <= 0) {
    *why = "the measured run's micro-batch count is unknown";
  } else {
    *why = check_plan_shape(s, &plans);
  }
  return s;
}

double effective_w(const CostModel& m, const WhatifChanges& ch) {
  if (ch.w_share >= 0) return ch.w_share;
  return m.w_share >= 0 ? m.w_share : 0.5;
}

int32_t target_chunks(const CostModel& m, ScheduleKind k, int32_t asked) {
  if (!schedule_chunked(k)) return 1;
  if (asked > 0) return asked;
  return m.chunks > 1 ? m.chunks : 2;
}

}  // namespace

double relative_time(const WhatifOutcome& o, const WhatifOutcome& base, bool* per_micro_batch) {
  const bool per_mb = o.shape.micro_batches != base.shape.micro_batches;
  if (per_micro_batch) *per_micro_batch = per_mb;
  if (o.failed() || base.failed() || o.period_ns <= 0 || base.period_ns <= 0) return 0;
  const double a = per_mb ? o.period_ns / std::max(1, o.shape.micro_batches) : o.period_ns;
  const double b = per_mb ? base.period_ns / std::max(1, base.shape.micro_batches) : base.period_ns;
  return a / b - 1;
}

namespace {

// The host gaps (CostModel::host_gap_ns): per track of the run, each pair of
// consecutive forward/backward jobs (and the last of them and the optimizer)
// in one step, where the second's input was there by the first's end: its
// producers on other stages (the dependency edges, which are sorted by
// consumer) ended, plus the fitted link, no later than that. The pair's gap
// (0 where they overlap) is a sample of its stage and the second's kind.
void fit_host_gaps(const Timeline& tl, const PipelinePlan& plan, const Dependencies& deps,
                   const StageTracks& tracks_of_stage, const std::vector<int32_t>& stage_of, CostModel& m,
                   unsigned threads) {
  const std::vector<int8_t> roles = roles_by_type(tl, plan);
  // By stage, for the stages with samples only: P may be a run's whole rank
  // count when few of its logs are loaded (docs/hardening.md). One stage at
  // a time on each thread: its samples are held until its medians only.
  auto link = [&](int32_t from, int32_t to) {
    auto it = m.link_ns.find({from, to});
    return it != m.link_ns.end() ? it->second : m.median_link_ns;
  };
  // The stages side by side (each reads the links, written before, and its
  // own tracks), their medians put into the model in stage order after.
  struct StageGaps {
    bool any = false;
    std::array<int64_t, kPlanRoles + 1> gaps{};
    uint64_t samples = 0;
  };
  std::vector<const StageTracks::value_type*> stages;
  for (const auto& entry : tracks_of_stage) stages.push_back(&entry);
  std::vector<StageGaps> found(stages.size());
  parallel_for(stages.size(), threads, [&](size_t i) {
    const int32_t s = stages[i]->first;
    const std::vector<uint32_t>& tracks = stages[i]->second;
    std::array<std::vector<int64_t>, kPlanRoles + 1> kinds;
    bool any = false;
    // The links into one stage, by producer stage: a stage is fed by one or
    // two others, so a few entries searched in a row beat a map lookup per
    // dependency.
    std::vector<std::pair<int32_t, int64_t>> links_in;
    auto link_into = [&](int32_t from) {
      for (const auto& [f, ns] : links_in) {
        if (f == from) return ns;
      }
      return links_in.emplace_back(from, link(from, s)).second;
    };
    for (uint32_t ti : tracks) {
      const Track& t = tl.tracks[ti];
      auto e = std::lower_bound(deps.edges.begin(), deps.edges.end(), ti,
                                [](const Dependency& d, uint32_t track) { return d.consumer.track < track; });
      int64_t prev_end = 0;
      int32_t prev_step = std::numeric_limits<int32_t>::min();
      bool have_prev = false;
      for (uint32_t k = 0; k < t.jobs.size(); ++k) {
        const Job& j = t.jobs[k];
        int64_t ready = std::numeric_limits<int64_t>::min();
        for (; e != deps.edges.end() && e->consumer.track == ti && e->consumer.job <= k; ++e) {
          if (e->consumer.job != k) continue;
          const int32_t from = stage_of[e->producer.track];
          const int64_t arrive =
              tl.tracks[e->producer.track].jobs[e->producer.job].end_ns + (from == s ? 0 : link_into(from));
          ready = std::max(ready, arrive);
        }
        const int role = roles[j.type];
        const bool optimizer = role == static_cast<int>(kPlanRoles);
        if (role < 0) {  // lr, communication, pieces: no pair across them
          have_prev = false;
          continue;
        }
        if (have_prev && j.step == prev_step && ready <= prev_end) {
          kinds[static_cast<size_t>(role)].push_back(std::max<int64_t>(0, j.start_ns - prev_end));
          any = true;
        }
        have_prev = !optimizer;
        prev_end = j.end_ns;
        prev_step = j.step;
      }
    }
    if (!any) return;
    StageGaps& out = found[i];
    out.any = true;
    for (size_t r = 0; r <= kPlanRoles; ++r) {
      out.samples += kinds[r].size();
      out.gaps[r] = kinds[r].empty() ? -1 : median_rounded(std::move(kinds[r]));
    }
  });
  m.host_gap_ns.clear();
  for (size_t i = 0; i < stages.size(); ++i) {
    if (!found[i].any) continue;
    m.host_gap_samples += found[i].samples;
    m.host_gap_ns[stages[i]->first] = found[i].gaps;
  }
}

}  // namespace

bool within_noise(const WhatifOutcome& a, const WhatifOutcome& b) {
  if (a.failed() || b.failed() || a.period_ns <= 0 || b.period_ns <= 0) return false;
  const bool per_mb = a.shape.micro_batches != b.shape.micro_batches;
  const double da = per_mb ? std::max(1, a.shape.micro_batches) : 1.0;
  const double db = per_mb ? std::max(1, b.shape.micro_batches) : 1.0;
  return a.period_lo_ns / da <= b.period_hi_ns / db && b.period_lo_ns / db <= a.period_hi_ns / da;
}

namespace {

// A backward_b as a backward, so that a split is no difference.
PlanJob coarse(PlanJob j) {
  if (j.role == PlanRole::kBackwardB) j.role = PlanRole::kBackward;
  return j;
}

// Per stage, the plan's forwards and backwards (coarse, backward_w left out).
std::vector<std::vector<PlanJob>> expected_jobs(const PlanShape& shape, PlanCache& plans) {
  std::vector<std::vector<PlanJob>> expected(static_cast<size_t>(shape.stages));
  for (int32_t st = 0; st < shape.stages; ++st) {
    for (const PlanJob& j : stage_plan(shape, st, &plans)) {
      if (j.role != PlanRole::kBackwardW) expected[static_cast<size_t>(st)].push_back(coarse(j));
    }
  }
  return expected;
}

// One step of a rank (`got`) against its stage's plan (`want`).
void close_step(const Track& t, int32_t step, const std::vector<PlanJob>& got, const std::vector<PlanJob>& want,
                RunChecks& c) {
  if (got.empty()) return;
  ++c.plan_steps;
  // A step with fewer jobs lost some (a bad line, a cut log): said
  // above; one with as many or more runs another plan.
  if (got != want && got.size() >= want.size()) {
    ++c.off_plan;
    if (!c.example) {
      size_t i = 0;
      while (i < got.size() && i < want.size() && got[i] == want[i]) ++i;
      auto at = [&](const std::vector<PlanJob>& v) { return i < v.size() ? std::optional(v[i]) : std::nullopt; };
      c.example = PlanDifference{t.rank, step, i + 1, at(got), at(want)};
    }
  }
}

// One track's checks in one pass over its jobs (check_run):
// - its usual steps: each step's jobs (type, micro-batch, pieces left out)
//   as one 64-bit FNV-1a hash in order, so that steps are compared without
//   keeping their jobs (a track's jobs are in start order, a step's jobs
//   contiguous); the steps not running the rank's most common jobs count
//   (a schedule that changes inside the run);
// - with `want` (its stage's plan), each step's forwards and backwards
//   (close_step) against it; none when its jobs have no micro-batch ids.
void check_track(const Track& t, const PipelinePlan& plan, const std::vector<int8_t>& roles,
                 const std::vector<PlanJob>* want, RunChecks& c) {
  std::vector<std::pair<int32_t, uint64_t>> steps;  // (step, hash)
  std::vector<PlanJob> got;
  int32_t step = std::numeric_limits<int32_t>::min();
  for (const Job& j : t.jobs) {
    if (!plan.classes[j.type].piece) {
      if (steps.empty() || steps.back().first != j.step) steps.emplace_back(j.step, 14695981039346656037ULL);
      uint64_t& h = steps.back().second;
      for (uint64_t x : {static_cast<uint64_t>(j.type), static_cast<uint64_t>(static_cast<uint32_t>(j.micro_batch))}) {
        h = (h ^ x) * 1099511628211ULL;
      }
    }
    if (!want) continue;
    const int role = roles[j.type];
    if (role < 0 || role == static_cast<int>(kPlanRoles) || role == static_cast<int>(kBw)) continue;
    if (j.micro_batch < 0) {  // no micro-batch ids: nothing to compare
      want = nullptr;
      got.clear();
      continue;
    }
    if (j.step != step) {
      close_step(t, step, got, *want, c);
      got.clear();
      step = j.step;
    }
    got.push_back(coarse({static_cast<PlanRole>(role), std::max(0, plan.classes[j.type].chunk), j.micro_batch}));
  }
  if (want) close_step(t, step, got, *want, c);

  std::map<uint64_t, uint32_t> count;
  uint32_t most = 0;
  for (const auto& [s, hash] : steps) most = std::max(most, ++count[hash]);
  const uint32_t n = static_cast<uint32_t>(steps.size());
  c.off_steps += n - most;
  c.rank_steps += n;
  const double share = n > 0 ? static_cast<double>(n - most) / n : 0;
  if (share > c.worst_share) c.worst_share = share, c.worst_rank = t.rank;
}

}  // namespace

RunChecks check_run(const Timeline& tl, const PipelinePlan& plan, uint32_t run_index, const CostModel& m,
                    PlanCache& plans) {
  RunChecks c;
  if (run_index >= tl.runs.size()) return c;
  const Run& run = tl.runs[run_index];
  // The run against the plan the model replays: per rank and step, its
  // forwards and backwards (a backward_b as a backward, backward_w left out,
  // so that a split is no difference) against the plan's. Steps that differ
  // are a run of another schedule or M than the one recognised (a log whose
  // runs changed schedule), or steps that lost jobs.
  std::string why;
  c.shape = measured_shape(m, &why, plans);
  c.plan_compared = why.empty();
  const std::vector<int8_t> roles = roles_by_type(tl, plan);
  const std::vector<std::vector<PlanJob>> expected =
      c.plan_compared ? expected_jobs(c.shape, plans) : std::vector<std::vector<PlanJob>>{};
  for (uint32_t ti : run.tracks) {
    const Track& t = tl.tracks[ti];
    // Overlapping jobs: the replay runs one job at a time per stage.
    c.jobs += t.jobs.size();
    c.overlapping += t.overlapping_jobs;
    const std::vector<PlanJob>* want =
        c.plan_compared ? &expected[static_cast<size_t>(pipeline_stage(t.rank, c.shape.stages))] : nullptr;
    check_track(t, plan, roles, want, c);
  }
  return c;
}

namespace {

// The typical job: the median of the fitted kinds' medians; 0 when none.
int64_t typical_job_ns(const CostModel& m) {
  std::vector<int64_t> medians;
  for (const auto& stage : m.jobs) {
    for (const auto& chunk : stage) {
      for (const DurationFit& f : chunk) {
        if (f.count > 0) medians.push_back(f.median_ns);
      }
    }
  }
  return medians.empty() ? 0 : median_rounded(medians);
}

// What the run's shape says: several runs, overlapping jobs, a coarse
// resolution (against the typical job), one step, the model's error.
void run_warnings(const Timeline& tl, const Stats& stats, const CostModel& m, double model_error, const RunChecks& c,
                  std::vector<ModelWarning>& w) {
  const Run& run = tl.runs[stats.run];
  if (tl.runs.size() > 1) {
    model_warning::SeveralRuns runs{tl.runs.size(), stats.run, !run.steps.empty(), 0, 0, run.tracks.size()};
    if (runs.has_steps) runs.first_step = run.steps.front().number, runs.last_step = run.steps.back().number;
    w.push_back(runs);
  }
  if (c.overlapping > 0 && c.jobs > 0) w.push_back(model_warning::OverlappingJobs{c.overlapping, c.jobs});
  const int64_t typical = typical_job_ns(m);
  if (tl.resolution_ns > 1 && typical > 0 && tl.resolution_ns * 10 > typical) {
    w.push_back(model_warning::CoarseResolution{tl.resolution_ns, typical});
  }
  if (stats.step_period.count == 0) w.push_back(model_warning::OneStep{});
  if (std::isfinite(model_error) && std::abs(model_error) > 0.02) w.push_back(model_warning::ModelError{model_error});
}

}  // namespace

std::vector<ModelWarning> whatif_warnings(const Timeline& tl, const Stats& stats, const CostModel& m,
                                          double model_error, const RunChecks& c,
                                          std::optional<model_warning::Refusal>* refusal) {
  std::vector<ModelWarning> w;
  if (stats.run >= tl.runs.size()) return w;
  run_warnings(tl, stats, m, model_error, c, w);
  if (c.off_steps > 0) {
    w.push_back(model_warning::UnusualSteps{c.off_steps, c.rank_steps, c.worst_rank, c.worst_share});
  }
  if (c.plan_compared && refusal && !*refusal && c.off_plan > 0 && c.plan_steps > 0) {
    const double share = static_cast<double>(c.off_plan) / c.plan_steps;
    const PlanDifference example = c.example.value_or(PlanDifference{});
    if (share > 0.25) {
      *refusal = model_warning::Refusal{share, c.shape, example};
    } else {
      w.push_back(model_warning::OffPlan{c.off_plan, c.plan_steps, c.shape, example});
    }
  }
  return w;
}

std::vector<ModelWarning> whatif_warnings(const Timeline& tl, const PipelinePlan& plan, const Stats& stats,
                                          const CostModel& m, double model_error,
                                          std::optional<model_warning::Refusal>* refusal, PlanCache* plan_cache) {
  PlanCache once;  // without the caller's cache: one for this call
  return whatif_warnings(tl, stats, m, model_error, check_run(tl, plan, stats.run, m, plan_cache ? *plan_cache : once),
                         refusal);
}

CostModel fit_cost_model(const Timeline& tl, const PipelinePlan& plan, const Dependencies& deps, const Stats& stats) {
  return fit_cost_model(tl, plan, deps, stats.run);
}

namespace {

// Per type of the timeline, what the fit does with its jobs: a plan role
// (0-3: their durations are fitted, by chunk), the optimizer, a piece of an
// overlapped job (counted), other timed work (lr, communication: counted
// with the optimizer), or nothing. One table lookup a job.
struct FitTypes {
  static constexpr int8_t kOptimizer = kPlanRoles, kPiece = kPlanRoles + 1, kOther = kPlanRoles + 2,
                          kNone = kPlanRoles + 3;
  std::vector<int8_t> what;
  std::vector<uint32_t> chunk;  // a role's chunk (0 when none)
};

FitTypes fit_types(const Timeline& tl, const PipelinePlan& plan) {
  FitTypes ft{std::vector<int8_t>(tl.types.size(), FitTypes::kNone), std::vector<uint32_t>(tl.types.size(), 0)};
  for (size_t i = 0; i < tl.types.size(); ++i) {
    const JobClass& c = plan.classes[i];
    const int role = role_of(c);
    if (job_kind(tl.types[i]) == JobKind::kOptimizer) {
      ft.what[i] = FitTypes::kOptimizer;
    } else if (c.piece) {
      ft.what[i] = FitTypes::kPiece;
    } else if (role < 0 && !c.no_pipeline) {
      ft.what[i] = FitTypes::kOther;
    } else if (role >= 0) {
      ft.what[i] = static_cast<int8_t>(role);
      ft.chunk[i] = static_cast<uint32_t>(std::max(0, c.chunk));
    }
  }
  return ft;
}

// The fits gathered one stage at a time (fit_stages): [chunk][role] fits of
// the durations, the optimizer medians per rank, other work per rank-step.
struct StageFits {
  std::map<int32_t, std::vector<std::array<DurationFit, kPlanRoles>>> fits;
  std::map<int32_t, std::vector<int64_t>> opt_rank_medians, other_per_step;
};
using ChunkDurations = std::vector<std::array<std::vector<int64_t>, kPlanRoles>>;  // [chunk][role]

// One track's jobs of stage s: forward/backward durations into `stage_dur`
// (true when it had any), its optimizer median and its other work per step
// into `out`, its pieces and other jobs counted in `m`.
bool add_track(const Track& t, int32_t s, const FitTypes& types, CostModel& m, ChunkDurations& stage_dur,
               StageFits& out) {
  bool measured = false;
  std::vector<int64_t> opt;
  // (step, timed other work): a track's jobs are in start order, so a
  // step's jobs follow each other; merged by step below in case they do not.
  std::vector<std::pair<int32_t, int64_t>> other;
  for (const Job& j : t.jobs) {
    const int64_t d = j.end_ns - j.start_ns;
    if (other.empty() || other.back().first != j.step) other.emplace_back(j.step, 0);
    const int8_t what = types.what[j.type];
    if (what < static_cast<int8_t>(kPlanRoles)) {
      const size_t c = types.chunk[j.type];
      measured = true;
      if (stage_dur.size() <= c) stage_dur.resize(c + 1);
      stage_dur[c][static_cast<size_t>(what)].push_back(d);
    } else if (what == FitTypes::kOptimizer) {
      opt.push_back(d);
    } else if (what == FitTypes::kPiece) {
      ++m.pieces;
    } else if (what == FitTypes::kOther && d > 0) {
      other.back().second += d;
      ++m.other_jobs;
    }
  }
  if (!opt.empty()) {
    int64_t med = median_rounded(opt);
    m.optimizer_by_rank.emplace_back(t.rank, med);
    out.opt_rank_medians[s].push_back(med);
  }
  std::sort(other.begin(), other.end());
  for (size_t i = 0; i < other.size();) {
    int64_t ns = 0;
    size_t k = i;
    for (; k < other.size() && other[k].first == other[i].first; ++k) ns += other[k].second;
    out.other_per_step[s].push_back(ns);
    i = k;
  }
  return measured;
}

// The stages' fits: for the stages measured only (P may be the run's whole
// rank count when few of its logs are loaded: memory follows the logs). One
// stage at a time: its durations are held until its fit only (all of them
// at once were 8 bytes a job beside the stats).
StageFits fit_stages(const Timeline& tl, const PipelinePlan& plan, const StageTracks& tracks_of_stage, CostModel& m) {
  const FitTypes types = fit_types(tl, plan);
  StageFits out;
  std::vector<int64_t> scratch;  // the sorts' room
  for (const auto& [s, tracks] : tracks_of_stage) {
    ChunkDurations stage_dur;
    bool measured = false;  // a stage without forward/backward jobs gets no fit
    for (uint32_t ti : tracks) {
      if (add_track(tl.tracks[ti], s, types, m, stage_dur, out)) measured = true;
    }
    if (!measured) continue;
    auto& stage_fits = out.fits[s];
    stage_fits.resize(stage_dur.size());
    for (size_t c = 0; c < stage_dur.size(); ++c) {
      for (size_t r = 0; r < kPlanRoles; ++r) stage_fits[c][r] = fit_durations(std::move(stage_dur[c][r]), scratch);
    }
  }
  return out;
}

// The model's per-stage tables from the stages' fits, and the measured share
// of backward_w in a split backward.
void set_stage_fits(StageFits& f, int32_t P, CostModel& m) {
  size_t chunks = static_cast<size_t>(m.chunks);
  for (const auto& [s, sf] : f.fits) chunks = std::max(chunks, sf.size());
  m.chunks = static_cast<int32_t>(chunks);
  // A stage never measured keeps no chunk rows (measured() reads it as none).
  m.jobs.resize(P);
  m.optimizer.resize(P);
  m.other_ns.assign(P, 0);
  double w_sum = 0, b_sum = 0;
  for (auto& [s, stage_fits] : f.fits) {
    m.jobs[s].resize(chunks);
    for (size_t c = 0; c < stage_fits.size(); ++c) {
      m.jobs[s][c] = stage_fits[c];
      const DurationFit &bb = m.jobs[s][c][kBb], &bw = m.jobs[s][c][kBw];
      if (bb.count > 0 && bw.count > 0) {
        w_sum += static_cast<double>(bw.cost_ns);
        b_sum += static_cast<double>(bb.cost_ns + bw.cost_ns);
      }
    }
  }
  std::vector<int64_t> scratch;
  for (auto& [s, medians] : f.opt_rank_medians) m.optimizer[s] = fit_durations(medians, scratch);
  for (auto& [s, per_step] : f.other_per_step) {
    if (!per_step.empty()) m.other_ns[s] = median_rounded(per_step);
  }
  std::sort(m.optimizer_by_rank.begin(), m.optimizer_by_rank.end());
  if (b_sum > 0) m.w_share = w_sum / b_sum;
}

// Links: per (from, to, step) the smallest lag where the consumer waited;
// per pair the median over the steps, and the median over the pairs.
void fit_links(const Timeline& tl, const Dependencies& deps, uint32_t run_index, const std::vector<int32_t>& stage_of,
               CostModel& m) {
  // A track's dependencies follow each other (consumer order), so most share
  // the key of the previous one of their kind (a forward's producer is the
  // stage before, a backward's the stage after, and 1F1B alternates them):
  // the entry of each kind's last key is kept rather than looked up again.
  using LinkKey = std::tuple<int32_t, int32_t, int32_t>;
  std::map<LinkKey, int64_t> smallest;
  std::map<LinkKey, int64_t>::iterator last_of_kind[2] = {smallest.end(), smallest.end()};
  for (const Dependency& e : deps.edges) {
    const int32_t from = stage_of[e.producer.track], to = stage_of[e.consumer.track];
    if (from == to) continue;
    const Track& ct = tl.tracks[e.consumer.track];
    if (ct.run != run_index) continue;
    const Track& pt = tl.tracks[e.producer.track];
    const Job& c = ct.jobs[e.consumer.job];
    const Job& p = pt.jobs[e.producer.job];
    const int64_t before =
        e.consumer.job > 0 ? ct.jobs[e.consumer.job - 1].end_ns : std::numeric_limits<int64_t>::min();
    if (p.end_ns < before || c.start_ns < p.end_ns) continue;  // not waiting on it, or contradicted
    const LinkKey key{from, to, c.step};
    const int64_t lag = c.start_ns - p.end_ns;
    auto& last = last_of_kind[e.kind == DependencyKind::kForward ? 0 : 1];
    if (last == smallest.end() || last->first != key) last = smallest.try_emplace(key, lag).first;
    last->second = std::min(last->second, lag);
  }
  std::map<std::pair<int32_t, int32_t>, std::vector<int64_t>> per_pair;
  for (const auto& [key, lag] : smallest) per_pair[{std::get<0>(key), std::get<1>(key)}].push_back(lag);
  std::vector<int64_t> fitted;
  for (auto& [pair, lags] : per_pair) {
    int64_t l = median_rounded(std::move(lags));
    m.link_ns[pair] = l;
    fitted.push_back(l);
  }
  m.median_link_ns = fitted.empty() ? 0 : median_rounded(fitted);
}

// The median gap between the run's steps.
int64_t step_gap(const Run& run) {
  std::vector<int64_t> gaps;
  for (size_t k = 0; k + 1 < run.steps.size(); ++k) {
    gaps.push_back(std::max<int64_t>(0, run.steps[k + 1].start_ns - run.steps[k].end_ns));
  }
  return gaps.empty() ? 0 : median_rounded(gaps);
}

}  // namespace

CostModel fit_cost_model(const Timeline& tl, const PipelinePlan& plan, const Dependencies& deps, uint32_t run_index,
                         unsigned threads) {
  CostModel m;
  const int32_t P = std::max(1, plan.schedule.pp_degree);
  m.stages = P;
  m.chunks = std::max(1, plan.schedule.chunks);
  m.micro_batches = plan.schedule.micro_batches;
  m.replicas = std::max(1, plan.schedule.replicas);
  m.schedule = plan.schedule.kind;
  if (run_index >= tl.runs.size()) return m;
  const Run& run = tl.runs[run_index];
  m.steps = static_cast<uint32_t>(run.steps.size());
  const StageTracks tracks_of_stage = tracks_by_stage(tl, run, P);
  StageFits fits = fit_stages(tl, plan, tracks_of_stage, m);
  set_stage_fits(fits, P, m);
  // Each track's stage, worked out once: the links and the host gaps read
  // it for both ends of every dependency (a division each).
  std::vector<int32_t> stage_of(tl.tracks.size());
  for (size_t i = 0; i < tl.tracks.size(); ++i) stage_of[i] = pipeline_stage(tl.tracks[i].rank, P);
  fit_links(tl, deps, run_index, stage_of, m);
  fit_host_gaps(tl, plan, deps, tracks_of_stage, stage_of, m, threads);
  m.step_gap_ns = step_gap(run);
  return m;
}

std::vector<int32_t> measured_peak_in_flight(const Timeline& tl, const PipelinePlan& plan, uint32_t run) {
  const int32_t P = std::max(1, plan.schedule.pp_degree);
  std::vector<int32_t> peak(P, 0);
  if (run >= tl.runs.size()) return peak;
  for (uint32_t ti : tl.runs[run].tracks) {
    const Track& t = tl.tracks[ti];
    // step -> (time, +1 forward start / -1 backward end)
    std::map<int32_t, std::vector<std::pair<int64_t, int>>> events;
    for (const Job& j : t.jobs) {
      int role = role_of(plan.classes[j.type]);
      if (role == static_cast<int>(kF)) events[j.step].emplace_back(j.start_ns, 1);
      if (role == static_cast<int>(kB) || role == static_cast<int>(kBb)) events[j.step].emplace_back(j.end_ns, -1);
    }
    int32_t& out = peak[pipeline_stage(t.rank, P)];
    for (auto& [step, ev] : events) {
      std::sort(ev.begin(), ev.end());  // at one time, an end (-1) before a start
      int32_t n = 0;
      for (auto [time, delta] : ev) out = std::max(out, n += delta);
    }
  }
  return peak;
}

namespace {

// The memory model's error (WhatifReport::memory_model_error) above which
// whatif warns: the logged sizes are good to 0.01 GiB.
constexpr double kMemoryErrorWarning = 0.03;

// The measured memory of `stage`, or null when it has no samples.
const StageMemory* stage_memory(const MemoryStats& mem, int32_t stage) {
  for (const StageMemory& sm : mem.stages) {
    if (sm.stage == stage) return &sm;
  }
  return nullptr;
}

// The activation one micro-batch of each of `chunks` chunks holds on the
// stage: the measured chunk's where the measurement has that V, else the
// stage's activation per micro-batch / V. Never negative: a forward that
// left less allocated than before it holds nothing.
std::vector<int64_t> chunk_activations(const StageMemory& sm, int32_t chunks) {
  const size_t v = static_cast<size_t>(std::max(1, chunks));
  std::vector<int64_t> out(v, 0);
  if (sm.activation_bytes_per_chunk.size() == v) {
    for (size_t c = 0; c < v; ++c) out[c] = std::max<int64_t>(0, sm.activation_bytes_per_chunk[c]);
    return out;
  }
  int64_t total = sm.activation_bytes_per_micro_batch;
  if (total == 0) {
    for (int64_t a : sm.activation_bytes_per_chunk) total += a;
  }
  for (int64_t& a : out) a = std::max<int64_t>(0, std::llround(static_cast<double>(total) / static_cast<double>(v)));
  return out;
}

// What a job does to the allocated bytes: a forward adds its chunk's
// activation, a whole backward or a backward_w frees it, a backward_b keeps it.
int64_t memory_delta(const PlanJob& job, const std::vector<int64_t>& activations) {
  const size_t c = std::min(static_cast<size_t>(std::max(0, job.chunk)), activations.size() - 1);
  switch (job.role) {
    case PlanRole::kForward: return activations[c];
    case PlanRole::kBackward:
    case PlanRole::kBackwardW: return -activations[c];
    case PlanRole::kBackwardB: return 0;
  }
  return 0;
}

// The measured peaks by stage of `stages` stages (-1 without samples).
std::vector<int64_t> measured_peak_memory(const MemoryStats& mem, int32_t stages) {
  std::vector<int64_t> out;
  if (!mem.present()) return out;
  out.assign(static_cast<size_t>(std::max(1, stages)), -1);
  for (const StageMemory& sm : mem.stages) {
    if (sm.stage >= 0 && sm.stage < static_cast<int32_t>(out.size())) out[sm.stage] = sm.peak_allocated_bytes;
  }
  return out;
}

// An outcome's fit on the device (WhatifOutcome::fits, margin_bytes).
void set_fit(WhatifOutcome& o, int64_t device_bytes) {
  const int64_t peak = highest_peak(o.peak_memory_bytes);
  if (device_bytes <= 0 || peak < 0) return;
  o.margin_bytes = device_bytes - peak;
  o.fits = o.margin_bytes >= 0;
}

// The memory model's error: per stage the replayed peak / the measured peak
// - 1; the one largest in size, and its stage.
void set_memory_error(WhatifReport& r) {
  const std::vector<int64_t>& meas = r.measured.peak_memory_bytes;
  const std::vector<int64_t>& rep = r.replayed.peak_memory_bytes;
  for (size_t s = 0; s < meas.size() && s < rep.size(); ++s) {
    if (meas[s] <= 0 || rep[s] < 0) continue;
    const double e = static_cast<double>(rep[s]) / static_cast<double>(meas[s]) - 1;
    if (!std::isfinite(r.memory_model_error) || std::abs(e) > std::abs(r.memory_model_error)) {
      r.memory_model_error = e;
      r.memory_error_stage = static_cast<int32_t>(s);
    }
  }
}

// What the memory figures rest on, for the user: said once.
void memory_assumptions(const WhatifReport& r, std::vector<Assumption>& as) {
  if (!r.memory.present()) {
    as.push_back(assumption::NoMemorySamples{});
    return;
  }
  as.push_back(assumption::MemoryModel{});
  bool split = false, other_v = false;
  for (const WhatifOutcome& o : r.predicted) {
    split = split || schedule_split_backward(o.shape.schedule) || o.shape.split_backward;
    other_v = other_v || o.shape.chunks != r.model.chunks;
  }
  if (split) as.push_back(assumption::MemorySplitBackward{});
  if (other_v) as.push_back(assumption::MemoryOtherV{});
  if (r.device_memory_bytes > 0) as.push_back(assumption::DeviceMemory{r.device_memory_bytes});
}

// The memory figures of every outcome of `r` (WhatifOutcome::peak_memory_bytes,
// fits), the model's memory error and, where it is large, a warning.
void predict_memory(const MemoryStats& memory, WhatifReport& r, PlanCache& plans) {
  r.memory = memory;
  r.device_memory_bytes = memory.device_memory_bytes;
  if (!memory.present()) return;
  r.measured.peak_memory_bytes = measured_peak_memory(memory, r.measured.shape.stages);
  auto predict = [&](WhatifOutcome& o) {
    if (!o.failed()) o.peak_memory_bytes = predict_peak_memory(memory, o.shape, &plans);
    set_fit(o, r.device_memory_bytes);
  };
  set_fit(r.measured, r.device_memory_bytes);
  predict(r.replayed);
  for (WhatifOutcome& o : r.predicted) predict(o);
  set_memory_error(r);
  if (std::isfinite(r.memory_model_error) && std::abs(r.memory_model_error) > kMemoryErrorWarning) {
    r.warnings.push_back(
        model_warning::MemoryModelError{r.memory_model_error, r.memory_error_stage, kMemoryErrorWarning});
  }
}

}  // namespace

int64_t highest_peak(const std::vector<int64_t>& peak_memory_bytes) {
  int64_t peak = -1;
  for (int64_t p : peak_memory_bytes) peak = std::max(peak, p);
  return peak;
}

std::vector<int64_t> predict_peak_memory(const MemoryStats& memory, const PlanShape& shape, PlanCache* plan_cache) {
  std::vector<int64_t> out;
  PlanCache once;  // without the caller's cache: the check and the plan share one build
  PlanCache& cache = plan_cache ? *plan_cache : once;
  if (!memory.present() || !check_plan_shape(shape, &cache).empty()) return out;
  const std::vector<std::vector<PlanJob>> plans = pipeline_plan(shape, &cache);
  out.assign(static_cast<size_t>(shape.stages), -1);
  for (int32_t s = 0; s < shape.stages && s < static_cast<int32_t>(plans.size()); ++s) {
    const StageMemory* sm = stage_memory(memory, s);
    if (!sm) continue;
    const std::vector<int64_t> act = chunk_activations(*sm, shape.chunks);
    int64_t held = sm->static_bytes, peak = held;
    for (const PlanJob& j : plans[s]) peak = std::max(peak, held += memory_delta(j, act));
    out[s] = peak;
  }
  return out;
}

void add_predicted_memory(Timeline& predicted, const ReplayResult& replay, const MemoryStats& memory,
                          int32_t first_step) {
  if (!memory.present() || !replay.error.empty()) return;
  const PlanShape& shape = replay.shape;
  const int64_t origin = predicted.runs.empty() || replay.steps.empty()
                             ? 0
                             : predicted.runs.front().first_ns - replay.steps.front().start_ns;
  for (Track& t : predicted.tracks) {
    const StageMemory* sm = stage_memory(memory, t.rank);
    if (!sm || t.rank >= shape.stages) continue;
    const std::vector<int64_t> act = chunk_activations(*sm, shape.chunks);
    const int64_t headroom = std::max<int64_t>(0, sm->peak_reserved_bytes - sm->peak_allocated_bytes);
    int64_t reserved = sm->static_bytes;
    uint32_t line = 0;
    auto sample = [&](int64_t ts, int64_t allocated, const PlanJob& j, int32_t step, MemoryPoint point) {
      reserved = std::max(reserved, allocated);
      MemorySample m;
      m.ts_ns = ts;
      m.allocated_bytes = allocated;
      m.reserved_bytes = reserved + headroom;
      m.line = ++line;
      m.micro_batch = j.micro_batch;
      m.chunk = shape.chunks > 1 ? j.chunk : -1;
      m.step = step;
      m.point = point;
      t.memory.push_back(m);
    };
    for (size_t k = 0; k < replay.steps.size(); ++k) {
      const ReplayedStep& step = replay.steps[k];
      if (t.rank >= static_cast<int32_t>(step.stages.size())) continue;
      const int32_t number = first_step + static_cast<int32_t>(k);
      int64_t held = sm->static_bytes;
      for (const ReplayedJob& rj : step.stages[t.rank]) {
        const bool forward = rj.job.role == PlanRole::kForward;
        sample(add_ns(origin, rj.start_ns), held, rj.job, number,
               forward ? MemoryPoint::kBeforeForward : MemoryPoint::kBeforeBackward);
        held += memory_delta(rj.job, act);
        sample(add_ns(origin, rj.end_ns), held, rj.job, number,
               forward ? MemoryPoint::kAfterForward : MemoryPoint::kAfterBackward);
      }
    }
  }
  predicted.memory_resolution_bytes = memory.resolution_bytes;
}

namespace {

// The measured run's own figures, as an outcome beside the replays.
WhatifOutcome measured_outcome(const Timeline& tl, const PipelinePlan& plan, const Stats& stats, const CostModel& m,
                               const PlanShape& ms) {
  WhatifOutcome o;
  o.shape = ms;
  o.named_by_schedule = m.schedule == ScheduleKind::kUnknown;
  o.period_ns = stats.step_period.mean_ns;
  o.busy_ns = stats.step_time.mean_ns;
  o.bubble_ratio = stats.bubble_ratio;
  o.micro_batches_per_second = stats.throughput.micro_batches_per_second;
  if (m.micro_batches > 0) o.time_per_micro_batch_ns = o.period_ns / m.micro_batches;
  o.peak_in_flight = measured_peak_in_flight(tl, plan, stats.run);
  if (stats.step_period.count == 0) o.error = "the measured run has one step: no period";
  return o;
}

// The samples hold a row per stage and serve replays only: taken once, when
// the first shape a plan can replay asks for them, from whichever thread
// (the targets are replayed side by side); a shape without a plan gets none
// (P may be a run's whole rank count when few of its logs are loaded, and
// then no plan fits M < P). `plans` is the asking thread's plan cache.
class LazySamples {
 public:
  LazySamples(const Timeline& tl, const PipelinePlan& plan, const CostModel& m, uint32_t run, unsigned threads)
      : tl_(tl), plan_(plan), m_(m), run_(run), threads_(threads) {}
  const JitterSamples& for_shape(const PlanShape& shape, PlanCache& plans) {
    if (!check_plan_shape(shape, &plans).empty()) return none_;
    // The other threads that ask wait here: the samples are taken on all.
    std::call_once(once_, [this] { sampled_ = collect_samples(tl_, plan_, m_, run_, threads_); });
    return *sampled_;
  }
  // The samples taken, or null when no shape asked (once the threads that
  // asked are done).
  const JitterSamples* taken() const { return sampled_ ? &*sampled_ : nullptr; }

 private:
  const Timeline& tl_;
  const PipelinePlan& plan_;
  const CostModel& m_;
  const uint32_t run_;
  const unsigned threads_;
  std::once_flag once_;
  std::optional<JitterSamples> sampled_;
  const JitterSamples none_;
};

// The measured plan replayed (r.replayed), the steps and replicas it chose
// kept in `candidates`; `why` says why there is no plan to replay.
void replay_measured(const Timeline& tl, const Stats& stats, const PlanShape& ms, const std::string& why, int32_t steps,
                     LazySamples& samples, PlanCache& plans, WhatifReport& r, StepChoice& candidates) {
  const CostModel& m = r.model;
  if (!why.empty()) {
    r.replayed.shape = ms;
    r.replayed.named_by_schedule = r.measured.named_by_schedule;
    r.replayed.error = why;
    return;
  }
  const JitterSamples& sampled = samples.for_shape(ms, plans);
  r.replayed = replay_outcome(m, ms, WhatifChanges{}, effective_w(m, WhatifChanges{}), steps, sampled, plans, nullptr,
                              &candidates);
  if (stats.run < tl.runs.size() && !tl.runs[stats.run].steps.empty()) {
    const auto& st = tl.runs[stats.run].steps;
    const size_t first = (st.size() > sampled.steps ? st.size() - sampled.steps : 0) + candidates.first;
    r.first_replayed_step = st[std::min(first, st.size() - 1)].number;
  }
}

// Every target (each schedule with each M) replayed into r.predicted, side
// by side on up to `threads` threads with the run's checks (into
// `checks`): each with a plan cache of its own (a cache is one thread's),
// gathered into `plans` after. The same outcomes, in the same order, on any
// number of threads.
void predict_targets(const Timeline& tl, const PipelinePlan& plan, const Stats& stats, const WhatifChanges& ch,
                     double w, int32_t steps, const PlanShape& ms, const std::string& why, const StepChoice& candidates,
                     LazySamples& samples, PlanCache& plans, WhatifReport& r, RunChecks& checks, unsigned threads) {
  const CostModel& m = r.model;
  std::vector<ScheduleKind> kinds = ch.schedules;
  if (kinds.empty()) kinds.push_back(m.schedule);
  std::vector<int32_t> ms_list = ch.micro_batches;
  if (ms_list.empty()) ms_list.push_back(std::max(1, m.micro_batches));
  std::vector<PlanShape> shapes;
  for (ScheduleKind k : kinds) {
    for (int32_t mb : ms_list) {
      PlanShape s;
      s.schedule = k;
      s.stages = m.stages;
      s.micro_batches = mb;
      s.chunks = target_chunks(m, k, ch.chunks);
      shapes.push_back(s);
    }
  }
  r.predicted.assign(shapes.size(), WhatifOutcome{});
  std::vector<PlanCache> caches(shapes.size() + 1, plans);  // each with the plans built so far
  parallel_for(shapes.size() + 1, threads, [&](size_t i) {
    if (i == shapes.size()) {
      checks = check_run(tl, plan, stats.run, m, caches[i]);
      return;
    }
    const PlanShape& s = shapes[i];
    WhatifOutcome& o = r.predicted[i];
    if (s.schedule == ScheduleKind::kUnknown || s.schedule == ScheduleKind::kNoPipeline) {
      o.shape = s;
      o.named_by_schedule = true;
      o.error = why.empty() ? "no plan for this schedule" : why;
      return;
    }
    // The measured plan unchanged is the replay itself: shared, not redone.
    const bool same = s == ms && ch.stage_scale.empty() && !ch.balance && ch.link_scale == 1 && ch.w_share < 0;
    if (same && why.empty()) {
      o = r.replayed;
    } else {
      o = replay_outcome(m, s, ch, w, steps, samples.for_shape(s, caches[i]), caches[i],
                         why.empty() && !candidates.replicas.empty() ? &candidates : nullptr);
    }
  });
  for (PlanCache& c : caches) plans.greedy.merge(c.greedy);
}

// The model's own error widens every range; what does not hold is said,
// and where nothing can be predicted, every target says why. Then the
// memory, and the targets ranked.
void judge_targets(const Timeline& tl, const Stats& stats, const RunChecks& checks, PlanCache& plans, WhatifReport& r) {
  const double model_error = r.measured.error.empty() && r.replayed.error.empty() && r.measured.period_ns > 0
                                 ? r.replayed.period_ns / r.measured.period_ns - 1
                                 : std::numeric_limits<double>::quiet_NaN();
  r.model_error = model_error;
  r.warnings = whatif_warnings(tl, stats, r.model, model_error, checks, &r.refusal);
  widen_by_model_error(r.replayed, model_error);
  for (WhatifOutcome& o : r.predicted) {
    widen_by_model_error(o, model_error);
    if (r.refusal && o.error.empty()) o.refused = true;
  }
  predict_memory(stats.memory, r, plans);
  // Those that fit first (all do without a device size), then by throughput.
  std::stable_sort(r.predicted.begin(), r.predicted.end(), [](const WhatifOutcome& a, const WhatifOutcome& b) {
    if (a.failed() != b.failed()) return !a.failed();
    if (a.fits != b.fits) return a.fits;
    return !a.failed() && a.micro_batches_per_second > b.micro_batches_per_second;
  });
  for (size_t i = 1; i < r.predicted.size(); ++i) {
    if (r.predicted[i].fits && within_noise(r.predicted[i], r.predicted[0])) r.within_noise_of_best.push_back(i);
  }
}

// What the fit rests on: the job costs, links, steps, gaps and host gaps.
void model_assumptions(const Timeline& tl, const Stats& stats, const CostModel& m, const WhatifChanges& ch,
                       std::vector<Assumption>& as) {
  as.push_back(assumption::JobCosts{m.steps, m.replicas});
  as.push_back(assumption::Links{m.median_link_ns, ch.link_scale});
  as.push_back(assumption::Modelled{stats.run, tl.runs.size(), m.steps});
  if (tl.resolution_ns > 1) as.push_back(assumption::Resolution{tl.resolution_ns});
  as.push_back(assumption::StepGap{m.steps, m.step_gap_ns});
  as.push_back(assumption::Ranges{});
  std::vector<int64_t> gaps;
  for (const auto& [stage, kinds] : m.host_gap_ns) {
    for (int64_t g : kinds) {
      if (g >= 0) gaps.push_back(g);
    }
  }
  as.push_back(assumption::HostGap{m.host_gap_samples, gaps.empty() ? 0 : median_rounded(gaps)});
}

// What the targets rest on: the split backward, another V, what Paddle
// refuses, and the changes asked for.
void target_assumptions(const WhatifReport& r, const WhatifChanges& ch, double w, std::vector<Assumption>& as) {
  const CostModel& m = r.model;
  bool wants_split = false;
  bool wants_other_v = false;
  for (const WhatifOutcome& o : r.predicted) {
    wants_split = wants_split || schedule_split_backward(o.shape.schedule);
    wants_other_v = wants_other_v || o.shape.chunks != m.chunks;
  }
  if (wants_split) {
    using Source = assumption::WShare::Source;
    as.push_back(assumption::WShare{ch.w_share >= 0  ? Source::kAsked
                                    : m.w_share >= 0 ? Source::kMeasured
                                                     : Source::kDefault,
                                    w});
  }
  if (wants_other_v) as.push_back(assumption::ChunkCost{m.chunks});
  for (const WhatifOutcome& o : r.predicted) {
    if (paddle_refuses(o.shape)) as.push_back(assumption::PaddleRefuses{o.shape});
  }
  if (ch.balance) as.push_back(assumption::Balanced{});
  for (auto [stage, factor] : ch.stage_scale) as.push_back(assumption::StageScale{stage, factor});
}

// What the replays leave out or rest on: other jobs, the measured steps
// replayed (`sampled`, when taken), pieces.
void replay_assumptions(const WhatifReport& r, const JitterSamples* sampled, std::vector<Assumption>& as) {
  const CostModel& m = r.model;
  if (m.other_jobs > 0) as.push_back(assumption::OtherJobs{m.other_jobs});
  if (sampled && !sampled->empty()) {
    as.push_back(assumption::ReplayedSteps{
        r.replayed.step_periods_ns.empty() ? sampled->steps : r.replayed.step_periods_ns.size(), sampled->replicas});
  }
  if (m.pieces > 0) as.push_back(assumption::Pieces{m.pieces});
}

}  // namespace

WhatifReport run_whatif(const Timeline& tl, const PipelinePlan& plan, const Dependencies& deps, const Stats& stats,
                        const WhatifChanges& ch, int32_t steps, unsigned threads, std::optional<CostModel> fitted) {
  WhatifReport r;
  r.model = fitted ? std::move(*fitted) : fit_cost_model(tl, plan, deps, stats.run, threads);
  const CostModel& m = r.model;
  PlanCache plans;  // this report's costly plans (PlanCache), built once each
  std::string why;
  const PlanShape ms = measured_shape(m, &why, plans);
  r.measured = measured_outcome(tl, plan, stats, m, ms);
  const double w = effective_w(m, ch);
  LazySamples samples(tl, plan, m, stats.run, threads);
  StepChoice candidates;
  replay_measured(tl, stats, ms, why, steps, samples, plans, r, candidates);
  RunChecks checks;
  predict_targets(tl, plan, stats, ch, w, steps, ms, why, candidates, samples, plans, r, checks, threads);
  judge_targets(tl, stats, checks, plans, r);
  // What the figures rest on, for the user.
  model_assumptions(tl, stats, m, ch, r.assumptions);
  target_assumptions(r, ch, w, r.assumptions);
  replay_assumptions(r, samples.taken(), r.assumptions);
  memory_assumptions(r, r.assumptions);
  return r;
}

// What finish_suggestion_replays reads of begin_suggestion_replays: the
// jitter samples, the steps and replicas the measured plan's replay chose,
// the backward_w share, and the candidate changes.
struct SuggestionTargets {
  struct Target {
    SuggestedChange change;
    WhatifChanges changes;
  };
  JitterSamples samples;
  StepChoice candidates;
  double w = 0;
  std::vector<Target> targets;
};

SuggestionReplays begin_suggestion_replays(const Timeline& tl, const PipelinePlan& plan, const Dependencies& deps,
                                           uint32_t run, unsigned threads) {
  SuggestionReplays r;
  {
    // A measured shape no plan can replay gets no suggestion: said before the
    // fit, whose tables hold a row per stage (P may be the run's whole rank
    // count when few of its logs are loaded). V is the fit's, so only what V
    // cannot change is looked at here: the schedule, M, and M >= P where
    // its row does not take M < P.
    const ScheduleRow* row = schedule_row(plan.schedule.kind);
    const int32_t p = plan.schedule.pp_degree, mb = plan.schedule.micro_batches;
    if (!row || mb <= 0 || (!row->m_below_p && mb < p)) return r;
  }
  r.model = fit_cost_model(tl, plan, deps, run, threads);
  const CostModel& m = r.model;
  std::string why;
  PlanShape ms = measured_shape(m, &why, r.plans);
  if (!why.empty()) return r;
  const WhatifChanges none;
  auto pending = std::make_shared<SuggestionTargets>();
  pending->w = effective_w(m, none);
  pending->samples = collect_samples(tl, plan, m, run, threads);
  // The suggestions use each outcome's figures, never its replayed steps
  // (a prediction written out, whatif -o): those are not kept.
  r.base = replay_outcome(m, ms, none, pending->w, 2, pending->samples, r.plans, nullptr, &pending->candidates, false);
  if (!r.base.error.empty() || r.base.period_ns <= 0) return r;
  r.replayable = true;
  // The candidate changes: the other schedules at the run's M, 2M, every
  // stage balanced (its stage is the stats', named in suggest_changes).
  using Kind = SuggestedChange::Kind;
  std::vector<SuggestionTargets::Target>& targets = pending->targets;
  for (ScheduleKind k : planned_schedules()) {
    if (k == m.schedule) continue;
    PlanShape s = ms;
    s.schedule = k;
    s.chunks = target_chunks(m, k, 0);
    targets.push_back({{Kind::kSchedule, s}, none});
  }
  PlanShape twice = ms;
  twice.micro_batches = ms.micro_batches * 2;
  targets.push_back({{Kind::kMicroBatches, twice}, none});
  WhatifChanges balance;
  balance.balance = true;
  targets.push_back({{Kind::kBalance, ms}, balance});
  r.pending = std::move(pending);
  return r;
}

void finish_suggestion_replays(SuggestionReplays& r, const Timeline& tl, const PipelinePlan& plan, uint32_t run,
                               unsigned threads) {
  if (!r.pending) return;
  const SuggestionTargets& p = *r.pending;
  const CostModel& m = r.model;
  // The run's checks and the targets' replays are independent: side by side
  // on the run's threads, each target with a plan cache of its own (a cache
  // is one thread's), the caches gathered after. The same figures in the
  // same order on any number of threads.
  r.changes.resize(p.targets.size());
  std::vector<PlanCache> caches(p.targets.size());
  // Started largest first, so that no large replay is left to run alone at
  // the end: by the jobs of a step of its plan (M x V, and a third more for
  // a split backward). The run's checks, which read every job, go first.
  std::vector<size_t> order(p.targets.size() + 1);
  std::vector<int64_t> size(p.targets.size() + 1, std::numeric_limits<int64_t>::max());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (size_t i = 1; i < order.size(); ++i) {
    const PlanShape& s = p.targets[i - 1].change.shape;
    size[i] = int64_t{s.micro_batches} * std::max(1, s.chunks) * (schedule_split_backward(s.schedule) ? 3 : 2);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return size[a] > size[b]; });
  parallel_for(order.size(), threads, [&](size_t k) {
    const size_t i = order[k];
    if (i == 0) {
      r.checks = check_run(tl, plan, run, m, r.plans);
      return;
    }
    const SuggestionTargets::Target& t = p.targets[i - 1];
    r.changes[i - 1] = {t.change, replay_outcome(m, t.change.shape, t.changes, p.w, 2, p.samples, caches[i - 1],
                                                 &p.candidates, nullptr, false)};
  });
  for (PlanCache& c : caches) r.plans.greedy.merge(c.greedy);
  r.pending.reset();
}

SuggestionReplays replay_suggestions(const Timeline& tl, const PipelinePlan& plan, const Dependencies& deps,
                                     uint32_t run, unsigned threads) {
  SuggestionReplays r = begin_suggestion_replays(tl, plan, deps, run, threads);
  finish_suggestion_replays(r, tl, plan, run, threads);
  return r;
}

namespace {

// Micro-batch activations at an outcome's peak: chunks count 1/V.
double activation_peak(const WhatifOutcome& o) {
  int32_t peak = 0;
  for (int32_t p : o.peak_in_flight) peak = std::max(peak, p);
  return static_cast<double>(peak) / std::max(1, o.shape.chunks);
}

// Half the range of a suggestion's gain: both plans replay the same measured
// steps, so the per-step gains pair up; twice their standard error, and the
// model's own error, on either side.
double gain_half_range(const WhatifOutcome& o, const WhatifOutcome& base, bool per_micro_batch, double model_error) {
  double half = std::isfinite(model_error) ? std::abs(model_error) : 0;
  const size_t n = std::min(o.step_periods_ns.size(), base.step_periods_ns.size());
  if (n >= 2) {
    const double scale =
        per_micro_batch ? static_cast<double>(base.shape.micro_batches) / std::max(1, o.shape.micro_batches) : 1.0;
    std::vector<double> g(n);
    double mean = 0, sq = 0;
    for (size_t k = 0; k < n; ++k) mean += g[k] = 1 - o.step_periods_ns[k] * scale / base.step_periods_ns[k];
    mean /= static_cast<double>(n);
    for (double x : g) sq += (x - mean) * (x - mean);
    half += 2 * std::sqrt(sq / static_cast<double>(n - 1) / static_cast<double>(n));
  }
  return half;
}

// The suggestions from the replayed changes: those that fit the device and
// gain beyond the noise.
class Suggestions {
 public:
  Suggestions(const WhatifOutcome& base, const Stats& stats, PlanCache& plans, double model_error)
      : base_(base), stats_(stats), plans_(plans), model_error_(model_error), base_memory_(activation_peak(base)) {
    // With memory samples, the memory model's peaks in bytes (highest stage).
    base_bytes_ = highest_peak(predict_peak_memory(stats.memory, base.shape, &plans));
  }

  void add(const SuggestedChange& change, const WhatifOutcome& o) {
    if (o.failed() || o.period_ns <= 0) return;
    WhatifSuggestion s;
    s.change = change;
    s.period_gain = -relative_time(o, base_, &s.per_micro_batch);
    s.peak_memory = activation_peak(o);
    s.measured_peak_memory = base_memory_;
    s.peak_memory_bytes = highest_peak(predict_peak_memory(stats_.memory, o.shape, &plans_));
    s.measured_peak_memory_bytes = base_bytes_;
    const int64_t device = stats_.memory.device_memory_bytes;
    if (device > 0 && s.peak_memory_bytes > device) return;  // does not fit: never suggested
    const double half = gain_half_range(o, base_, s.per_micro_batch, model_error_);
    s.gain_lo = s.period_gain - half;
    s.gain_hi = s.period_gain + half;
    if (s.period_gain < 0.005 || s.gain_lo <= 0) return;  // within the noise: not a win
    out_.push_back(std::move(s));
  }

  // The best `limit` of them, by gain.
  std::vector<WhatifSuggestion> best(size_t limit) {
    std::stable_sort(out_.begin(), out_.end(), [](const WhatifSuggestion& a, const WhatifSuggestion& b) {
      return a.period_gain > b.period_gain;
    });
    if (out_.size() > limit) out_.resize(limit);
    return std::move(out_);
  }

 private:
  const WhatifOutcome& base_;
  const Stats& stats_;
  PlanCache& plans_;
  const double model_error_;
  const double base_memory_;
  int64_t base_bytes_ = -1;
  std::vector<WhatifSuggestion> out_;
};

// The straggler: the stage busiest per rank-step; -1 when none.
int32_t busiest_stage(const Stats& stats) {
  int32_t slowest = -1;
  double most = 0;
  for (const StageStats& st : stats.stages) {
    if (st.rank_steps == 0) continue;
    double busy = static_cast<double>(st.busy_ns) / st.rank_steps;
    if (busy > most) most = busy, slowest = st.stage;
  }
  return slowest;
}

// Balancing a stage stats finds no straggler on rests on that stage being
// busiest by noise alone: said, beside the suggestion.
void warn_balancing_noise(const std::vector<WhatifSuggestion>& out, const Stats& stats, int32_t slowest,
                          std::vector<ModelWarning>* warnings) {
  const bool balancing = std::any_of(out.begin(), out.end(), [](const WhatifSuggestion& s) {
    return s.change.kind == SuggestedChange::Kind::kBalance;
  });
  const bool straggler = std::any_of(stats.stragglers.begin(), stats.stragglers.end(),
                                     [&](const Straggler& g) { return g.stage == slowest; });
  if (balancing && !straggler && warnings) {
    warnings->push_back(model_warning::BalancingNoise{slowest});
  }
}

}  // namespace

std::vector<WhatifSuggestion> suggest_changes(SuggestionReplays& replays, const Timeline& tl, const Stats& stats,
                                              size_t limit, std::vector<ModelWarning>* warnings) {
  if (!replays.replayable) return {};
  const WhatifOutcome& base = replays.base;
  const double model_error = stats.step_period.count > 0 && stats.step_period.mean_ns > 0
                                 ? base.period_ns / stats.step_period.mean_ns - 1
                                 : std::numeric_limits<double>::quiet_NaN();
  std::optional<model_warning::Refusal> refusal;
  std::vector<ModelWarning> said = whatif_warnings(tl, stats, replays.model, model_error, replays.checks, &refusal);
  if (warnings) *warnings = said;
  if (refusal) return {};
  Suggestions suggestions(base, stats, replays.plans, model_error);
  const int32_t slowest = busiest_stage(stats);
  for (const SuggestionReplays::Change& c : replays.changes) {
    SuggestedChange change = c.change;
    if (change.kind == SuggestedChange::Kind::kBalance) change.stage = slowest;
    suggestions.add(change, c.outcome);
  }
  std::vector<WhatifSuggestion> out = suggestions.best(limit);
  warn_balancing_noise(out, stats, slowest, warnings);
  return out;
}

std::vector<WhatifSuggestion> suggest_changes(const Timeline& tl, const PipelinePlan& plan, const Dependencies& deps,
                                              const Stats& stats, size_t limit, std::vector<ModelWarning>* warnings) {
  SuggestionReplays replays = replay_suggestions(tl, plan, deps, stats.run, 1);
  return suggest_changes(replays, tl, stats, limit, warnings);
}

}  // namespace ppt
