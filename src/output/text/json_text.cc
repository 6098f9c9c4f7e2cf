#include "output/text/json_text.h"

#include <fmt/format.h>

#include <algorithm>

namespace ppt {

using nlohmann::json;

struct JsonTextStyle::Serializer {
  explicit Serializer(std::string& out)
      : s(nlohmann::detail::output_adapter<char>(out), ' ', json::error_handler_t::replace) {}
  nlohmann::detail::serializer<json> s;
};

JsonTextStyle::JsonTextStyle(int indent) : indent_(indent), serializer_(std::make_unique<Serializer>(scratch_)) {}

JsonTextStyle::~JsonTextStyle() = default;

std::string JsonTextStyle::text(const json& value, int depth) {
  scratch_.clear();
  const int step = std::max(indent_, 0);
  serializer_->s.dump(value, pretty(), false, static_cast<unsigned>(step), static_cast<unsigned>(step * depth));
  return scratch_;
}

std::string JsonTextStyle::integer(int64_t v) const { return fmt::format_int(v).str(); }

namespace {

// The pieces of a container between its brackets, as dump() lays them out:
// pretty, each on its own line indented one level more than the container;
// compact, separated by commas. `size(item)` and `write(out, item)` give an
// item's length and text, so the text is allocated once; `suffix` follows
// the closing bracket (a document's newline, in the same allocation).
template <typename Item, typename Size, typename Write>
std::string join(const Item* items, size_t count, const JsonTextStyle& style, int depth, char open, char close,
                 std::string_view suffix, Size&& size, Write&& write) {
  std::string out(1, open);
  if (count == 0) {
    out += close;
    out += suffix;
    return out;
  }
  const size_t inner = style.pretty() ? static_cast<size_t>(style.indent()) * (depth + 1) : 0;
  const size_t outer = style.pretty() ? static_cast<size_t>(style.indent()) * depth : 0;
  size_t total = 2 + outer + 2 + suffix.size();
  for (size_t i = 0; i < count; ++i) total += inner + size(items[i]) + 2;
  out.reserve(total);
  if (style.pretty()) out += '\n';
  for (size_t i = 0; i < count; ++i) {
    out.append(inner, ' ');
    write(out, items[i]);
    if (i + 1 < count) out += style.pretty() ? ",\n" : ",";
  }
  if (style.pretty()) {
    out += '\n';
    out.append(outer, ' ');
  }
  out += close;
  out += suffix;
  return out;
}

}  // namespace

std::string JsonObjectText::finish(std::string_view suffix) {
  // Key order, the last of equal keys kept. An object has a few dozen
  // members at most: an insertion sort of their indices (stable, the members
  // not moved), then the last of each run of equal keys.
  uint32_t small[32];
  std::vector<uint32_t> large;
  uint32_t* order = small;
  if (members_.size() > std::size(small)) {
    large.resize(members_.size());
    order = large.data();
  }
  for (uint32_t i = 0; i < members_.size(); ++i) {
    uint32_t j = i;
    for (; j > 0 && members_[i].first < members_[order[j - 1]].first; --j) order[j] = order[j - 1];
    order[j] = i;
  }
  size_t kept = 0;
  for (size_t i = 0; i < members_.size(); ++i) {
    if (i + 1 < members_.size() && members_[order[i + 1]].first == members_[order[i]].first) continue;
    order[kept++] = order[i];
  }
  const std::string_view colon = style_->pretty() ? "\": " : "\":";
  return join(
      order, kept, *style_, depth_, '{', '}', suffix,
      [&](uint32_t i) { return members_[i].first.size() + colon.size() + 1 + members_[i].second.size(); },
      [&](std::string& out, uint32_t i) {
        out += '"';
        out += members_[i].first;  // keys are the program's own names: plain ASCII, nothing to escape
        out += colon;
        out += members_[i].second;
      });
}

std::string JsonArrayText::finish() {
  return join(
      items_.data(), items_.size(), *style_, depth_, '[', ']', {}, [](const std::string& item) { return item.size(); },
      [](std::string& out, const std::string& item) { out += item; });
}

}  // namespace ppt
