// What a command-line mistake is told as. CLI11's messages ("The following
// argument was not expected: --log-dri", "Value 3% not in range 0.000000 to
// 1000000.000000") name neither the command nor what to type instead; this
// turns each into the house form, one line:
//
//   pp-timeline[ <command>]: error: unknown option --log-dri; did you mean --log-dir?
//   pp-timeline diff: error: --fail-if-slower 3%: give the percent as a plain number: --fail-if-slower 3 is 3 %
//
// An unknown option is matched against the command's own options (the
// closest by edit distance, or the one it is a prefix of), then against the
// other commands' (it may belong to another one); a bad or missing value is
// told with the form the option takes.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <string_view>

#include "util/edit_distance.h"

namespace ppt::cli {

using ppt::edit_distance;

// The one error line for `error`, thrown while `app` parsed `argc`/`argv`;
// the command is the subcommand being parsed when it was thrown.
std::string parse_error_line(CLI::App& app, const CLI::ParseError& error, int argc, char** argv);

}  // namespace ppt::cli
