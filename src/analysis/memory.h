// What the device memory of each stage was, from the `[Pipeline details]`
// samples (model/timeline.h MemorySample): the peak and where it happened,
// the static part and the activations one micro-batch holds. The what-if
// model (analysis/whatif.h) replays the static part and the activations over
// other plans to predict their peaks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ppt {

struct StageMemory {
  int32_t stage = 0;
  uint32_t ranks = 0;  // ranks of the stage with memory samples in the measured run
  // The highest allocated sample over the stage's ranks and the run's steps,
  // and where it was taken.
  int64_t peak_allocated_bytes = 0;
  int32_t peak_rank = -1;
  int32_t peak_step = -1;
  std::string peak_at;         // "after forward, micro-batch 3, chunk 1"
  int32_t peak_in_flight = 0;  // micro-batch chunks forwarded and not yet backwarded at the peak
  int64_t peak_reserved_bytes = 0;
  // Allocated before the step's first forward (the parameters, gradients and
  // optimizer state the step starts with): the median over the stage's
  // rank-steps.
  int64_t static_bytes = 0;
  // After_forward - Before_forward, the median over micro-batches, per chunk
  // (one entry without VPP); activation_bytes_per_micro_batch is their sum:
  // what one micro-batch holds on the stage once every chunk has run it.
  std::vector<int64_t> activation_bytes_per_chunk;
  int64_t activation_bytes_per_micro_batch = 0;
};

struct MemoryStats {
  int64_t resolution_bytes = 0;     // Timeline::memory_resolution_bytes; 0: no samples, nothing below
  std::vector<StageMemory> stages;  // by stage, only stages with samples
  // --device-memory, 0 when not given: each stage's peak is compared to it.
  int64_t device_memory_bytes = 0;
  bool present() const { return resolution_bytes > 0 && !stages.empty(); }
};

struct Timeline;

// The memory of run `run` of `timeline` (its samples' steps set by the steps
// pass), each rank the stage pipeline_stage(rank, pp_degree)
// (passes/pipeline_stage.h). An empty MemoryStats when the run has no samples.
MemoryStats measure_memory(const Timeline& timeline, uint32_t run, int32_t pp_degree);

}  // namespace ppt
