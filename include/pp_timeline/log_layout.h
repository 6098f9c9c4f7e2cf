// Finds the launch logs to read: DIR/workerlog.<i>, DIR/machine*/workerlog.<i>
// (machines in natural order: machine10 after machine9), or files named on
// the command line. Global ranks are machine-major.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pp_timeline/timeline.h"

namespace ppt {

struct LayoutRequest {
  std::string log_dir;                 // empty when only explicit files are given
  std::vector<std::string> files;      // explicit files, in rank order
  std::vector<int> devices;            // local indices to keep; empty keeps all
};

struct Layout {
  std::vector<SourceFile> files;       // in global rank order
  std::vector<std::string> machines;   // machine names by index
  std::vector<std::string> notes;      // things the user should know (ignored files)
};

// Either a layout or one error line for the user (missing directory, no
// workerlog files, ...). Never throws for bad input.
struct LayoutResult {
  std::optional<Layout> layout;
  std::string error;
  bool usage_error = false;  // the request itself is wrong (a missing path), not the logs
};

LayoutResult discover_layout(const LayoutRequest& request);

// "machine2" < "machine10"; digits compare by value, the rest byte-wise.
bool natural_less(const std::string& a, const std::string& b);

// The i of "workerlog.<i>" or "workerlog.<i>.gz"; -1 for any other name.
int workerlog_index(const std::string& file_name);

}  // namespace ppt
