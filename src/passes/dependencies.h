// Which job feeds which: the data dependencies between the stages of a
// pipeline, decided once, in a pass over the Timeline, and shared by the clock
// alignment (clock_align.h), the writers' flow arrows and path analyses.
//
// A dependency is an edge from a producer job to a consumer job of the same
// run, step and micro-batch, within one data-parallel replica
// (rank = replica * P + stage, pipeline_stage.h):
//  - forward: the forward on virtual stage v feeds the forward on v + 1;
//  - backward: the backward (or backward_b, the input-gradient half of a split
//    backward) on virtual stage v + 1 feeds the one on v. backward_w computes
//    weight gradients only and feeds no other stage.
// Virtual stages and which virtual stage feeds which are the schedule layer's
// rules (schedule/virtual_stage.h, DependencyKind and producer_virtual_stage):
// chunk c of stage s is c * P + s (the last stage's chunk c feeds stage 0's
// chunk c + 1), or V-shaped for the schedules the table marks so. Micro-batch ids restart per chunk; types carry the chunk
// (forward1, backward_b0). The pieces of an overlapped job (`forward(chunk0)`,
// `forward(chunk1)`) are one job here: the piece that ends last produces, the
// piece that starts first consumes.
//
// Jobs without a micro_batch_id cannot be matched and get no edge; they are
// counted. The stages' order is the ranks' order unless --pp-degree (or the
// job order, see schedule.h's infer_pipeline_shape) says there are replicas.
//
// A dependency is contradicted when its consumer starts before its producer
// ends. That is never hidden: find_dependencies() marks it as it finds the
// edge (check_dependencies() again, after times move), and
// report_dependencies() counts it as a diagnostic.
//
// Everything here is a pure function of the Timeline, deterministic and
// independent of the thread count.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/timeline.h"
#include "passes/schedule.h"
#include "schedule/virtual_stage.h"

namespace ppt {

struct PipelinePlan;  // pipeline.h

// A job by position: Timeline::tracks[track].jobs[job]. Stable across the
// clock alignment, which shifts whole tracks and never reorders jobs.
struct JobRef {
  uint32_t track = 0;
  uint32_t job = 0;
  bool operator==(const JobRef&) const = default;
};

struct Dependency {
  JobRef producer;
  JobRef consumer;
  DependencyKind kind = DependencyKind::kForward;
  bool contradicted = false;  // consumer.start < producer.end, as of the last check
};

// The edges only: the plan they were found with (P, where it came from, the
// schedule, V) is the PipelinePlan's, never copied here.
struct Dependencies {
  std::vector<Dependency> edges;          // by (consumer track, consumer job): tracks in (run, rank) order
  uint64_t jobs_without_micro_batch = 0;  // forward/backward jobs that could not be matched
  uint64_t contradicted = 0;              // edges with `contradicted` set

  size_t count(DependencyKind kind) const;
};

// Finds every dependency of every run, with the stages, the schedule and V
// of `plan` (pipeline.h: decided once, before any clock alignment). Tracks
// are searched on `threads` threads (0: one per core); the result does not
// depend on it.
Dependencies find_dependencies(const Timeline& timeline, const PipelinePlan& plan, unsigned threads = 0);

// Consumer start minus producer end, in the timeline's current times
// (negative: contradicted).
int64_t dependency_slack_ns(const Timeline& timeline, const Dependency& edge);

// Recomputes every edge's `contradicted` flag and the count from the current
// times; returns the count. `threads`: 0 for one per core.
uint64_t check_dependencies(const Timeline& timeline, Dependencies& deps, unsigned threads = 0);

// Records what the user should know as diagnostics: jobs left without arrows
// for lack of a micro_batch_id, and every contradicted dependency (the first
// few with `path:line` of the consumer and of the producer).
void report_dependencies(Timeline& timeline, const Dependencies& deps);

// "rank 5 forward1 micro-batch 3 (step 2)"
std::string describe_job(const Timeline& timeline, JobRef job);

// The edges into each job, for path walks.
class DependencyIndex {
 public:
  DependencyIndex(const Timeline& timeline, const Dependencies& deps);

  // The edges into one job: indices into Dependencies::edges, ascending.
  class Incoming {
   public:
    class iterator {
     public:
      iterator(const uint32_t* list, uint32_t at) : list_(list), at_(at) {}
      uint32_t operator*() const { return list_ ? list_[at_] : at_; }
      iterator& operator++() {
        ++at_;
        return *this;
      }
      bool operator!=(const iterator& o) const { return at_ != o.at_; }

     private:
      const uint32_t* list_;
      uint32_t at_;
    };
    Incoming(const uint32_t* list, uint32_t first, uint32_t last) : list_(list), first_(first), last_(last) {}
    iterator begin() const { return {list_, first_}; }
    iterator end() const { return {list_, last_}; }
    size_t size() const { return last_ - first_; }

   private:
    const uint32_t* list_;  // null: the edges first..last themselves
    uint32_t first_, last_;
  };
  Incoming incoming(JobRef job) const;

 private:
  const Dependencies& deps_;
  // Edges sorted by consumer, as find_dependencies leaves them: per track
  // its first edge (and one past the last track's), the job's found by a
  // binary search in its track's (8 bytes a track instead of 4 a job and 4
  // an edge). Otherwise `by_consumer_`: every edge's index, by consumer, in
  // rows per job (`offsets_`, per job flattened over tracks, plus one).
  std::vector<uint32_t> track_first_;
  std::vector<size_t> track_base_;
  std::vector<uint32_t> offsets_;
  std::vector<uint32_t> by_consumer_;
};

}  // namespace ppt
