// The manual page and the shell completions, written from the CLI11 App that
// parses the command line: the build runs `pp-timeline --help-man` and
// `pp-timeline --completion bash|zsh` (hidden options, main.cc) and installs
// their output, so neither can drift from the options the binary takes.
//
// Every option, subcommand and description comes from the App; nothing is
// listed here by hand. Hidden options (an empty group) are left out.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <string_view>

namespace ppt::cli {

// pp-timeline(1) in roff (man -l reads it): NAME, SYNOPSIS, DESCRIPTION, the
// options of the conversion, one section per subcommand with its options,
// EXIT STATUS (the App's footer), SEE ALSO.
std::string man_page(const CLI::App& app, std::string_view version);

// A bash completion script: registers _pp_timeline for pp-timeline. It
// completes the subcommand names, each command's options after a '-', the
// choices of an option that has them (--align-clocks auto|off), else file
// names.
std::string bash_completion(const CLI::App& app);

// The same for zsh (#compdef pp-timeline, for site-functions/_pp-timeline).
std::string zsh_completion(const CLI::App& app);

}  // namespace ppt::cli
