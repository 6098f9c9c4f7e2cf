// What each stage's device memory was, from the `[Pipeline details]` samples.
//
// Each rank's samples are read in time order, one step at a time (the
// samples' step numbers, as the jobs'):
//  - the peak is the highest allocated sample over the stage's ranks and
//    steps; ties go to the lowest rank, then to the earliest sample;
//  - a micro-batch chunk is in flight from its After_forward sample (its
//    forward ended) to its last After_backward sample of the step. The lines
//    know forward and backward only: a split backward (ZB's backward_b and
//    backward_w) logged as two backward steps of the same micro-batch and
//    chunk keeps it in flight until the second one ends, the backward that
//    frees what the first left; a Start line or a new step ends every one;
//  - the static part of a rank-step is the allocated size at its first
//    Before_forward sample (what the first forward starts from), or at its
//    Start line when it has no forward sample; the stage's is the median over
//    its rank-steps;
//  - a forward's activation is its After_forward less the Before_forward of
//    the same micro-batch and chunk (same rank and step), 0 when the forward
//    freed more than it kept; the chunk's is the median over them.
#include "analysis/memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "model/timeline.h"
#include "passes/pipeline_stage.h"
#include "util/median.h"

namespace ppt {
namespace {

// Chunks beyond this are no VPP any schedule runs (a crafted line): their
// samples count for the peak and the in-flight chunks, not for the
// activations per chunk.
constexpr int32_t kMaxChunks = 1024;

// A micro-batch chunk within a step: (micro-batch, chunk), chunk -1 without VPP.
using ChunkKey = std::pair<int32_t, int32_t>;

struct StageAccumulator {
  StageMemory memory;
  bool has_peak = false;
  std::vector<int64_t> statics;                  // one per rank-step
  std::map<int32_t, std::vector<int64_t>> acts;  // by chunk index
};

int32_t chunk_index(int32_t chunk) { return chunk > 0 ? chunk : 0; }

std::string point_text(const MemorySample& s) {
  const char* what = "";
  switch (s.point) {
    case MemoryPoint::kStartPipeline: return "at the step's start";
    case MemoryPoint::kEndPipeline: return "at the step's end";
    case MemoryPoint::kBeforeForward: what = "before forward"; break;
    case MemoryPoint::kAfterForward: what = "after forward"; break;
    case MemoryPoint::kBeforeBackward: what = "before backward"; break;
    case MemoryPoint::kAfterBackward: what = "after backward"; break;
  }
  std::string text = what;
  if (s.micro_batch >= 0) text += fmt::format(", micro-batch {}", s.micro_batch);
  if (s.chunk >= 0) text += fmt::format(", chunk {}", s.chunk);
  return text;
}

// How many After_backward samples each micro-batch chunk has in each step of
// a rank: the last one ends its time in flight.
std::map<std::tuple<int32_t, int32_t, int32_t>, uint32_t> count_backward_ends(
    const std::vector<MemorySample>& samples) {
  std::map<std::tuple<int32_t, int32_t, int32_t>, uint32_t> ends;
  for (const MemorySample& s : samples) {
    if (s.point == MemoryPoint::kAfterBackward) ++ends[{s.step, s.micro_batch, s.chunk}];
  }
  return ends;
}

// One rank's walk through its samples, step by step.
class RankWalk {
 public:
  RankWalk(const Track& track, StageAccumulator& acc)
      : track_(track), acc_(acc), backward_ends_(count_backward_ends(track.memory)) {}

  void run() {
    bool first = true;
    for (const MemorySample& s : track_.memory) {
      if (first || s.step != step_) {
        close_step();
        step_ = s.step;
        first = false;
      }
      if (s.point == MemoryPoint::kStartPipeline) {
        in_flight_.clear();
        before_forward_.clear();
        if (!start_alloc_) start_alloc_ = s.allocated_bytes;
      }
      track_chunks(s);
      note_peak(s);
    }
    close_step();
  }

 private:
  void track_chunks(const MemorySample& s) {
    const ChunkKey key{s.micro_batch, s.chunk};
    switch (s.point) {
      case MemoryPoint::kBeforeForward:
        if (!first_forward_alloc_) first_forward_alloc_ = s.allocated_bytes;
        before_forward_[key] = s.allocated_bytes;
        break;
      case MemoryPoint::kAfterForward:
        in_flight_.insert(key);
        if (auto it = before_forward_.find(key); it != before_forward_.end()) {
          if (s.chunk < kMaxChunks) {
            acc_.acts[chunk_index(s.chunk)].push_back(std::max<int64_t>(0, s.allocated_bytes - it->second));
          }
          before_forward_.erase(it);
        }
        break;
      case MemoryPoint::kAfterBackward:
        if (auto it = backward_ends_.find({s.step, s.micro_batch, s.chunk}); it != backward_ends_.end()) {
          if (--it->second == 0) in_flight_.erase(key);
        }
        break;
      case MemoryPoint::kBeforeBackward:
      case MemoryPoint::kStartPipeline:
      case MemoryPoint::kEndPipeline: break;
    }
  }

  void note_peak(const MemorySample& s) {
    StageMemory& m = acc_.memory;
    m.peak_reserved_bytes = std::max(m.peak_reserved_bytes, s.reserved_bytes);
    if (acc_.has_peak && s.allocated_bytes <= m.peak_allocated_bytes) return;
    acc_.has_peak = true;
    m.peak_allocated_bytes = s.allocated_bytes;
    m.peak_rank = track_.rank;
    m.peak_step = s.step;
    m.peak_at = point_text(s);
    m.peak_in_flight = static_cast<int32_t>(in_flight_.size());
  }

  // The step's static part, then a clean slate for the next one.
  void close_step() {
    if (first_forward_alloc_) {
      acc_.statics.push_back(*first_forward_alloc_);
    } else if (start_alloc_) {
      acc_.statics.push_back(*start_alloc_);
    }
    first_forward_alloc_.reset();
    start_alloc_.reset();
    in_flight_.clear();
    before_forward_.clear();
  }

  const Track& track_;
  StageAccumulator& acc_;
  std::map<std::tuple<int32_t, int32_t, int32_t>, uint32_t> backward_ends_;
  int32_t step_ = -1;
  std::optional<int64_t> first_forward_alloc_;
  std::optional<int64_t> start_alloc_;
  std::set<ChunkKey> in_flight_;
  std::map<ChunkKey, int64_t> before_forward_;  // this step's forwards not yet ended
};

int64_t median_bytes(std::vector<int64_t> values) {
  std::sort(values.begin(), values.end());
  return static_cast<int64_t>(std::llround(median_of_sorted(values)));
}

StageMemory finish_stage(StageAccumulator& acc) {
  StageMemory m = std::move(acc.memory);
  m.static_bytes = median_bytes(std::move(acc.statics));
  const int32_t chunks = acc.acts.empty() ? 1 : acc.acts.rbegin()->first + 1;
  m.activation_bytes_per_chunk.assign(static_cast<size_t>(chunks), 0);
  for (auto& [chunk, values] : acc.acts) {
    m.activation_bytes_per_chunk[static_cast<size_t>(chunk)] = median_bytes(std::move(values));
  }
  m.activation_bytes_per_micro_batch = 0;
  for (int64_t a : m.activation_bytes_per_chunk) m.activation_bytes_per_micro_batch += a;
  return m;
}

}  // namespace

MemoryStats measure_memory(const Timeline& timeline, uint32_t run, int32_t pp_degree) {
  MemoryStats out;
  if (run >= timeline.runs.size()) return out;
  std::map<int32_t, StageAccumulator> stages;
  // By rank, so that a tie goes to the lowest rank.
  std::vector<uint32_t> tracks = timeline.runs[run].tracks;
  std::stable_sort(tracks.begin(), tracks.end(),
                   [&](uint32_t a, uint32_t b) { return timeline.tracks[a].rank < timeline.tracks[b].rank; });
  for (uint32_t ti : tracks) {
    const Track& track = timeline.tracks[ti];
    if (track.memory.empty()) continue;
    const int32_t stage = pipeline_stage(track.rank, pp_degree);
    StageAccumulator& acc = stages[stage];
    acc.memory.stage = stage;
    ++acc.memory.ranks;
    RankWalk(track, acc).run();
  }
  if (stages.empty()) return out;
  // A timeline built without a reader (a test, a prediction) may not say its
  // resolution: its sizes are then taken as exact bytes.
  out.resolution_bytes = timeline.memory_resolution_bytes > 0 ? timeline.memory_resolution_bytes : 1;
  for (auto& [stage, acc] : stages) out.stages.push_back(finish_stage(acc));
  return out;
}

}  // namespace ppt
