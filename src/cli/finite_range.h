// The range check of every floating-point option. CLI::Range compares with
// `<` and `>`, which NaN passes (`--max-ratio nan` switched the archive bomb
// limit off, `--fail-if-slower nan` the CI gate): this one also refuses NaN
// and the infinities, with CLI::Range's own description and message, so the
// help and the usage errors read as before (parse_errors.cc).
#pragma once

#include <CLI/CLI.hpp>

#include <cmath>
#include <sstream>
#include <string>

namespace ppt::cli {

inline CLI::Validator finite_range(double lo, double hi) {
  std::stringstream description;
  description << CLI::detail::type_name<double>() << " in [" << lo << " - " << hi << "]";
  return CLI::Validator(
      [lo, hi](std::string& input) {
        double v = 0;
        bool converted = CLI::detail::lexical_cast(input, v);
        if (!converted || !std::isfinite(v) || v < lo || v > hi) {
          return "Value " + input + " not in range " + std::to_string(lo) + " to " + std::to_string(hi);
        }
        return std::string();
      },
      description.str());
}

}  // namespace ppt::cli
