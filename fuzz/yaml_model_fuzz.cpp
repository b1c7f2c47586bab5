// Fuzz target for the YAML model loader (frontend/model_loader.h, loadModelFromString): the
// bytes are a model file's text, lowered to a typed graph or refused with a model error
// (fuzz_check.h). A refusal may be located at another file than the model: a `weights:` file
// the model names, which the loader opens, locates its own errors. Relative weights paths
// resolve in the model fixtures' folder (GXC_FUZZ_MODELS_DIR), where the seeds' weights are.
// One refusal is the command line's by design (cli.md, exit status 2): a symbolic dimension
// with no default in `dims:` and no --dim or input file to bind it (fuzz/regressions/
// yaml_model/unbound-symbolic-dim.yaml is such a model).
#include <cstddef>
#include <cstdint>
#include <string>

#include "frontend/model_loader.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  gxc::fuzz::expectReadOrRefusal("", [&] {
    try {
      gxc::loadModelFromString(text, "fuzzed.yaml", GXC_FUZZ_MODELS_DIR);
    } catch (const gxc::Error& error) {
      if (error.kind() == gxc::ErrorKind::Usage &&
          error.message().rfind("no size for the symbolic dimension", 0) == 0)
        return;
      throw;
    }
  });
  return 0;
}
