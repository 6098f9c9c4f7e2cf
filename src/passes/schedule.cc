#include "passes/schedule.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <unordered_map>

#include "model/job_types.h"
#include "passes/pipeline_stage.h"
#include "schedule/plan.h"
#include "schedule/replay.h"
#include "util/parallel.h"

namespace ppt {

std::string schedule_label(const ScheduleInfo& s, ScheduleLabel form) {
  std::string label(schedule_name(s.kind));
  if (!s.variant.empty()) label += fmt::format(" ({})", s.variant);
  if (s.kind == ScheduleKind::kNoPipeline) return label;
  if (form == ScheduleLabel::kShort) {
    label += fmt::format(" P={} M={}", s.pp_degree, s.micro_batches);
    if (s.chunks > 1) label += fmt::format(" V={}", s.chunks);
    if (s.replicas > 1) label += fmt::format(" x{} replicas", s.replicas);
  } else {
    label += fmt::format(", P={} (from {}), M={}", s.pp_degree, s.pp_degree_source, s.micro_batches);
    if (s.chunks > 1) label += fmt::format(", V={}", s.chunks);
    if (s.replicas > 1) label += fmt::format(", {} data-parallel replicas", s.replicas);
  }
  return label;
}

std::vector<JobClass> classify_types(const std::vector<std::string>& types) {
  std::vector<JobClass> out;
  out.reserve(types.size());
  for (const std::string& t : types) {
    TypeParts p = split_type(t);
    JobClass c;
    c.piece = is_job_piece(t);
    c.chunk = c.piece ? -1 : p.chunk;
    switch (job_kind(p)) {
      case JobKind::kForward: c.role = PlanRole::kForward; break;
      case JobKind::kBackward:
        c.split = is_input_grad_half(p);
        c.role = c.split ? PlanRole::kBackwardB : PlanRole::kBackward;
        break;
      case JobKind::kBackwardWeight:
        c.role = PlanRole::kBackwardW;
        c.split = true;
        break;
      case JobKind::kNoPipeline: c.no_pipeline = true; break;
      default: break;
    }
    out.push_back(c);
  }
  return out;
}

namespace {

constexpr uint64_t kFnvOffset = 1469598103934665603ull;
constexpr uint64_t kFnvPrime = 1099511628211ull;

// One multiply a value, not FNV's one a byte: the hash only sorts orders
// into buckets (equal orders are compared whole), and a byte-wise FNV put
// eight multiplies in a row on every job.
uint64_t mix(uint64_t h, uint64_t v) {
  h = (h ^ v) * kFnvPrime;
  return h ^ (h >> 32);
}

uint64_t order_hash(const std::vector<OrderItem>& order) {
  uint64_t h = kFnvOffset;
  for (const OrderItem& it : order) h = mix(h, (uint64_t{it.type} << 32) ^ static_cast<uint32_t>(it.micro_batch));
  return h;
}

bool is_compute(const std::vector<JobClass>& classes, uint32_t type) {
  return type < classes.size() && classes[type].role.has_value();
}

}  // namespace

namespace {

struct Candidate {
  uint64_t hash;
  uint32_t count;
  std::vector<OrderItem> order;
};

// The distinct step orders of a set of steps, in order of first appearance.
struct Candidates {
  std::vector<Candidate> candidates;
  std::unordered_multimap<uint64_t, size_t> by_hash;  // into candidates
  uint32_t steps = 0;
  void add(uint64_t h, uint32_t count, const std::vector<OrderItem>& order) {
    for (auto [it, end] = by_hash.equal_range(h); it != end; ++it) {
      Candidate& c = candidates[it->second];
      if (c.order == order) {
        c.count += count;
        return;
      }
    }
    by_hash.emplace(h, candidates.size());
    candidates.push_back({h, count, order});
  }
};

// One track's step orders, in (step, line) order.
void track_orders(const Track& t, Candidates& tc) {
  auto by_step_line = [](const Job& x, const Job& y) { return x.step != y.step ? x.step < y.step : x.line < y.line; };
  std::vector<OrderItem> order;
  // The jobs in (step, line) order, job_at(k) the k-th.
  auto walk = [&](auto job_at) {
    for (size_t i = 0; i < t.jobs.size();) {
      const int32_t step = job_at(i).step;
      order.clear();
      size_t k = i;
      for (; k < t.jobs.size() && job_at(k).step == step; ++k) order.push_back({job_at(k).type, job_at(k).micro_batch});
      i = k;
      if (step < 0) continue;
      ++tc.steps;
      tc.add(order_hash(order), 1, order);
    }
  };
  // Jobs in start order are mostly in (step, line) order already: then
  // they are walked as they are, with no index.
  if (std::is_sorted(t.jobs.begin(), t.jobs.end(), by_step_line)) {
    walk([&](size_t k) -> const Job& { return t.jobs[k]; });
    return;
  }
  std::vector<uint32_t> idx(t.jobs.size());
  std::iota(idx.begin(), idx.end(), 0u);
  std::stable_sort(idx.begin(), idx.end(), [&](uint32_t a, uint32_t b) { return by_step_line(t.jobs[a], t.jobs[b]); });
  walk([&](size_t k) -> const Job& { return t.jobs[idx[k]]; });
}

// The tracks' orders merged by rank in track order, which keeps the order of
// first appearance; each track's are released once merged.
std::map<int32_t, Candidates> merge_by_rank(const Timeline& tl, std::vector<Candidates>& of_track, int32_t only_run) {
  std::map<int32_t, Candidates> by_rank;
  for (const Run& run : tl.runs) {
    if (only_run >= 0 && run.index != static_cast<uint32_t>(only_run)) continue;
    for (uint32_t ti : run.tracks) {
      Candidates& pr = by_rank[tl.tracks[ti].rank];
      pr.steps += of_track[ti].steps;
      for (const Candidate& c : of_track[ti].candidates) pr.add(c.hash, c.count, c.order);
      of_track[ti] = Candidates();
    }
  }
  return by_rank;
}

// Each rank's most common order (the first seen of those as common).
std::vector<RankOrder> most_common_orders(const std::map<int32_t, Candidates>& by_rank) {
  std::vector<RankOrder> out;
  out.reserve(by_rank.size());
  for (const auto& [rank, pr] : by_rank) {
    RankOrder ro;
    ro.rank = rank;
    ro.steps = pr.steps;
    const Candidate* best = nullptr;
    for (const Candidate& c : pr.candidates) {
      if (!best || c.count > best->count) best = &c;
    }
    if (best) {
      ro.order = best->order;
      ro.steps_like_order = best->count;
    }
    out.push_back(std::move(ro));
  }
  return out;
}

}  // namespace

std::vector<RankOrder> rank_orders(const Timeline& tl, unsigned threads, int32_t only_run) {
  // Each track's orders on their own (in parallel), then merged by rank in
  // track order, which keeps the order of first appearance.
  std::vector<Candidates> of_track(tl.tracks.size());
  parallel_for(tl.tracks.size(), threads, [&](size_t ti) {
    const Track& t = tl.tracks[ti];
    if (only_run >= 0 && t.run != static_cast<uint32_t>(only_run)) return;
    track_orders(t, of_track[ti]);
  });
  return most_common_orders(merge_by_rank(tl, of_track, only_run));
}

std::string order_item_text(const Timeline& tl, const OrderItem& item) {
  std::string_view type = item.type < tl.types.size() ? std::string_view(tl.types[item.type]) : "?";
  if (item.micro_batch < 0) return std::string(type);
  return fmt::format("{}:{}", type, item.micro_batch);
}

// P from the stages the input states (Track::stage, dynamic-graph records):
// the number of stages, when every loaded rank with jobs has one, P divides
// `world` and each rank's stage is rank mod P; else 0.
static int32_t stated_pp_degree(const Timeline& tl, int32_t world) {
  int32_t max_stage = -1;
  for (const Track& t : tl.tracks) {
    if (t.jobs.empty()) continue;
    if (t.stage < 0) return 0;
    max_stage = std::max(max_stage, t.stage);
  }
  const int32_t p = max_stage + 1;
  if (p <= 0 || world % p != 0) return 0;
  for (const Track& t : tl.tracks) {
    if (!t.jobs.empty() && pipeline_stage(t.rank, p) != t.stage) return 0;
  }
  return p;
}

namespace {

bool any_compute_job(const std::vector<RankOrder>& orders, const std::vector<JobClass>& classes) {
  bool any_compute = false;
  for (const RankOrder& ro : orders) {
    for (const OrderItem& it : ro.order) any_compute = any_compute || is_compute(classes, it.type);
  }
  return any_compute;
}

// The plans repeat with period P over rank = replica*P + stage: the
// smallest P that divides the run's ranks such that the loaded ranks of each
// stage have the same plan. Each stage seen must be seen on two ranks at
// least, or nothing supports the period (always so when every rank is
// loaded; a subset with one rank per stage falls back to all ranks).
int32_t plan_period(const std::vector<RankOrder>& orders, int32_t world) {
  const int32_t loaded = static_cast<int32_t>(orders.size());
  std::vector<uint64_t> sig(loaded);
  for (int32_t i = 0; i < loaded; ++i) sig[i] = order_hash(orders[i].order);
  // By stage, for the stages of loaded ranks only: world may be far beyond
  // the ranks loaded (docs/hardening.md, the index of a rank).
  std::map<int32_t, int32_t> first_of, seen;
  for (int32_t p = 1; p < world; ++p) {
    if (world % p != 0) continue;
    first_of.clear();
    seen.clear();
    bool periodic = true;
    for (int32_t i = 0; i < loaded && periodic; ++i) {
      int32_t s = pipeline_stage(orders[i].rank, p);
      if (s < 0 || s >= p) {
        periodic = false;
        break;
      }
      ++seen[s];
      auto [first, fresh] = first_of.emplace(s, i);
      if (fresh) continue;
      int32_t f = first->second;
      periodic = sig[i] == sig[f] && orders[i].order == orders[f].order;
    }
    for (auto it = seen.begin(); it != seen.end() && periodic; ++it) periodic = it->second != 1;
    if (periodic) return p;
  }
  return world;
}

// The start and the length of each track position's first job of `span`.
void first_jobs(const Timeline& tl, const Run& run, const StepSpan& span, std::vector<int64_t>& first_start,
                std::vector<int64_t>& first_len) {
  for (size_t pos = 0; pos < run.tracks.size(); ++pos) {
    const Track& t = tl.tracks[run.tracks[pos]];
    for (const Job& j : t.jobs) {
      if (j.step == span.number && j.start_ns < first_start[pos]) {
        first_start[pos] = j.start_ns;
        first_len[pos] = j.end_ns - j.start_ns;
      }
    }
  }
}

// Every rank has the same plan (FThenB, or one micro-batch): the ranks that
// start the first complete step together (within half the median length of
// a rank's first job) are the first stages of the replicas. Needs every
// rank of the run (n of them).
PipelineShape shape_from_start_times(const Timeline& tl, int32_t n) {
  for (const Run& run : tl.runs) {
    for (const StepSpan& span : run.steps) {
      if (span.ranks != run.tracks.size() || run.tracks.size() != static_cast<size_t>(n)) continue;
      std::vector<int64_t> first_start(n, INT64_MAX), first_len(n, 0);
      first_jobs(tl, run, span, first_start, first_len);
      int64_t t0 = *std::min_element(first_start.begin(), first_start.end());
      std::vector<int64_t> lens = first_len;
      std::nth_element(lens.begin(), lens.begin() + n / 2, lens.end());
      int64_t tolerance = lens[n / 2] / 2;
      int32_t together = 0;
      for (int32_t pos = 0; pos < n; ++pos) together += first_start[pos] - t0 <= tolerance ? 1 : 0;
      if (together > 1 && n % together == 0) {
        int32_t p = n / together;
        bool staged = true;
        for (int32_t pos = 0; pos < n && staged; ++pos) {
          staged = (first_start[pos] - t0 <= tolerance) == (pos % p == 0);
        }
        if (staged) return {p, together, "start times"};
      }
      return {n, 1, "all ranks"};
    }
  }
  return {n, 1, "all ranks"};
}

}  // namespace

PipelineShape infer_pipeline_shape(const Timeline& tl, const std::vector<RankOrder>& orders,
                                   const std::vector<JobClass>& classes, int32_t pp_degree_option) {
  // Ranks are the whole run's (log_layout.h): with a subset loaded (--devices)
  // P and the stages are still those of the run, never of a smaller pipeline.
  const int32_t world = std::max<int32_t>(tl.rank_count(), static_cast<int32_t>(orders.size()));
  const int32_t loaded = static_cast<int32_t>(orders.size());
  if (pp_degree_option > 0) {
    return {pp_degree_option, std::max(1, world / pp_degree_option), "--pp-degree"};
  }
  if (world <= 1) return {1, 1, "all ranks"};
  // Dynamic-graph profile records state each rank's stage (tid - 1): P is the
  // number of stages when every rank's stage is its rank mod P.
  if (int32_t p = stated_pp_degree(tl, world); p > 0) return {p, world / p, "stages of the profile records"};
  if (loaded <= 1) return {world, 1, "all ranks"};
  if (!any_compute_job(orders, classes)) return {1, world, "no pipeline"};

  const int32_t period = plan_period(orders, world);
  if (period > 1) {
    // A subset without a period shown is taken as one pipeline of the run's ranks.
    return {period, world / period, period == world && loaded != world ? "all ranks" : "job order"};
  }
  if (loaded != world) return {world, 1, "all ranks"};
  return shape_from_start_times(tl, world);
}

double ideal_bubble_ratio(ScheduleKind kind, int32_t p, int32_t m, int32_t v, std::string* formula,
                          bool split_backward) {
  struct Ideal {
    double ratio;
    std::string formula;
  };
  auto give = [&](const Ideal& ideal) {
    if (formula) *formula = ideal.formula;
    return ideal.ratio;
  };
  if (kind == ScheduleKind::kNoPipeline) return give({0.0, "0 (no pipeline)"});
  if (kind == ScheduleKind::kUnknown || p <= 0 || m <= 0) return give({-1.0, ""});
  // Replayed on every call: the pipeline pass asks once per run (watch once
  // per window), and a replay of one step is cheap beside the passes.
  const ScheduleRow* row = schedule_row(kind);
  PlanShape shape{kind, p, m, std::max(v, 1), split_backward && row && row->split_option};
  PlanCache plans;  // the check and the plan share one build
  Ideal ideal{-1.0, ""};
  if (std::string why = check_plan_shape(shape, &plans); !why.empty()) {
    ideal.formula = fmt::format("Paddle builds no {} plan here: {}", schedule_name(kind), why);
  } else {
    ReplayCosts costs;
    costs.duration_ns = [](int32_t, const PlanJob& j) -> int64_t { return j.role == PlanRole::kBackward ? 2 : 1; };
    ReplayResult r = replay_plans(shape, pipeline_plan(shape, &plans), costs, 1);
    if (r.error.empty()) {
      ideal.ratio = replay_bubble_ratio(r);
      ideal.formula = fmt::format("Paddle's {} plan replayed with equal stage costs", schedule_name(kind));
    } else {
      ideal.formula = fmt::format("its plan does not run: {}", r.error);
    }
  }
  return give(ideal);
}

namespace {

std::string join_ints(const std::vector<int32_t>& v, size_t max_items = 12) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < max_items; ++i) s += fmt::format("{}{}", i ? ", " : "", v[i]);
  if (v.size() > max_items) s += ", ...";
  return s;
}

// Each rank's plan, forward/backward jobs only, and what their types show.
struct Plans {
  struct Plan {
    int32_t rank;
    std::vector<OrderItem> items;
  };
  std::vector<Plan> plans;
  bool any_default = false, has_split = false, has_piece = false;
  std::set<int32_t> chunks;
};

Plans compute_plans(const std::vector<RankOrder>& orders, const std::vector<JobClass>& classes) {
  Plans out;
  for (const RankOrder& ro : orders) {
    Plans::Plan plan{ro.rank, {}};
    for (const OrderItem& it : ro.order) {
      if (it.type >= classes.size()) continue;
      const JobClass& c = classes[it.type];
      out.any_default = out.any_default || c.no_pipeline;
      if (!c.role) continue;
      out.has_split = out.has_split || c.split;
      out.has_piece = out.has_piece || c.piece;
      if (c.chunk >= 0) out.chunks.insert(c.chunk);
      plan.items.push_back(it);
    }
    if (!plan.items.empty()) out.plans.push_back(std::move(plan));
  }
  return out;
}

// M: the distinct micro-batches a rank runs forwards for (ids restart per
// chunk); the most common value over the ranks.
int32_t common_micro_batches(const Plans& plans, const std::vector<JobClass>& classes, int32_t chunks) {
  std::map<int32_t, int32_t> m_votes;
  for (const Plans::Plan& plan : plans.plans) {
    std::set<int32_t> mbs;
    int32_t forwards = 0;
    for (const OrderItem& it : plan.items) {
      if (classes[it.type].role != PlanRole::kForward) continue;
      ++forwards;
      if (it.micro_batch >= 0) mbs.insert(it.micro_batch);
    }
    int32_t m = !mbs.empty() ? static_cast<int32_t>(mbs.size()) : forwards / chunks;
    ++m_votes[m];
  }
  int32_t m = 0, best = 0;
  for (auto [value, votes] : m_votes) {
    if (votes >= best) {
      best = votes;
      m = value;
    }
  }
  return m;
}

// What a schedule is recognised as: kind, variant and the evidence.
struct Verdict {
  ScheduleKind kind;
  std::string variant;
  std::string evidence;
};

// V shape: on the last stage, chunk 1 of a micro-batch follows chunk 0 at once.
bool last_stage_v_shape(const Plans& plans, const std::vector<JobClass>& classes, int32_t p) {
  bool v_shape = false;
  for (const Plans::Plan& plan : plans.plans) {
    if (pipeline_stage(plan.rank, p) != p - 1) continue;
    int32_t chunk0_before = 0;
    for (const OrderItem& it : plan.items) {
      const JobClass& c = classes[it.type];
      if (c.role != PlanRole::kForward) continue;
      if (c.chunk == 1) break;
      if (c.chunk == 0) ++chunk0_before;
    }
    v_shape = v_shape || (chunk0_before == 1 && p > 1);
  }
  return v_shape;
}

// The schedules the job types alone tell apart (split backwards, overlapped
// pieces, model chunks); none for one chunk of whole backwards.
std::optional<Verdict> verdict_from_types(const Plans& plans, const std::vector<JobClass>& classes, int32_t p,
                                          int32_t chunks) {
  if (plans.has_split && chunks > 1) {
    if (last_stage_v_shape(plans, classes, p)) {
      return Verdict{ScheduleKind::kZBVPP, "",
                     fmt::format("backward split into backward_b/backward_w over {} chunks; the last stage runs "
                                 "chunk 1 of a micro-batch right after its chunk 0 (V shape)",
                                 chunks)};
    }
    return Verdict{ScheduleKind::kVPP, "split backward",
                   fmt::format("forward/backward types over {} model chunks, backward split into "
                               "backward_b/backward_w, chunks interleaved in groups",
                               chunks)};
  }
  if (plans.has_split) {
    return Verdict{ScheduleKind::kZBH1, "", "backward split into backward_b/backward_w, one model chunk"};
  }
  if (plans.has_piece) {
    return Verdict{ScheduleKind::k1F1B, "backward/forward overlap",
                   "types like forward(chunk0): 1F1B with the steady phase's backward and forward overlapped"};
  }
  if (chunks > 1) {
    return Verdict{ScheduleKind::kVPP, "",
                   fmt::format("forward/backward types over {} model chunks, interleaved", chunks)};
  }
  return std::nullopt;
}

// One chunk, whole backwards: the number of warm-up forwards per stage (of
// the stages loaded: P may be far beyond them), and the schedules they fit.
struct Warmups {
  std::map<int32_t, int32_t> of_stage;
  bool fthenb = true, one_f1b = true, eager = true, consistent = true;
};

Warmups warmup_forwards(const Plans& plans, const std::vector<JobClass>& classes, int32_t p) {
  Warmups w;
  for (const Plans::Plan& plan : plans.plans) {
    int32_t forwards = 0, warmup = -1;
    for (const OrderItem& it : plan.items) {
      const std::optional<PlanRole> r = classes[it.type].role;
      if (r && is_input_backward(*r) && warmup < 0) warmup = forwards;
      if (r == PlanRole::kForward) ++forwards;
    }
    if (warmup < 0) warmup = forwards;
    int32_t s = pipeline_stage(plan.rank, p);
    w.consistent = w.consistent && w.of_stage.emplace(s, warmup).first->second == warmup;
    w.fthenb = w.fthenb && warmup == forwards;
    w.one_f1b = w.one_f1b && warmup == std::min(p - s, forwards);
    w.eager = w.eager && warmup == std::min(2 * (p - s) - 1, forwards);
  }
  return w;
}

// The schedule the warm-up forwards fit, or kUnknown with what they are
// and what 1F1B and Eager1F1B would have.
Verdict verdict_from_warmups(const Warmups& w, int32_t p, int32_t m, const PipelineShape& shape) {
  // The first 12 stages are shown (the text follows what is read, not P).
  constexpr int32_t kShownStages = 12;
  std::vector<int32_t> want_1f1b, want_eager;
  for (int32_t s = 0; s < p && s < kShownStages; ++s) {
    want_1f1b.push_back(std::min(p - s, m));
    want_eager.push_back(std::min(2 * (p - s) - 1, m));
  }
  const std::string more = p > kShownStages ? ", ..." : "";
  // A stage none of whose ranks was loaded (--devices) shows as "-".
  std::string seen;
  for (int32_t i = 0; i < p && i < kShownStages; ++i) {
    auto it = w.of_stage.find(i);
    seen += i ? ", " : "";
    seen += it == w.of_stage.end() ? std::string("-") : std::to_string(it->second);
  }
  seen += more;
  if (w.fthenb) {
    return {ScheduleKind::kFThenB, "", fmt::format("every rank runs all {} forwards before its first backward", m)};
  }
  if (w.one_f1b) {
    return {ScheduleKind::k1F1B, "",
            fmt::format("stage s runs min(P-s, M) forwards before its first backward: {}", seen)};
  }
  if (w.eager) {
    return {ScheduleKind::kEager1F1B, "",
            fmt::format("stage s runs min(2(P-s)-1, M) forwards before its first backward: {}", seen)};
  }
  return {ScheduleKind::kUnknown, "",
          fmt::format("warm-up forwards per stage ({}) match neither 1F1B ({}{}) nor Eager1F1B ({}{}) with P={} ({}){}",
                      seen, join_ints(want_1f1b), more, join_ints(want_eager), more, p, shape.source,
                      w.consistent ? "" : "; replicas of a stage disagree")};
}

}  // namespace

ScheduleInfo recognize_schedule(const std::vector<RankOrder>& orders, const std::vector<JobClass>& classes,
                                const PipelineShape& shape) {
  ScheduleInfo info;
  info.pp_degree = shape.pp_degree;
  info.pp_degree_source = shape.source;
  info.replicas = shape.replicas;
  const int32_t p = std::max(1, shape.pp_degree);

  const Plans plans = compute_plans(orders, classes);
  if (plans.plans.empty()) {
    info.kind = plans.any_default ? ScheduleKind::kNoPipeline : ScheduleKind::kUnknown;
    info.evidence = plans.any_default ? "only `default` jobs: no pipeline parallelism"
                                      : "no forward or backward jobs to recognise a schedule from";
    info.ideal_bubble_ratio = ideal_bubble_ratio(info.kind, p, 0, 1, &info.ideal_formula);
    return info;
  }
  // V, the one definition (the dependencies' virtual stages use it too): the
  // highest model chunk of the forward/backward jobs + 1, so that chunk c's
  // virtual stage c * P + s exists even when some chunk has no job here; a
  // single chunk, or none, is V = 1.
  info.chunks = plans.chunks.size() > 1 ? *plans.chunks.rbegin() + 1 : 1;
  info.micro_batches = common_micro_batches(plans, classes, info.chunks);

  std::optional<Verdict> v = verdict_from_types(plans, classes, p, info.chunks);
  if (!v) v = verdict_from_warmups(warmup_forwards(plans, classes, p), p, info.micro_batches, shape);
  info.kind = v->kind;
  info.variant = std::move(v->variant);
  info.evidence = std::move(v->evidence);
  // An unrecognised schedule has no ideal (and no formula to show).
  info.ideal_bubble_ratio = info.kind == ScheduleKind::kUnknown
                                ? -1
                                : ideal_bubble_ratio(info.kind, p, info.micro_batches, info.chunks, &info.ideal_formula,
                                                     info.variant == "split backward");
  return info;
}

}  // namespace ppt
