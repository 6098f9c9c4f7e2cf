#include "analysis/diff.h"
#include "util/text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace ppt {

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kSlower: return "slower";
    case Verdict::kFaster: return "faster";
    case Verdict::kSame: break;
  }
  return "same";
}

std::string_view gate_metric_name(GateMetric m) {
  switch (m) {
    case GateMetric::kBusy: return "busy";
    case GateMetric::kThroughput: return "throughput";
    case GateMetric::kPeriod: break;
  }
  return "period";
}

std::optional<GateMetric> gate_metric_from_name(std::string_view name) {
  if (name == "period") return GateMetric::kPeriod;
  if (name == "busy") return GateMetric::kBusy;
  if (name == "throughput") return GateMetric::kThroughput;
  return std::nullopt;
}

std::string metric_change(const Diff& d) {
  double pct = d.metric == GateMetric::kThroughput ? d.throughput.delta_pct
               : d.metric == GateMetric::kBusy     ? d.step_time.delta_pct
                                                   : d.period.delta_pct;
  const char* what = d.metric == GateMetric::kThroughput ? "throughput"
                     : d.metric == GateMetric::kBusy     ? "busy span"
                                                         : "step period";
  return fmt::format("{} {}", what, format_percent(pct, PercentSign::kAlways));
}

namespace {

// Two plan items (order_item_text) name the same job: equal, or the same
// type where one has a micro-batch and the other none. Paddle gives the
// optimizer micro-batch 0 and a predicted run none; that is a naming
// difference, not a change of schedule.
bool same_plan_item(std::string_view a, std::string_view b) {
  if (a == b) return true;
  auto type = [](std::string_view s) { return s.substr(0, s.rfind(':')); };
  const bool a_mb = a.rfind(':') != std::string_view::npos, b_mb = b.rfind(':') != std::string_view::npos;
  return a_mb != b_mb && type(a) == type(b);
}

double pct(double a, double b) { return a > 0 ? (b - a) / a * 100.0 : 0.0; }

TypeDelta type_delta(const std::string& name, const TypeDurations* a, const TypeDurations* b) {
  TypeDelta d;
  d.type = name;
  if (a) {
    d.count_a = a->count;
    d.mean_a_ns = a->mean_ns;
    d.p50_a_ns = a->p50_ns;
    d.p95_a_ns = a->p95_ns;
  }
  if (b) {
    d.count_b = b->count;
    d.mean_b_ns = b->mean_ns;
    d.p50_b_ns = b->p50_ns;
    d.p95_b_ns = b->p95_ns;
  }
  if (a && b) d.delta_pct = pct(a->mean_ns, b->mean_ns);
  return d;
}

std::vector<TypeDelta> type_deltas(const std::vector<TypeDurations>& a, const std::vector<TypeDurations>& b) {
  std::map<std::string, std::pair<const TypeDurations*, const TypeDurations*>> both;
  for (const TypeDurations& t : a) both[t.type].first = &t;
  for (const TypeDurations& t : b) both[t.type].second = &t;
  std::vector<TypeDelta> out;
  for (const auto& [name, pair] : both) out.push_back(type_delta(name, pair.first, pair.second));
  return out;
}

StepTimeDelta compare_times(const StepTimeSummary& sa, const StepTimeSummary& sb, double noise_floor_pct) {
  StepTimeDelta t;
  t.a_ns = sa.mean_ns;
  t.b_ns = sb.mean_ns;
  t.a_median_ns = sa.median_ns;
  t.b_median_ns = sb.median_ns;
  t.a_steps = sa.count;
  t.b_steps = sb.count;
  t.delta_pct = pct(t.a_ns, t.b_ns);
  double se = 0;
  if (t.a_steps > 0 && t.b_steps > 0) {
    se = std::sqrt(sa.stdev_ns * sa.stdev_ns / t.a_steps + sb.stdev_ns * sb.stdev_ns / t.b_steps);
  }
  t.noise_pct = std::max(noise_floor_pct, t.a_ns > 0 ? 200.0 * se / t.a_ns : 0.0);
  return t;
}

// The metric compared: periods need a next step on both sides; without
// them the busy span is, with a note, or a usage error when --gate chose
// the metric.
void choose_metric(Diff& d, const DiffOptions& opt) {
  d.metric = opt.metric;
  const bool periods = d.period.a_steps > 0 && d.period.b_steps > 0;
  if (d.metric == GateMetric::kBusy || periods) return;
  const std::string who = d.period.a_steps == 0 && d.period.b_steps == 0 ? "neither run has"
                          : d.period.a_steps == 0                        ? "A has"
                                                                         : d.b_label + " has";
  std::string reason = fmt::format(
      "{} a step period (a run of one step, or a stats JSON written before "
      "periods were measured)",
      who);
  if (who[0] != 'n')
    reason = fmt::format(
        "{} no step period (a run of one step, or a stats JSON written before "
        "periods were measured)",
        who);
  if (opt.metric_chosen) {
    d.gate_error = fmt::format("--gate {}: {}; use --gate busy", gate_metric_name(d.metric), reason);
  } else {
    d.metric_note = fmt::format("the busy span is compared: {}", reason);
  }
  d.metric = GateMetric::kBusy;
}

// How much slower B is in the metric, against the noise: the verdict and
// the gate.
void judge(Diff& d, const DiffOptions& opt) {
  switch (d.metric) {
    case GateMetric::kPeriod:
      d.slower_pct = d.period.delta_pct;
      d.noise_pct = d.period.noise_pct;
      break;
    case GateMetric::kThroughput:
      d.slower_pct = -d.throughput.delta_pct;
      d.noise_pct = d.period.noise_pct;
      break;
    case GateMetric::kBusy:
      d.slower_pct = d.step_time.delta_pct;
      d.noise_pct = d.step_time.noise_pct;
      break;
  }
  if (d.slower_pct > d.noise_pct)
    d.verdict = Verdict::kSlower;
  else if (d.slower_pct < -d.noise_pct)
    d.verdict = Verdict::kFaster;
  d.gate_failed = opt.fail_if_slower_pct >= 0 && d.gate_error.empty() && d.slower_pct > opt.fail_if_slower_pct;
}

StepDelta step_delta(const StepStats* sa, const StepStats* sb) {
  StepDelta sd;
  sd.in_a = sa != nullptr;
  sd.in_b = sb != nullptr;
  if (sa) {
    sd.step_a = sa->step;
    sd.period_a_ns = sa->period_ns;
    sd.span_a_ns = sa->time_ns();
  }
  if (sb) {
    sd.step_b = sb->step;
    sd.period_b_ns = sb->period_ns;
    sd.span_b_ns = sb->time_ns();
  }
  if (sa && sb) {
    if (sa->period_ns > 0 && sb->period_ns >= 0) {
      sd.period_delta_pct = pct(static_cast<double>(sa->period_ns), static_cast<double>(sb->period_ns));
    }
    sd.span_delta_pct = pct(static_cast<double>(sa->time_ns()), static_cast<double>(sb->time_ns()));
  }
  return sd;
}

// Per step: by number when the runs share step numbers, else by position.
std::vector<StepDelta> step_deltas(const std::vector<StepStats>& a, const std::vector<StepStats>& b) {
  std::map<int32_t, const StepStats*> bn;
  for (const StepStats& s : b) bn.emplace(s.step, &s);
  bool common = false;
  for (const StepStats& s : a) common = common || bn.count(s.step) > 0;
  std::vector<StepDelta> out;
  if (common) {
    std::map<int32_t, std::pair<const StepStats*, const StepStats*>> both;
    for (const StepStats& s : a) both[s.step].first = &s;
    for (const StepStats& s : b) both[s.step].second = &s;
    for (const auto& [n, pair] : both) out.push_back(step_delta(pair.first, pair.second));
  } else {
    for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
      out.push_back(step_delta(i < a.size() ? &a[i] : nullptr, i < b.size() ? &b[i] : nullptr));
    }
  }
  return out;
}

// The first place where a rank's plans differ, if they do.
std::optional<ScheduleChange> schedule_change(int32_t rank, const std::vector<std::string>& oa,
                                              const std::vector<std::string>& ob) {
  size_t n = std::min(oa.size(), ob.size());
  size_t i = 0;
  while (i < n && same_plan_item(oa[i], ob[i])) ++i;
  if (i == n && oa.size() == ob.size()) return std::nullopt;
  ScheduleChange c;
  c.rank = rank;
  c.index = i;
  c.a = i < oa.size() ? oa[i] : "";
  c.b = i < ob.size() ? ob[i] : "";
  c.a_jobs = oa.size();
  c.b_jobs = ob.size();
  return c;
}

// One rank on either side (or both): its busy and idle time per step.
RankDelta rank_delta(int32_t rank, const RankStats* ra, const RankStats* rb) {
  auto per_step = [](int64_t v, uint32_t steps) { return steps > 0 ? static_cast<double>(v) / steps : 0.0; };
  RankDelta rd;
  rd.rank = rank;
  rd.stage = ra ? ra->stage : rb->stage;
  rd.in_a = ra != nullptr;
  rd.in_b = rb != nullptr;
  if (ra) {
    rd.busy_a_ns = per_step(ra->busy_ns, ra->steps);
    rd.idle_a_ns = per_step(ra->idle_ns, ra->steps);
    rd.bubble_a = ra->bubble_ratio;
  }
  if (rb) {
    rd.busy_b_ns = per_step(rb->busy_ns, rb->steps);
    rd.idle_b_ns = per_step(rb->idle_ns, rb->steps);
    rd.bubble_b = rb->bubble_ratio;
  }
  if (ra && rb) {
    rd.busy_delta_pct = pct(rd.busy_a_ns, rd.busy_b_ns);
    rd.idle_delta_pct = pct(rd.idle_a_ns, rd.idle_b_ns);
    rd.bubble_delta = rd.bubble_b - rd.bubble_a;
    rd.types = type_deltas(ra->types, rb->types);
  }
  return rd;
}

// "0, 1, 2": at most 16 ranks, then "...".
std::string rank_list(const std::vector<int32_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < 16; ++i) s += fmt::format("{}{}", i ? ", " : "", v[i]);
  if (v.size() > 16) s += ", ...";
  return s;
}

// Every rank of either run, the plans that changed, and the ranks of one
// run only (a note).
void compare_ranks(Diff& d, const Stats& a, const Stats& b) {
  std::map<int32_t, std::pair<const RankStats*, const RankStats*>> ranks;
  for (const RankStats& r : a.ranks) ranks[r.rank].first = &r;
  for (const RankStats& r : b.ranks) ranks[r.rank].second = &r;
  std::vector<int32_t> only_a, only_b;
  for (const auto& [rank, pair] : ranks) {
    const auto [ra, rb] = pair;
    if (ra && rb) {
      if (auto change = schedule_change(rank, ra->job_order, rb->job_order))
        d.schedule_changes.push_back(std::move(*change));
    } else {
      (ra ? only_a : only_b).push_back(rank);
    }
    d.ranks.push_back(rank_delta(rank, ra, rb));
  }
  if (!only_a.empty()) d.notes.push_back(fmt::format("ranks only in A: {}", rank_list(only_a)));
  if (!only_b.empty()) d.notes.push_back(fmt::format("ranks only in {}: {}", d.b_label, rank_list(only_b)));
}

// The ranks in both runs whose busy time per step changed past the
// option's percent, the largest change first.
std::vector<int32_t> changed_ranks(const std::vector<RankDelta>& ranks, double rank_change_pct) {
  std::vector<std::pair<double, int32_t>> changed;  // (|busy delta|, rank)
  for (const RankDelta& rd : ranks) {
    double m = std::fabs(rd.busy_delta_pct);
    if (rd.in_a && rd.in_b && m > rank_change_pct) changed.emplace_back(m, rd.rank);
  }
  std::stable_sort(changed.begin(), changed.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  std::vector<int32_t> out;
  for (const auto& c : changed) out.push_back(c.second);
  return out;
}

// B's stragglers that A did not have (the same rank and type).
std::vector<Straggler> new_stragglers(const Stats& a, const Stats& b) {
  std::vector<Straggler> out;
  for (const Straggler& s : b.stragglers) {
    bool known = std::any_of(a.stragglers.begin(), a.stragglers.end(),
                             [&](const Straggler& o) { return o.rank == s.rank && o.type == s.type; });
    if (!known) out.push_back(s);
  }
  return out;
}

}  // namespace

Diff diff_stats(const Stats& a, const Stats& b, const DiffOptions& opt) {
  Diff d;
  d.b_label = opt.b_label;
  d.a_source = a.source;
  d.b_source = b.source;
  d.a_schedule = schedule_label(a.schedule);
  d.b_schedule = schedule_label(b.schedule);
  d.bubble_a = a.bubble_ratio;
  d.bubble_b = b.bubble_ratio;
  d.bubble_a_error = a.bubble_ratio_error;
  d.bubble_b_error = b.bubble_ratio_error;
  d.fail_if_slower_pct = opt.fail_if_slower_pct;
  d.step_time = compare_times(a.step_time, b.step_time, opt.noise_floor_pct);
  d.period = compare_times(a.step_period, b.step_period, opt.noise_floor_pct);
  d.throughput.a = a.throughput;
  d.throughput.b = b.throughput;
  d.throughput.delta_pct = pct(a.throughput.steps_per_second, b.throughput.steps_per_second);
  choose_metric(d, opt);
  judge(d, opt);
  d.steps = step_deltas(a.steps, b.steps);
  if (d.step_time.a_steps == 0 || d.step_time.b_steps == 0) {
    d.notes.push_back("a run has no complete step; step times cannot be compared");
  }
  if (a.schedule.kind != b.schedule.kind || a.schedule.pp_degree != b.schedule.pp_degree ||
      a.schedule.micro_batches != b.schedule.micro_batches || a.schedule.chunks != b.schedule.chunks) {
    d.notes.push_back(fmt::format("the schedules differ: A is {}, {} is {}", d.a_schedule, d.b_label, d.b_schedule));
  }
  compare_ranks(d, a, b);
  d.changed_ranks = changed_ranks(d.ranks, opt.rank_change_pct);
  d.types = type_deltas(a.types, b.types);
  d.new_stragglers = new_stragglers(a, b);
  return d;
}

}  // namespace ppt
