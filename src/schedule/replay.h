// Replaying a plan (plan.h) with given job costs: when every job of every
// stage would start and end.
//
// Every stage runs its plan's jobs in order; a job starts when its stage is
// free (its previous job's end plus the host gap, ReplayCosts) and its input has arrived: the producer's end (the dependency rule,
// virtual_stage.h, producer_virtual_stage) plus the link's lag. A backward_w
// waits for its backward_b, the last virtual stage's backward for its forward
// (both on the same stage, earlier in a valid plan). Each stage ends its step
// with the optimizer; step k+1 starts on every stage at step k's end plus the
// gap between steps. O(jobs).
//
// A plan in which some stage waits for a job that never comes (a deadlock) is
// reported in ReplayResult::error, naming the waiting job and what it waits for.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/timeline.h"
#include "schedule/plan.h"

namespace ppt {

struct ReplayCosts {
  // A job's length on a stage; required.
  std::function<int64_t(int32_t stage, const PlanJob& job)> duration_ns;
  // The lag from a producer's end on `from_stage` to its consumer (a job of
  // role `consumer_role`) on `to_stage`; empty: 0.
  std::function<int64_t(int32_t from_stage, int32_t to_stage, PlanRole consumer_role)> link_ns;
  std::vector<int64_t> optimizer_ns;  // per stage; empty or short: 0
  int64_t step_gap_ns = 0;            // from a step's last end to the next step's start
  // The host gap: the least time from the stage's previous job's end (in the
  // step) to this job's start, the framework's own work between jobs; empty: 0.
  std::function<int64_t(int32_t stage, const PlanJob& job)> host_gap_ns;
  std::vector<int64_t> optimizer_gap_ns;  // per stage: from its last job's end to its optimizer; empty or short: 0
};

struct ReplayedJob {
  PlanJob job;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

struct ReplayedStep {
  std::vector<std::vector<ReplayedJob>> stages;        // by stage, in plan order
  std::vector<std::pair<int64_t, int64_t>> optimizer;  // by stage: start, end
  int64_t start_ns = 0;                                // every stage's first possible start
  int64_t end_ns = 0;                                  // the latest end over the stages
};

struct ReplayResult {
  PlanShape shape;
  std::vector<ReplayedStep> steps;
  // By stage: the most micro-batches (times chunks) whose forward has started
  // and whose backward (or backward_b) has not ended; the activations a stage
  // holds at once.
  std::vector<int32_t> peak_in_flight;
  std::string error;  // "" or why the replay stopped (a refused shape, a deadlock)
};

// Replays `steps` steps of the shape's plan (pipeline_plan) in a row, the
// first starting at 0.
ReplayResult replay_plan(const PlanShape& shape, const ReplayCosts& costs, int32_t steps = 1);

// The same with plans of one's own, one per stage of `shape` (a changed order,
// a plan under test): each (role, chunk, micro-batch) at most once per stage,
// chunks below shape.chunks, micro-batches below shape.micro_batches;
// anything else is an error, as is a deadlock.
ReplayResult replay_plans(const PlanShape& shape, const std::vector<std::vector<PlanJob>>& plans,
                          const ReplayCosts& costs, int32_t steps = 1);

// What a job waits for before it starts (replay.cc): the slot, virtual stage
// and micro-batch of the job it needs, that job's stage, and whether it is
// on the job's own stage (no link lag).
struct ReplayNeed {
  int32_t slot;
  int32_t vstage;
  int32_t micro_batch;
  int32_t from_stage;
  bool local;
};

// A plan checked and its waits found once, for replaying it many times
// with other costs (whatif replays each measured step on each replica):
// replay_prepared(prepare_replay(shape, plans), costs, steps) is
// replay_plans(shape, plans, costs, steps). `plans` must outlive it.
struct PreparedReplay {
  PlanShape shape;
  const std::vector<std::vector<PlanJob>>* plans = nullptr;
  std::string error;  // the plan's own error (a refused shape, a job outside it or twice), or ""
  std::vector<int32_t> peak_in_flight;
  std::vector<std::vector<std::optional<ReplayNeed>>> needs;  // [stage][job]
};
PreparedReplay prepare_replay(const PlanShape& shape, const std::vector<std::vector<PlanJob>>& plans);
ReplayResult replay_prepared(const PreparedReplay& prepared, const ReplayCosts& costs, int32_t steps = 1);

// One step of a prepared plan flattened, for replaying it many times where
// only the job durations and the optimizers change (whatif replays each
// measured step on each replica: thousands of one-step replays at 1024
// ranks): the step's jobs in one order in which each comes after the job it
// waits for and after its stage's previous job, each with its wait, host gap
// and link lag looked up once. replay_flat_step then walks that order
// without the ready queue, the cost callbacks or the jobs' records.
struct FlatReplay {
  struct Item {
    int32_t stage = 0;
    uint32_t index = 0;  // the job's place in its stage's plan
    int32_t need = -1;   // the item it waits for, or -1
    int64_t gap_ns = 0;  // the host gap before it: 0 for its stage's first job
    int64_t lag_ns = 0;  // added to the needed item's end: the link's lag across stages, else 0
  };
  std::vector<Item> items;
  std::vector<int64_t> optimizer_gap_ns;  // by stage: 0 for a stage with no jobs
  std::string error;                      // the plan's own error, a missing duration or a deadlock: nothing to replay
  // The sum of every gap's, lag's and optimizer gap's size, at most
  // kMaxSumNs (util/checked.h): with the durations', it bounds every time
  // replay_flat_step computes.
  int64_t magnitude_ns = 0;
};
// The jobs' durations and the optimizers' lengths in `costs` are not read
// (replay_flat_step takes them); its links, host gaps and optimizer gaps are.
FlatReplay flatten_replay(const PreparedReplay& prepared, const ReplayCosts& costs);

// One step of `flat` from 0 with durations[i] the length of flat.items[i]
// (< 0: 0) and optimizer_ns by stage (empty or short: 0): returns the step's
// end, which is replay_prepared's end_ns - start_ns for one step under the
// same costs, and sets busy[stage] (resized to the stages) to what
// replay_busy_ns says of that step. `free_at` and `ends` are scratch.
int64_t replay_flat_step(const FlatReplay& flat, const std::vector<int64_t>& durations,
                         const std::vector<int64_t>& optimizer_ns, std::vector<int64_t>& busy,
                         std::vector<int64_t>& free_at, std::vector<int64_t>& ends);

// A stage's busy time in a step: the sum of its jobs' lengths, optimizer included.
int64_t replay_busy_ns(const ReplayedStep& step, int32_t stage);

// A step's bubble ratio as analysis/stats defines it: idle / (stages * span),
// span = end - start, idle = span - busy per stage.
double replay_bubble_ratio(const ReplayedStep& step);

// Over every step: sum(idle) / sum(stages * span); 0 without steps.
double replay_bubble_ratio(const ReplayResult& result);

// The start of step k to the start of step k+1, the mean over the steps that
// have a next one; 0 with one step.
double replay_period_ns(const ReplayResult& result);

// The replay as a Timeline, as the input passes would build it from logs: one
// run, one track (and file, "replay/stage<s>") per stage with rank = stage, jobs
// typed by plan_job_type and `optimizer`, micro-batch ids (none, -1, for the optimizer), steps numbered
// from `first_step`, times from `origin_ns`, lines numbered per track in plan
// order, one lane. Empty when the replay has an error.
Timeline replay_timeline(const ReplayResult& result, int64_t origin_ns = 0, int32_t first_step = 0);

}  // namespace ppt
