// The job-type vocabulary in one place: how a type such as `backward_w1` or
// `forward(chunk0)` splits into its parts, what kind of work it is and where
// it goes in a legend (output/picture/palette.h gives each kind its colour). The
// passes (steps, schedule, dependencies, stats) and the writers (Chrome JSON,
// .pftrace, SVG, HTML, the diff trace) all ask here, so a new spelling of a
// type is taught once.
//
// Types are never a closed list: Paddle's plans and the training front-ends
// name them freely (paddle/fluid/framework/new_executor/interpreter/job.h only
// holds a string). A type this module does not know is kind kOther, keeps its
// whole name as base (and the palette still gives it a stable colour).
//
// All functions are pure and thread safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ppt {

// A job type split into its parts: `backward_w1` is base `backward`,
// suffix `w`, chunk 1; `forward(chunk0)` is base `forward`, chunk 0.
struct TypeParts {
  std::string base;    // forward, backward, optimizer, lr, recv_forward, ...
  std::string suffix;  // b, w, w_reduce, ... or empty
  int32_t chunk = -1;  // virtual stage, -1 when none
};
TypeParts split_type(std::string_view type);

// What a job does.
enum class JobKind : uint8_t {
  kForward,
  kBackward,        // a whole backward, or its input-gradient half (backward_b)
  kBackwardWeight,  // the weight-gradient half (backward_w, backward_w_reduce)
  kOptimizer,       // ends a step on its rank
  kLr,              // the learning-rate job of the 2023 plans
  kCommunication,   // send_* / recv_* jobs
  kNoPipeline,      // `default`: the whole step as one job, no pipeline
  kOther,
};
JobKind job_kind(const TypeParts& parts);
inline JobKind job_kind(std::string_view type) { return job_kind(split_type(type)); }

// The whole forward of the first virtual stage (`forward`, `forward0`): the
// job a dynamic-graph step begins with (dygraph_profile.h).
bool is_first_chunk_forward(std::string_view type);
// A piece of a job drawn in parts (`forward(chunk0)`): not a job of its own
// in the schedule's plan.
bool is_job_piece(std::string_view type);
// The input-gradient half of a split backward (`backward_b`).
inline bool is_input_grad_half(const TypeParts& parts) { return parts.base == "backward" && parts.suffix == "b"; }

// Legends list lr, forward, backward (both halves), optimizer, then the rest.
int legend_rank(const TypeParts& parts);

}  // namespace ppt
