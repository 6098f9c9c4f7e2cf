// The PPT_SHIM_* variables (documented in shim.h and docs/shim.md).
#include <charconv>
#include <cstdlib>
#include <string>
#include <string_view>

#include <unistd.h>

#include "pp_timeline/shim.h"

namespace ppt::shim {
namespace {

bool parse_int64(std::string_view text, int64_t* out) {
  if (text.empty()) return false;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(first, last, *out);
  return ec == std::errc() && ptr == last;
}

Status bad(const char* name, std::string_view value, const char* expected) {
  std::string m = "environment variable ";
  m += name;
  m += "='";
  m += value;
  m += "' is not ";
  m += expected;
  return {Code::kBadEnvironment, std::move(m)};
}

// The launchers' variables, first set one wins. PaddlePaddle's launch sets
// PADDLE_TRAINER_ID, PADDLE_GLOBAL_RANK, PADDLE_RANK_IN_NODE and
// PADDLE_LOCAL_RANK for every worker (python/paddle/distributed/launch/
// controllers/collective.py); torchrun sets RANK and LOCAL_RANK.
constexpr const char* kRankVariables[] = {"PADDLE_TRAINER_ID", "PADDLE_GLOBAL_RANK", "RANK", "OMPI_COMM_WORLD_RANK",
                                          "SLURM_PROCID"};
constexpr const char* kLocalRankVariables[] = {"PADDLE_RANK_IN_NODE", "PADDLE_LOCAL_RANK", "LOCAL_RANK",
                                               "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"};

template <size_t N>
std::string first_set(const char* const (&names)[N], const char* (*get)(const char*)) {
  for (const char* name : names) {
    const char* v = get(name);
    if (v != nullptr && *v != '\0') return v;
  }
  return "pid" + std::to_string(static_cast<long>(::getpid()));
}

const char* real_getenv(const char* name) { return std::getenv(name); }

}  // namespace

std::string expand_log_path(std::string_view pattern, const char* (*getenv)(const char*)) {
  if (getenv == nullptr) getenv = real_getenv;
  std::string out;
  out.reserve(pattern.size());
  size_t i = 0;
  while (i < pattern.size()) {
    const std::string_view rest = pattern.substr(i);
    if (rest.substr(0, 6) == "{rank}") {
      out += first_set(kRankVariables, getenv);
      i += 6;
    } else if (rest.substr(0, 12) == "{local_rank}") {
      out += first_set(kLocalRankVariables, getenv);
      i += 12;
    } else {
      out.push_back(pattern[i++]);
    }
  }
  return out;
}

Status options_from_environment(Options* options) {
  if (options == nullptr) return {Code::kInvalidArgument, "options_from_environment(nullptr)"};
  Options o = *options;
  const char* start = std::getenv("PPT_SHIM_START_STEP");
  const char* end = std::getenv("PPT_SHIM_END_STEP");
  if (start != nullptr) {
    if (!parse_int64(start, &o.window_start)) return bad("PPT_SHIM_START_STEP", start, "an integer");
    o.window_set = true;
  }
  if (end != nullptr) {
    if (!parse_int64(end, &o.window_end)) return bad("PPT_SHIM_END_STEP", end, "an integer");
    o.window_set = true;
  }
  if (o.window_set && o.window_start >= o.window_end) {
    return {Code::kBadEnvironment,
            "environment variables PPT_SHIM_START_STEP and PPT_SHIM_END_STEP give an empty window [" +
                std::to_string(o.window_start) + ", " + std::to_string(o.window_end) +
                "): the start must be below the end"};
  }
  if (const char* clock = std::getenv("PPT_SHIM_CLOCK")) {
    const std::string_view v = clock;
    if (v == "host") {
      o.use_cuda = false;
      o.require_cuda = false;
    } else if (v == "cuda" || v == "auto") {
      o.use_cuda = true;
      o.require_cuda = v == "cuda";
    } else {
      return bad("PPT_SHIM_CLOCK", v, "one of auto, cuda, host");
    }
  }
  if (const char* wait = std::getenv("PPT_SHIM_FLUSH_WAIT")) {
    const std::string_view v = wait;
    if (v == "sync") {
      o.wait = FlushWait::kSynchronize;
    } else if (v == "poll") {
      o.wait = FlushWait::kPoll;
    } else {
      return bad("PPT_SHIM_FLUSH_WAIT", v, "one of sync, poll");
    }
  }
  if (const char* format = std::getenv("PPT_SHIM_FORMAT")) {
    const std::string_view v = format;
    if (v == "paddle") {
      o.format = LineFormat::kPaddle;
    } else if (v == "compact") {
      o.format = LineFormat::kCompact;
    } else {
      return bad("PPT_SHIM_FORMAT", v, "one of paddle, compact");
    }
  }
  if (const char* file = std::getenv("PPT_SHIM_LOG_FILE"); file != nullptr && *file != '\0') {
    o.log_file = file;
  }
  *options = std::move(o);
  return {};
}

}  // namespace ppt::shim
