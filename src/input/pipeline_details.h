// Reads one of the dynamic-graph pipeline's `[Pipeline details]` lines.
//
// Paddle's dynamic-graph pipelines (fleet's PipelineParallel and its
// interleaved subclass), with FLAGS_profile_pipeline_details_steps=N, log for
// the first N steps, through the fleet logger (format
// `[%(asctime)-15s] [%(levelname)8s] %(filename)s:%(lineno)s - %(message)s`),
// after a device synchronize:
//   [2024-11-20 12:34:56,789] [    INFO] pipeline_parallel.py:1187 - [Pipeline details]
//       Before_forward_step_chunk_0_step_3: memory_allocated_size=12.34, memory_reserved_size=20.00
// (one line), the same with After_ and _backward_, `chunk_None` without
// virtual stages, `step_None` where the caller passes no step, and around the
// whole step `Start_forward_backward_pipeline` / `End_forward_backward_pipeline`.
// Sizes are GiB with two decimals (docs/log-format.md has the sources).
//
// The stamp is Python's asctime: the process's local time, whole
// milliseconds, without a zone. It is read as if it were UTC (timegm), the same
// for every line, so differences between stamps are exact to the millisecond;
// the absolute time is off by the machine's zone offset, as for any clock.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "model/timeline.h"

namespace ppt {

// The literal every details line holds (and the scanner searches for).
inline constexpr std::string_view kDetailsLiteral = "[Pipeline details] ";
// Details stamps are whole milliseconds.
inline constexpr int64_t kDetailsResolutionNs = 1'000'000;
// 0.01 GiB, the resolution of the sizes, in bytes: round(0.01 * 2^30).
inline constexpr int64_t kDetailsResolutionBytes = 10'737'418;

struct DetailsLine {
  MemoryPoint point = MemoryPoint::kStartPipeline;
  int64_t ts_ns = 0;            // the asctime stamp read as UTC, in ns (a multiple of 1 ms)
  int32_t chunk = -1;           // chunk_<c>; -1 for chunk_None and for Start/End
  int32_t step_id = -1;         // step_<s>; -1 for step_None and for Start/End
  int64_t allocated_bytes = 0;  // round(GiB * 2^30)
  int64_t reserved_bytes = 0;
};

// True when `point` is Before_/After_ of a forward or backward step.
inline bool is_step_point(MemoryPoint p) { return p != MemoryPoint::kStartPipeline && p != MemoryPoint::kEndPipeline; }
inline bool is_before_point(MemoryPoint p) {
  return p == MemoryPoint::kBeforeForward || p == MemoryPoint::kBeforeBackward;
}
inline bool is_forward_point(MemoryPoint p) {
  return p == MemoryPoint::kBeforeForward || p == MemoryPoint::kAfterForward;
}

// Pairs one file's details lines, in file order, into jobs: the reader's and
// watch's account share it. A Before and the next After of the same
// direction, chunk and step are one job. Micro-batches: without chunks
// (1F1B, FThenB) Paddle passes the micro-batch as step_<s>. The interleaved
// class passes the virtual micro-step and maps it to a chunk
// (_get_virtual_pp_rank); each chunk takes the micro-batches in order (its
// input and output lists are first in, first out), so the micro-batch of a
// chunk's k-th forward (or backward) since the step's Start line is k. That
// count is also the micro-batch where step_<s> is None.
class DetailsPairing {
 public:
  struct Before {
    DetailsLine d;
    uint64_t line = 0;
    int32_t micro_batch = -1;
    std::string text;
  };
  // What one line did.
  struct Step {
    int32_t micro_batch = -1;         // the line's sample's (-1 for Start/End)
    std::optional<Before> unmatched;  // an earlier Before it closed without its After
    std::optional<Before> pair;       // the Before this After completes
    bool unmatched_after = false;     // an After without its Before
    bool end_before_start = false;    // `pair` is stamped after this After
  };
  Step feed(const DetailsLine& d, uint64_t line_no, std::string_view text);
  // A new process (a start-up line) or the end of the file: the open Before,
  // unmatched, if any; the counts begin again.
  std::optional<Before> close();

 private:
  std::optional<Before> open_;
  std::unordered_map<int64_t, int32_t> counts_;  // steps begun since the Start line, by (chunk, forward)
};

// Parses `line` (one line, its '\r' or '\n' ending allowed), which holds
// kDetailsLiteral. Returns false with the reason in `why` when the line is
// not a whole details line (a stamp, message or size missing or malformed).
bool parse_details_line(std::string_view line, DetailsLine* out, std::string* why);

// "Before_forward_step" ... for messages.
const char* memory_point_name(MemoryPoint p);

}  // namespace ppt
