#include "tools/driver/unknown_options.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/ranges.h>

#include "ir/diagnostic.h"
#include "ir/did_you_mean.h"

namespace gxc {
namespace {

// "--devices" and "-o" for every name an option of `command` answers to.
std::vector<std::string> optionNames(const CLI::App& command) {
  std::vector<std::string> names;
  for (const CLI::Option* option : command.get_options()) {
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
    for (const std::string& name : option->get_snames()) names.push_back("-" + name);
  }
  return names;
}

bool takes(const CLI::App& command, std::string_view name) {
  for (const std::string& known : optionNames(command))
    if (known == name) return true;
  return false;
}

// "-1" and "-0.5" are values (--lr -0.5), "-" is standard input: none is an option.
bool looksLikeOption(std::string_view arg) {
  return arg.size() > 1 && arg[0] == '-' && !std::isdigit(static_cast<unsigned char>(arg[1])) &&
         arg[1] != '.';
}

}  // namespace

void refuseUnknownOption(const CLI::App& app, std::span<const char* const> args) {
  const CLI::App* command = &app;
  std::vector<const CLI::App*> given = app.get_subcommands([](const CLI::App*) { return true; });
  for (const CLI::App* sub : given)
    if (sub->parsed()) command = sub;
  // No command was recognized: the first word that is no option was meant as one ("gxc rnu").
  if (command == &app && !given.empty()) {
    std::vector<std::string_view> names;
    for (const CLI::App* sub : given) names.push_back(sub->get_name());
    for (std::string_view arg : args) {
      if (looksLikeOption(arg)) continue;
      std::string hint = didYouMean(arg, names);
      if (hint.empty()) hint = fmt::format(" (commands: {})", fmt::join(names, ", "));
      usageError("unknown command '{}'{}", arg, hint);
    }
  }
  std::string prefix = command == &app ? "" : command->get_name() + ": ";
  // Only what CLI11 could not place: "-ofile" is -o's value, "--lr -0.5" a negative number.
  std::vector<std::string> leftover = app.remaining(true);
  for (const std::string& arg : command->remaining(true)) leftover.push_back(arg);
  for (std::string_view arg : args) {
    if (!looksLikeOption(arg) || std::find(leftover.begin(), leftover.end(), arg) == leftover.end())
      continue;
    std::string_view name = arg.substr(0, arg.find('='));  // --iterations=5
    if (takes(*command, name) || takes(app, name)) continue;
    std::vector<std::string> known = optionNames(*command);
    std::vector<std::string_view> candidates(known.begin(), known.end());
    std::string hint = didYouMean(name, candidates);
    if (hint.empty()) {
      for (const CLI::App* other : given)
        if (other != command && takes(*other, name))
          hint = fmt::format(" (an option of {0} {1}, not of {0} {2})", app.get_name(),
                             other->get_name(), command->get_name());
    }
    if (hint.empty())
      hint = fmt::format(" ({} {}--help lists the options)", app.get_name(),
                         command == &app ? "" : command->get_name() + " ");
    usageError("{}unknown option '{}'{}", prefix, name, hint);
  }
}

}  // namespace gxc
