// Splitting a rank's job stream into steps, and numbering steps across ranks.
//
// Within one rank, Paddle prints every job of a step together, in the plan's
// job order. A step therefore begins
//  - after an optimizer job (unless another optimizer job follows), or
//  - at a job whose (type, micro-batch) was already seen in the current step
//    (micro-batch ids restart per chunk, but chunked types carry the chunk, so
//    `forward0`/mb 0 and `forward1`/mb 0 are different keys). Without a
//    micro_batch_id the job id is used instead.
// This holds for FThenB, 1F1B, Eager1F1B, VPP, ZBH1, ZBVPP and the
// overlapping schedules without naming any of them.
//
// Across ranks, the same step is recognised by time, not by counting, so a
// rank that lacks a step does not shift the others: each rank's steps are
// clustered by time (all ranks work on one step at a time). Only ranks of one
// machine share a clock: each machine's steps are clustered on their own and
// matched to the other machines' by the shift that lines up the most step
// middles, so machines whose clocks are seconds apart share step numbers.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "model/timeline.h"

namespace ppt {

class StepSplitter {
 public:
  // `types` are the job types the jobs' `type` fields index.
  // `first_forward_starts`: a `forward` or `forward0` job of micro-batch 0
  // also begins a step (dynamic-graph records, where every stage's step
  // begins with it, so a step whose first record was lost still ends there).
  explicit StepSplitter(const std::vector<std::string>& types, bool first_forward_starts = false);

  // Feeds the next job of the stream; true when it begins a new step (the
  // first job always does).
  bool starts_new_step(const Job& job);
  void reset();

 private:
  // The (type, micro-batch or job id) keys seen in the current step. Small
  // micro-batch ids, the common case, are stamped with the step's generation
  // in a table by type (clearing it is a new generation); other keys go to
  // the set.
  static constexpr int64_t kDirectIds = 4096;
  bool seen(uint32_t type, int64_t micro_batch, uint64_t key) const;
  void mark(uint32_t type, int64_t micro_batch, uint64_t key);
  void clear_seen();

  std::vector<uint8_t> is_optimizer_;
  std::vector<uint8_t> is_first_forward_;      // empty unless first_forward_starts
  std::vector<std::vector<uint32_t>> stamps_;  // by type, by micro-batch id
  uint32_t generation_ = 1;                    // stamps_ entries equal to it are seen
  std::unordered_set<uint64_t> seen_;
  bool first_ = true;
  bool after_optimizer_ = false;
};

// Turns the rank-local step indices of every track of `run` into step numbers
// shared by all ranks (from the run's schedule marker when it has one), and
// computes the run's step spans. The per-job passes run on up to `threads`
// threads (0: one per core); the result is the same on any number.
void number_steps(Timeline& timeline, Run& run, unsigned threads = 1);

// Gives each of the track's memory samples its step. The samples from a
// Start line to the next are one call of the pipeline, numbered as most of the
// jobs that start within its stamps (+ the stamps' millisecond); samples
// outside such a call, or a call without jobs, go by line: a Start or Before
// sample the step of the first job at or after its line, an After or End
// sample that of the last job at or before it, the other side when there is
// none. number_steps calls it once the jobs have their numbers.
void assign_memory_steps(Track& track);

// Sets Timeline::origin_ns: the earliest job start over the runs, or the
// earliest memory sample where one comes first (a step's Start line is logged
// before its first job), so no output has a time before its zero.
void set_origin(Timeline& timeline);

// Recomputes the spans of `run.steps` (their numbers, sorted, as number_steps
// set them) from the jobs of the run's tracks in their current times: each
// step the earliest start to the latest end of its jobs and the count of
// tracks with a job in it; a step left without a job is dropped. Then the
// spans are settled as Run::steps promises (timeline.h): a step starts no
// earlier than the previous one ended, and ends no earlier than it starts; a
// step whose jobs all ended before the previous step's did (clocks that
// disagree) becomes an instant where the previous one ends. Every pass that
// sets or moves job times (number_steps, clock_align.h) ends with it. On up
// to `threads` threads (0: one per core); the same on any number.
void finalize_step_spans(const Timeline& timeline, Run& run, unsigned threads = 1);

}  // namespace ppt
