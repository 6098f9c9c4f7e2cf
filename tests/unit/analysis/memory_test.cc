// The memory measurement against hand-built runs: each rank's samples are
// those of a device that holds a static part and, per micro-batch chunk
// forwarded and not yet backwarded, its activation; the expected figures
// follow from those inputs and the schedule.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "analysis/memory.h"
#include "analysis/stats.h"
#include "model/timeline.h"
#include "support/test_support.h"

namespace ppt {
namespace {

constexpr int64_t kRes = 10737418;  // 0.01 GiB in bytes
constexpr int64_t kGiB = int64_t{1} << 30;

// One forward or backward of a micro-batch chunk; `frees` is the share of
// the chunk's activation a backward frees (a split backward frees part of
// it, its second part the rest).
struct Op {
  bool forward = true;
  int32_t micro_batch = 0;
  int32_t chunk = -1;
  double frees = 1.0;
};

// A rank's samples of one step, as the device would report them: Start,
// Before/After of each op, End. Allocated starts at `base` and moves by the
// activations; reserved is the highest allocated so far plus `pad`.
struct Device {
  Track& track;
  int64_t pad = 2 * kGiB;
  int64_t ts = 1'000'000'000;
  int64_t reserved_high = 0;

  void sample(MemoryPoint point, int32_t step, int64_t allocated, int32_t mb = -1, int32_t chunk = -1) {
    reserved_high = std::max(reserved_high, allocated);
    MemorySample s;
    s.ts_ns = ts;
    s.allocated_bytes = allocated;
    s.reserved_bytes = reserved_high + pad;
    s.line = static_cast<uint32_t>(track.memory.size() + 1);
    s.micro_batch = mb;
    s.chunk = chunk;
    s.step = step;
    s.point = point;
    track.memory.push_back(s);
    ts += 1'000'000;
  }

  void step(int32_t step, int64_t base, const std::vector<int64_t>& act_per_chunk, const std::vector<Op>& ops) {
    int64_t now = base;
    sample(MemoryPoint::kStartPipeline, step, now);
    for (const Op& op : ops) {
      const int64_t act = act_per_chunk[static_cast<size_t>(std::max(op.chunk, 0))];
      if (op.forward) {
        sample(MemoryPoint::kBeforeForward, step, now, op.micro_batch, op.chunk);
        now += act;
        sample(MemoryPoint::kAfterForward, step, now, op.micro_batch, op.chunk);
      } else {
        sample(MemoryPoint::kBeforeBackward, step, now, op.micro_batch, op.chunk);
        now -= static_cast<int64_t>(static_cast<double>(act) * op.frees);
        sample(MemoryPoint::kAfterBackward, step, now, op.micro_batch, op.chunk);
      }
    }
    sample(MemoryPoint::kEndPipeline, step, now);
  }
};

// 1F1B on stage `s` of `p` with `m` micro-batches: min(p - s - 1, m)
// forwards, then one forward and one backward in turn, then the backwards.
std::vector<Op> one_f_one_b(int32_t s, int32_t p, int32_t m) {
  const int32_t warmup = std::min(p - s - 1, m);
  std::vector<Op> ops;
  for (int32_t i = 0; i < warmup; ++i) ops.push_back({true, i});
  for (int32_t i = 0; i < m - warmup; ++i) {
    ops.push_back({true, warmup + i});
    ops.push_back({false, i});
  }
  for (int32_t i = m - warmup; i < m; ++i) ops.push_back({false, i});
  return ops;
}

// A timeline of one run whose ranks are 0..ranks-1, without samples yet.
Timeline empty_run(int32_t ranks) {
  Timeline tl;
  tl.runs.emplace_back();
  for (int32_t r = 0; r < ranks; ++r) {
    Track t;
    t.rank = r;
    t.file = static_cast<uint32_t>(r);
    tl.tracks.push_back(t);
    tl.runs[0].tracks.push_back(static_cast<uint32_t>(r));
  }
  tl.memory_resolution_bytes = kRes;
  return tl;
}

const StageMemory* stage_of(const MemoryStats& m, int32_t stage) {
  for (const StageMemory& s : m.stages) {
    if (s.stage == stage) return &s;
  }
  return nullptr;
}

TEST_CASE("a two-stage 1F1B run: the peak is the static part and the in-flight activations", "[memory]") {
  constexpr int32_t kP = 2, kM = 4;
  Timeline tl = empty_run(kP);
  // Per stage: the static part of each of three steps (the median is the
  // middle one; the peak is in the step with the largest), one activation.
  const std::vector<std::vector<int64_t>> statics = {{3000 * kRes, 3020 * kRes, 3010 * kRes},
                                                     {2000 * kRes, 2030 * kRes, 2010 * kRes}};
  const std::vector<int64_t> acts = {150 * kRes, 90 * kRes};
  for (int32_t s = 0; s < kP; ++s) {
    Device dev{tl.tracks[static_cast<size_t>(s)]};
    for (int32_t step = 0; step < 3; ++step) {
      dev.step(step, statics[static_cast<size_t>(s)][static_cast<size_t>(step)], {acts[static_cast<size_t>(s)]},
               one_f_one_b(s, kP, kM));
    }
  }
  MemoryStats m = measure_memory(tl, 0, kP);
  REQUIRE(m.present());
  CHECK(m.resolution_bytes == kRes);
  CHECK(m.device_memory_bytes == 0);
  REQUIRE(m.stages.size() == 2);
  for (int32_t s = 0; s < kP; ++s) {
    const StageMemory& st = m.stages[static_cast<size_t>(s)];
    const auto& sts = statics[static_cast<size_t>(s)];
    const int64_t act = acts[static_cast<size_t>(s)];
    const int32_t most = std::min(kP - s, kM);  // 1F1B holds P - s micro-batches at most
    const int64_t highest_static = *std::max_element(sts.begin(), sts.end());
    const int32_t peak_step = static_cast<int32_t>(std::max_element(sts.begin(), sts.end()) - sts.begin());
    std::vector<int64_t> sorted = sts;
    std::sort(sorted.begin(), sorted.end());
    CAPTURE(s);
    CHECK(st.stage == s);
    CHECK(st.ranks == 1);
    CHECK(st.peak_allocated_bytes == highest_static + most * act);
    CHECK(st.peak_rank == s);
    CHECK(st.peak_step == peak_step);
    // The peak is first reached after the forward that fills the pipeline.
    CHECK(st.peak_at == "after forward, micro-batch " + std::to_string(most - 1));
    CHECK(st.peak_in_flight == most);
    CHECK(st.peak_reserved_bytes == highest_static + most * act + 2 * kGiB);
    CHECK(st.static_bytes == sorted[1]);
    REQUIRE(st.activation_bytes_per_chunk.size() == 1);
    CHECK(st.activation_bytes_per_chunk[0] == act);
    CHECK(st.activation_bytes_per_micro_batch == act);
  }
}

TEST_CASE("a VPP run: each chunk's activation, their sum per micro-batch, the chunks in flight", "[memory]") {
  constexpr int32_t kM = 4, kV = 2;
  Timeline tl = empty_run(1);
  const std::vector<int64_t> acts = {120 * kRes, 70 * kRes};
  const int64_t base = 5000 * kRes;
  // Every chunk's forwards, then the backwards in reverse: the peak holds
  // every micro-batch of every chunk.
  std::vector<Op> ops;
  for (int32_t c = 0; c < kV; ++c) {
    for (int32_t mb = 0; mb < kM; ++mb) ops.push_back({true, mb, c});
  }
  for (int32_t c = kV - 1; c >= 0; --c) {
    for (int32_t mb = kM - 1; mb >= 0; --mb) ops.push_back({false, mb, c});
  }
  Device dev{tl.tracks[0]};
  dev.step(0, base, acts, ops);
  dev.step(1, base, acts, ops);
  MemoryStats m = measure_memory(tl, 0, 1);
  REQUIRE(m.stages.size() == 1);
  const StageMemory& st = m.stages[0];
  CHECK(st.static_bytes == base);
  CHECK(st.activation_bytes_per_chunk == acts);
  CHECK(st.activation_bytes_per_micro_batch == acts[0] + acts[1]);
  CHECK(st.peak_allocated_bytes == base + kM * (acts[0] + acts[1]));
  CHECK(st.peak_in_flight == kM * kV);
  CHECK(st.peak_step == 0);
  CHECK(st.peak_at == "after forward, micro-batch " + std::to_string(kM - 1) + ", chunk " + std::to_string(kV - 1));
}

TEST_CASE("a stage without samples is left out; a step without forwards takes its Start line", "[memory]") {
  constexpr int32_t kP = 3;
  Timeline tl = empty_run(kP);
  const int64_t act = 40 * kRes;
  Device first{tl.tracks[0]};
  first.step(0, 700 * kRes, {act}, one_f_one_b(0, kP, 3));
  first.step(1, 710 * kRes, {act}, one_f_one_b(0, kP, 3));
  // Stage 2: one step with its forwards, one with only its Start and End
  // (a step cut short): its static part is the Start line's.
  Device last{tl.tracks[2]};
  last.step(0, 800 * kRes, {act}, one_f_one_b(2, kP, 3));
  last.step(1, 860 * kRes, {act}, {});
  MemoryStats m = measure_memory(tl, 0, kP);
  REQUIRE(m.stages.size() == 2);
  CHECK(stage_of(m, 1) == nullptr);
  REQUIRE(stage_of(m, 0) != nullptr);
  REQUIRE(stage_of(m, 2) != nullptr);
  CHECK(stage_of(m, 0)->static_bytes == (700 * kRes + 710 * kRes) / 2);
  CHECK(stage_of(m, 2)->static_bytes == (800 * kRes + 860 * kRes) / 2);
  // Stage 2's peak is the later step's Start line: nothing ran after it.
  CHECK(stage_of(m, 2)->peak_allocated_bytes == std::max(800 * kRes + act, 860 * kRes));
  CHECK(stage_of(m, 2)->peak_step == 1);
  CHECK(stage_of(m, 2)->peak_at == "at the step's start");
  CHECK(stage_of(m, 2)->peak_in_flight == 0);
  CHECK(stage_of(m, 0)->peak_in_flight == 3);
}

TEST_CASE("a tied peak goes to the lowest rank and its earliest sample", "[memory]") {
  // P = 2 with two replicas: ranks 1 and 3 are stage 1. Rank 3 is listed
  // first in the run; both reach the same peak in both steps.
  constexpr int32_t kP = 2, kM = 3;
  Timeline tl = empty_run(4);
  std::swap(tl.runs[0].tracks[1], tl.runs[0].tracks[3]);
  const int64_t act = 33 * kRes;
  for (int32_t r : {3, 1}) {
    Device dev{tl.tracks[static_cast<size_t>(r)]};
    for (int32_t step = 0; step < 2; ++step) dev.step(step, 900 * kRes, {act}, one_f_one_b(1, kP, kM));
  }
  MemoryStats m = measure_memory(tl, 0, kP);
  REQUIRE(m.stages.size() == 1);
  const StageMemory& st = m.stages[0];
  CHECK(st.stage == 1);
  CHECK(st.ranks == 2);
  CHECK(st.peak_allocated_bytes == 900 * kRes + act);
  CHECK(st.peak_rank == 1);
  CHECK(st.peak_step == 0);
  CHECK(st.peak_at == "after forward, micro-batch 0");
}

TEST_CASE("a split backward keeps its micro-batch in flight until its second part ends", "[memory]") {
  // One stage: F0 F1 B0 F2 W0 B1 W1 B2 W2, where B frees 60% of the
  // activation and W the rest (backward_b and backward_w, both logged as
  // backward steps).
  Timeline tl = empty_run(1);
  const int64_t act = 100 * kRes, base = 400 * kRes;
  const double b_share = 0.6;
  std::vector<Op> ops = {{true, 0},
                         {true, 1},
                         {false, 0, -1, b_share},
                         {true, 2},
                         {false, 0, -1, 0.4},
                         {false, 1, -1, b_share},
                         {false, 1, -1, 0.4},
                         {false, 2, -1, b_share},
                         {false, 2, -1, 0.4}};
  Device dev{tl.tracks[0]};
  dev.step(0, base, {act}, ops);
  MemoryStats m = measure_memory(tl, 0, 1);
  REQUIRE(m.stages.size() == 1);
  const StageMemory& st = m.stages[0];
  const int64_t after_b0 = base + 2 * act - static_cast<int64_t>(static_cast<double>(act) * b_share);
  CHECK(st.peak_allocated_bytes == after_b0 + act);
  CHECK(st.peak_at == "after forward, micro-batch 2");
  // Micro-batch 0 has run its B, not its W: still held, with 1 and 2.
  CHECK(st.peak_in_flight == 3);
  CHECK(st.activation_bytes_per_micro_batch == act);
}

TEST_CASE("the medians of uneven activations; a forward that frees counts none", "[memory]") {
  Timeline tl = empty_run(1);
  Device dev{tl.tracks[0]};
  // Three forwards holding 50, 52 and 70 (x 0.01 GiB), then one that frees.
  const std::vector<int64_t> held = {50 * kRes, 52 * kRes, 70 * kRes, -10 * kRes};
  int64_t now = 1000 * kRes;
  for (int32_t mb = 0; mb < static_cast<int32_t>(held.size()); ++mb) {
    dev.sample(MemoryPoint::kBeforeForward, 0, now, mb);
    now += held[static_cast<size_t>(mb)];
    dev.sample(MemoryPoint::kAfterForward, 0, now, mb);
  }
  MemoryStats m = measure_memory(tl, 0, 1);
  REQUIRE(m.stages.size() == 1);
  // The activations are {0, 50, 52, 70}: the median is (50 + 52) / 2.
  CHECK(m.stages[0].activation_bytes_per_chunk == std::vector<int64_t>{51 * kRes});
  CHECK(m.stages[0].static_bytes == 1000 * kRes);
  CHECK(m.stages[0].peak_allocated_bytes == 1000 * kRes + 172 * kRes);
  CHECK(m.stages[0].peak_at == "after forward, micro-batch 2");
}

TEST_CASE("no samples, another run, an unsaid resolution", "[memory]") {
  Timeline tl = empty_run(2);
  CHECK_FALSE(measure_memory(tl, 0, 2).present());
  CHECK(measure_memory(tl, 0, 2).resolution_bytes == 0);
  Device dev{tl.tracks[1]};
  dev.step(0, 10 * kRes, {kRes}, one_f_one_b(1, 2, 2));
  CHECK(measure_memory(tl, 0, 2).present());
  CHECK_FALSE(measure_memory(tl, 1, 2).present());  // no such run
  // A second run holds the samples of another track only.
  tl.runs.emplace_back();
  CHECK_FALSE(measure_memory(tl, 1, 2).present());
  tl.memory_resolution_bytes = 0;
  MemoryStats m = measure_memory(tl, 0, 2);
  CHECK(m.resolution_bytes == 1);
  REQUIRE(m.stages.size() == 1);
  CHECK(m.stages[0].stage == 1);
}

TEST_CASE("stats measures the memory of the measured run with the plan's stages", "[memory][stats]") {
  // Two stages x two replicas (rank = replica * 2 + stage), 1F1B with M = 2,
  // two steps; every rank's samples beside its job lines.
  using testing::HandJob;
  std::vector<HandJob> one;
  for (int32_t replica = 0; replica < 2; ++replica) {
    const int32_t r0 = replica * 2, r1 = r0 + 1;
    for (HandJob j : std::vector<HandJob>{{r0, "forward", 0, 0, 10},
                                          {r0, "forward", 1, 10, 20},
                                          {r0, "backward", 0, 40, 60},
                                          {r0, "backward", 1, 70, 90},
                                          {r1, "forward", 0, 12, 22},
                                          {r1, "backward", 0, 22, 40},
                                          {r1, "forward", 1, 40, 50},
                                          {r1, "backward", 1, 50, 68}}) {
      one.push_back(j);
    }
  }
  testing::TempDir dir;
  Timeline tl = testing::load_hand_run(dir, "run", testing::repeated_steps(one, 2, 200));
  REQUIRE(tl.runs.size() == 1);
  REQUIRE(tl.runs[0].steps.size() == 2);
  tl.memory_resolution_bytes = kRes;
  // Replica 1 holds more of everything: its ranks have the stages' peaks.
  for (Track& t : tl.tracks) {
    const int32_t stage = t.rank % 2, replica = t.rank / 2;
    Device dev{t};
    for (const StepSpan& span : tl.runs[0].steps) {
      dev.step(span.number, (1000 + 10 * replica) * kRes, {(60 + 5 * replica) * kRes}, one_f_one_b(stage, 2, 2));
    }
  }
  Stats st = testing::stats_of(tl, {}, 2);
  REQUIRE(st.memory.present());
  REQUIRE(st.memory.stages.size() == 2);
  for (int32_t s = 0; s < 2; ++s) {
    const StageMemory& m = st.memory.stages[static_cast<size_t>(s)];
    CAPTURE(s);
    CHECK(m.stage == s);
    CHECK(m.ranks == 2);
    CHECK(m.peak_rank == 2 + s);
    CHECK(m.peak_step == tl.runs[0].steps[0].number);
    CHECK(m.peak_in_flight == 2 - s);
    CHECK(m.peak_allocated_bytes == 1010 * kRes + (2 - s) * 65 * kRes);
    // The median of the two replicas' statics and activations.
    CHECK(m.static_bytes == 1005 * kRes);
    CHECK(m.activation_bytes_per_chunk[0] == (60 * kRes + 65 * kRes) / 2);
  }
}

}  // namespace
}  // namespace ppt
