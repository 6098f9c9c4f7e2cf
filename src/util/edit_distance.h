// How far one word is from another, for the "did you mean" of a mistyped
// option (cli/parse_errors.h) or schedule name (passes/schedule.h).
#pragma once

#include <cstddef>
#include <string_view>

namespace ppt {

// Edits (insert, delete, replace one character) that turn `a` into `b`.
size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace ppt
