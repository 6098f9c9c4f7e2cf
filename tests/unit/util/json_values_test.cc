// Checking a JSON document's values against a schema before converting them.
#include "util/json_values.h"

#include <catch2/catch.hpp>

namespace ppt {
namespace {

using nlohmann::json;

const json kSchema = json::parse(R"({
  "type": "object",
  "properties": {
    "pp_degree": {"type": "integer"},
    "origin": {"type": "integer", "minimum": 0, "maximum": 9223372036854775807},
    "ratio": {"$ref": "#/$defs/ratio"},
    "period": {"oneOf": [{"type": "number", "exclusiveMinimum": 0}, {"type": "null"}]},
    "steps": {"type": "array", "items": {"type": "object", "properties": {"time_us": {"$ref": "#/$defs/us"}}}},
    "schema": {"const": "s/2"}
  },
  "$defs": {"ratio": {"type": "number", "minimum": 0, "maximum": 1},
            "us": {"type": "number", "minimum": 0, "maximum": 1e15}}
})");

std::string check(const char* doc) { return check_json_values(json::parse(doc), kSchema); }

TEST_CASE("values the schema allows pass", "[json_values]") {
  CHECK(check(R"({"pp_degree": 4, "origin": 1697793307213000000, "ratio": 0.25, "period": null,
                  "steps": [{"time_us": 12.5}], "schema": "s/2", "other": "text"})") == "");
  CHECK(check(R"({"pp_degree": 4.0})") == "");  // an integral number is an integer
}

TEST_CASE("an integer field holding 1e308, a fraction or more than 32 bits is refused by name", "[json_values]") {
  CHECK(check(R"({"pp_degree": 1e308})") == "pp_degree: 1e+308 is out of range (a 32-bit integer)");
  CHECK(check(R"({"pp_degree": 2.5})") == "pp_degree: 2.5 is not an integer");
  CHECK(check(R"({"pp_degree": 2147483648})") == "pp_degree: 2147483648 is out of range (a 32-bit integer)");
  CHECK(check(R"({"pp_degree": "4"})") == "pp_degree: \"4\" is not an integer");
}

TEST_CASE("a 64-bit integer is compared exactly against its bounds", "[json_values]") {
  CHECK(check(R"({"origin": 9223372036854775807})") == "");
  CHECK(check(R"({"origin": 9223372036854775808})") != "");
  CHECK(check(R"({"origin": -1})") != "");
}

TEST_CASE("numbers out of their range, infinite or beyond 9e15 are refused with the path", "[json_values]") {
  CHECK(check(R"({"ratio": 1.5})") == "ratio: 1.5 is above the maximum 1");
  CHECK(check(R"({"period": 0})").find("period: ") == 0);
  CHECK(check(R"({"steps": [{"time_us": 1}, {"time_us": 1e308}]})") ==
        "steps[1].time_us: 1e+308 is above the maximum 1e+15");
  CHECK(check(R"({"steps": [{"time_us": -1}]})") == "steps[0].time_us: -1 is below the minimum 0");
  CHECK(check(R"({"other": 1e300})") == "other: 1e+300 is out of range (at most 9e+15 in magnitude)");
  CHECK(check(R"({"other": [1, {"deep": 1e16}]})") ==
        "other[1].deep: 1e+16 is out of range (at most 9e+15 in magnitude)");
}

TEST_CASE("a constant must match", "[json_values]") {
  CHECK(check(R"({"schema": "s/3"})") == "schema: must be \"s/2\"");
}

}  // namespace
}  // namespace ppt
