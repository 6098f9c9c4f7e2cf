// The JSON of `stats --json` and `diff --json` with stable keys (documented
// in docs/stats.md; renaming one is a schema change), and reading the
// former back: parse_stats_json() is what `diff` does with a stored
// baseline, so the writer and the reader live here together and share their
// key names.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/diff.h"
#include "analysis/stats.h"

namespace ppt {

// `time_origin_ns` is subtracted from the absolute times in the JSON (the
// same origin as the trace: Timeline::origin_ns). `before_suggestions`, when
// set, is called before `stats.suggestions` and `suggestion_warnings` are
// read, the fields before them written: it may finish them meanwhile
// (LaterSuggestions).
std::string format_stats_json(const Stats& stats, int64_t time_origin_ns = 0,
                              const std::function<void()>& before_suggestions = {});
// How that JSON rounds ratios (6 decimals) and percentages or microseconds
// (3); other JSON outputs (batch's index.json) use the same.
double round6(double v);
double round3(double v);
// One entry of its "steps" array, on one line (no newline): what `watch`
// writes per completed step, so the two cannot drift apart.
std::string format_step_json(const StepStats& step, int64_t time_origin_ns);

// Reads what format_stats_json() wrote. On failure returns nullopt and sets
// `error` to one line (without the file name); `bad_value` (when given) says
// whether it is a value outside its schema's range (docs/schemas/stats.v2.json:
// the types, integers, ranges and finiteness are checked before any value is
// converted), which the command line treats as a usage error.
std::optional<Stats> parse_stats_json(std::string_view text, std::string* error, bool* bad_value = nullptr);

// The first bytes of a file tell a stats JSON from a log.
bool looks_like_json(std::string_view head);

std::string format_diff_json(const Diff& diff);
// Several runs against one baseline (diff A B C...): {"schema", "baseline",
// "gate_failed", "diffs": [each as format_diff_json writes it]}.
std::string format_diff_set_json(const std::vector<Diff>& diffs);

// The JSON's "schema" key; docs/schemas/ holds the JSON Schema of each
// (stats.v2.json, diff.v2.json). /2 added the step periods, throughput,
// the selection and the short ranks; a /1 stats file still reads back (its
// periods follow from the steps' starts).
inline constexpr std::string_view kStatsSchema = "pp-timeline-stats/2";
inline constexpr std::string_view kStatsSchemaV1 = "pp-timeline-stats/1";
inline constexpr std::string_view kDiffSchema = "pp-timeline-diff/2";
// diff with more than two runs: each of B, C... against A.
inline constexpr std::string_view kDiffSetSchema = "pp-timeline-diff-set/2";

}  // namespace ppt
