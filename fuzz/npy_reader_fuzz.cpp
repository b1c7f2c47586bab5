// Fuzz target for the .npy reader (tensor/npy.h), through a temp file since it reads a path:
// every input reads as a tensor or is refused with a model error at the file (fuzz_check.h).
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_temp_file.h"
#include "tensor/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const gxc::fuzz::TempFile file(".npy");
  file.write(data, size);
  gxc::fuzz::expectReadOrRefusal(file.path(), [&] { gxc::readNpy(file.path()); });
  return 0;
}
