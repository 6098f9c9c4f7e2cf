// Everything pp-timeline says on stderr goes through one Reporter, by one
// rule: "pp-timeline[ <command>]: <severity>: text", where <command> is the
// subcommand that runs (none for the conversion) and <severity> is error,
// warning or note. The summary line and the input problems are data
// (summary.h) printed as they come. Every line is terminal text
// (util/escape.h): what the input put in a message (names, types, log text)
// cannot move the cursor, retitle the window or start a line of its own.
//
// --quiet is a filter on what a message is, never on how it looks: it keeps
// errors, the summary and the count of each kind of input problem (errors
// and warnings), and drops notes (also the counts of kinds that are notes,
// such as clock_offset), progress and the examples of each problem.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "output/text/summary.h"
#include "util/phase_time.h"

namespace ppt {
struct DriverResult;  // app/driver.h
}  // namespace ppt

namespace ppt::cli {

class Reporter {
 public:
  // `command`: "stats", "diff", ...; "" for the conversion.
  explicit Reporter(std::string_view command = {}, bool quiet = false);

  void error(std::string_view text) const;
  void warning(std::string_view text) const;
  void note(std::string_view text) const;  // not under --quiet
  // "pp-timeline[ <command>]: text": what was done ("wrote ...", a run's
  // progress); not under --quiet.
  void info(std::string_view text) const;
  // A line that carries its own prefix (the summary); always printed.
  void line(std::string_view text) const;
  // The input problems: each example (not under --quiet), then each kind's
  // count (under --quiet, those of errors and warnings).
  void diagnostics(const std::vector<DiagnosticLine>& lines) const;
  // Whether diagnostics() prints `line`.
  bool shows(const DiagnosticLine& line) const;
  // "pp-timeline: timings: layout 0.001 s, ..., total 1.290 s"
  void timings(const std::vector<PhaseTime>& phases) const;

  // What the load phase left to say: the layout's notes, the input problems,
  // and why the run stopped, if it did. `label` ("A: ", "B: ") goes before
  // messages about one of two inputs. `draws`: the command draws the jobs
  // (its "no job" message says so: every trace and picture does). Returns the exit status for a failure,
  // or 0.
  int load(const DriverResult& result, bool draws, std::string_view label = {}) const;

  // After the outputs are written: a log that could not be read (wholly or
  // to its end) makes the run partial, as for grep or rsync: says so and
  // returns 1; else 0.
  int unread_status(const Timeline& timeline) const;

  const std::string& prefix() const { return prefix_; }
  bool quiet() const { return quiet_; }

 private:
  void print(std::string_view severity, std::string_view text) const;

  std::string prefix_;
  bool quiet_;
};

// "44.5 MB", "3.2 KB", "12 B": an output's size in the summary.
std::string format_size(size_t bytes);

// main()'s last resort: "pp-timeline: internal error: <what>".
void report_internal_error(std::string_view what);

}  // namespace ppt::cli
