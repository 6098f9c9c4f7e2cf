#include "parse_errors.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <regex>
#include <vector>

namespace ppt::cli {

namespace {

// The subcommand that was being parsed (the deepest one CLI11 entered), or
// the top-level app.
CLI::App& parsed_command(CLI::App& app) {
  CLI::App* at = &app;
  for (;;) {
    std::vector<CLI::App*> subs = at->get_subcommands();
    if (subs.empty()) return *at;
    at = subs.back();
  }
}

std::string prefix_of(const CLI::App& command) {
  return command.get_parent() == nullptr ? "pp-timeline" : "pp-timeline " + command.get_name();
}

std::vector<std::string> names_of(const CLI::Option* o) {
  std::vector<std::string> names;
  for (const std::string& s : o->get_snames()) names.push_back("-" + s);
  for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
  return names;
}

// Every name of every option of `command` that a user may type (help and
// version included, hidden ones not).
std::vector<std::string> option_names(const CLI::App& command) {
  std::vector<std::string> out;
  for (const CLI::Option* o : command.get_options()) {
    if (o->get_group().empty()) continue;
    for (std::string& n : names_of(o)) out.push_back(std::move(n));
  }
  return out;
}

// The option of `command` named `name` ("--steps"), or null.
const CLI::Option* find_option(const CLI::App& command, std::string_view name) {
  for (const CLI::Option* o : command.get_options()) {
    for (const std::string& n : names_of(o)) {
      if (n == name) return o;
    }
    if (o->get_positional() && o->get_name(true) == name) return o;
  }
  return nullptr;
}

// The option `word` was meant to be: the only one it is a prefix of (3
// characters past the dashes at least), else the closest within a third of
// its length in edits (at least 2). "" when none is close.
std::string closest_option(const CLI::App& command, std::string_view word) {
  std::vector<std::string> names = option_names(command);
  std::string prefixed;
  int prefix_count = 0;
  size_t dashes = word.find_first_not_of('-');
  if (dashes != std::string_view::npos && word.size() - dashes >= 3) {
    for (const std::string& n : names) {
      if (n.size() > word.size() && n.compare(0, word.size(), word) == 0) prefixed = n, ++prefix_count;
    }
  }
  if (prefix_count == 1) return prefixed;
  std::string best;
  size_t best_distance = std::max<size_t>(2, word.size() / 3) + 1;
  for (const std::string& n : names) {
    size_t d = edit_distance(word, n);
    if (d < best_distance) best = n, best_distance = d;
  }
  return best;
}

std::string quoted_list(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + fmt::format("'{}'", items[i]);
  }
  return out;
}

std::string unknown_option(CLI::App& app, const CLI::App& command, std::string word) {
  std::string name = word.substr(0, word.find('='));
  if (std::string close = closest_option(command, name); !close.empty()) {
    return fmt::format("unknown option {}; did you mean {}?", name, close);
  }
  // An option of another command: say which.
  std::vector<std::string> owners;
  auto check = [&](const CLI::App& other) {
    if (&other == &command) return;
    if (find_option(other, name) != nullptr) owners.push_back(prefix_of(other));
  };
  check(app);
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) check(*sub);
  if (!owners.empty()) {
    return fmt::format("unknown option {}: it is an option of {}, not of '{}'", name, quoted_list(owners),
                       prefix_of(command));
  }
  return fmt::format("unknown option {}; '{} --help' lists the options", name, prefix_of(command));
}

std::string extras(CLI::App& app, const CLI::App& command, const std::string& message) {
  // "The following argument(s) was/were not expected: A B" (CLI11 joins them
  // in the order given).
  std::vector<std::string> args;
  size_t colon = message.find(": ");
  std::string rest = colon == std::string::npos ? "" : message.substr(colon + 2);
  for (size_t at = 0; at < rest.size();) {
    size_t space = rest.find(' ', at);
    if (space == std::string::npos) space = rest.size();
    if (space > at) args.push_back(rest.substr(at, space - at));
    at = space + 1;
  }
  for (const std::string& a : args) {
    if (a.size() > 1 && a[0] == '-') return unknown_option(app, command, a);
  }
  if (args.empty()) return "unexpected arguments";
  return fmt::format("unexpected argument{} {}; '{} --help' says what it takes", args.size() == 1 ? "" : "s",
                     quoted_list(args), prefix_of(command));
}

bool is_percent_option(std::string_view name) {
  static const char* const kPercent[] = {"--fail-if-slower", "--alert-if-slower", "--straggler-margin", "--noise",
                                         "--rank-change"};
  return std::any_of(std::begin(kPercent), std::end(kPercent), [&](const char* p) { return name == p; });
}

// What `option` takes: a phrase ("a whole number"; may be empty) and an
// example of it ("--threads 4").
struct Form {
  std::string noun;
  std::string example;
  // "a whole number, e.g. --threads 4", or the example alone.
  std::string text() const { return noun.empty() ? example : noun + ", e.g. " + example; }
};

Form form_of(const CLI::App& command, const CLI::Option& option, std::string_view name) {
  if (is_percent_option(name)) return {"a percent as a plain number", fmt::format("{} 3 (3 %)", name)};
  if (name == "--steps" && command.get_name() != "watch") {
    return {"a range of steps A:B (A to B included), A:, :B or A", "--steps 10:20"};
  }
  if (name == "--devices") return {"local indices separated by commas", "--devices 0,2,3"};
  if (name == "--device-memory") return {"a size with its unit", "--device-memory 80GiB"};
  std::string type = option.get_type_name();
  if (size_t open = type.find('{'); open != std::string::npos) {
    std::string list = type.substr(open + 1, type.find('}', open) - open - 1);
    std::string first = list.substr(0, list.find(','));
    std::replace(list.begin(), list.end(), ',', '|');
    return {fmt::format("one of {}", list), fmt::format("{} {}", name, first)};
  }
  std::string base = type.substr(0, type.find(':'));
  if (base == "UINT" || base == "INT" || base == "NUMBER") return {"a whole number", fmt::format("{} 4", name)};
  if (base == "FLOAT") return {"a number", fmt::format("{} 2.5", name)};
  return {"", fmt::format("{} {}", name, base.empty() ? "VALUE" : base)};
}

// The text given to `option`: its value on the command line ("--x v" or
// "--x=v"), the last time it was given.
std::optional<std::string> given_value(const std::vector<std::string>& names, int argc, char** argv) {
  std::optional<std::string> value;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    for (const std::string& n : names) {
      if (a == n && i + 1 < argc)
        value = argv[i + 1];
      else if (a.size() > n.size() && a.compare(0, n.size(), n) == 0 && a[n.size()] == '=')
        value = std::string(a.substr(n.size() + 1));
    }
  }
  return value;
}

// "0.000000" -> "0", "1024" -> "1024".
std::string short_number(const std::string& text) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0') return text;
  return fmt::format("{:g}", v);
}

// A finite number: "nan" and "inf" read as numbers to strtod, but no
// option takes them (finite_range.h).
bool is_number(const std::string& text) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  return !text.empty() && end != text.c_str() && *end == '\0' && std::isfinite(v);
}

// "nan", "inf", "1e999": strtod reads them, to a value no option takes.
bool is_nonfinite_number(const std::string& text) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  return !text.empty() && end != text.c_str() && *end == '\0' && !std::isfinite(v);
}

std::string bad_value(const CLI::App& command, const CLI::Option& option, const std::string& message, int argc,
                      char** argv) {
  std::vector<std::string> names = names_of(&option);
  std::string name = names.empty() ? option.get_name(true) : names.back();
  std::string value = given_value(names, argc, argv).value_or("");
  std::string what = fmt::format("{} {}", name, value);
  Form form = form_of(command, option, name);
  if (is_percent_option(name) && !value.empty() && value.back() == '%') {
    std::string number = value.substr(0, value.size() - 1);
    return fmt::format("{}: give the percent as a plain number: {} {} means {} %", what, name, number, number);
  }
  std::smatch m;
  static const std::regex kRange(R"(not in range (\S+) to (\S+))");
  if (std::regex_search(message, m, kRange)) {
    if (is_nonfinite_number(value)) {
      return fmt::format("{}: not a finite number; give {} from {} to {}", what,
                         form.noun.empty() ? "a value" : form.noun, short_number(m[1]), short_number(m[2]));
    }
    if (!is_number(value)) return fmt::format("{}: not a number; give {}", what, form.text());
    return fmt::format("{}: out of range; give {} from {} to {}", what, form.noun.empty() ? "a value" : form.noun,
                       short_number(m[1]), short_number(m[2]));
  }
  if (message.find(" not in {") != std::string::npos) return fmt::format("{}: not {}", what, form.noun);
  std::string reason = message.substr(message.find(": ") == std::string::npos ? 0 : message.find(": ") + 2);
  if (!reason.empty()) reason[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(reason[0])));
  return fmt::format("{}: {}; give {}", what, reason, form.text());
}

// The option a CLI11 message is about ("--steps: ..." or "--steps is ...").
const CLI::Option* option_in(const CLI::App& command, const std::string& message) {
  size_t end = message.find_first_of(": ");
  return end == std::string::npos ? nullptr : find_option(command, message.substr(0, end));
}

std::string describe(CLI::App& app, CLI::App& command, const CLI::ParseError& e, int argc, char** argv) {
  const std::string message = e.what();
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) return extras(app, command, message);
  const CLI::Option* option = option_in(command, message);
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr && option != nullptr) {
    std::vector<std::string> names = names_of(option);
    std::string name = names.empty() ? option->get_name(true) : names.back();
    return fmt::format("{} needs a value: {}", name, form_of(command, *option, name).text());
  }
  if ((dynamic_cast<const CLI::ValidationError*>(&e) != nullptr ||
       dynamic_cast<const CLI::ConversionError*>(&e) != nullptr) &&
      option != nullptr) {
    return bad_value(command, *option, message, argc, argv);
  }
  if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr && option != nullptr) {
    std::vector<std::string> names = names_of(option);
    if (names.empty()) {
      std::string what = option->get_name(true);
      std::transform(what.begin(), what.end(), what.begin(), [](unsigned char c) { return std::toupper(c); });
      return fmt::format("{} missing; '{} --help' says what it takes", what, prefix_of(command));
    }
    return fmt::format("{} is required: {}", names.back(), form_of(command, *option, names.back()).text());
  }
  static const std::regex kExcludes(R"((\S+) excludes (\S+))");
  std::smatch m;
  if (std::regex_match(message, m, kExcludes)) {
    return fmt::format("{} and {} cannot be given together", m[1].str(), m[2].str());
  }
  std::string text = message;
  if (!text.empty()) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  return fmt::format("{}; '{} --help' lists the options", text, prefix_of(command));
}

}  // namespace

std::string parse_error_line(CLI::App& app, const CLI::ParseError& error, int argc, char** argv) {
  CLI::App& command = parsed_command(app);
  return fmt::format("{}: error: {}", prefix_of(command), describe(app, command, error, argc, argv));
}

}  // namespace ppt::cli
