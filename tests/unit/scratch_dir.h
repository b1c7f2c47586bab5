// A scratch folder of a test's own: a new folder under the system's temporary one, named
// PREFIX-XXXXXX by mkdtemp, so that test processes running at once (ctest's shards, two
// checkouts' suites on one machine) never write into each other's files.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace gxc {

inline std::filesystem::path makeScratchDir(const std::string& prefix) {
  std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (!mkdtemp(pattern.data()))
    throw std::filesystem::filesystem_error("mkdtemp", pattern,
                                            std::error_code(errno, std::generic_category()));
  return pattern;
}

}  // namespace gxc
