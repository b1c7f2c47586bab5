#include "ir/diagnostic.h"

namespace gxc {

Error::Error(ErrorKind kind, SourceLoc loc, std::string message)
    : std::runtime_error(message),
      kind_(kind),
      loc_(std::move(loc)),
      message_(std::move(message)) {}

std::string SourceLoc::where() const {
  if (node >= 0) return fmt::format("{}: node {} \"{}\"", file, node, nodeName);
  if (line <= 0) return file;
  return fmt::format("{}:{}:{}", file, line, col);
}

std::string formatError(const Error& error, std::string_view program) {
  const SourceLoc& loc = error.loc();
  if (loc.known()) return fmt::format("{}: error: {}", loc.where(), error.message());
  if (!loc.file.empty()) return fmt::format("{}: error: {}", loc.file, error.message());
  return fmt::format("{}: error: {}", program, error.message());
}

void internalError(const char* file, int line, const std::string& what) {
  throw InternalError(
      fmt::format("internal error at {}:{}: {} (this is a gxc bug)", file, line, what));
}

}  // namespace gxc
