// Files a command writes all together or not at all (docs/cli.md, "Nothing is half-written").
// Each is written to PATH.partial as the command goes, and renamed to PATH only once every one
// was written. A failure anywhere, a write, a rename, or an error thrown before commit, leaves
// none of them behind, and its message carries the system's reason.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gxc {

class StagedFiles {
 public:
  StagedFiles() = default;
  StagedFiles(const StagedFiles&) = delete;
  StagedFiles& operator=(const StagedFiles&) = delete;
  // Removes every PATH.partial not yet committed, so that an error between stage and commit
  // leaves nothing behind.
  ~StagedFiles();

  // Writes `pieces` to PATH.partial. Failure: a runtime error "OPTION: cannot write PATH: REASON"
  // (REASON: strerror of the call that failed), and everything staged so far is removed.
  void stage(const std::string& path, const std::vector<std::string_view>& pieces,
             std::string_view option);

  // Renames every PATH.partial to PATH. When one cannot be renamed, the ones already renamed are
  // removed as well as the rest (a set of outputs from one run, or none: never a mix with an
  // earlier run's), and the error is "OPTION: cannot write PATH: REASON".
  void commit();

 private:
  struct File {
    std::string path;
    std::string option;
  };
  void removeAll(size_t committed);

  std::vector<File> files_;
  bool committed_ = false;
};

}  // namespace gxc
