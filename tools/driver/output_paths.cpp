#include "tools/driver/output_paths.h"

#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "ir/diagnostic.h"

namespace gxc {
namespace fs = std::filesystem;
namespace {

// The nearest of `dir` and its parents that exists is a folder gxc may write into: the rest
// are made when the file is written. A file on the way is a mistake on the command line.
void checkFolderCanHold(const char* option, const std::string& given, fs::path dir) {
  std::error_code ec;
  for (;;) {
    if (dir.empty()) dir = ".";  // the top of a relative path
    fs::file_status status = fs::status(dir, ec);
    if (!fs::exists(status)) {
      if (dir == "." || dir == dir.parent_path()) return;  // nothing left to look at
      dir = dir.parent_path();
      continue;
    }
    if (!fs::is_directory(status))
      usageError("{} {}: {} is a file, so no directory can be made there", option, given,
                 dir.string());
    if (access(dir.c_str(), W_OK | X_OK) != 0)
      usageError("{} {}: the directory {} cannot be written", option, given, dir.string());
    return;
  }
}

}  // namespace

void checkOutputDirOption(const char* option, const std::string& dir, const char* explanation) {
  std::error_code ec;
  fs::file_status status = fs::status(dir, ec);
  if (fs::exists(status) && !fs::is_directory(status))
    usageError("{} {}: this is a file, not a directory{}", option, dir, explanation);
  checkFolderCanHold(option, dir, dir);
}

void checkOutputFileOption(const char* option, const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    usageError("{} {}: this is a directory, not a file name", option, path);
  checkFolderCanHold(option, path, fs::path(path).parent_path());
}

void makeParentDirs(const char* option, const std::string& path) {
  fs::path parent = fs::path(path).parent_path();
  if (parent.empty()) return;
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec)
    runtimeError({}, "{} {}: cannot make {}: {}", option, path, parent.string(), ec.message());
}

}  // namespace gxc
