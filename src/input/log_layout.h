// Finds the launch logs to read: DIR/workerlog.<i>, or one folder per machine
// DIR/<machine>/workerlog.<i> (any sub-folder holding workerlog files:
// machine3/, 10.0.0.2/, node-a/; in natural order, 10.0.0.10 after 10.0.0.9),
// files named on the command line, or "-" for standard input.
//
// Ranks are the whole run's, as Paddle numbers them (launch/controllers/
// collective.py): machine-major, rank = m * n + i, with i the local index of
// workerlog.<i> and n the processes per machine (the highest local index + 1
// over every machine of the directory). Loading a subset (--devices) or
// missing a log never renumbers the others; Layout::partial says so.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/timeline.h"

namespace ppt {

// The name of standard input among the files: one rank's log, read once.
inline constexpr std::string_view kStdinPath = "-";
// How standard input is shown in messages and traces (SourceFile::path).
inline constexpr std::string_view kStdinName = "<stdin>";

struct LayoutRequest {
  std::string log_dir;             // empty when only explicit files are given
  std::vector<std::string> files;  // explicit files, in rank order ("-": standard input); or one directory
  std::vector<int> devices;        // local indices to keep; empty keeps all
};

struct Layout {
  std::vector<SourceFile> files;      // in global rank order
  std::vector<std::string> machines;  // machine names by index
  std::vector<std::string> notes;     // things the user should know (ignored files)
  int32_t world_ranks = 0;            // ranks of the whole run (what the directory holds, plus files named)
  std::string partial;                // "" when every rank is loaded, else "ranks 1-3 of 4 loaded (--devices)"
};

// Either a layout or one error line for the user (missing directory, no
// workerlog files, ...). Never throws for bad input.
struct LayoutResult {
  std::optional<Layout> layout;
  std::string error;
  bool usage_error = false;  // the request itself is wrong (a missing path), not the logs
};

LayoutResult discover_layout(const LayoutRequest& request);

// A directory named among the files (`pp-timeline logs/`) is the log
// directory: moves it to `log_dir`. Returns "" or a usage error (a directory
// besides files or besides --log_dir, two directories).
std::string resolve_positional_dir(LayoutRequest& request);

bool is_stdin_path(const std::string& path);

// A dynamic-graph profile file (input/dygraph_profile.h): by its name
// (profile_record_tmp_file_for_rank_<N>), or, for a file named otherwise, by
// its first line (a JSON record with "ph").
bool is_dygraph_profile_file(const std::string& path);

// "1-3, 5, 7-9" for sorted ranks.
std::string format_rank_ranges(const std::vector<int32_t>& sorted_ranks);

// Whether a folder's name says it is a machine's: machine<k>, or an IPv4
// address (a node's logs copied under its address). The layout reads every
// sub-folder holding logs as a machine, whatever its name, and notes one so
// named that holds none; batch's search (app/batch.h) takes a folder so named
// for a machine of the run around it, and one named otherwise (a host name)
// for a run of its own.
bool is_machine_folder_name(std::string_view name);

// The i of "workerlog.<i>" or "workerlog.<i>.gz"; -1 for any other name and
// for an i past kMaxRankIndex.
int workerlog_index(const std::string& file_name);

// Whether a name is a log's but its index is past kMaxRankIndex, or has more
// digits than it (workerlog.1000000, profile_record_tmp_file_for_rank_1000000):
// such a file is not read, and the layout names it (never skipped in silence).
bool is_log_name_past_rank_bound(std::string_view file_name);

}  // namespace ppt
