// The command lines of cli.md: `gxc run|compile|devices` and `gxc-opt`. Each returns the
// exit status of cli.md and prints every error as one line on `err`.
#pragma once

#include <ostream>
#include <string>

namespace gxc {

// `errIsTerminal`: `err` is a terminal, where long work shows its progress (nothing is
// drawn otherwise).
int gxcMain(int argc, const char* const* argv, std::ostream& out, std::ostream& err,
            bool errIsTerminal = false);
int gxcOptMain(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace gxc
