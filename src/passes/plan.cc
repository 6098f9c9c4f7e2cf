#include "passes/plan.h"

#include <fmt/format.h>

#include <algorithm>

namespace ppt {
namespace {

PlanJob job(PlanRole role, int32_t micro_batch, int32_t chunk = 0) { return {role, chunk, micro_batch}; }

bool chunked(ScheduleKind kind) { return kind == ScheduleKind::kVPP || kind == ScheduleKind::kZBVPP; }

// FThenB (pipeline_fthenb.py, _create_job_list): every forward, then every backward.
void fthenb(const PlanShape& s, std::vector<PlanJob>& out) {
  for (int32_t m = 0; m < s.micro_batches; ++m) out.push_back(job(PlanRole::kForward, m));
  for (int32_t m = 0; m < s.micro_batches; ++m) out.push_back(job(PlanRole::kBackward, m));
}

// 1F1B and Eager1F1B (pipeline_1f1b.py, pipeline_eager_1f1b.py): `warmup`
// forwards, then (backward, forward) pairs, then the remaining backwards.
void one_f_one_b(const PlanShape& s, int32_t warmup, std::vector<PlanJob>& out) {
  int32_t f = 0, b = 0;
  for (; f < warmup; ++f) out.push_back(job(PlanRole::kForward, f));
  while (f < s.micro_batches) {
    out.push_back(job(PlanRole::kBackward, b++));
    out.push_back(job(PlanRole::kForward, f++));
  }
  while (b < s.micro_batches) out.push_back(job(PlanRole::kBackward, b++));
}

// VPP (pipeline_vpp.py, _create_job_list): the k-th forward runs chunk
// (k mod P*V) / P, the k-th backward the chunks in reverse; micro-batch ids
// count per chunk. Warm-up: every job when M == P, else
// min(2(P-s-1) + (V-1)P, M*V); then (forward, backward) pairs; then the
// remaining backwards. With split_backward and M == P the backwards are
// backward_b, and every backward_w follows, chunks V-1 down to 0.
void vpp(const PlanShape& s, int32_t stage, std::vector<PlanJob>& out) {
  const int32_t p = s.stages, v = s.chunks, total = s.micro_batches * v;
  const int32_t warmup = s.micro_batches == p ? total : std::min((p - stage - 1) * 2 + (v - 1) * p, total);
  const bool split = s.split_backward && s.micro_batches == p;
  std::vector<int32_t> next_f(v, 0), next_b(v, 0);
  auto forward = [&](int32_t k) {
    const int32_t c = (k % (p * v)) / p;
    out.push_back(job(PlanRole::kForward, next_f[c]++, c));
  };
  auto backward = [&](int32_t k) {
    const int32_t c = v - 1 - (k % (p * v)) / p;
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
void zbh1(const PlanShape& s, int32_t stage, std::vector<PlanJob>& out) {
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

}  // namespace

const char* plan_role_name(PlanRole role) {
  switch (role) {
    case PlanRole::kForward: return "forward";
    case PlanRole::kBackward: return "backward";
    case PlanRole::kBackwardB: return "backward_b";
    case PlanRole::kBackwardW: return "backward_w";
  }
  return "?";
}

std::string check_plan_shape(const PlanShape& s) {
  const int32_t p = s.stages, m = s.micro_batches, v = s.chunks;
  if (p < 1) return fmt::format("a pipeline needs at least one stage: P={}", p);
  if (m < 1) return fmt::format("a step needs at least one micro-batch: M={}", m);
  if (v < 1) return fmt::format("a stage needs at least one chunk: V={}", v);
  switch (s.schedule) {
    case ScheduleKind::kFThenB: break;
    case ScheduleKind::k1F1B:
    case ScheduleKind::kZBH1:
      if (m < p) return fmt::format("{} needs M >= P: M={}, P={}", schedule_name(s.schedule), m, p);
      break;
    case ScheduleKind::kEager1F1B:
      if (m < 2 * p - 1) return fmt::format("Eager1F1B needs M >= 2P-1: M={}, P={}", m, p);
      break;
    case ScheduleKind::kVPP:
      if (m % p != 0) return fmt::format("VPP needs M a multiple of P: M={}, P={}", m, p);
      break;
    case ScheduleKind::kZBVPP:
      if (v < 2) return fmt::format("ZBVPP needs at least 2 chunks: V={}", v);
      return "ZBVPP plans are not built yet";
    default: return fmt::format("no plan for the schedule {}", schedule_name(s.schedule));
  }
  if (!chunked(s.schedule) && v != 1) return fmt::format("{} has one chunk: V={}", schedule_name(s.schedule), v);
  if (s.split_backward && s.schedule != ScheduleKind::kVPP) return "split_backward is VPP's only";
  return {};
}

std::vector<PlanJob> stage_plan(const PlanShape& s, int32_t stage) {
  std::vector<PlanJob> out;
  if (!check_plan_shape(s).empty() || stage < 0 || stage >= s.stages) return out;
  switch (s.schedule) {
    case ScheduleKind::kFThenB: fthenb(s, out); break;
    case ScheduleKind::k1F1B: one_f_one_b(s, s.stages - stage, out); break;
    case ScheduleKind::kEager1F1B: one_f_one_b(s, 2 * (s.stages - stage) - 1, out); break;
    case ScheduleKind::kVPP: vpp(s, stage, out); break;
    case ScheduleKind::kZBH1: zbh1(s, stage, out); break;
    default: break;
  }
  return out;
}

std::vector<std::vector<PlanJob>> pipeline_plan(const PlanShape& s) {
  std::vector<std::vector<PlanJob>> out;
  if (!check_plan_shape(s).empty()) return out;
  for (int32_t stage = 0; stage < s.stages; ++stage) out.push_back(stage_plan(s, stage));
  return out;
}

std::string plan_job_type(const PlanShape& s, const PlanJob& j) {
  std::string t = plan_role_name(j.role);
  if (chunked(s.schedule)) t += std::to_string(j.chunk);
  return t;
}

int32_t plan_virtual_stage(const PlanShape& s, int32_t stage, int32_t chunk) {
  return virtual_stage(s.schedule, s.stages, stage, chunk);
}

}  // namespace ppt
