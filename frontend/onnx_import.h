// ONNX models to gxc: `gxc run model.onnx` and `gxc import model.onnx`.
//
// An ONNX graph becomes the layers of a gxc model, the same YAML maps a model file holds, and
// those are lowered by the model builder that lowers model files, so the IR, and every pass
// and platform after it, is the one a hand-written model gets; `gxc import` writes those maps
// out, so running the import computes what running the .onnx computes. Layer names come from
// node names (made valid and unique); `loc` in the IR names the ONNX node.
//
// Initializers that ops read as tensors become params, their data held in memory (and written
// to a safetensors file by import); constant inputs that ops read as settings (shapes, axes,
// pads) become attributes; shape arithmetic (Shape -> Gather -> Concat -> Reshape, Range,
// ConstantOfShape) is evaluated at import, with symbolic dimensions bound (`--dim`, or the
// input files). An ONNX op gxc does not have refuses the model, all such nodes named at once.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "frontend/model_loader.h"
#include "ir/graph.h"
#include "tensor/safetensors.h"

namespace gxc {

struct ImportedOnnx {
  std::unique_ptr<Graph> graph;
  // The equivalent model file, without `weights:` (the caller names the file it writes).
  YAML::Node model;
  std::shared_ptr<SafetensorsFile> weights;  // the params' data, in memory
  // ONNX names of the graph's inputs, outputs and initializers (those read as params) with
  // gxc's, where they differ (a gxc name is [A-Za-z0-9_][A-Za-z0-9_.-]*, and unique).
  std::vector<std::pair<std::string, std::string>> renamedInputs, renamedOutputs, renamedParams;
};

// `options.givenInputs` are keyed by the ONNX input names. With `forImport`, the dynamic axes
// that `options.dims` does not fix stay dynamic in the model: a reshape's size computed from
// them (a Flatten's outer size, a Reshape's 0, shape arithmetic) is written with their names
// (`batch*4`), and any other number computed from them is refused, naming the node, since
// the model file would hold the import's own binding's number in its place.
ImportedOnnx importOnnx(const std::string& path, const ModelOptions& options,
                        bool forImport = false);

// Whether a model path names an ONNX file (by its extension).
bool isOnnxPath(const std::string& path);

// The model file text of an import, with `weights: WEIGHTS` when given.
std::string onnxImportYaml(const ImportedOnnx& imported, const std::string& weightsFile);

}  // namespace gxc
