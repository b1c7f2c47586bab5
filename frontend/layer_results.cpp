// Layers with several results (model-format.md, Multi-result layers), as the ops that compute
// each result: `split` and `chunk` become one slice per result (layer_slices.cpp); `topk`
// becomes a `topk` op (the values) and a `topk_indices` op (their positions), and `max` with
// `indices: true` the reduction `max` and `argmax`, both pairs over the same x with the same
// attributes. Each result is named by its entry of `outputs:` and located at the layer.
// The checks of k and axis here point at their keys; shape inference repeats them for IR that
// no model file wrote.
#include <fmt/ranges.h>

#include "frontend/model_builder.h"
#include "ir/infer_type.h"

namespace gxc {
namespace {

YamlNode nodeOf(const YamlNode& layer, const char* key) { return layer[key] ? layer[key] : layer; }

}  // namespace

bool ModelBuilder::hasSeveralResults(const YamlNode& layer, OpKind kind,
                                     const std::string& name) const {
  if (isMultiResultLayer(kind)) return true;
  if (kind != OpKind::Max) return false;
  bool indices = layer["indices"] &&
                 reader_.boolean(layer["indices"], fmt::format("indices of layer '{}'", name));
  // torch.max(x) and torch.amax have one result; torch.max(x, dim) has two.
  if (!indices && layer["outputs"])
    reader_.fail(layer["outputs"],
                 "layer '{}': max: outputs names the results of max with `indices: true` (its "
                 "values and their indices); without it max has one result, named by the layer",
                 name);
  return indices;
}

std::vector<ModelBuilder::LayerResult> ModelBuilder::layerResults(const YamlNode& layer,
                                                                  OpKind kind,
                                                                  const std::string& name,
                                                                  const TensorType& x,
                                                                  const Attrs& attrs) {
  std::vector<LayerResult> results;
  if (kind == OpKind::Split || kind == OpKind::Chunk) {
    for (auto& [output, sliceAttrs] : multiResultSlices(layer, kind, name, x, attrs))
      results.push_back({output, OpKind::Slice, sliceAttrs});
    return results;
  }
  const char* op = kind == OpKind::Topk ? "topk" : "max";
  // Shape inference checks these too, but names an op by its result; here the layer is named.
  if (kind == OpKind::Topk && x.dtype == DType::Bool)
    reader_.fail(layer, "layer '{}': topk: needs a number operand, got {}", name,
                 x.withoutDevice());
  if (kind == OpKind::Max && !isFloat(x.dtype))
    reader_.fail(layer,
                 "layer '{}': max with `indices: true` needs an f32, f64, f16 or bf16 operand, "
                 "got {}",
                 name, x.withoutDevice());
  int64_t axisGiven = 0;
  if (kind == OpKind::Max) {
    // torch.max(x, dim, keepdim): one dim, which the indices are positions along.
    if (!layer["axis"])
      reader_.fail(layer,
                   "layer '{}': max with `indices: true` needs `axis`, one integer (as "
                   "torch.max(x, dim) does)",
                   name);
    if (!std::holds_alternative<int64_t>(*attrs.find("axis")))
      reader_.fail(layer["axis"],
                   "layer '{}': max with `indices: true` takes one axis, not a list (as "
                   "torch.max(x, dim) does)",
                   name);
    axisGiven = attrs.getInt("axis", 0);
  } else {
    axisGiven = attrs.getInt("axis", -1);
  }
  auto axis = normalizeAxis(axisGiven, x.rank());
  if (!axis)
    reader_.fail(nodeOf(layer, "axis"), "layer '{}': {}: axis {} is out of range for {}", name, op,
                 axisGiven, x.withoutDevice());
  if (kind == OpKind::Topk) {
    int64_t k = attrs.getInt("k", 0), size = x.shape[*axis];
    if (k <= 0)
      reader_.fail(layer["k"],
                   "layer '{}': topk: k must be positive, got {} (gxc has no tensors of size 0)",
                   name, k);
    if (k > size)
      reader_.fail(layer["k"], "layer '{}': topk: k = {} is larger than axis {} of {}, of size {}",
                   name, k, axisGiven, x.withoutDevice(), size);
  }

  YamlNode outputs = reader_.required(layer, "outputs", fmt::format("layer '{}'", name));
  reader_.requireSequence(outputs, fmt::format("the outputs of layer '{}'", name));
  if (outputs.size() != 2)
    reader_.fail(outputs,
                 "layer '{}': {}: outputs names {} result{}, but {} has two: its values and their "
                 "indices",
                 name, op, outputs.size(), outputs.size() == 1 ? "" : "s", op);
  OpKind indicesKind = kind == OpKind::Topk ? OpKind::TopkIndices : OpKind::Argmax;
  for (OpKind resultKind : {kind, indicesKind}) {
    const YamlNode& output = outputs[results.size()];
    std::string resultName = reader_.name(output, fmt::format("layer '{}': an output", name));
    define(resultName, output);
    results.push_back({resultName, resultKind, attrs});
  }
  return results;
}

}  // namespace gxc
