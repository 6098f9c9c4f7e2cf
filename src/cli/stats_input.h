// What `stats` and `diff` share on the command line: a run read through the
// driver with its stats (or, for diff, a stats JSON: app/stats_input.h), its
// problems reported, and the report's colour decision.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "output/outputs.h"
#include "reporter.h"

namespace ppt {
struct DriverRequest;    // app/driver.h
struct StatsInput;       // app/stats_input.h
class LaterSuggestions;  // app/driver.h
}  // namespace ppt

namespace ppt::cli {

// Runs the driver with stats on `request` and reports the load on `say`
// (`label`, "A: " or "B: ", before messages about one of two runs). Returns
// 0, or the exit code after saying why not (a bad path: 2; nothing usable,
// --strict: 1).
// `summary`: print the summary line when problems were shown (stats prints
// it itself, with the files it wrote, when it writes files).
// `later`: with `request.suggest`, the suggestions' replays are finished by
// it, started here once the run is in `out` (which must stay where it is
// until later->finish()); out->stats has none until then.
int load_stats_input(DriverRequest request, const Reporter& say, std::string_view label, bool draws, StatsInput* out,
                     bool summary = true, LaterSuggestions* later = nullptr);

// A directory or log file is read as logs; a file that starts with '{' as
// the output of `stats --json` (app/stats_input.h decides which).
// `request.input` is replaced by `path`.
int load_stats_or_json(const std::string& path, DriverRequest request, const Reporter& say, std::string_view label,
                       StatsInput* out);

// The -o of stats and diff (OutputCommand::kStats, kDiff): each file in the
// format of its extension; "-", or no -o at all, is the report on standard
// output in the format --json or --markdown choose (text by default). With
// files only, a format flag is the old spelling of one file's format
// (`--json -o base.json`) and must name the format of one of them; else it
// is a usage error, like a bad extension. Returns "" or the message.
std::string resolve_report_outputs(OutputCommand command, const std::vector<std::string>& paths, bool json,
                                   bool markdown, std::vector<OutputSpec>* out);

// `--color auto|always|never` for a report written to stdout.
bool use_color(const std::string& when, bool to_stdout);

}  // namespace ppt::cli
