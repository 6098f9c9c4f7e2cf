#include "analysis/batch_result.h"

namespace ppt {

std::string_view batch_status_name(BatchStatus s) {
  switch (s) {
    case BatchStatus::kOk: return "ok";
    case BatchStatus::kNoJobs: return "no_jobs";
    case BatchStatus::kNoLogs: return "no_logs";
    case BatchStatus::kBadArtifact: return "bad_artifact";
    case BatchStatus::kOutputError: return "output_error";
  }
  return "unknown";
}

bool BatchResult::any_failed() const {
  if (!error.empty()) return true;
  for (const BatchRun& r : runs) {
    if (r.status != BatchStatus::kOk) return true;
  }
  return false;
}

bool BatchResult::gate_failed() const {
  for (const BatchRun& r : runs) {
    if (r.change && r.change->gate_failed) return true;
  }
  return false;
}

}  // namespace ppt
