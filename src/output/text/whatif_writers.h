// The report of `pp-timeline whatif`: a table of the measured, replayed and
// predicted runs with the assumptions, and its JSON (docs/schemas/whatif.v1.json,
// described in docs/whatif.md). Writers decide nothing: every number is
// analysis/whatif.h's.
#pragma once

#include <string>

#include "analysis/whatif.h"

namespace ppt {

std::string format_whatif_text(const WhatifReport& report);

// One object: "measured" and "replayed" (each one outcome), "predicted" (an
// array of outcomes, ranked, always an array), "assumptions" (strings) and
// "model" (the fitted costs).
std::string format_whatif_json(const WhatifReport& report);

}  // namespace ppt
