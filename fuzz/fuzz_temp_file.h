// For the readers that take a path and have no bytes entry point (.npy, safetensors): the
// fuzzed bytes are written to one file per process in the temp folder, removed at exit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

namespace gxc::fuzz {

class TempFile {
 public:
  explicit TempFile(const std::string& suffix)
      : path_((std::filesystem::temp_directory_path() /
               ("gxc-fuzz-" + std::to_string(::getpid()) + suffix))
                  .string()) {}
  ~TempFile() {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }
  const std::string& path() const { return path_; }

  // Replaces the file's contents with the bytes.
  void write(const uint8_t* data, size_t size) const {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!out.flush()) {
      std::fprintf(stderr, "cannot write %s\n", path_.c_str());
      std::abort();
    }
  }

 private:
  std::string path_;
};

}  // namespace gxc::fuzz
