#include "tools/driver/staged_files.h"

#include <cerrno>
#include <cstring>

#include <unistd.h>

#include "ir/diagnostic.h"
#include "tensor/binary_file.h"
#include "tools/driver/output_paths.h"

namespace gxc {
namespace {

std::string partialPath(const std::string& path) { return path + ".partial"; }

}  // namespace

StagedFiles::~StagedFiles() {
  if (!committed_) removeAll(0);
}

void StagedFiles::stage(const std::string& path, const std::vector<std::string_view>& pieces,
                        std::string_view option) {
  makeParentDirs(std::string(option).c_str(), path);  // as --output makes its folder
  int error = writeWholeFile(partialPath(path), pieces);
  if (error != 0) {
    removeAll(0);
    files_.clear();
    runtimeError({}, "{}: cannot write {}: {}", option, path, std::strerror(error));
  }
  files_.push_back({path, std::string(option)});
}

void StagedFiles::commit() {
  for (size_t i = 0; i < files_.size(); ++i) {
    if (::rename(partialPath(files_[i].path).c_str(), files_[i].path.c_str()) == 0) continue;
    int error = errno;
    File failed = files_[i];
    removeAll(i);
    files_.clear();
    runtimeError({}, "{}: cannot write {}: {}", failed.option, failed.path, std::strerror(error));
  }
  committed_ = true;
}

// Files before `committed` were renamed to their paths; the others are still PATH.partial.
void StagedFiles::removeAll(size_t committed) {
  for (size_t i = 0; i < files_.size(); ++i) {
    const std::string& path = i < committed ? files_[i].path : partialPath(files_[i].path);
    ::unlink(path.c_str());
  }
}

}  // namespace gxc
