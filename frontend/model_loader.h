// Model format v1 (YAML) to IR: the whole contract of model-format.md.
//
// The graph it returns is typed (each layer's shape rule runs as the layer is lowered, since
// layers such as layer_norm size their params from their input) and carries the model's
// device annotations, resolved through groups, the data a layer reads (after a `to`, the
// layers that read its result run where it moved it, and so do their readers) and
// default_device; devices nobody named stay unplaced (`@?`) for assign-devices. Outputs may
// name layers, inputs or params. Params record how to materialize them: loaded from the
// weights file by name, or initialized from the seed and their name.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "frontend/symbolic_dims.h"
#include "ir/graph.h"
#include "tensor/safetensors.h"

namespace gxc {

struct ModelOptions {
  std::string weightsPath;  // `--weights FILE`: overrides the model's `weights:` when set
  // `--weights-partial`: a param the weights file lacks is made from its init. Without it,
  // only a declared param with an `init:` of its own may be missing (load_state_dict(strict)).
  bool weightsPartial = false;
  // Symbolic dimensions (frontend/symbolic_dims.h): `--dim NAME=N`, and the input files the
  // run was given, by input name, which bind the names in their shapes.
  std::map<std::string, int64_t> dims;
  std::map<std::string, GivenInput> givenInputs;
  // Weights held in memory (an imported ONNX model's initializers), used instead of any file.
  std::shared_ptr<SafetensorsFile> inMemoryWeights;
};

std::unique_ptr<Graph> loadModel(const std::string& path, const ModelOptions& options = {});
// `fileName` is used in messages; relative `weights:` paths resolve against `baseDir`.
std::unique_ptr<Graph> loadModelFromString(const std::string& text, const std::string& fileName,
                                           const std::string& baseDir,
                                           const ModelOptions& options = {});

}  // namespace gxc
