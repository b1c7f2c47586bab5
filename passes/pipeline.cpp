#include "passes/pipeline.h"

namespace gxc {

std::vector<std::string> defaultPipeline() {
  std::vector<std::string> passes;
  // Types first: placement weighs tensor sizes, and every later pass reads shapes. The
  // frontend already types what it lowers; this re-checks IR that came in as text.
  passes.push_back("infer-shapes");
  // Then devices, from the annotations and the run's device list. Copies between devices,
  // transfer batching, layer splitting, fusion, memory planning and streams follow here as
  // they are built (architecture.md lists their order).
  passes.push_back("assign-devices");
  return passes;
}

}  // namespace gxc
