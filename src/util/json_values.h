// Checks the values of a JSON document against a JSON Schema (draft 2020-12)
// before a reader converts them: the types, integer-ness, ranges and
// constants a schema states, through "properties", "items", "$ref" (to
// "#/$defs/...") and "oneOf". A document read back (a `stats --json`
// baseline) may be crafted; converting 1e308 to an int is undefined
// behaviour, so every number is checked here first.
//
// Beyond what the schema says, every number must be finite and within
// +-9e15 unless the schema gives a maximum, and an "integer" without a
// "maximum" within the 32-bit signed range: the readers convert integers to
// 32-bit fields unless the schema says that the field is wider. "required" and "additionalProperties" are not
// checked (a reader takes what it knows and defaults the rest).
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace ppt {

inline constexpr double kJsonNumberLimit = 9e15;  // microseconds whose nanoseconds fit int64

// "" when every value of `doc` is allowed by `schema`, else
// "<field>: <why>", the field as a path ("schedule.pp_degree",
// "steps[3].time_us").
std::string check_json_values(const nlohmann::json& doc, const nlohmann::json& schema);

}  // namespace ppt
