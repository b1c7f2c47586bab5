// The one place where errors become messages and exit statuses (cli.md).
#pragma once

#include <exception>
#include <functional>
#include <ostream>

#include <CLI/CLI.hpp>

#include "ir/diagnostic.h"

namespace gxc {

inline int reportErrors(std::ostream& out, std::ostream& err, const std::function<int()>& body) {
  try {
    return body();
  } catch (const CLI::CallForHelp& e) {
    return 0;  // the caller printed the help
  } catch (const CLI::ParseError& e) {
    err << "gxc: error: " << e.what() << "\n";
    return static_cast<int>(ErrorKind::Usage);
  } catch (const Error& e) {
    err << formatError(e) << "\n";
    return e.exitStatus();
  } catch (const InternalError& e) {
    err << "gxc: " << e.what() << "\n";
    return static_cast<int>(ErrorKind::Runtime);
  } catch (const std::bad_alloc&) {
    err << "gxc: error: out of host memory\n";
    return static_cast<int>(ErrorKind::Runtime);
  } catch (const std::exception& e) {
    err << "gxc: internal error: " << e.what() << " (this is a gxc bug)\n";
    return static_cast<int>(ErrorKind::Runtime);
  }
}

}  // namespace gxc
