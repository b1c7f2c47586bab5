// Fuzz target for the safetensors reader (tensor/safetensors.h), through a temp file since it
// reads a path: the header is opened, then every tensor it lists is read, whole and as the
// first half of its first axis (a param shard); each read succeeds or is refused with a model
// error at the file (fuzz_check.h).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_temp_file.h"
#include "tensor/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gxc;
  static const fuzz::TempFile file(".safetensors");
  file.write(data, size);
  fuzz::expectReadOrRefusal(file.path(), [&] {
    SafetensorsFile weights = SafetensorsFile::open(file.path());
    for (const auto& named : weights.entries()) {
      const std::string& name = named.first;
      const Shape& shape = named.second.shape;
      fuzz::expectReadOrRefusal(file.path(), [&] { weights.read(name); });
      if (!shape.empty())
        fuzz::expectReadOrRefusal(file.path(),
                                  [&] { weights.readSlice(name, 0, 0, shape[0] / 2); });
    }
  });
  return 0;
}
