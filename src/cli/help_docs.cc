#include "help_docs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <sstream>
#include <vector>

namespace ppt::cli {

namespace {

// Options shown to the user (hidden ones have an empty group), in the order
// they were declared.
std::vector<const CLI::Option*> visible_options(const CLI::App& app) {
  return app.get_options([](const CLI::Option* o) { return !o->get_group().empty(); });
}

std::vector<const CLI::App*> subcommands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); });
}

std::vector<std::string> names_of(const CLI::Option* o) {
  std::vector<std::string> names;
  for (const std::string& s : o->get_snames()) names.push_back("-" + s);
  for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
  return names;
}

// "TEXT", "UINT", ... : the type part of CLI11's type name (before the
// validators' descriptions); "" for a flag.
std::string value_name(const CLI::Option* o) {
  std::string t = o->get_type_name();
  return t.substr(0, t.find(':'));
}

// A flag has no type name (CLI11 gives flags none).
bool takes_value(const CLI::Option* o) { return o->get_type_size_max() > 0 && !value_name(o).empty(); }

// The values a CLI::IsMember check allows ("{auto,off}" in its
// description), or none.
std::vector<std::string> choices_of(const CLI::Option* o) {
  std::string t = o->get_type_name();
  size_t open = t.find('{');
  size_t close = t.find('}', open);
  std::vector<std::string> out;
  if (open == std::string::npos || close == std::string::npos) return out;
  std::stringstream list(t.substr(open + 1, close - open - 1));
  for (std::string item; std::getline(list, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// Text for a roff line: backslashes and hyphens escaped, a leading '.' or
// '\'' (a request) neutralised.
std::string roff(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\\')
      out += "\\e";
    else if (c == '-')
      out += "\\-";
    else
      out += c;
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out.insert(0, "\\&");
  return out;
}

// A description as roff: lines that start with spaces (examples) kept as
// they are, the others filled into paragraphs.
std::string roff_paragraphs(std::string_view text) {
  std::string out;
  std::stringstream in{std::string(text)};
  bool literal = false;
  for (std::string line; std::getline(in, line);) {
    bool example = line.rfind("  ", 0) == 0;
    if (example && !literal) out += ".PP\n.nf\n", literal = true;
    if (!example && literal) out += ".fi\n.PP\n", literal = false;
    if (!line.empty()) out += roff(example ? line.substr(2) : line) + "\n";
  }
  if (literal) out += ".fi\n";
  return out;
}

std::string man_options(const CLI::App& app) {
  std::string out;
  for (const CLI::Option* o : visible_options(app)) {
    out += ".TP\n";
    if (o->get_positional()) {
      out += fmt::format("\\fI{}\\fR{}\n", roff(o->get_name(true)), o->get_expected_max() > 1 ? "..." : "");
    } else {
      std::string names;
      for (const std::string& n : names_of(o)) names += fmt::format("{}\\fB{}\\fR", names.empty() ? "" : ", ", roff(n));
      if (takes_value(o)) names += fmt::format(" \\fI{}\\fR", roff(value_name(o)));
      out += names + "\n";
    }
    out += roff(o->get_description()) + "\n";
  }
  return out;
}

// zsh's _arguments spec text: ':' , '[' , ']' and '\' escaped; single
// quotes closed and reopened (the spec is single-quoted).
std::string zsh_escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '[' || c == ']' || c == ':' || c == '\\') out += '\\';
    if (c == '\'') {
      out += "'\\''";
      continue;
    }
    out += c;
  }
  return out;
}

// The first clause of a description: zsh shows it beside the option.
std::string short_description(std::string_view text) {
  size_t end = text.find_first_of(";(\n");
  std::string s(text.substr(0, end));
  while (!s.empty() && (s.back() == ' ' || s.back() == ',' || s.back() == ':')) s.pop_back();
  return s;
}

// What the shell completions offer for one option (a named one, shown to the
// user): the bash and the zsh script are both written from these.
struct CompletionOption {
  std::vector<std::string> names;    // "-o", "--output"
  std::string description;           // its first clause
  std::string value;                 // the value's name ("TEXT"); "" for a flag
  std::vector<std::string> choices;  // the values allowed; none: any (a file)
  bool repeatable = false;           // given more than once, each counts
};

std::vector<CompletionOption> completion_options(const CLI::App& app) {
  std::vector<CompletionOption> out;
  for (const CLI::Option* o : visible_options(app)) {
    if (o->get_positional()) continue;
    CompletionOption c;
    c.names = names_of(o);
    c.description = short_description(o->get_description());
    if (takes_value(o)) c.value = value_name(o);
    c.choices = choices_of(o);
    c.repeatable = o->get_expected_max() > 1 || o->get_multi_option_policy() != CLI::MultiOptionPolicy::Throw;
    out.push_back(std::move(c));
  }
  return out;
}

std::string joined(const std::vector<std::string>& words, std::string_view separator) {
  return fmt::format("{}", fmt::join(words, separator));
}

std::string zsh_specs(const CLI::App& app, bool top) {
  std::string out;
  for (const CompletionOption& o : completion_options(app)) {
    std::string desc = zsh_escape(o.description);
    std::string value;
    if (!o.value.empty()) {
      std::string action = "_files";
      if (!o.choices.empty()) {
        std::vector<std::string> escaped;
        for (const std::string& c : o.choices) escaped.push_back(zsh_escape(c));
        action = "(" + joined(escaped, " ") + ")";
      }
      value = fmt::format(":{}:{}", zsh_escape(o.value), action);
    }
    for (const std::string& n : o.names) {
      bool takes = !o.value.empty();
      out += fmt::format("    '{}{}{}[{}]{}' \\\n", o.repeatable && takes ? "*" : "", n,
                         takes && n.size() > 2 ? "=" : "", desc, value);
    }
  }
  out += top ? "    '1: :->first' '*:log file:_files'\n" : "    '*:file:_files'\n";
  return out;
}

}  // namespace

std::string man_page(const CLI::App& app, std::string_view version) {
  std::string description = app.get_description();
  std::string first = description.substr(0, description.find('\n'));
  if (first.rfind("pp-timeline: ", 0) == 0) first = first.substr(13);
  while (!first.empty() && first.back() == '.') first.pop_back();
  std::string rest = description.find('\n') == std::string::npos ? "" : description.substr(description.find('\n') + 1);

  std::string out;
  out += fmt::format(".TH PP\\-TIMELINE 1 \"\" \"{}\" \"User Commands\"\n", roff(version));
  out += ".SH NAME\npp\\-timeline \\- " + roff(first) + "\n";
  out += ".SH SYNOPSIS\n.B pp\\-timeline\n[\\fIOPTIONS\\fR] [\\fIFILES\\fR...]\n";
  for (const CLI::App* sub : subcommands(app)) {
    out += fmt::format(".br\n.B pp\\-timeline {}\n[\\fIOPTIONS\\fR] ...\n", roff(sub->get_name()));
  }
  out += ".SH DESCRIPTION\n";
  out += roff_paragraphs(rest);
  out +=
      ".PP\nWithout a command, pp\\-timeline converts the logs (the options below); the commands are listed "
      "under COMMANDS, each with its options.\n";
  out += ".SH OPTIONS\n" + man_options(app);
  out += ".SH COMMANDS\n";
  for (const CLI::App* sub : subcommands(app)) {
    out += fmt::format(".SS \"pp\\-timeline {}\"\n", roff(sub->get_name()));
    out += roff_paragraphs(sub->get_description());
    out += man_options(*sub);
  }
  std::string footer = app.get_footer();
  if (footer.rfind("Exit status: ", 0) == 0) footer = footer.substr(13);
  out += ".SH EXIT STATUS\n" + roff_paragraphs(footer);
  out +=
      ".SH SEE ALSO\nThe project's README.md and docs/cli.md give every option with examples; "
      "\\fBpp\\-timeline\\fR \\fICOMMAND\\fR \\fB\\-\\-help\\fR prints one command's options.\n";
  return out;
}

std::string bash_completion(const CLI::App& app) {
  std::vector<std::string> command_names;
  for (const CLI::App* sub : subcommands(app)) command_names.push_back(sub->get_name());
  std::string commands = joined(command_names, " ");
  auto option_words = [](const CLI::App& a) {
    std::vector<std::string> words;
    for (const CompletionOption& o : completion_options(a)) words.insert(words.end(), o.names.begin(), o.names.end());
    return joined(words, " ");
  };
  // Options with choices, over every command (a name means the same
  // everywhere it is declared).
  std::string choice_cases;
  std::vector<std::string> seen;
  auto add_choices = [&](const CLI::App& a) {
    for (const CompletionOption& o : completion_options(a)) {
      if (o.choices.empty()) continue;
      std::vector<std::string> names;
      for (const std::string& n : o.names) {
        if (std::find(seen.begin(), seen.end(), n) != seen.end()) continue;
        seen.push_back(n);
        names.push_back(n);
      }
      if (names.empty()) continue;
      choice_cases += fmt::format("    {}) COMPREPLY=($(compgen -W \"{}\" -- \"$cur\")); return ;;\n",
                                  joined(names, "|"), joined(o.choices, " "));
    }
  };
  add_choices(app);
  for (const CLI::App* sub : subcommands(app)) add_choices(*sub);

  std::string out;
  out += "# bash completion for pp-timeline, written by `pp-timeline --completion bash`.\n";
  out += "_pp_timeline() {\n";
  out += "  local cur=${COMP_WORDS[COMP_CWORD]} prev=\"\" command=\"\" i opts\n";
  out += "  (( COMP_CWORD > 0 )) && prev=${COMP_WORDS[COMP_CWORD-1]}\n";
  out += "  for (( i = 1; i < COMP_CWORD; i++ )); do\n";
  out += fmt::format("    case ${{COMP_WORDS[i]}} in {}) command=${{COMP_WORDS[i]}}; break ;; esac\n",
                     command_names.empty() ? "''" : joined(command_names, "|"));
  out += "  done\n";
  out += "  case $prev in\n" + choice_cases + "  esac\n";
  out += "  case $command in\n";
  for (const CLI::App* sub : subcommands(app)) {
    out += fmt::format("    {}) opts=\"{}\" ;;\n", sub->get_name(), option_words(*sub));
  }
  out += fmt::format("    *) opts=\"{}\" ;;\n", option_words(app));
  out += "  esac\n";
  out += "  if [[ $cur == -* ]]; then\n";
  out += "    COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n";
  out += "    return\n";
  out += "  fi\n";
  out += "  COMPREPLY=()\n";
  out += fmt::format("  [[ -z $command ]] && COMPREPLY=($(compgen -W \"{}\" -- \"$cur\"))\n", commands);
  out += "  COMPREPLY+=($(compgen -f -- \"$cur\"))\n";
  out += "}\n";
  out += "complete -o filenames -F _pp_timeline pp-timeline\n";
  return out;
}

std::string zsh_completion(const CLI::App& app) {
  std::string out;
  out += "#compdef pp-timeline\n";
  out += "# zsh completion for pp-timeline, written by `pp-timeline --completion zsh`.\n";
  out += "_pp-timeline() {\n";
  out += "  local command='' word state line\n";
  out += "  local -a commands\n";
  out += "  commands=(\n";
  for (const CLI::App* sub : subcommands(app)) {
    out += fmt::format("    '{}:{}'\n", zsh_escape(sub->get_name()),
                       zsh_escape(short_description(sub->get_description())));
  }
  out += "  )\n";
  out += "  for word in ${words[2,CURRENT-1]}; do\n";
  out += "    if [[ -n ${(M)commands:#${word}:*} ]]; then command=$word; break; fi\n";
  out += "  done\n";
  out += "  case $command in\n";
  for (const CLI::App* sub : subcommands(app)) {
    out += fmt::format("  ({})\n    _arguments -S \\\n{}    ;;\n", sub->get_name(), zsh_specs(*sub, false));
  }
  out += "  (*)\n    _arguments -S \\\n" + zsh_specs(app, true);
  out += "    if [[ $state == first ]]; then\n";
  out += "      _describe -t commands command commands\n";
  out += "      _files\n";
  out += "    fi\n";
  out += "    ;;\n";
  out += "  esac\n";
  out += "}\n";
  out += "_pp-timeline \"$@\"\n";
  return out;
}

}  // namespace ppt::cli
