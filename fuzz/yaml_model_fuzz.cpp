// Fuzz target for the YAML model loader (frontend/model_loader.h, loadModelFromString): the
// bytes are a model file's text, lowered to a typed graph or refused with a model error
// (fuzz_check.h). A refusal may be located at another file than the model: a `weights:` file
// the model names, which the loader opens, locates its own errors. Relative weights paths
// resolve in the model fixtures' folder (GXC_FUZZ_MODELS_DIR), where the seeds' weights are.
#include <cstddef>
#include <cstdint>
#include <string>

#include "frontend/model_loader.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  gxc::fuzz::expectReadOrRefusal(
      "", [&] { gxc::loadModelFromString(text, "fuzzed.yaml", GXC_FUZZ_MODELS_DIR); });
  return 0;
}
