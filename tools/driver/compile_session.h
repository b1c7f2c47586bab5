// What `gxc run` and `gxc compile` share: the model loaded, the run's devices decided, the
// default pipeline run with the dumps the user asked for.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "frontend/model_loader.h"
#include "passes/pass.h"
#include "passes/pass_manager.h"

namespace gxc {

struct CompileOptions {
  std::string modelPath;
  std::string devices;  // the --devices text; empty: every GPU, or cpu where there is none
  bool strict = false;
  std::string weightsPath;
  PassManagerOptions passes;  // --print-ir-after, --dump-ir, --time-passes
};

struct CompiledModel {
  std::unique_ptr<Graph> graph;
  PassContext context;
};

// Parses the --devices text against the platforms this build has.
std::vector<Device> parseDeviceList(const std::string& text, std::ostream& notes);

CompiledModel compileModel(const CompileOptions& options, std::ostream& notes);

}  // namespace gxc
