// The one place where errors become messages and exit statuses (cli.md).
#pragma once

#include <exception>
#include <functional>
#include <ostream>
#include <string_view>

#include <CLI/CLI.hpp>

#include "ir/diagnostic.h"

namespace gxc {

// Runs `body` and returns its exit status, or prints what it threw as one line on `err`,
// "PROGRAM: error: ..." where no file is to blame, and returns the status of cli.md.
inline int reportErrors(std::string_view program, std::ostream& err,
                        const std::function<int()>& body) {
  try {
    return body();
  } catch (const CLI::CallForHelp& e) {
    return 0;  // the caller printed the help
  } catch (const CLI::ParseError& e) {
    err << program << ": error: " << e.what() << "\n";
    return static_cast<int>(ErrorKind::Usage);
  } catch (const Error& e) {
    err << formatError(e, program) << "\n";
    return e.exitStatus();
  } catch (const InternalError& e) {
    err << program << ": " << e.what() << "\n";
    return static_cast<int>(ErrorKind::Runtime);
  } catch (const std::bad_alloc&) {
    err << program << ": error: out of host memory\n";
    return static_cast<int>(ErrorKind::Runtime);
  } catch (const std::exception& e) {
    err << program << ": internal error: " << e.what() << " (this is a gxc bug)\n";
    return static_cast<int>(ErrorKind::Runtime);
  }
}

}  // namespace gxc
