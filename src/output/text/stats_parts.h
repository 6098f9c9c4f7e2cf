// The parts of the stats report (stats_writers.h), measured once and
// written in every format: the title, the summary's lines, the tables of
// steps, ranks, stages, job types, stragglers, the slowest step's critical
// path and the stages' memory (stats_memory.h), with their notes.
// Internal to output/text.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "analysis/stats.h"
#include "output/text/stats_table.h"
#include "output/text/text_style.h"

namespace ppt::stats_text {

struct StatsParts {
  std::string title;
  std::vector<std::pair<std::string, std::string>> summary;  // label, text (plain)
  std::vector<SummarySpan> painted;                          // what a terminal colours in it
  Table steps, ranks, stages, types, stragglers, path, memory;
  std::string steps_note, ranks_note, stragglers_note, path_title, path_note, memory_note;
  bool show_stages = false;
};

StatsParts build_stats_parts(const Stats& st, const TextStyle& style);

}  // namespace ppt::stats_text
