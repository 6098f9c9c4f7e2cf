// Runs pp-demo and reads its logs back through the converter (load_timeline),
// then checks them against the schedule: each rank's job order, step after
// step, and every cross-rank dependency in time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "schedule.h"

namespace ppt::demo_check {

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct Command {
  int exit_code = -1;  // -1 when it did not exit normally
  std::string output;  // stdout and stderr together
};

// Runs the pp-demo that was built with the tests ($PPT_DEMO_BINARY if set).
Command run_demo(const std::vector<std::string>& args);

struct DemoJob {
  std::string type;
  int micro_batch = -1;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int step = -1;        // the converter's step number
  int local_step = -1;  // the how-many-th step of its rank (0, 1, ...)
};

struct LoadedRun {
  std::string error;                        // empty when loaded
  std::vector<std::vector<DemoJob>> ranks;  // by global rank, in time order
  uint64_t rejected_lines = 0;
  size_t runs = 0;
  bool has_marker = false;
  int marker_start_step = 0;
};

// Reads a log directory with the converter.
LoadedRun load(const std::string& log_dir);

// Each returns the problems found, as sentences; empty when all hold.
//
// check_order: on every rank, the converter splits the jobs into `steps`
// steps, each exactly the schedule's order, numbered upwards from
// first_step or later. How the converter matches steps across ranks (by
// time) is its own concern and not checked here: the dependencies are
// checked between the ranks' local steps of the same index.
std::vector<std::string> check_order(const demo::PipelineShape& shape, int steps, const LoadedRun& run,
                                     int first_step = 0);
std::vector<std::string> check_dependencies(const demo::PipelineShape& shape, const LoadedRun& run);

}  // namespace ppt::demo_check
