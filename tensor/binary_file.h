// Reading and writing whole binary files safely: positioned reads that report short files
// instead of reading past them, and writes that leave nothing behind when they fail. Shared by
// the .npy and safetensors readers and writers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gxc {

// An open file; a failure to open is a model error "PATH: error: cannot open: REASON".
class InputFile {
 public:
  explicit InputFile(const std::string& path);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  uint64_t size() const { return size_; }
  // False when the file ends (or fails) before `n` bytes at `offset` could be read.
  bool readAt(uint64_t offset, void* dst, uint64_t n) const;

 private:
  [[noreturn]] void fail(int error);

  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// Writes the pieces to `path` itself, created or truncated. Returns 0, or the errno of the call
// that failed (never 0 for a failure), having removed the file.
int writeWholeFile(const std::string& path, const std::vector<std::string_view>& pieces);

// Writes the pieces to `path + ".tmp"` and renames it over `path`, so that a failed write
// leaves nothing behind and readers never see half a file. Failure: a runtime error.
void writeAtomically(const std::string& path, const std::vector<std::string_view>& pieces);

}  // namespace gxc
