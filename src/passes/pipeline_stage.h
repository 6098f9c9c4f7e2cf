// Which pipeline stage and data-parallel replica a rank is.
//
// Paddle's fleet topology (and Megatron's) numbers ranks replica-major when
// pipeline parallelism is the innermost dimension: rank = replica * P + stage,
// where P is the pipeline depth (`--pp-degree`). Without P, every rank of the
// run is taken as one pipeline (P = number of ranks), or P is inferred from
// the job order (schedule.h).
//
// Header-only; shared by the flow arrows and the statistics.
#pragma once

#include <cstdint>
#include <string>

namespace ppt {

inline int32_t pipeline_stage(int32_t rank, int32_t pp_degree) { return pp_degree > 0 ? rank % pp_degree : rank; }

inline int32_t pipeline_replica(int32_t rank, int32_t pp_degree) { return pp_degree > 0 ? rank / pp_degree : 0; }

// "" when `pp_degree` fits `ranks` ranks, else one line for the user.
inline std::string check_pp_degree(int32_t pp_degree, size_t ranks) {
  if (pp_degree <= 0) return "--pp-degree must be a positive number";
  if (ranks > 0 && ranks % static_cast<size_t>(pp_degree) != 0) {
    return "--pp-degree " + std::to_string(pp_degree) + " does not divide the " + std::to_string(ranks) +
           " ranks found (rank = replica * P + stage)";
  }
  return "";
}

}  // namespace ppt
