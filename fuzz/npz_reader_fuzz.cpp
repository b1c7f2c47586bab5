// Fuzz target for the .npz reader (tensor/npz.h), through a temp file since it reads a path:
// every input reads as arrays or is refused with a model error at the file (fuzz_check.h).
// libzip itself is not instrumented; what gxc does with what libzip reports is.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_temp_file.h"
#include "tensor/npz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const gxc::fuzz::TempFile file(".npz");
  file.write(data, size);
  gxc::fuzz::expectReadOrRefusal(file.path(), [&] { gxc::readNpz(file.path()); });
  return 0;
}
