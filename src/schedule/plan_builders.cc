#include "schedule/plan_builders.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

namespace ppt::plan_builders {
namespace {

PlanJob job(PlanRole role, int32_t micro_batch, int32_t chunk = 0) { return {role, chunk, micro_batch}; }

// FThenB (pipeline_fthenb.py, _create_job_list): every forward, then every backward.
void fthenb_plan(const PlanShape& s, std::vector<PlanJob>& out) {
  for (int32_t m = 0; m < s.micro_batches; ++m) out.push_back(job(PlanRole::kForward, m));
  for (int32_t m = 0; m < s.micro_batches; ++m) out.push_back(job(PlanRole::kBackward, m));
}

// 1F1B and Eager1F1B (pipeline_1f1b.py, pipeline_eager_1f1b.py): `warmup`
// forwards, then (backward, forward) pairs, then the remaining backwards.
void one_f_one_b_plan(const PlanShape& s, int32_t warmup, std::vector<PlanJob>& out) {
  int32_t f = 0, b = 0;
  for (; f < warmup; ++f) out.push_back(job(PlanRole::kForward, f));
  while (f < s.micro_batches) {
    out.push_back(job(PlanRole::kBackward, b++));
    out.push_back(job(PlanRole::kForward, f++));
  }
  while (b < s.micro_batches) out.push_back(job(PlanRole::kBackward, b++));
}

// VPP (pipeline_vpp.py, _create_job_list and its _get_virtual_pp_rank, read
// at Paddle commit 0ab6998c): the k-th forward runs chunk (k mod P*V) / P
// while k <= (M div P) * P*V, past that (M not a multiple of P, r = M mod P)
// chunk (k mod P*V) / r; the k-th backward the chunks in reverse; micro-batch
// ids count per chunk. Warm-up: every job when M == P, else
// min(2(P-s-1) + (V-1)P, M*V); then (forward, backward) pairs; then the
// remaining backwards. With split_backward and M == P the backwards are
// backward_b, and every backward_w follows, chunks V-1 down to 0.
void vpp_plan(const PlanShape& s, int32_t stage, std::vector<PlanJob>& out) {
  const int32_t p = s.stages, v = s.chunks, total = s.micro_batches * v;
  const int32_t warmup = s.micro_batches == p ? total : std::min((p - stage - 1) * 2 + (v - 1) * p, total);
  const bool split = s.split_backward && s.micro_batches == p;
  std::vector<int32_t> next_f(v, 0), next_b(v, 0);
  const int32_t remainder = s.micro_batches % p, whole = (s.micro_batches / p) * p * v;
  auto chunk = [&](int32_t k) { return (k % (p * v)) / (k <= whole ? p : remainder); };
  auto forward = [&](int32_t k) {
    const int32_t c = chunk(k);
    out.push_back(job(PlanRole::kForward, next_f[c]++, c));
  };
  auto backward = [&](int32_t k) {
    const int32_t c = v - 1 - chunk(k);
    out.push_back(job(split ? PlanRole::kBackwardB : PlanRole::kBackward, next_b[c]++, c));
  };
  for (int32_t k = 0; k < warmup; ++k) forward(k);
  for (int32_t k = 0; k < total - warmup; ++k) {
    forward(warmup + k);
    backward(k);
  }
  for (int32_t k = total - warmup; k < total; ++k) backward(k);
  if (split) {
    for (int32_t c = v - 1; c >= 0; --c) {
      for (int32_t m = 0; m < s.micro_batches; ++m) out.push_back(job(PlanRole::kBackwardW, m, c));
    }
  }
}

// ZB-H1 (pipeline_zero_bubble.py, PipelineZeroBubblePipelinePass._create_job_list):
// P-s forwards; s (backward_b, forward) pairs; M-P (backward, forward) pairs;
// P-s-1 backwards; the last micro-batch as backward_b + backward_w on stages
// > 0 (a backward on stage 0); then the s deferred backward_w, micro-batches
// 0..s-1.
void zbh1_plan(const PlanShape& s, int32_t stage, std::vector<PlanJob>& out) {
  const int32_t p = s.stages, m = s.micro_batches;
  int32_t f = 0, b = 0;
  for (int32_t i = 0; i < p - stage; ++i) out.push_back(job(PlanRole::kForward, f++));
  for (int32_t i = 0; i < stage; ++i) {
    out.push_back(job(PlanRole::kBackwardB, b++));
    out.push_back(job(PlanRole::kForward, f++));
  }
  for (int32_t i = 0; i < m - p; ++i) {
    out.push_back(job(PlanRole::kBackward, b++));
    out.push_back(job(PlanRole::kForward, f++));
  }
  for (int32_t i = 0; i < p - stage - 1; ++i) out.push_back(job(PlanRole::kBackward, b++));
  if (stage > 0) {
    out.push_back(job(PlanRole::kBackwardB, b));
    out.push_back(job(PlanRole::kBackwardW, b));
  } else {
    out.push_back(job(PlanRole::kBackward, b));
  }
  for (int32_t i = 0; i < stage; ++i) out.push_back(job(PlanRole::kBackwardW, i));
}

// ZB-VPP (pipeline_zero_bubble.py, VScheduleCreator, as
// PipelineZeroBubbleVirtualPipelinePass._create_job_list runs it): a greedy
// list schedule over all stages at once, with Paddle's default program
// runtimes (forward 61, backward_b 72, backward_w 71, the loss 34 more for
// the last chunk on the loss stage, communication 3) and no memory limit
// (memory_limit_times -1: every memory check passes). Chunk c runs down the
// stages when even, up when odd (the V). Tried with every setting of
// fill_w_before_b, fill_w_before_f and fill_loss_stage; each try repeats
// with its own stage bubbles as the approved bubbles while the largest bubble
// shrinks; the plan whose last job ends first wins (ties: the first tried).
class VSchedule {
 public:
  VSchedule(int32_t p, int32_t m, int32_t v) : p_(p), m_(m), v_(v), loss_stage_(v % 2 == 0 ? 0 : p - 1) {}

  // Every stage's plan, or "" in `error` when the creator fails.
  std::vector<std::vector<PlanJob>> build(std::string* error) {
    std::optional<Result> best;
    for (bool w_before_b : {true, false}) {
      for (bool w_before_f : {true, false}) {
        for (bool fill_loss : {true, false}) {
          std::optional<Result> r = create(w_before_f, w_before_b, fill_loss, std::nullopt, 0);
          if (!r) {
            *error = error_;
            return {};
          }
          if (!best || r->max_end < best->max_end) best = std::move(r);
        }
      }
    }
    return std::move(best->plans);
  }

 private:
  enum Type { kF = 0, kW = 1, kB = 2 };  // Paddle's job_types order
  static constexpr int64_t kComm = 3;
  struct Result {
    std::vector<std::vector<PlanJob>> plans;
    int64_t max_end = 0;
    int64_t max_bubble = 0;
  };

  static PlanRole role_of(Type t) {
    return t == kF ? PlanRole::kForward : t == kB ? PlanRole::kBackwardB : PlanRole::kBackwardW;
  }
  static Type type_of(PlanRole r) { return r == PlanRole::kForward ? kF : r == PlanRole::kBackwardW ? kW : kB; }
  int64_t runtime(Type t, int32_t stage, int32_t chunk) const {
    int64_t r = t == kF ? 61 : t == kB ? 72 : 71;
    if (stage == loss_stage_ && chunk == v_ - 1) r += 34;
    return r;
  }
  int32_t& count(int32_t stage, Type t, int32_t chunk) { return counters_[(stage * 3 + t) * v_ + chunk]; }
  int64_t& end_time(Type t, int32_t chunk, int32_t stage, int32_t mb) {
    return ends_[((static_cast<size_t>(t) * v_ + chunk) * p_ + stage) * m_ + mb];
  }
  int32_t prev_stage(Type t, int32_t chunk, int32_t stage) const {
    const bool odd = chunk % 2 == 1;
    if (t == kF) return odd ? stage + 1 : stage - 1;
    return odd ? stage - 1 : stage + 1;
  }
  int64_t dependency_end(Type t, int32_t chunk, int32_t stage, int32_t mb) {
    const int32_t prev = prev_stage(t, chunk, stage);
    if (prev < 0 || prev >= p_) return 0;
    if (mb < 0 || mb >= m_) return -1;
    return end_time(t, chunk, prev, mb);
  }
  int32_t forward_number(int32_t stage, int32_t chunks) {
    int32_t n = 0;
    for (int32_t c = 0; c < chunks; ++c) n += count(stage, kF, c);
    return n;
  }
  int32_t backward_b_number(int32_t stage) {
    int32_t n = 0;
    for (int32_t c = 0; c < v_; ++c) n += count(stage, kB, c);
    return n;
  }
  // The largest stage bubble, or with `approved` (the try's approved
  // bubbles) the larger of that and the stage's room below the largest
  // approved one. Kept as running figures (a stage's bubble only grows, the
  // approved ones are fixed for a try) rather than searched for each job.
  int64_t max_bubble(int32_t stage, const std::vector<int64_t>* approved) const {
    int64_t most = max_bubble_;
    if (stage >= 0 && approved) most = std::max(most, max_approved_ - (*approved)[stage]);
    return most;
  }
  bool can_schedule(Type t, int32_t chunk, int32_t stage) {
    const int32_t mb = count(stage, t, chunk);
    if (mb >= m_) return false;
    if (t == kF && chunk > 0 && count(stage, kF, chunk - 1) <= mb) return false;
    if (t == kB) {
      const int32_t prev = chunk + 1 >= v_ ? count(stage, kF, v_ - 1) : count(stage, kB, chunk + 1);
      if (prev <= mb) return false;
    }
    return dependency_end(t, chunk, stage, mb) >= 0;
  }
  bool time_check(Type t, int32_t chunk, int32_t stage, int64_t next_start) {
    const int64_t dep = dependency_end(t, chunk, stage, count(stage, t, chunk));
    return std::max(now_[stage], dep + kComm) + runtime(t, stage, chunk) <= next_start;
  }
  bool fail(std::string why) {
    if (error_.empty()) error_ = std::move(why);
    return false;
  }
  bool put(Type t, int32_t chunk, int32_t stage) {
    const int64_t rt = runtime(t, stage, chunk);
    int64_t end = now_[stage] + rt;
    const int32_t mb = count(stage, t, chunk);
    if (mb >= m_) return fail("a job beyond the last micro-batch");
    const bool ordered = t == kF   ? chunk == 0 || end_time(kF, chunk - 1, stage, mb) >= 0
                         : t == kB ? chunk == v_ - 1 || end_time(kB, chunk + 1, stage, mb) >= 0
                                   : end_time(kB, chunk, stage, mb) >= 0;
    if (!ordered) return fail("a job before the one it follows on its stage");
    if (t != kW) {
      const int64_t dep = dependency_end(t, chunk, stage, mb);
      if (dep < 0) return fail("a job before its input");
      end = std::max(end, dep + kComm + rt);
    }
    if (count(stage, kF, 0) > 0) {
      bubbles_[stage] += end - now_[stage] - rt;  // end >= now + rt: never less
      max_bubble_ = std::max(max_bubble_, bubbles_[stage]);
    }
    end_time(t, chunk, stage, mb) = end;
    max_end_ = std::max(max_end_, end);
    now_[stage] = end;
    plans_[stage].push_back({role_of(t), chunk, mb});
    ++scheduled_;
    if (t == kB) pending_w_[stage].push_back(chunk);
    ++count(stage, t, chunk);
    return true;
  }
  // The backward_w jobs a stage has pending, oldest first: a list a stage
  // only appends to within a try, read from `pending_w_head_[stage]` on.
  bool w_pending(int32_t stage) const { return pending_w_head_[stage] < pending_w_[stage].size(); }
  int32_t front_w(int32_t stage) const { return pending_w_[stage][pending_w_head_[stage]]; }
  bool put_w(int32_t stage) {
    if (!w_pending(stage)) return fail("no backward_w pending");
    const int32_t chunk = front_w(stage);
    ++pending_w_head_[stage];
    return put(kW, chunk, stage);
  }
  int64_t front_w_runtime(int32_t stage) const { return runtime(kW, stage, front_w(stage)); }

  bool check_before_insert(int32_t chunks, const std::vector<int32_t>& order, int64_t next_start, int32_t less) {
    const int32_t s = order.back();
    if (forward_number(s, chunks) < less) return true;
    bool mb_left = false;
    for (int32_t c = 0; c < chunks; ++c) mb_left = mb_left || count(s, kF, c) < m_;
    for (int32_t c = 0; c < chunks; ++c) {
      for (int32_t i : order) {
        if (!can_schedule(kF, c, i)) continue;
        if (forward_number(i, chunks) >= less && !time_check(kF, c, i, next_start)) continue;
        return mb_left;
      }
    }
    return false;
  }
  bool fill_bubble_with_forward(int32_t stage, int32_t chunks, int32_t chunk, int64_t next_start, bool up) {
    int32_t less = 0;
    std::vector<int32_t> order;
    if (up) {
      less = forward_number(0, chunks);
      for (int32_t i = p_ - 1; i >= stage; --i) order.push_back(i);
    } else {
      for (int32_t i = 0; i <= stage; ++i) order.push_back(i);
    }
    int32_t idle_rounds = 0;
    while (check_before_insert(chunks, order, next_start, less)) {
      bool any = false;
      for (int32_t i : order) {
        if (!can_schedule(kF, chunk, i)) continue;
        if (forward_number(i, chunks) >= less && !time_check(kF, chunk, i, next_start)) continue;
        if (!put(kF, chunk, i)) return false;
        any = true;
      }
      idle_rounds = any ? 0 : idle_rounds + 1;
      if (idle_rounds > chunks) return fail("filling forwards makes no progress");
      chunk = (chunk + 1) % chunks;
    }
    return true;
  }
  bool fill_forward_before_one_job(Type end_type, int32_t end_chunk, int32_t chunks, bool up, bool insert) {
    std::vector<int32_t> order(p_);
    for (int32_t i = 0; i < p_; ++i) order[i] = up ? i : p_ - 1 - i;
    const PlanJob& last = plans_[order[0]].back();
    int64_t start = end_time(type_of(last.role), last.chunk, order[0], last.micro_batch);
    if (insert && !put(end_type, end_chunk, order[0])) return false;
    for (size_t k = 1; k < order.size(); ++k) {
      const int32_t stage = order[k];
      const int32_t start_chunk = (plans_[stage].back().chunk + 1) % chunks;
      start += kComm + runtime(end_type, stage, end_chunk);
      if (!fill_bubble_with_forward(stage, chunks, start_chunk, start, up)) return false;
      if (insert && !put(end_type, end_chunk, stage)) return false;
    }
    return true;
  }
  bool after_backward_start(bool w_before_f, bool w_before_b, bool fill_loss, const std::vector<int64_t>* approved) {
    const int32_t total_b = v_ * m_;
    const int32_t first_b_stage = v_ % 2 == 0 ? 0 : p_ - 1;
    std::vector<int32_t> order(p_);
    for (int32_t i = 0; i < p_; ++i) order[i] = v_ % 2 == 1 ? p_ - 1 - i : i;
    while (backward_b_number(first_b_stage) < total_b) {
      const size_t before = scheduled();
      for (int32_t stage : order) {
        for (int32_t c = 0; c < v_; ++c) {
          if (!can_schedule(kB, c, stage)) continue;
          const int64_t dep = dependency_end(kB, c, stage, count(stage, kB, c));
          while (w_pending(stage) && dep + kComm >= now_[stage] + front_w_runtime(stage)) {
            if (!put_w(stage)) return false;
          }
          if (stage == loss_stage_ && fill_loss) {
            while (w_pending(stage) &&
                   static_cast<double>(dep + kComm) >=
                       static_cast<double>(now_[stage]) + static_cast<double>(front_w_runtime(stage)) * 0.2) {
              if (!put_w(stage)) return false;
            }
          }
          const int64_t most = max_bubble(stage, approved);
          if (w_pending(stage) && dep + kComm - now_[stage] > most - bubbles_[stage] && w_before_b) {
            if (!put_w(stage)) return false;
          }
          if (!put(kB, c, stage)) return false;
          break;
        }
      }
      for (int32_t stage : order) {
        for (int32_t c = v_ - 1; c >= 0; --c) {
          if (!can_schedule(kF, c, stage)) continue;
          const int64_t dep = dependency_end(kF, c, stage, count(stage, kF, c));
          while (w_pending(stage) && dep + kComm >= now_[stage] + front_w_runtime(stage)) {
            if (!put_w(stage)) return false;
          }
          const int64_t most = max_bubble(stage, approved);
          if (w_pending(stage) && dep + kComm - now_[stage] > most - bubbles_[stage] && w_before_f) {
            if (!put_w(stage)) return false;
          }
          if (!put(kF, c, stage)) return false;
          break;
        }
      }
      if (scheduled() == before) return fail("the backward phase makes no progress");
    }
    for (int32_t stage = 0; stage < p_; ++stage) {
      while (w_pending(stage)) {
        if (!put_w(stage)) return false;
      }
    }
    return true;
  }
  size_t scheduled() const { return scheduled_; }
  // A try's state, empty; the lists keep their room from the try before.
  void init(const std::vector<int64_t>* approved) {
    counters_.assign(static_cast<size_t>(p_) * 3 * v_, 0);
    ends_.assign(static_cast<size_t>(3) * v_ * p_ * m_, -1);
    now_.assign(p_, 0);
    pending_w_.resize(p_);
    for (auto& w : pending_w_) w.clear();
    pending_w_head_.assign(p_, 0);
    plans_.resize(p_);
    for (auto& plan : plans_) plan.clear();
    bubbles_.assign(p_, 0);
    max_bubble_ = 0;
    max_approved_ = approved ? *std::max_element(approved->begin(), approved->end()) : -1;
    max_end_ = -1;
    scheduled_ = 0;
  }
  std::optional<Result> create(bool w_before_f, bool w_before_b, bool fill_loss,
                               const std::optional<std::vector<int64_t>>& approved, int depth) {
    const std::vector<int64_t>* ap = approved ? &*approved : nullptr;
    init(ap);
    bool ok = true;
    for (int32_t i = 0; i < p_ && ok; ++i) ok = put(kF, 0, i);
    ok = ok && fill_forward_before_one_job(kF, 1, 1, false, true);
    for (int32_t c = 2; c < v_ && ok; ++c) ok = fill_forward_before_one_job(kF, c, c, (c - 1) % 2 == 1, true);
    ok = ok && fill_forward_before_one_job(kB, 0, v_, (v_ - 1) % 2 == 1, false);
    ok = ok && after_backward_start(w_before_f, w_before_b, fill_loss, ap);
    if (!ok) return std::nullopt;
    Result r;
    r.plans = plans_;
    r.max_end = max_end_;  // of every end, as the largest of ends_
    r.max_bubble = max_bubble(-1, nullptr);
    if ((max_approved_ < 0 || r.max_bubble < max_approved_) && depth < kMaxDepth) {
      std::vector<int64_t> mine = bubbles_;
      std::optional<Result> next = create(w_before_f, w_before_b, fill_loss, mine, depth + 1);
      if (!next) return std::nullopt;
      if (next->max_end < r.max_end) return next;
    }
    return r;
  }

  static constexpr int kMaxDepth = 1000;
  int32_t p_, m_, v_, loss_stage_;
  std::vector<int32_t> counters_;
  std::vector<int64_t> ends_;
  std::vector<int64_t> now_;
  std::vector<std::vector<int32_t>> pending_w_;
  std::vector<size_t> pending_w_head_;
  std::vector<std::vector<PlanJob>> plans_;
  std::vector<int64_t> bubbles_;
  int64_t max_bubble_ = 0, max_approved_ = -1, max_end_ = -1;
  size_t scheduled_ = 0;
  std::string error_;
};

// The ZB-VPP plans for (P, M, V), or why the creator fails: from `cache`
// when it holds them, else built and kept there.
const PlanCache::Built& v_plans(int32_t p, int32_t m, int32_t v, PlanCache& cache) {
  auto [slot, fresh] = cache.greedy.try_emplace({p, m, v});
  PlanCache::Built& made = slot->second;
  if (fresh) {
    made.plans = VSchedule(p, m, v).build(&made.error);
    if (!made.error.empty()) {
      made.plans.clear();
      made.error = fmt::format("Paddle's VScheduleCreator fails for P={} M={} V={}: {}", p, m, v, made.error);
    }
  }
  return made;
}

}  // namespace

void fthenb(const PlanShape& s, int32_t, PlanCache&, std::vector<PlanJob>& out) { fthenb_plan(s, out); }

void one_f_one_b(const PlanShape& s, int32_t stage, PlanCache&, std::vector<PlanJob>& out) {
  one_f_one_b_plan(s, s.stages - stage, out);
}

void eager_one_f_one_b(const PlanShape& s, int32_t stage, PlanCache&, std::vector<PlanJob>& out) {
  one_f_one_b_plan(s, 2 * (s.stages - stage) - 1, out);
}

void vpp(const PlanShape& s, int32_t stage, PlanCache&, std::vector<PlanJob>& out) { vpp_plan(s, stage, out); }

void zbh1(const PlanShape& s, int32_t stage, PlanCache&, std::vector<PlanJob>& out) { zbh1_plan(s, stage, out); }

void zbvpp(const PlanShape& s, int32_t stage, PlanCache& cache, std::vector<PlanJob>& out) {
  out = v_plans(s.stages, s.micro_batches, s.chunks, cache).plans[stage];
}

std::string any_shape(std::string_view, const PlanShape&, PlanCache&) { return {}; }

std::string m_at_least_p(std::string_view name, const PlanShape& s, PlanCache&) {
  if (s.micro_batches < s.stages) return fmt::format("{} needs M >= P: M={}, P={}", name, s.micro_batches, s.stages);
  return {};
}

std::string m_at_least_2p_minus_1(std::string_view name, const PlanShape& s, PlanCache&) {
  if (s.micro_batches < 2 * s.stages - 1) {
    return fmt::format("{} needs M >= 2P-1: M={}, P={}", name, s.micro_batches, s.stages);
  }
  return {};
}

std::string zbvpp_shape(std::string_view name, const PlanShape& s, PlanCache& cache) {
  const int32_t p = s.stages, m = s.micro_batches, v = s.chunks;
  if (v < 2) return fmt::format("{} needs at least 2 chunks: V={}", name, v);
  if (m % p != 0) return fmt::format("{} needs M a multiple of P: M={}, P={}", name, m, p);
  return v_plans(p, m, v, cache).error;
}

}  // namespace ppt::plan_builders
