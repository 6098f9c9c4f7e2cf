// JSON text written member by member, equal byte for byte to what
// nlohmann::json's dump(indent, ' ', false, replace) gives for the same
// document, without building the document first.
//
// Why by hand: the stats JSON of a 64-rank run is 0.75 MB of small objects
// (a step's critical path alone is hundreds of seven-field hops), and
// building it as nlohmann's tree (a std::map node and a key string per
// member, each freed after) cost three times the dumping. Here a member is
// its key and its value's text: numbers and strings are still written by the
// library's own serializer (its float format, its UTF-8 replacement), and an
// object's members are put in key order when it is finished, the order of
// the library's std::map, so the text is the same.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ppt {

// The serializer and the indentation a document's pieces share.
class JsonTextStyle {
 public:
  // `indent`: spaces per level, as dump()'s; -1 for the compact form.
  explicit JsonTextStyle(int indent);
  ~JsonTextStyle();
  JsonTextStyle(const JsonTextStyle&) = delete;
  JsonTextStyle& operator=(const JsonTextStyle&) = delete;

  bool pretty() const { return indent_ >= 0; }
  int indent() const { return indent_; }

  // `value`'s text as it is dumped at nesting `depth` (0: the document).
  std::string text(const nlohmann::json& value, int depth);
  std::string integer(int64_t v) const;

 private:
  int indent_;
  std::string scratch_;
  struct Serializer;
  std::unique_ptr<Serializer> serializer_;
};

// An object at nesting `depth`: members in any order, written in key order.
// A key given twice keeps its last value, as the library's assignment does.
class JsonObjectText {
 public:
  JsonObjectText(JsonTextStyle& style, int depth) : style_(&style), depth_(depth) { members_.reserve(16); }

  JsonTextStyle& style() const { return *style_; }
  int depth() const { return depth_; }

  // A member whose value is already text at depth() + 1.
  void add_text(std::string_view key, std::string text) { members_.emplace_back(key, std::move(text)); }
  void add(std::string_view key, const nlohmann::json& value) { add_text(key, style_->text(value, depth_ + 1)); }
  void add_integer(std::string_view key, int64_t v) { add_text(key, style_->integer(v)); }

  // The object's text, then `suffix` (a document's final newline, without
  // a copy of the whole to add it).
  std::string finish(std::string_view suffix = {});

 private:
  using Member = std::pair<std::string_view, std::string>;
  JsonTextStyle* style_;
  int depth_;
  std::vector<Member> members_;
};

// An array at nesting `depth`, of elements already text at depth + 1.
class JsonArrayText {
 public:
  JsonArrayText(JsonTextStyle& style, int depth) : style_(&style), depth_(depth) {}

  void add_text(std::string text) { items_.push_back(std::move(text)); }
  std::string finish();

 private:
  JsonTextStyle* style_;
  int depth_;
  std::vector<std::string> items_;
};

}  // namespace ppt
