#include "util/json_values.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <limits>

namespace ppt {
namespace {

using nlohmann::json;

// Hand-written: no JSON Schema validator is among the project's libraries,
// and this is the small part of one that guards conversions.
class Checker {
 public:
  explicit Checker(const json& root) : root_(root) {}

  // "" or why `v` (at `path`) is not allowed by `s`.
  std::string check(const json& v, const json& s, const std::string& path, int depth = 0) const {
    if (depth > 64) return fmt::format("{}: nested too deeply", where(path));
    if (!s.is_object()) return "";
    if (auto r = s.find("$ref"); r != s.end() && r->is_string()) {
      const json* target = resolve(r->get<std::string>());
      if (!target) return "";
      if (std::string e = check(v, *target, path, depth + 1); !e.empty()) return e;
    }
    if (auto o = s.find("oneOf"); o != s.end() && o->is_array()) {
      std::string first;
      bool any = false;
      for (const json& alt : *o) {
        std::string e = check(v, alt, path, depth + 1);
        if (e.empty())
          any = true;
        else if (first.empty())
          first = e;
      }
      if (!any) return first;
    }
    if (auto c = s.find("const"); c != s.end() && v != *c) {
      return fmt::format("{}: must be {}", where(path), c->dump());
    }
    if (auto t = s.find("type"); t != s.end() && t->is_string()) {
      if (std::string e = check_type(v, t->get<std::string>(), s, path); !e.empty()) return e;
    }
    if (v.is_number()) {
      if (std::string e = check_number(v, s, path); !e.empty()) return e;
    }
    if (v.is_object()) {
      auto props = s.find("properties");
      for (auto it = v.begin(); it != v.end(); ++it) {
        std::string sub = path.empty() ? it.key() : path + "." + it.key();
        if (props != s.end() && props->is_object() && props->contains(it.key())) {
          if (std::string e = check(it.value(), (*props)[it.key()], sub, depth + 1); !e.empty()) return e;
        } else if (std::string e = check_any(it.value(), sub, depth + 1); !e.empty()) {
          return e;
        }
      }
    } else if (v.is_array()) {
      auto items = s.find("items");
      for (size_t i = 0; i < v.size(); ++i) {
        std::string sub = fmt::format("{}[{}]", path, i);
        if (items != s.end()) {
          if (std::string e = check(v[i], *items, sub, depth + 1); !e.empty()) return e;
        } else if (std::string e = check_any(v[i], sub, depth + 1); !e.empty()) {
          return e;
        }
      }
    }
    return "";
  }

 private:
  static std::string where(const std::string& path) { return path.empty() ? "the document" : path; }

  // Values the schema says nothing of: still finite and within the limit.
  std::string check_any(const json& v, const std::string& path, int depth) const {
    static const json kNothing = json::object();
    return check(v, kNothing, path, depth);
  }

  const json* resolve(const std::string& ref) const {
    constexpr std::string_view kDefs = "#/$defs/";
    if (ref.rfind(kDefs, 0) != 0) return nullptr;
    auto defs = root_.find("$defs");
    if (defs == root_.end()) return nullptr;
    auto it = defs->find(ref.substr(kDefs.size()));
    return it == defs->end() ? nullptr : &*it;
  }

  static bool integral(const json& v) {
    if (v.is_number_integer()) return true;
    if (!v.is_number_float()) return false;
    double d = v.get<double>();
    return std::isfinite(d) && std::trunc(d) == d;
  }

  static std::string check_type(const json& v, const std::string& type, const json& s, const std::string& path) {
    bool ok = type == "object"    ? v.is_object()
              : type == "array"   ? v.is_array()
              : type == "string"  ? v.is_string()
              : type == "boolean" ? v.is_boolean()
              : type == "null"    ? v.is_null()
              : type == "number"  ? v.is_number()
              : type == "integer" ? integral(v)
                                  : true;
    if (!ok) return fmt::format("{}: {} is not {} {}", where(path), shown(v), type == "integer" ? "an" : "a", type);
    if (type == "integer" && !s.contains("maximum")) {
      double d = v.get<double>();
      if (d < std::numeric_limits<int32_t>::min() || d > std::numeric_limits<int32_t>::max()) {
        return fmt::format("{}: {} is out of range (a 32-bit integer)", where(path), shown(v));
      }
    }
    return "";
  }

  static std::string check_number(const json& v, const json& s, const std::string& path) {
    // Integers compare exactly (a 64-bit epoch time does not fit a double).
    if (v.is_number_integer()) {
      for (const char* key : {"minimum", "maximum", "exclusiveMinimum"}) {
        auto b = s.find(key);
        if (b == s.end() || !b->is_number_integer()) continue;
        bool fail = false;
        if (v.is_number_unsigned() && b->is_number_unsigned()) {
          uint64_t x = v.get<uint64_t>(), y = b->get<uint64_t>();
          fail = key[0] == 'm' && key[1] == 'i' ? x < y : key[0] == 'm' ? x > y : x <= y;
        } else if (!v.is_number_unsigned() && !b->is_number_unsigned()) {
          int64_t x = v.get<int64_t>(), y = b->get<int64_t>();
          fail = key[0] == 'm' && key[1] == 'i' ? x < y : key[0] == 'm' ? x > y : x <= y;
        } else {
          // One of them beyond int64: the unsigned one is the larger.
          bool v_larger = v.is_number_unsigned();
          fail = key[1] == 'a' ? v_larger : !v_larger;
        }
        if (fail) return bound_error(path, v, key, *b);
      }
      if (!s.contains("minimum") && !s.contains("maximum")) {
        double d = v.get<double>();
        if (std::fabs(d) > kJsonNumberLimit) return fmt::format("{}: {} is out of range", where(path), shown(v));
      }
      return "";
    }
    double d = v.get<double>();
    if (!std::isfinite(d)) return fmt::format("{}: {} is not a finite number", where(path), shown(v));
    if (auto b = s.find("minimum"); b != s.end() && b->is_number() && d < b->get<double>()) {
      return bound_error(path, v, "minimum", *b);
    }
    if (auto b = s.find("maximum"); b != s.end() && b->is_number() && d > b->get<double>()) {
      return bound_error(path, v, "maximum", *b);
    }
    if (auto b = s.find("exclusiveMinimum"); b != s.end() && b->is_number() && d <= b->get<double>()) {
      return bound_error(path, v, "exclusiveMinimum", *b);
    }
    if (std::fabs(d) > kJsonNumberLimit && !s.contains("maximum")) {
      return fmt::format("{}: {} is out of range (at most {:g} in magnitude)", where(path), shown(v), kJsonNumberLimit);
    }
    return "";
  }

  static std::string bound_error(const std::string& path, const json& v, std::string_view key, const json& bound) {
    std::string_view what = key == "minimum"   ? "is below the minimum"
                            : key == "maximum" ? "is above the maximum"
                                               : "must be above";
    return fmt::format("{}: {} {} {}", where(path), shown(v), what, bound.dump());
  }

  static std::string shown(const json& v) {
    std::string text = v.dump(-1, ' ', false, json::error_handler_t::replace);
    if (text.size() > 40) text = text.substr(0, 40) + "...";
    return text;
  }

  const json& root_;
};

}  // namespace

std::string check_json_values(const nlohmann::json& doc, const nlohmann::json& schema) {
  return Checker(schema).check(doc, schema, "");
}

}  // namespace ppt
