#include "commands.h"

namespace ppt::cli {

std::string_view exit_status_text(std::string_view command) {
  if (command == "stats") {
    return "Exit status: 0 done; 1 nothing usable found, --strict and input problems, or the report could\n"
           "not be written; 2 usage error (an output that is an input among them); 3 internal error.";
  }
  if (command == "diff") {
    return "Exit status: 0 done (and the gate, if any, passed); 1 B is slower than --fail-if-slower allows,\n"
           "an input has nothing usable, or an output failed; 2 usage error (bad option, missing path, an output\n"
           "that is an input); 3 internal error.";
  }
  if (command == "report") {
    return "Exit status: 0 done; 1 nothing usable found, --strict and input problems, or the page could\n"
           "not be written; 2 usage error (an output that is an input among them); 3 internal error.";
  }
  if (command == "batch") {
    return "Exit status: 0 every artifact converted; 1 one or more failed (each is listed, with its error, in\n"
           "index.json and summary.md; the others are converted all the same), or a run is slower than the\n"
           "baseline past --fail-if-slower; 2 usage error (an --out that is an input among them); 3 internal "
           "error.\n"
           "A reused --out: the run folders an earlier batch wrote there are removed; nothing else is.";
  }
  if (command == "watch") {
    return "Exit status: 0 done; 1 an alert fired, no log was found, or an output could not be written;\n"
           "2 usage error; 3 internal error.";
  }
  if (command == "whatif") {
    return "Exit status: 0 done; 1 nothing usable found, --strict and input problems, or an output could\n"
           "not be written; 2 usage error; 3 internal error.";
  }
  return "Exit status: 0 done; 1 input problems under --strict, nothing usable found, or an output\n"
         "could not be written; 2 usage error (bad option, missing path, an output that is an input);\n"
         "3 internal error (a bug: one line 'pp-timeline: internal error: ...', no output left behind).";
}

}  // namespace ppt::cli
