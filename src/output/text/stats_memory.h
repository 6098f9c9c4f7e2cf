// The memory section of the stats report: each stage's peak, static part
// and activation from the [Pipeline details] samples, whether it fits a
// device (--device-memory), and the summary's line. Internal to output/text.
#pragma once

#include "analysis/stats.h"
#include "output/text/stats_parts.h"

namespace ppt::stats_text {

// The summary's "memory" line and the stages' memory table; nothing without
// samples.
void fill_memory(const Stats& st, StatsParts& p);

}  // namespace ppt::stats_text
