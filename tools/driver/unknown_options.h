// An option the command does not take, as one line that says what was probably meant, instead
// of CLI11's "The following arguments were not expected: cpu --device".
#pragma once

#include <span>

#include <CLI/CLI.hpp>

namespace gxc {

// Called when parsing `args` (argv without the program name) with `app` threw CLI::ExtrasError
// (or, for an app of subcommands, CLI::RequiredError). When no subcommand was recognized, the
// first word that is no option is refused: "unknown command 'rnu' (did you mean 'run'?)". When
// an argument CLI11 left over is an option (it starts with '-', no number) that neither `app` nor
// the subcommand given takes, throws a usage error "SUBCOMMAND: unknown option '--device'" ending
// in " (did you mean '--devices'?)", or naming the subcommand that does take it, or pointing at
// --help. Otherwise it returns and the caller reports CLI11's error.
void refuseUnknownOption(const CLI::App& app, std::span<const char* const> args);

}  // namespace gxc
