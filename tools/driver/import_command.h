// `gxc import MODEL.onnx -o OUT.yaml`: the equivalent gxc model file, with the params' data in
// OUT.safetensors beside it (cli.md).
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace gxc {

struct ImportOptions {
  std::string modelPath;
  std::string outPath;
  std::vector<std::string> dims;  // --dim NAME=N: fixes a dynamic axis in the written model
};

// Prints what it wrote on `out`, and each ONNX name it had to change on `err`.
int importCommand(const ImportOptions& options, std::ostream& out, std::ostream& err);

}  // namespace gxc
