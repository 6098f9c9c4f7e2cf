#include "analysis/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <unordered_map>

#include <fmt/format.h>

#include "input/log_layout.h"
#include "passes/pipeline_stage.h"
#include "util/checked.h"
#include "util/int_sort.h"
#include "util/median.h"

namespace ppt {

int64_t percentile(std::vector<int64_t>& values, double q) {
  if (values.empty()) return 0;
  const size_t idx = nearest_rank_index(values.size(), q);
  std::nth_element(values.begin(), values.begin() + idx, values.end());
  return values[idx];
}

int64_t union_length(const std::vector<std::pair<int64_t, int64_t>>& sorted, int64_t lo, int64_t hi) {
  int64_t total = 0;
  int64_t cur_start = 0, cur_end = 0;
  bool open = false;
  for (auto [s, e] : sorted) {
    s = std::max(s, lo);
    e = std::min(e, hi);
    if (e <= s) continue;
    if (open && s <= cur_end) {
      cur_end = std::max(cur_end, e);
      continue;
    }
    if (open) total += cur_end - cur_start;
    cur_start = s;
    cur_end = e;
    open = true;
  }
  if (open) total += cur_end - cur_start;
  return total;
}

StepTimeSummary summarize_times(std::vector<int64_t> times) {
  StepTimeSummary sum;
  sum.count = static_cast<uint32_t>(times.size());
  if (times.empty()) return sum;
  double total = 0;
  for (int64_t v : times) total += static_cast<double>(v);
  sum.mean_ns = total / static_cast<double>(times.size());
  double sq = 0;
  for (int64_t v : times) sq += (static_cast<double>(v) - sum.mean_ns) * (static_cast<double>(v) - sum.mean_ns);
  sum.stdev_ns = times.size() > 1 ? std::sqrt(sq / static_cast<double>(times.size() - 1)) : 0.0;
  std::sort(times.begin(), times.end());
  sum.median_ns = median_of_sorted(times);
  sum.min_ns = times.front();
  sum.max_ns = times.back();
  return sum;
}

Throughput compute_throughput(const StepTimeSummary& period, const ScheduleInfo& schedule, uint32_t micro_batch_size) {
  Throughput tp;
  tp.micro_batch_size = micro_batch_size;
  if (period.count > 0 && period.mean_ns > 0) {
    tp.steps_per_second = 1e9 / period.mean_ns;
    if (schedule.micro_batches > 0) {
      tp.micro_batches_per_second =
          tp.steps_per_second * schedule.micro_batches * std::max<int32_t>(1, schedule.replicas);
      tp.samples_per_second = tp.micro_batches_per_second * micro_batch_size;
    }
  }
  return tp;
}

namespace {

// Sorted durations to TypeDurations.
TypeDurations summarize(const std::string& type, std::span<const int64_t> sorted) {
  TypeDurations d;
  d.type = type;
  d.count = sorted.size();
  if (sorted.empty()) return d;
  // The mean is taken in long double, not from the total, which saturates.
  long double sum = 0;
  for (int64_t v : sorted) {
    accumulate_ns(d.total_ns, v);
    sum += static_cast<long double>(v);
  }
  d.mean_ns = static_cast<double>(sum / static_cast<long double>(sorted.size()));
  auto at = [&](double q) {
    size_t n = sorted.size();
    size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(n)));
    return sorted[std::min(n - 1, rank > 0 ? rank - 1 : 0)];
  };
  d.p50_ns = at(0.5);
  d.p95_ns = at(0.95);
  d.max_ns = sorted.back();
  return d;
}

// summarize()'s figures for durations in any order: the percentiles by
// selection, not a sort (the type rows pool every rank's durations, 2.6 M at
// 1024 ranks, where the sort was a tenth of stats). The sum is the same in
// any order while no partial sum can leave [0, 2^63) (integers, exact in a
// long double, and no saturation); otherwise it sorts, as summarize() wants.
TypeDurations summarize_unsorted(const std::string& type, std::vector<int64_t>& v) {
  const size_t n = v.size();
  if (n == 0) return summarize(type, v);
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  if (*lo < 0 || static_cast<uint64_t>(*hi) > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / n) {
    std::sort(v.begin(), v.end());
    return summarize(type, v);
  }
  const int64_t most = *hi;
  auto idx = [&](double q) {
    const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(n)));
    return std::min(n - 1, rank > 0 ? rank - 1 : 0);
  };
  TypeDurations d;
  d.type = type;
  d.count = n;
  long double sum = 0;
  for (int64_t x : v) {
    accumulate_ns(d.total_ns, x);
    sum += static_cast<long double>(x);
  }
  d.mean_ns = static_cast<double>(sum / static_cast<long double>(n));
  const size_t i50 = idx(0.5), i95 = idx(0.95);
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(i50), v.end());
  d.p50_ns = v[i50];
  if (i95 > i50)
    std::nth_element(v.begin() + static_cast<std::ptrdiff_t>(i50) + 1, v.begin() + static_cast<std::ptrdiff_t>(i95),
                     v.end());
  d.p95_ns = v[i95];
  d.max_ns = most;
  return d;
}

// One rank's part of one step.
struct RankStep {
  int64_t busy = 0, warmup = 0, cooldown = 0, gaps = 0;
};

RankStep measure_rank_step(const Track& track, std::span<const uint32_t> jobs, const StepSpan& span,
                           std::vector<std::pair<int64_t, int64_t>>& scratch) {
  RankStep out;
  int64_t lo = span.start_ns, hi = span.end_ns, len = hi - lo;
  scratch.clear();
  int64_t first = hi, last = lo;
  for (uint32_t k : jobs) {
    const Job* j = &track.jobs[k];
    scratch.emplace_back(j->start_ns, j->end_ns);
    int64_t s = std::max(j->start_ns, lo), e = std::min(j->end_ns, hi);
    if (e > s) {
      first = std::min(first, s);
      last = std::max(last, e);
    }
  }
  out.busy = union_length(scratch, lo, hi);
  if (out.busy == 0) {
    out.warmup = len;
    return out;
  }
  out.warmup = first - lo;
  out.cooldown = hi - last;
  out.gaps = len - out.busy - out.warmup - out.cooldown;
  return out;
}

// The most common value (ties: the larger); 0 for none.
uint32_t usual_count(std::vector<uint32_t> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  uint32_t best = v[0], best_n = 0;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    while (j < v.size() && v[j] == v[i]) ++j;
    if (j - i >= best_n) {
      best = v[i];
      best_n = static_cast<uint32_t>(j - i);
    }
    i = j;
  }
  return best;
}

}  // namespace

namespace {

// One rank's durations of one type, sorted.
using Durations = std::vector<int64_t, BulkAllocator<int64_t>>;
struct TypeDur {
  uint32_t type;
  Durations d;
};

// Job types over all ranks (Stats::types), and the stragglers among the
// ranks (stats.h's definition), from each rank's sorted durations by type.
void measure_types(const Timeline& tl, const std::vector<std::vector<TypeDur>>& durations, const StatsOptions& opt,
                   Stats& st) {
  std::vector<uint32_t> type_order(tl.types.size());
  for (uint32_t i = 0; i < type_order.size(); ++i) type_order[i] = i;
  std::sort(type_order.begin(), type_order.end(), [&](uint32_t a, uint32_t b) { return tl.types[a] < tl.types[b]; });
  // (rank index, sorted durations) by type, ranks ascending.
  std::vector<std::vector<std::pair<size_t, const Durations*>>> by_type(tl.types.size());
  for (size_t ri = 0; ri < st.ranks.size(); ++ri) {
    for (const TypeDur& td : durations[ri]) by_type[td.type].emplace_back(ri, &td.d);
  }
  // Every job's duration of one type at a time, in one array reused from
  // type to type (8 bytes a job of the largest type; allocated afresh for
  // each type, its pages were faulted in again each time).
  std::vector<int64_t> all;
  for (uint32_t type : type_order) {
    std::vector<std::pair<size_t, double>> medians;  // (rank index, median)
    std::vector<const Durations*> of_rank;           // parallel to medians
    size_t count = 0;
    for (const auto& [ri, d] : by_type[type]) count += d->size();
    all.clear();
    reserve_in_huge_pages(all, count);  // grown by doubling, it held up to twice its 8 bytes a job
    for (const auto& [ri, d] : by_type[type]) {
      all.insert(all.end(), d->begin(), d->end());
      medians.emplace_back(ri, median_of_sorted(*d));
      of_rank.push_back(d);
    }
    if (all.empty()) continue;
    st.types.push_back(summarize_unsorted(tl.types[type], all));
    if (medians.size() < 2) continue;
    // The median of the other ranks' medians: the median of the sorted
    // medians with this rank's left out, read off in O(1) (the element at
    // index i of the rest is sorted[i] before this rank's place, sorted[i + 1]
    // from it on).
    std::vector<double> sorted;
    for (const auto& m : medians) sorted.push_back(m.second);
    std::sort(sorted.begin(), sorted.end());
    const size_t rest = sorted.size() - 1;
    for (size_t mi = 0; mi < medians.size(); ++mi) {
      const auto& [ri, med] = medians[mi];
      const Durations& d = *of_rank[mi];
      if (d.size() < 3) continue;
      size_t pos = static_cast<size_t>(std::lower_bound(sorted.begin(), sorted.end(), med) - sorted.begin());
      auto other = [&](size_t i) { return i < pos ? sorted[i] : sorted[i + 1]; };
      double ref = rest % 2 == 1 ? other(rest / 2) : (other(rest / 2 - 1) + other(rest / 2)) / 2;
      if (ref <= 0) continue;
      double margin = med / ref - 1.0;
      if (margin <= opt.straggler_margin) continue;
      double threshold = ref * (1.0 + opt.straggler_margin);
      size_t above = static_cast<size_t>(
          d.end() - std::upper_bound(d.begin(), d.end(), static_cast<int64_t>(std::floor(threshold))));
      double consistency = static_cast<double>(above) / static_cast<double>(d.size());
      if (consistency < opt.straggler_consistency) continue;
      Straggler s;
      s.rank = st.ranks[ri].rank;
      s.stage = st.ranks[ri].stage;
      s.type = tl.types[type];
      s.median_ns = med;
      s.others_median_ns = ref;
      s.margin = margin;
      s.consistency = consistency;
      s.jobs = d.size();
      st.stragglers.push_back(std::move(s));
    }
  }
  std::sort(st.stragglers.begin(), st.stragglers.end(), [](const Straggler& a, const Straggler& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.type < b.type;
  });
}

// The step time and period summaries and the throughput, from st.steps.
void summarize_steps(const StatsOptions& opt, Stats& st) {
  std::vector<int64_t> times, periods;
  for (const StepStats& s : st.steps) {
    times.push_back(s.time_ns());
    if (s.period_ns >= 0) periods.push_back(s.period_ns);
  }
  st.step_time = summarize_times(std::move(times));
  st.step_period = summarize_times(std::move(periods));
  st.throughput = compute_throughput(st.step_period, st.schedule, opt.micro_batch_size);
}

// One run is measured: runs appended in one log are never pooled. The
// others are named in a note.
const Run* choose_measured_run(const Timeline& tl, const StatsOptions& opt, Stats& st) {
  if (tl.runs.empty()) return nullptr;
  const size_t ri = measured_run_index(tl, opt);
  const Run* measured = &tl.runs[ri];
  st.run = static_cast<uint32_t>(ri);
  if (tl.runs.size() > 1) {
    std::string others;
    for (const Run& r : tl.runs) {
      if (&r == measured) continue;
      std::vector<int32_t> numbers;
      for (const StepSpan& sp : r.steps) numbers.push_back(sp.number);
      size_t jobs = 0;
      for (uint32_t ti : r.tracks) jobs += tl.tracks[ti].jobs.size();
      others += fmt::format("{}run {} ({} step{}, {} jobs)", others.empty() ? "" : ", ", r.index + 1, numbers.size(),
                            numbers.size() == 1 ? "" : "s", jobs);
    }
    st.notes.push_back(
        fmt::format("the logs hold {} runs; these figures are run {}'s, never pooled; left out: {} "
                    "(--run N measures another)",
                    tl.runs.size(), measured->index + 1, others));
  }
  return measured;
}

// Ranks, in rank order: every loaded rank file, and every rank with jobs.
// Returns each rank's index in st.ranks.
std::unordered_map<int32_t, size_t> list_ranks(const Timeline& tl, const std::vector<RankOrder>& orders, int32_t p,
                                               Stats& st) {
  std::map<int32_t, int32_t> machine_of;
  for (const Track& t : tl.tracks) machine_of.emplace(t.rank, t.machine);
  for (const SourceFile& f : tl.files) {
    if (!f.companion) machine_of.emplace(f.global_rank, f.machine);
  }
  for (const RankOrder& ro : orders) machine_of.emplace(ro.rank, 0);
  std::unordered_map<int32_t, size_t> rank_index;
  for (auto [rank, machine] : machine_of) {
    RankStats rs;
    rs.rank = rank;
    rs.stage = pipeline_stage(rank, p);
    rs.replica = pipeline_replica(rank, p);
    rs.machine = machine;
    rank_index[rank] = st.ranks.size();
    st.ranks.push_back(std::move(rs));
  }
  for (const RankOrder& ro : orders) {
    RankStats& rs = st.ranks[rank_index[ro.rank]];
    rs.steps_like_order = ro.steps_like_order;
    rs.job_order.reserve(ro.order.size());
    for (const OrderItem& it : ro.order) rs.job_order.push_back(order_item_text(tl, it));
  }
  return rank_index;
}

// What the steps of the measured run add up to over the complete rank-steps
// only: the run's and the stages' bubbles.
struct CompleteTotals {
  int64_t idle_ns = 0, span_ns = 0;
  std::map<int32_t, StageStats> stages;
};

// The measured run's jobs, by step and rank; counts each rank's jobs and
// collects the durations of each type it ran into `durations`.
std::vector<StepJobs> collect_step_jobs(const Timeline& tl, const Run& run,
                                        std::unordered_map<int32_t, size_t>& rank_index,
                                        std::vector<std::vector<TypeDur>>& durations, Stats& st) {
  // Per rank only the types it ran (a hostile log can hold very many types;
  // ranks x types would not fit).
  std::vector<int32_t> slot(tl.types.size(), -1);  // type -> index in durations[ri], per track
  std::unordered_map<int32_t, uint32_t> step_of_number;
  for (uint32_t k = 0; k < run.steps.size(); ++k) step_of_number[run.steps[k].number] = k;
  std::vector<StepJobs> step_jobs(run.steps.size());
  BulkScope bulk;
  // A track's jobs of one step are one StepJobs::Rank, its list reserved at
  // its count (grown by doubling, the lists held twice the 4 bytes a job).
  std::vector<int32_t> step_at;                        // per job of the track: its step's index, or -1
  std::vector<uint32_t> in_step(step_jobs.size(), 0);  // the track's jobs per step
  std::vector<uint32_t> touched;                       // the steps the track has jobs in
  for (uint32_t ti : run.tracks) {
    const Track& t = tl.tracks[ti];
    size_t ri = rank_index[t.rank];
    st.ranks[ri].jobs += t.jobs.size();
    st.jobs += t.jobs.size();
    std::vector<TypeDur>& mine = durations[ri];
    for (size_t k = 0; k < mine.size(); ++k) slot[mine[k].type] = static_cast<int32_t>(k);
    // Each type's durations are reserved at their count first: grown by
    // doubling, they copied and faulted in about twice the memory, a sixth
    // of stats at 1024 ranks.
    std::vector<size_t> more(mine.size(), 0);
    for (const Job& j : t.jobs) {
      if (j.type >= tl.types.size()) continue;
      if (slot[j.type] < 0) {
        slot[j.type] = static_cast<int32_t>(mine.size());
        mine.push_back({j.type, {}});
        more.push_back(0);
      }
      ++more[slot[j.type]];
    }
    for (size_t k = 0; k < mine.size(); ++k) mine[k].d.reserve(mine[k].d.size() + more[k]);
    step_at.resize(t.jobs.size());
    for (uint32_t ji = 0; ji < t.jobs.size(); ++ji) {
      auto it = step_of_number.find(t.jobs[ji].step);
      step_at[ji] = it == step_of_number.end() ? -1 : static_cast<int32_t>(it->second);
      if (step_at[ji] >= 0 && in_step[it->second]++ == 0) touched.push_back(it->second);
    }
    for (uint32_t k : touched) {
      step_jobs[k].ranks.push_back({t.rank, ti, {}});
      step_jobs[k].ranks.back().jobs.reserve(in_step[k]);
      in_step[k] = 0;
    }
    touched.clear();
    for (uint32_t ji = 0; ji < t.jobs.size(); ++ji) {
      const Job& j = t.jobs[ji];
      if (j.type < tl.types.size()) mine[slot[j.type]].d.push_back(j.end_ns - j.start_ns);
      if (step_at[ji] >= 0) step_jobs[static_cast<size_t>(step_at[ji])].ranks.back().jobs.push_back(ji);
    }
    for (const TypeDur& td : mine) slot[td.type] = -1;
  }
  return step_jobs;
}

// The usual job count of each rank's steps: a rank-step with fewer is
// incomplete (a log cut short, lines lost).
std::unordered_map<int32_t, uint32_t> usual_job_counts(const std::vector<StepJobs>& step_jobs) {
  std::unordered_map<int32_t, std::vector<uint32_t>> counts;
  std::vector<uint32_t> every;
  for (const StepJobs& sj : step_jobs) {
    for (const StepJobs::Rank& r : sj.ranks) {
      counts[r.rank].push_back(static_cast<uint32_t>(r.jobs.size()));
      every.push_back(static_cast<uint32_t>(r.jobs.size()));
    }
  }
  const uint32_t run_usual = usual_count(every);
  std::unordered_map<int32_t, uint32_t> usual;
  for (const auto& [rank, v] : counts) usual[rank] = v.size() > 1 ? usual_count(v) : std::max(v[0], run_usual);
  return usual;
}

// Each step of the measured run: its ranks' busy and idle time (added to the
// ranks' and, for complete rank-steps, the totals), its bubble and its
// critical path (when `deps` is given).
void measure_steps(const Timeline& tl, const Run& run, const std::vector<StepJobs>& step_jobs,
                   std::unordered_map<int32_t, size_t>& rank_index, const Dependencies* deps,
                   const std::optional<DependencyIndex>& dep_index, CompleteTotals& totals, Stats& st) {
  std::unordered_map<int32_t, uint32_t> usual = usual_job_counts(step_jobs);
  std::vector<std::pair<int64_t, int64_t>> scratch;
  for (uint32_t k = 0; k < run.steps.size(); ++k) {
    const StepSpan& span = run.steps[k];
    StepStats ss;
    ss.run = run.index;
    ss.step = span.number;
    ss.start_ns = span.start_ns;
    ss.end_ns = span.end_ns;
    if (k + 1 < run.steps.size()) ss.period_ns = run.steps[k + 1].start_ns - span.start_ns;
    int64_t len = span.end_ns - span.start_ns;
    uint32_t complete = 0;
    for (const StepJobs::Rank& r : step_jobs[k].ranks) {
      RankStep m = measure_rank_step(tl.tracks[r.track], r.jobs, span, scratch);
      RankStats& rs = st.ranks[rank_index[r.rank]];
      ++rs.steps;
      accumulate_ns(rs.span_ns, len);
      accumulate_ns(rs.busy_ns, m.busy);
      accumulate_ns(rs.idle_ns, len - m.busy);
      accumulate_ns(rs.warmup_ns, m.warmup);
      accumulate_ns(rs.cooldown_ns, m.cooldown);
      accumulate_ns(rs.gaps_ns, m.gaps);
      ++ss.ranks;
      ++st.rank_steps;
      const uint32_t want = usual[r.rank];
      if (r.jobs.size() < want) {
        ++rs.incomplete_steps;
        rs.missing_jobs += want - r.jobs.size();
        ++ss.incomplete_ranks;
        continue;
      }
      ++complete;
      ++st.complete_rank_steps;
      accumulate_ns(ss.busy_ns, m.busy);
      accumulate_ns(ss.idle_ns, len - m.busy);
      accumulate_ns(totals.idle_ns, len - m.busy);
      accumulate_ns(totals.span_ns, len);
      StageStats& sg = totals.stages[rs.stage];
      accumulate_ns(sg.span_ns, len);
      accumulate_ns(sg.busy_ns, m.busy);
      accumulate_ns(sg.idle_ns, len - m.busy);
      ++sg.rank_steps;
    }
    if (complete > 0 && len > 0) {
      ss.bubble_ratio = static_cast<double>(ss.idle_ns) / (static_cast<double>(len) * complete);
    }
    if (deps) ss.critical_path = critical_path(tl, step_jobs[k], span, *deps, *dep_index);
    st.steps.push_back(std::move(ss));
  }
  for (RankStats& rs : st.ranks) {
    if (rs.steps == 0) continue;
    rs.missing_steps = static_cast<uint32_t>(run.steps.size()) - rs.steps;
  }
}

// The ranks' bubbles (with their bound at a coarse resolution) and job
// types, the stages' bubbles, and the run's.
void summarize_ranks_and_stages(const Timeline& tl, std::vector<std::vector<TypeDur>>& durations,
                                CompleteTotals& totals, Stats& st) {
  double all_error_ns = 0;
  st.resolution_ns = tl.resolution_ns;
  std::vector<int64_t> scratch;
  for (size_t ri = 0; ri < st.ranks.size(); ++ri) {
    RankStats& rs = st.ranks[ri];
    if (rs.span_ns > 0) rs.bubble_ratio = static_cast<double>(rs.idle_ns) / static_cast<double>(rs.span_ns);
    if (tl.resolution_ns > 1 && rs.span_ns > 0) {
      // Every edge is truncated to the resolution r, both edges of a job
      // alike, so a job's length is off by less than r, busy by less than
      // r per job, and each step's span by less than r per end: idle is off
      // by less than r * (jobs + 2 * steps), and never by more than the span.
      double error_ns = std::min(static_cast<double>(tl.resolution_ns) * (1.0 * rs.jobs + 2.0 * rs.steps),
                                 static_cast<double>(rs.span_ns));
      rs.bubble_ratio_error = error_ns / static_cast<double>(rs.span_ns);
      all_error_ns += error_ns;
    }
    if (rs.short_rank()) st.short_ranks.push_back(rs.rank);
    if (rs.steps == 0) st.ranks_without_jobs.push_back(rs.rank);
    StageStats& sg = totals.stages[rs.stage];
    sg.stage = rs.stage;
    ++sg.ranks;
    for (TypeDur& td : durations[ri]) {
      sort_int64(td.d, scratch);
      rs.types.push_back(summarize(tl.types[td.type], td.d));
    }
    std::sort(rs.types.begin(), rs.types.end(),
              [](const TypeDurations& a, const TypeDurations& b) { return a.type < b.type; });
  }
  const int64_t all_span = totals.span_ns;
  st.bubble_ratio = all_span > 0 ? static_cast<double>(totals.idle_ns) / static_cast<double>(all_span) : 0;
  st.bubble_ratio_error = all_span > 0 ? std::min(1.0, all_error_ns / static_cast<double>(all_span)) : 0;
  for (auto& [stage, sg] : totals.stages) {
    if (sg.span_ns > 0) sg.bubble_ratio = static_cast<double>(sg.idle_ns) / static_cast<double>(sg.span_ns);
    st.stages.push_back(sg);
  }
}

// Notes on the short ranks (missing or incomplete steps) and the ranks
// without a job in the measured run.
void note_short_ranks(const Timeline& tl, const Run* measured, std::unordered_map<int32_t, size_t>& rank_index,
                      Stats& st) {
  if (!st.short_ranks.empty()) {
    std::string what;
    for (int32_t r : st.short_ranks) {
      const RankStats& rs = st.ranks[rank_index[r]];
      if (what.size() > 400) {
        what += "; ...";
        break;
      }
      std::string parts;
      if (rs.missing_steps > 0) parts += fmt::format("misses {} of {} steps", rs.missing_steps, st.steps.size());
      if (rs.incomplete_steps > 0) {
        parts += fmt::format("{}{} incomplete step{} ({} job{} fewer than usual)", parts.empty() ? "" : ", ",
                             rs.incomplete_steps, rs.incomplete_steps == 1 ? "" : "s", rs.missing_jobs,
                             rs.missing_jobs == 1 ? "" : "s");
      }
      what += fmt::format("{}rank {} {}", what.empty() ? "" : "; ", r, parts);
    }
    st.notes.push_back(
        fmt::format("short rank{}: {}; the run's, steps' and stages' bubbles count the {} complete "
                    "rank-steps of {}, the ranks' rows every step",
                    st.short_ranks.size() == 1 ? "" : "s", what, st.complete_rank_steps, st.rank_steps));
  }
  if (!st.ranks_without_jobs.empty() && measured) {
    st.notes.push_back(fmt::format("rank{} {}: no job in {}", st.ranks_without_jobs.size() == 1 ? "" : "s",
                                   format_rank_ranges(st.ranks_without_jobs),
                                   tl.runs.size() > 1 ? fmt::format("run {}", measured->index + 1) : "the logs"));
  }
}

}  // namespace

uint32_t measured_run_index(const Timeline& tl, const StatsOptions& opt) {
  if (tl.runs.empty()) return 0;
  return opt.run >= 0 && static_cast<size_t>(opt.run) < tl.runs.size() ? static_cast<uint32_t>(opt.run)
                                                                       : static_cast<uint32_t>(tl.runs.size() - 1);
}

Stats compute_stats(const Timeline& tl, const PipelinePlan& plan, const Dependencies* deps, const StatsOptions& opt) {
  Stats st;
  st.runs = static_cast<uint32_t>(tl.runs.size());
  st.straggler_margin = opt.straggler_margin;
  st.partial = tl.partial;
  st.selection = tl.selection;
  st.schedule = plan.schedule;
  const int32_t p = std::max(1, plan.shape.pp_degree);
  const bool paths = opt.critical_paths && deps != nullptr;
  std::optional<DependencyIndex> dep_index;
  if (paths) dep_index.emplace(tl, *deps);

  const Run* measured = choose_measured_run(tl, opt, st);
  std::unordered_map<int32_t, size_t> rank_index = list_ranks(tl, plan.orders, p, st);
  std::vector<std::vector<TypeDur>> durations(st.ranks.size());  // by rank and type
  CompleteTotals totals;
  if (measured) {
    std::vector<StepJobs> step_jobs = collect_step_jobs(tl, *measured, rank_index, durations, st);
    measure_steps(tl, *measured, step_jobs, rank_index, paths ? deps : nullptr, dep_index, totals, st);
  }
  summarize_ranks_and_stages(tl, durations, totals, st);
  note_short_ranks(tl, measured, rank_index, st);
  measure_types(tl, durations, opt, st);
  summarize_steps(opt, st);
  if (measured) st.memory = measure_memory(tl, st.run, p);
  return st;
}

}  // namespace ppt
