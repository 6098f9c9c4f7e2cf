// How the terminal reports of `stats` and `diff` (stats_writers.h) are
// written: colour and how many rows the long tables keep. Apart from the
// writers so that the report's parts (stats_parts.h) need not include them.
#pragma once

#include <cstddef>

namespace ppt {

struct TextStyle {
  bool color = false;          // ANSI colours (the CLI sets it on a TTY)
  size_t max_step_rows = 50;   // more steps: the slowest ones only
  size_t max_rank_rows = 128;  // more ranks: the ones with the largest bubbles
};

}  // namespace ppt
