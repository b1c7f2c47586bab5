// Layers that become slices: a `slice` layer, whose Python bounds (negative, absent, beyond
// the dim) are resolved here to the 0 <= start < end <= dim the IR holds, and the layers with
// several results (`split`, `chunk`), lowered to one slice per result, each named by its
// entry of `outputs:` and located at the layer, so that every pass already understands them.
#include <numeric>

#include <fmt/ranges.h>

#include "frontend/model_builder.h"
#include "ir/infer_type.h"
#include "ir/infer_type_movement.h"

namespace gxc {
namespace {

// The node of `key` in the layer, for errors about its value; the layer itself when absent.
YamlNode nodeOf(const YamlNode& layer, const char* key) { return layer[key] ? layer[key] : layer; }

}  // namespace

Attrs ModelBuilder::sliceAttrs(const YamlNode& layer, const std::string& name, const TensorType& x,
                               const Attrs& attrs) const {
  int64_t axisGiven = attrs.getInt("axis", 0);
  auto axis = normalizeAxis(axisGiven, x.rank());
  if (!axis)
    reader_.fail(nodeOf(layer, "axis"), "layer '{}': slice: axis {} is out of range for {}", name,
                 axisGiven, x.withoutDevice());
  int64_t step = attrs.getInt("step", 1);
  if (step <= 0)
    reader_.fail(nodeOf(layer, "step"), "layer '{}': slice: step must be positive, got {}", name,
                 step);
  auto bound = [&](const char* key) {
    return attrs.has(key) ? std::optional<int64_t>(attrs.getInt(key, 0)) : std::nullopt;
  };
  SliceBounds bounds = pythonSlice(x.shape[*axis], bound("start"), bound("end"), step);
  // gxc has no tensors with a dim of size 0 (a model's shapes are positive throughout).
  if (bounds.size() == 0)
    reader_.fail(layer,
                 "layer '{}': slice: [{}:{}:{}] of axis {} of {} is empty, and gxc has no "
                 "tensors of size 0",
                 name, bound("start") ? fmt::to_string(*bound("start")) : "",
                 bound("end") ? fmt::to_string(*bound("end")) : "", step, axisGiven,
                 x.withoutDevice());
  Attrs resolved;
  resolved.set("axis", *axis);
  resolved.set("start", bounds.start);
  resolved.set("end", bounds.end);
  if (step != 1) resolved.set("step", step);
  return resolved;
}

std::vector<std::pair<std::string, Attrs>> ModelBuilder::multiResultSlices(const YamlNode& layer,
                                                                           OpKind kind,
                                                                           const std::string& name,
                                                                           const TensorType& x,
                                                                           const Attrs& attrs) {
  const char* op = kind == OpKind::Split ? "split" : "chunk";
  int64_t axisGiven = attrs.getInt("axis", 0);
  auto axis = normalizeAxis(axisGiven, x.rank());
  if (!axis)
    reader_.fail(nodeOf(layer, "axis"), "layer '{}': {}: axis {} is out of range for {}", name, op,
                 axisGiven, x.withoutDevice());
  int64_t dim = x.shape[*axis];
  std::vector<int64_t> sizes;
  if (kind == OpKind::Chunk) {
    int64_t chunks = attrs.getInt("chunks", 0);
    GXC_CHECK(chunks > 0, "layer '{}': chunks {} passed the attribute check", name, chunks);
    sizes = chunkSizes(dim, chunks);
  } else if (layer["split_size"].isSequence()) {
    auto list = attrs.getIntList("split_size");
    for (int64_t size : *list)
      if (size <= 0)
        reader_.fail(layer["split_size"],
                     "layer '{}': split: every size in split_size must be positive, got {}", name,
                     fmt::join(*list, ", "));
    int64_t total = std::accumulate(list->begin(), list->end(), int64_t{0});
    if (total != dim)
      reader_.fail(layer["split_size"],
                   "layer '{}': split: split_size [{}] sums to {}, but axis {} of {} is {}", name,
                   fmt::join(*list, ", "), total, axisGiven, x.withoutDevice(), dim);
    sizes = *list;
  } else {
    int64_t size = attrs.getInt("split_size", 0);
    if (size <= 0)
      reader_.fail(layer["split_size"], "layer '{}': split: split_size must be positive, got {}",
                   name, size);
    sizes = splitSizes(dim, size);
  }

  YamlNode outputs = reader_.required(layer, "outputs", fmt::format("layer '{}'", name));
  reader_.requireSequence(outputs, fmt::format("the outputs of layer '{}'", name));
  if (outputs.size() != sizes.size())
    reader_.fail(outputs,
                 "layer '{}': {}: outputs names {} result{}, but axis {} of {} makes {} piece{} "
                 "(sizes {})",
                 name, op, outputs.size(), outputs.size() == 1 ? "" : "s", axisGiven,
                 x.withoutDevice(), sizes.size(), sizes.size() == 1 ? "" : "s",
                 fmt::join(sizes, ", "));
  std::vector<std::pair<std::string, Attrs>> slices;
  int64_t start = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::string output = reader_.name(outputs[i], fmt::format("layer '{}': an output", name));
    define(output, outputs[i]);
    Attrs slice;
    slice.set("axis", *axis);
    slice.set("start", start);
    slice.set("end", start + sizes[i]);
    slices.emplace_back(output, slice);
    start += sizes[i];
  }
  return slices;
}

}  // namespace gxc
