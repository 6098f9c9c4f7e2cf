#include "schedule/replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <deque>
#include <limits>

#include "schedule/virtual_stage.h"
#include "util/checked.h"

// Every sum of times here saturates (util/checked.h): a job of 5e18 ns is a
// time the reader accepts, and two of them in a row pass 2^63 (hostile case
// huge_job_durations, whose suggestions replay them).
namespace ppt {
namespace {

constexpr int64_t kNotYet = std::numeric_limits<int64_t>::min();

// What a job produces, for the jobs that wait on it: a forward, a backward (or
// backward_b: the input gradient), a backward_w.
enum Slot : int { kSlotForward = 0, kSlotBackward = 1, kSlotWeight = 2 };

Slot slot_of(PlanRole r) {
  switch (r) {
    case PlanRole::kForward: return kSlotForward;
    case PlanRole::kBackward:
    case PlanRole::kBackwardB: return kSlotBackward;
    case PlanRole::kBackwardW: return kSlotWeight;
  }
  return kSlotForward;
}

const char* slot_name(Slot s) {
  return s == kSlotForward ? "forward" : s == kSlotBackward ? "backward (or backward_b)" : "backward_w";
}

// replay_prepared's walk over one step, its steps small functions the
// compiler inlines (it runs per job of every replayed step): each stage runs
// its plan in order until a job waits on a slot not yet produced, and is
// taken up again when that slot is.
class StepWalk {
 public:
  StepWalk(const PreparedReplay& prepared, const ReplayCosts& costs)
      : shape_(prepared.shape),
        plans_(*prepared.plans),
        needs_(prepared.needs),
        costs_(costs),
        p_(shape_.stages),
        m_(shape_.micro_batches),
        vstages_(p_ * shape_.chunks),
        done_(static_cast<size_t>(3) * vstages_ * m_),
        waiter_(done_.size()) {}

  // One step from `step_start` into `rs`; on a deadlock, the stages stuck.
  std::string run(int64_t step_start, ReplayedStep& rs) {
    rs.start_ns = step_start;
    rs.stages.resize(p_);
    rs.optimizer.resize(p_);
    std::fill(done_.begin(), done_.end(), kNotYet);
    std::fill(waiter_.begin(), waiter_.end(), std::array<int32_t, 2>{-1, -1});
    std::vector<size_t> next(p_, 0);
    std::vector<int64_t> free_at(p_, step_start);
    std::deque<int32_t> ready;
    for (int32_t s = 0; s < p_; ++s) {
      ready.push_back(s);
      rs.stages[s].reserve(plans_[s].size());
    }
    while (!ready.empty()) {
      const int32_t s = ready.front();
      ready.pop_front();
      run_stage(s, next[s], free_at[s], ready, rs.stages[s]);
    }
    std::string stuck = stuck_stages(next);
    if (stuck.empty()) place_optimizers(free_at, step_start, rs);
    return stuck;
  }

 private:
  size_t index(Slot slot, int32_t v, int32_t mb) const { return (static_cast<size_t>(slot) * vstages_ + v) * m_ + mb; }

  // Stage s's jobs from `next` on, until one waits on a slot not yet
  // produced: the stage is then a waiter of that slot.
  void run_stage(int32_t s, size_t& next, int64_t& free_at, std::deque<int32_t>& ready, std::vector<ReplayedJob>& out) {
    while (next < plans_[s].size()) {
      const PlanJob& j = plans_[s][next];
      const std::optional<ReplayNeed>& need = needs_[s][next];
      int64_t start = free_at;
      if (next > 0 && costs_.host_gap_ns) accumulate_ns(start, std::max<int64_t>(0, costs_.host_gap_ns(s, j)));
      if (need) {
        const size_t k = index(static_cast<Slot>(need->slot), need->vstage, need->micro_batch);
        if (done_[k] == kNotYet) {
          waiter_[k][waiter_[k][0] < 0 ? 0 : 1] = s;
          return;
        }
        int64_t arrive = done_[k];
        if (!need->local && costs_.link_ns) accumulate_ns(arrive, costs_.link_ns(need->from_stage, s, j.role));
        start = std::max(start, arrive);
      }
      const int64_t end = add_ns(start, std::max<int64_t>(0, costs_.duration_ns(s, j)));
      out.push_back({j, start, end});
      free_at = end;
      produced(index(slot_of(j.role), plan_virtual_stage(shape_, s, j.chunk), j.micro_batch), end, ready);
      ++next;
    }
  }

  // Slot `mine` is produced at `end`: the stages waiting on it are ready.
  void produced(size_t mine, int64_t end, std::deque<int32_t>& ready) {
    done_[mine] = end;
    for (int32_t& w : waiter_[mine]) {
      if (w >= 0) ready.push_back(w);
      w = -1;
    }
  }

  // A deadlock: every stage still waiting, each for a job behind another
  // stage's wait; all of them are named, as they wait on each other. Empty
  // when every stage ran its plan.
  std::string stuck_stages(const std::vector<size_t>& next) const {
    std::string stuck;
    for (int32_t s = 0; s < p_; ++s) {
      if (next[s] >= plans_[s].size()) continue;
      const PlanJob& j = plans_[s][next[s]];
      const ReplayNeed& need = *needs_[s][next[s]];
      const StageChunk at = need.local ? StageChunk{s, j.chunk} : virtual_stage_place(shape_.schedule, p_, need.vstage);
      stuck += fmt::format(
          "{}stage {} waits at its job {} ({} micro-batch {}) for the {} of micro-batch {} on stage {} "
          "chunk {}",
          stuck.empty() ? "" : "; ", s, next[s] + 1, plan_job_type(shape_, j), j.micro_batch,
          slot_name(static_cast<Slot>(need.slot)), need.micro_batch, at.stage, at.chunk);
    }
    return stuck;
  }

  // Each stage's optimizer after its last job (and its gap), and the step's end.
  void place_optimizers(const std::vector<int64_t>& free_at, int64_t step_start, ReplayedStep& rs) const {
    rs.end_ns = step_start;
    for (int32_t s = 0; s < p_; ++s) {
      const int64_t len = static_cast<size_t>(s) < costs_.optimizer_ns.size() ? costs_.optimizer_ns[s] : 0;
      const int64_t gap = !plans_[s].empty() && static_cast<size_t>(s) < costs_.optimizer_gap_ns.size()
                              ? std::max<int64_t>(0, costs_.optimizer_gap_ns[s])
                              : 0;
      const int64_t at = add_ns(free_at[s], gap);
      rs.optimizer[s] = {at, add_ns(at, std::max<int64_t>(0, len))};
      rs.end_ns = std::max(rs.end_ns, rs.optimizer[s].second);
    }
  }

  const PlanShape& shape_;
  const std::vector<std::vector<PlanJob>>& plans_;
  const std::vector<std::vector<std::optional<ReplayNeed>>>& needs_;
  const ReplayCosts& costs_;
  const int32_t p_, m_, vstages_;
  std::vector<int64_t> done_;  // when each slot was produced, or kNotYet
  // The stages waiting on a slot, or -1: at most two (a backward's slot feeds
  // the stage below and its own backward_w).
  std::vector<std::array<int32_t, 2>> waiter_;
};

}  // namespace

ReplayResult replay_plan(const PlanShape& shape, const ReplayCosts& costs, int32_t steps) {
  PlanCache plans;  // the check and the plan share one build
  if (std::string why = check_plan_shape(shape, &plans); !why.empty()) {
    ReplayResult r;
    r.shape = shape;
    r.error = why;
    return r;
  }
  return replay_plans(shape, pipeline_plan(shape, &plans), costs, steps);
}

PreparedReplay prepare_replay(const PlanShape& shape, const std::vector<std::vector<PlanJob>>& plans) {
  PreparedReplay r;
  r.shape = shape;
  r.plans = &plans;
  const int32_t p = shape.stages, m = shape.micro_batches;
  if (p < 1 || m < 1 || shape.chunks < 1) {
    r.error = fmt::format("no pipeline to replay: P={} M={} V={}", p, m, shape.chunks);
    return r;
  }
  if (plans.size() != static_cast<size_t>(p)) {
    r.error = fmt::format("{} plans for {} stages", plans.size(), p);
    return r;
  }
  const int32_t vstages = p * shape.chunks;
  {
    std::vector<uint8_t> seen(static_cast<size_t>(4) * shape.chunks * m);
    for (int32_t s = 0; s < p; ++s) {
      std::fill(seen.begin(), seen.end(), 0);
      for (size_t k = 0; k < plans[s].size(); ++k) {
        const PlanJob& j = plans[s][k];
        if (j.chunk < 0 || j.chunk >= shape.chunks || j.micro_batch < 0 || j.micro_batch >= m) {
          r.error = fmt::format("stage {} job {} ({} chunk {} micro-batch {}) is outside P={} M={} V={}", s, k + 1,
                                plan_role_name(j.role), j.chunk, j.micro_batch, p, m, shape.chunks);
          return r;
        }
        uint8_t& once = seen[(static_cast<size_t>(j.role) * shape.chunks + j.chunk) * m + j.micro_batch];
        if (once++) {
          r.error = fmt::format("stage {} runs {} chunk {} micro-batch {} twice (job {})", s, plan_role_name(j.role),
                                j.chunk, j.micro_batch, k + 1);
          return r;
        }
      }
    }
  }
  r.peak_in_flight.assign(p, 0);
  for (int32_t s = 0; s < p; ++s) {
    int32_t held = 0;
    for (const PlanJob& j : plans[s]) {
      if (j.role == PlanRole::kForward) r.peak_in_flight[s] = std::max(r.peak_in_flight[s], ++held);
      if (j.role == PlanRole::kBackward || j.role == PlanRole::kBackwardB) --held;
    }
  }
  // What each job waits for, once per plan: the dependency rule
  // (virtual_stage.h) across virtual stages, and on its own stage a
  // backward_w's backward_b and the last virtual stage's forward before its
  // backward.
  std::vector<std::vector<std::optional<ReplayNeed>>>& needs = r.needs;
  needs.resize(p);
  for (int32_t s = 0; s < p; ++s) {
    for (const PlanJob& j : plans[s]) {
      const int32_t v = plan_virtual_stage(shape, s, j.chunk);
      std::optional<ReplayNeed> need;
      if (j.role == PlanRole::kBackwardW) {
        need = ReplayNeed{kSlotBackward, v, j.micro_batch, s, true};
      } else {
        const DependencyKind kind = j.role == PlanRole::kForward ? DependencyKind::kForward : DependencyKind::kBackward;
        const int32_t from = producer_virtual_stage(kind, v, vstages);
        if (from >= 0) {
          need = ReplayNeed{slot_of(j.role), from, j.micro_batch, virtual_stage_place(shape.schedule, p, from).stage,
                            false};
        } else if (kind == DependencyKind::kBackward) {
          need = ReplayNeed{kSlotForward, v, j.micro_batch, s, true};
        }
      }
      needs[s].push_back(need);
    }
  }
  return r;
}

ReplayResult replay_plans(const PlanShape& shape, const std::vector<std::vector<PlanJob>>& plans,
                          const ReplayCosts& costs, int32_t steps) {
  return replay_prepared(prepare_replay(shape, plans), costs, steps);
}

ReplayResult replay_prepared(const PreparedReplay& prepared, const ReplayCosts& costs, int32_t steps) {
  ReplayResult r;
  r.shape = prepared.shape;
  if (!costs.duration_ns) {
    r.error = "no job durations given";
    return r;
  }
  if (!prepared.error.empty()) {
    r.error = prepared.error;
    return r;
  }
  r.peak_in_flight = prepared.peak_in_flight;
  StepWalk walk(prepared, costs);
  int64_t step_start = 0;
  for (int32_t step = 0; step < steps; ++step) {
    ReplayedStep rs;
    if (std::string stuck = walk.run(step_start, rs); !stuck.empty()) {
      r.error = fmt::format("deadlock in step {}: {}; none of these ever runs", step, stuck);
      return r;
    }
    step_start = add_ns(rs.end_ns, std::max<int64_t>(0, costs.step_gap_ns));
    r.steps.push_back(std::move(rs));
  }
  return r;
}

FlatReplay flatten_replay(const PreparedReplay& prepared, const ReplayCosts& costs) {
  FlatReplay flat;
  if (!prepared.error.empty()) {
    flat.error = prepared.error;
    return flat;
  }
  const PlanShape& shape = prepared.shape;
  const std::vector<std::vector<PlanJob>>& plans = *prepared.plans;
  const std::vector<std::vector<std::optional<ReplayNeed>>>& needs = prepared.needs;
  const int32_t p = shape.stages, m = shape.micro_batches;
  const int32_t vstages = p * shape.chunks;
  auto index = [&](Slot slot, int32_t v, int32_t mb) { return (static_cast<size_t>(slot) * vstages + v) * m + mb; };
  // replay_prepared's walk, once, with the item that produced each slot in
  // place of its time.
  std::vector<int32_t> made(static_cast<size_t>(3) * vstages * m, -1);
  std::vector<std::array<int32_t, 2>> waiter(made.size(), std::array<int32_t, 2>{-1, -1});
  std::vector<size_t> next(p, 0);
  std::deque<int32_t> ready;
  size_t total = 0;
  for (int32_t s = 0; s < p; ++s) ready.push_back(s), total += plans[s].size();
  flat.items.reserve(total);
  while (!ready.empty()) {
    const int32_t s = ready.front();
    ready.pop_front();
    while (next[s] < plans[s].size()) {
      const PlanJob& j = plans[s][next[s]];
      const std::optional<ReplayNeed>& need = needs[s][next[s]];
      FlatReplay::Item it;
      it.stage = s;
      it.index = static_cast<uint32_t>(next[s]);
      if (next[s] > 0 && costs.host_gap_ns) it.gap_ns = std::max<int64_t>(0, costs.host_gap_ns(s, j));
      if (need) {
        const size_t k = index(static_cast<Slot>(need->slot), need->vstage, need->micro_batch);
        if (made[k] < 0) {
          waiter[k][waiter[k][0] < 0 ? 0 : 1] = s;
          break;
        }
        it.need = made[k];
        if (!need->local && costs.link_ns) it.lag_ns = costs.link_ns(need->from_stage, s, j.role);
      }
      const size_t mine = index(slot_of(j.role), plan_virtual_stage(shape, s, j.chunk), j.micro_batch);
      made[mine] = static_cast<int32_t>(flat.items.size());
      flat.items.push_back(it);
      for (int32_t& w : waiter[mine]) {
        if (w >= 0) ready.push_back(w);
        w = -1;
      }
      ++next[s];
    }
  }
  if (flat.items.size() != total) {
    flat.items.clear();
    flat.error = "deadlock";
    return flat;
  }
  flat.optimizer_gap_ns.assign(p, 0);
  for (int32_t s = 0; s < p; ++s) {
    if (!plans[s].empty() && static_cast<size_t>(s) < costs.optimizer_gap_ns.size()) {
      flat.optimizer_gap_ns[s] = std::max<int64_t>(0, costs.optimizer_gap_ns[s]);
    }
  }
  auto size_ns = [](int64_t x) { return x == std::numeric_limits<int64_t>::min() ? kMaxSumNs : std::abs(x); };
  for (const FlatReplay::Item& it : flat.items) {
    accumulate_ns(flat.magnitude_ns, size_ns(it.gap_ns));
    accumulate_ns(flat.magnitude_ns, size_ns(it.lag_ns));
  }
  for (int64_t g : flat.optimizer_gap_ns) accumulate_ns(flat.magnitude_ns, g);
  return flat;
}

namespace {

// replay_flat_step's walk, its additions `Add`'s: add_ns, or plain ones
// where no time can reach kMaxSumNs (the same times then).
template <typename Add>
int64_t walk_flat_step(const FlatReplay& flat, const std::vector<int64_t>& durations,
                       const std::vector<int64_t>& optimizer_ns, std::vector<int64_t>& busy,
                       std::vector<int64_t>& free_at, std::vector<int64_t>& ends, Add add) {
  const size_t p = flat.optimizer_gap_ns.size();
  for (size_t i = 0; i < flat.items.size(); ++i) {
    const FlatReplay::Item& it = flat.items[i];
    int64_t start = add(free_at[it.stage], it.gap_ns);
    if (it.need >= 0) start = std::max(start, add(ends[it.need], it.lag_ns));
    const int64_t end = add(start, std::max<int64_t>(0, durations[i]));
    ends[i] = end;
    free_at[it.stage] = end;
    busy[it.stage] = add(busy[it.stage], end - start);
  }
  int64_t step_end = 0;
  for (size_t s = 0; s < p; ++s) {
    const int64_t len = s < optimizer_ns.size() ? std::max<int64_t>(0, optimizer_ns[s]) : 0;
    const int64_t start = add(free_at[s], flat.optimizer_gap_ns[s]);
    const int64_t end = add(start, len);
    busy[s] = add(busy[s], end - start);
    step_end = std::max(step_end, end);
  }
  return step_end;
}

}  // namespace

int64_t replay_flat_step(const FlatReplay& flat, const std::vector<int64_t>& durations,
                         const std::vector<int64_t>& optimizer_ns, std::vector<int64_t>& busy,
                         std::vector<int64_t>& free_at, std::vector<int64_t>& ends) {
  const size_t p = flat.optimizer_gap_ns.size();
  busy.assign(p, 0);
  free_at.assign(p, 0);
  ends.resize(flat.items.size());
  // Every time the walk computes is a sum of some of the gaps, lags,
  // durations and optimizer lengths (each signed once), so it is at most
  // the sum of their sizes: where that is within kMaxSumNs, add_ns never
  // clamps, and plain additions give the same times without its checks
  // (the per-replica replays of stats' suggestions run this walk for every
  // job of every target).
  unsigned __int128 bound = static_cast<uint64_t>(flat.magnitude_ns);
  for (size_t i = 0; i < flat.items.size(); ++i) bound += static_cast<uint64_t>(std::max<int64_t>(0, durations[i]));
  for (size_t s = 0; s < p && s < optimizer_ns.size(); ++s)
    bound += static_cast<uint64_t>(std::max<int64_t>(0, optimizer_ns[s]));
  if (bound <= static_cast<uint64_t>(kMaxSumNs)) {
    return walk_flat_step(flat, durations, optimizer_ns, busy, free_at, ends,
                          [](int64_t a, int64_t b) { return a + b; });
  }
  return walk_flat_step(flat, durations, optimizer_ns, busy, free_at, ends,
                        [](int64_t a, int64_t b) { return add_ns(a, b); });
}

int64_t replay_busy_ns(const ReplayedStep& step, int32_t stage) {
  if (stage < 0 || static_cast<size_t>(stage) >= step.stages.size()) return 0;
  int64_t busy = 0;
  for (const ReplayedJob& j : step.stages[stage]) accumulate_ns(busy, j.end_ns - j.start_ns);
  if (static_cast<size_t>(stage) < step.optimizer.size()) {
    accumulate_ns(busy, step.optimizer[stage].second - step.optimizer[stage].first);
  }
  return busy;
}

namespace {

void idle_and_span(const ReplayedStep& step, double* idle, double* span) {
  const int64_t len = step.end_ns - step.start_ns;
  for (size_t s = 0; s < step.stages.size(); ++s) {
    *idle += static_cast<double>(len - replay_busy_ns(step, static_cast<int32_t>(s)));
    *span += static_cast<double>(len);
  }
}

}  // namespace

double replay_bubble_ratio(const ReplayedStep& step) {
  double idle = 0, span = 0;
  idle_and_span(step, &idle, &span);
  return span > 0 ? idle / span : 0;
}

double replay_bubble_ratio(const ReplayResult& result) {
  double idle = 0, span = 0;
  for (const ReplayedStep& step : result.steps) idle_and_span(step, &idle, &span);
  return span > 0 ? idle / span : 0;
}

double replay_period_ns(const ReplayResult& result) {
  if (result.steps.size() < 2) return 0;
  const double total = static_cast<double>(result.steps.back().start_ns - result.steps.front().start_ns);
  return total / static_cast<double>(result.steps.size() - 1);
}

Timeline replay_timeline(const ReplayResult& result, int64_t origin_ns, int32_t first_step) {
  Timeline tl;
  if (!result.error.empty() || result.steps.empty()) return tl;
  const PlanShape& shape = result.shape;
  const int32_t p = shape.stages;
  tl.world_ranks = p;
  tl.machines.push_back("");
  auto type_of = [&](const std::string& name) {
    auto it = std::find(tl.types.begin(), tl.types.end(), name);
    if (it != tl.types.end()) return static_cast<uint32_t>(it - tl.types.begin());
    tl.types.push_back(name);
    return static_cast<uint32_t>(tl.types.size() - 1);
  };
  Run run;
  run.index = 0;
  run.first_ns = add_ns(origin_ns, result.steps.front().start_ns);
  run.last_ns = add_ns(origin_ns, result.steps.back().end_ns);
  for (int32_t s = 0; s < p; ++s) {
    SourceFile f;
    f.path = fmt::format("replay/stage{}", s);
    f.local_index = s;
    f.global_rank = s;
    tl.files.push_back(f);
    Track t;
    t.file = static_cast<uint32_t>(s);
    t.run = 0;
    t.rank = s;
    t.local_index = s;
    uint32_t line = 0;
    int32_t job_id = 0;
    for (size_t k = 0; k < result.steps.size(); ++k) {
      const ReplayedStep& step = result.steps[k];
      const int32_t number = first_step + static_cast<int32_t>(k);
      for (const ReplayedJob& rj : step.stages[s]) {
        Job j;
        j.start_ns = add_ns(origin_ns, rj.start_ns);
        j.end_ns = add_ns(origin_ns, rj.end_ns);
        j.job_id = job_id++;
        j.micro_batch = rj.job.micro_batch;
        j.type = type_of(plan_job_type(shape, rj.job));
        j.line = ++line;
        j.step = number;
        t.jobs.push_back(j);
      }
      Job opt;
      opt.start_ns = add_ns(origin_ns, step.optimizer[s].first);
      opt.end_ns = add_ns(origin_ns, step.optimizer[s].second);
      opt.job_id = job_id++;
      opt.micro_batch = -1;  // the optimizer belongs to no micro-batch
      opt.type = type_of("optimizer");
      opt.line = ++line;
      opt.step = number;
      t.jobs.push_back(opt);
    }
    tl.counts.jobs += t.jobs.size();
    run.tracks.push_back(static_cast<uint32_t>(s));
    tl.tracks.push_back(std::move(t));
  }
  for (size_t k = 0; k < result.steps.size(); ++k) {
    StepSpan span;
    span.number = first_step + static_cast<int32_t>(k);
    span.start_ns = add_ns(origin_ns, result.steps[k].start_ns);
    span.end_ns = add_ns(origin_ns, result.steps[k].end_ns);
    span.ranks = static_cast<uint32_t>(p);
    run.steps.push_back(span);
  }
  tl.runs.push_back(std::move(run));
  tl.origin_ns = tl.runs.front().first_ns;
  tl.counts.files = static_cast<uint64_t>(p);
  return tl;
}

}  // namespace ppt
