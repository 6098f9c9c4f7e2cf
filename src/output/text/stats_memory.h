// The memory section of the stats report: each stage's peak, static part
// and activation from the [Pipeline details] samples, whether it fits a
// device (--device-memory), and the summary's line. Internal to output/text.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "analysis/stats.h"
#include "output/text/stats_table.h"

namespace ppt::stats_text {

// The summary's "memory" line (appended to `summary`), the stages' memory
// table and its note (stats_parts.h's StatsParts::memory, memory_note);
// nothing without samples.
void fill_memory(const Stats& st, std::vector<std::pair<std::string, std::string>>& summary, Table& table,
                 std::string& note);

}  // namespace ppt::stats_text
