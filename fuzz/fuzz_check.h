// What every fuzz target asserts about a refused input: a gxc::Error of the model kind,
// located at the file the target named. Any other exception (std::bad_alloc from an unbounded
// allocation, an InternalError from a broken invariant) is not caught, so libFuzzer reports it
// as a crash, as it does the memory errors AddressSanitizer finds.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "ir/diagnostic.h"

namespace gxc::fuzz {

// Runs `read`; a gxc::Error it throws is the expected refusal, checked to be a model error
// located at `path` (at any file when `path` is empty); anything else aborts.
template <typename Read>
void expectReadOrRefusal(const std::string& path, Read&& read) {
  try {
    read();
  } catch (const Error& error) {
    if (error.kind() != ErrorKind::Model || (!path.empty() && error.loc().file != path)) {
      std::fprintf(stderr, "refused with an error that is not a model error at '%s': %s\n",
                   path.c_str(), formatError(error).c_str());
      std::abort();
    }
  }
}

}  // namespace gxc::fuzz
