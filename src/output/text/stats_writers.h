// The reports of `stats` and `diff`: an aligned table for a terminal, a
// Markdown document for a CI comment, and JSON with stable keys (documented in
// docs/stats.md). Writers take a const Stats& or const Diff& and decide
// nothing: every number comes from stats.h / diff.h.
//
// The JSON is stats_json.h's (included here for the commands that write
// every format).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/diff.h"
#include "analysis/stats.h"
#include "output/text/stats_json.h"
#include "output/text/text_style.h"

namespace ppt {

std::string format_stats_text(const Stats& stats, const TextStyle& style = {});
std::string format_stats_markdown(const Stats& stats);
std::string format_diff_text(const Diff& diff, const TextStyle& style = {});
std::string format_diff_markdown(const Diff& diff);

// The same sections as the Markdown, as escaped HTML fragments (a <section>)
// for the report page (html_report.h).
std::string format_stats_html(const Stats& stats);
std::string format_diff_html(const Diff& diff);

}  // namespace ppt
