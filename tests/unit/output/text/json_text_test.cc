// JsonObjectText / JsonArrayText write what nlohmann::json's dump() writes
// for the same document, byte for byte: random documents are written both
// ways, members given in a shuffled order (and some keys twice) so that the
// key order and "the last value wins" are the writer's to get right.
#include "output/text/json_text.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

namespace ppt {
namespace {

using nlohmann::json;

const char* const kKeys[] = {"a", "b", "ab", "a_b", "B", "zeta", "time_us", "time", "_", "x1", "x10", "x2"};

json random_scalar(std::mt19937_64& rng) {
  switch (rng() % 9) {
    case 0: return nullptr;
    case 1: return rng() % 2 == 0;
    case 2: return static_cast<int64_t>(rng()) >> (rng() % 64);
    case 3: return static_cast<uint32_t>(rng());
    case 4: return std::ldexp(static_cast<double>(static_cast<int64_t>(rng() % 2000001) - 1000000), -int(rng() % 20));
    case 5: return static_cast<double>(static_cast<int64_t>(rng() % 10'000'000'000)) / 1000.0;  // microseconds
    case 6: {
      const double special[] = {0.0,  -0.0,   1e300,   -1e-300,      1e15,
                                1e16, 0.0001, 0.00001, std::nan(""), std::numeric_limits<double>::infinity()};
      return special[rng() % std::size(special)];
    }
    case 7: return std::string("plain");
    default: {
      std::string s;
      const size_t n = rng() % 12;
      for (size_t i = 0; i < n; ++i) s += static_cast<char>(rng() % 256);  // any bytes: quotes, controls, bad UTF-8
      return s;
    }
  }
}

json random_doc(std::mt19937_64& rng, int depth) {
  const int kind = depth > 3 ? 2 : static_cast<int>(rng() % 3);
  if (kind == 2) return random_scalar(rng);
  const size_t n = rng() % 6;
  if (kind == 0) {
    json arr = json::array();
    for (size_t i = 0; i < n; ++i) arr.push_back(random_doc(rng, depth + 1));
    return arr;
  }
  json obj = json::object();
  for (size_t i = 0; i < n; ++i) obj[kKeys[rng() % std::size(kKeys)]] = random_doc(rng, depth + 1);
  return obj;
}

// `doc` written piece by piece, an object's members shuffled, with a
// decoy value first under each key (which the later one must replace).
std::string write(const json& doc, JsonTextStyle& style, int depth, std::mt19937_64& rng) {
  if (doc.is_object()) {
    JsonObjectText obj(style, depth);
    std::vector<std::pair<std::string, const json*>> members;
    for (const auto& [key, value] : doc.items()) members.emplace_back(key, &value);
    std::shuffle(members.begin(), members.end(), rng);
    for (const auto& [key, value] : members) {
      if (rng() % 3 == 0) obj.add(key, "decoy");
    }
    for (const auto& [key, value] : members) obj.add_text(key, write(*value, style, depth + 1, rng));
    return obj.finish();
  }
  if (doc.is_array()) {
    JsonArrayText arr(style, depth);
    for (const json& item : doc) arr.add_text(write(item, style, depth + 1, rng));
    return arr.finish();
  }
  if (doc.is_number_integer() && rng() % 2 == 0) return style.integer(doc.get<int64_t>());
  return style.text(doc, depth);
}

TEST_CASE("JSON text written member by member is nlohmann's dump of the same document") {
  std::mt19937_64 rng(20261207);
  for (int indent : {1, 2, 4, -1}) {
    JsonTextStyle style(indent);
    for (int i = 0; i < 2000; ++i) {
      const json doc = random_doc(rng, 0);
      const std::string want = doc.dump(indent, ' ', false, json::error_handler_t::replace);
      const std::string got = write(doc, style, 0, rng);
      INFO("indent " << indent << ", document " << i);
      REQUIRE(got == want);
    }
  }
}

TEST_CASE("An object's members come out in key order, a key given twice with its last value") {
  JsonTextStyle style(1);
  JsonObjectText obj(style, 0);
  obj.add("time_us", 2.5);
  obj.add("b", "x");
  obj.add_integer("a", -3);
  obj.add("b", nullptr);
  obj.add("time", true);
  CHECK(obj.finish() == "{\n \"a\": -3,\n \"b\": null,\n \"time\": true,\n \"time_us\": 2.5\n}");
  JsonObjectText empty(style, 2);
  CHECK(empty.finish() == "{}");
}

TEST_CASE("A document's suffix follows its closing bracket, in the one allocation") {
  JsonTextStyle style(1);
  JsonObjectText obj(style, 0);
  obj.add("b", 1);
  obj.add("a", "x");
  const std::string text = obj.finish("\n");
  CHECK(text == "{\n \"a\": \"x\",\n \"b\": 1\n}\n");
  // Room was made for the suffix: no second allocation to append it.
  CHECK(text.capacity() < 2 * text.size());
  JsonObjectText empty(style, 0);
  CHECK(empty.finish("\n") == "{}\n");
}

}  // namespace
}  // namespace ppt
