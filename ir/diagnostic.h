// User-facing errors and internal invariant failures: the two error channels.
//
// A gxc::Error is something the user can fix (a model, an input, a command line, a device
// that ran out of memory); it carries the exit status of cli.md and, where a position in a
// file is to blame, that position. An internal invariant failure is a gxc bug and is
// reported through GXC_CHECK, never as a user error.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace gxc {

struct SourceLoc {
  SourceLoc() = default;
  SourceLoc(std::string file, int line = 0, int col = 0)
      : file(std::move(file)), line(line), col(col) {}
  static SourceLoc ofNode(std::string file, int node, std::string nodeName) {
    SourceLoc loc(std::move(file));
    loc.node = node;
    loc.nodeName = std::move(nodeName);
    return loc;
  }

  std::string file;
  int line = 0;  // 1-based; 0 means unknown
  int col = 0;   // 1-based
  // A model that is not text (ONNX) is located by graph node instead: its index (0-based, in
  // the file's order) and name. `line` and `col` stay 0 then.
  int node = -1;
  std::string nodeName;
  bool known() const { return line > 0 || node >= 0; }
  // "FILE:LINE:COL" or FILE: node N "NAME", for messages.
  std::string where() const;
  bool operator==(const SourceLoc&) const = default;
};

// Exit statuses of cli.md.
enum class ErrorKind { Model = 1, Usage = 2, Runtime = 3 };

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, SourceLoc loc, std::string message);
  ErrorKind kind() const { return kind_; }
  const SourceLoc& loc() const { return loc_; }
  const std::string& message() const { return message_; }
  int exitStatus() const { return static_cast<int>(kind_); }

 private:
  ErrorKind kind_;
  SourceLoc loc_;
  std::string message_;
};

// "FILE:LINE:COL: error: MSG" where a position is known, "FILE: error: MSG" where only the
// file is, "PROGRAM: error: MSG" otherwise (the program that reports it: gxc, gxc-opt).
std::string formatError(const Error& error, std::string_view program = "gxc");

template <typename... Args>
[[noreturn]] void modelError(const SourceLoc& loc, fmt::format_string<Args...> format,
                             Args&&... args) {
  throw Error(ErrorKind::Model, loc, fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args>
[[noreturn]] void usageError(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(ErrorKind::Usage, {}, fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args>
[[noreturn]] void runtimeError(const SourceLoc& loc, fmt::format_string<Args...> format,
                               Args&&... args) {
  throw Error(ErrorKind::Runtime, loc, fmt::format(format, std::forward<Args>(args)...));
}

// A broken invariant inside gxc. Thrown (not aborted) so drivers can print it and leave no
// half-written output; its message says it is a gxc bug.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] void internalError(const char* file, int line, const std::string& what);

}  // namespace gxc

#define GXC_CHECK(cond, ...)                                                         \
  do {                                                                               \
    if (!(cond)) ::gxc::internalError(__FILE__, __LINE__, fmt::format(__VA_ARGS__)); \
  } while (0)
