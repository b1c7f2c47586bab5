// ONNX's data movement ops as gxc layers: reshapes, transposes, concatenation, slicing,
// indexing, padding, broadcasting and tiling. Their shapes, axes and pads must be known at
// import (constants, or shape arithmetic folded by onnx_fold.cpp).
#include <algorithm>
#include <limits>
#include <numeric>

#include "frontend/onnx_node.h"

namespace gxc {
namespace {

YAML::Node attrs() { return YAML::Node(YAML::NodeType::Map); }

int64_t axisIn(OnnxNode& node, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) node.fail("axis {} is out of range for rank {}", axis, rank);
  return axis < 0 ? axis + rank : axis;
}

std::string reshapeTo(OnnxNode& node, const std::string& x, const Shape& shape, bool last = true) {
  YAML::Node at = attrs();
  at["shape"] = yamlInts(shape);
  return node.emit("reshape", {x}, at, last);
}

void translateReshape(OnnxNode& node) {
  node.checkAttrs({"allowzero"});
  std::vector<int64_t> spec = node.constantInts(1, "shape");
  Shape x = node.inputType(0).shape;
  // 0 copies the input's dim (unless allowzero, which asks for a 0-sized dim gxc cannot hold).
  for (size_t d = 0; d < spec.size(); ++d)
    if (spec[d] == 0) {
      if (node.intAttr("allowzero", 0) || d >= x.size())
        node.fail("a dim of 0 in its shape (gxc shapes are positive)");
      spec[d] = x[d];
    }
  reshapeTo(node, node.use(0), spec);
}

void translateFlatten(OnnxNode& node) {
  node.checkAttrs({"axis"});
  Shape x = node.inputType(0).shape;
  int64_t rank = static_cast<int64_t>(x.size());
  int64_t axis = node.intAttr("axis", 1);
  if (axis < -rank || axis > rank) node.fail("axis {} is out of range for rank {}", axis, rank);
  if (axis < 0) axis += rank;
  int64_t outer = std::accumulate(x.begin(), x.begin() + axis, int64_t{1}, std::multiplies<>());
  int64_t inner = std::accumulate(x.begin() + axis, x.end(), int64_t{1}, std::multiplies<>());
  reshapeTo(node, node.use(0), {outer, inner});
}

void translateTranspose(OnnxNode& node) {
  node.checkAttrs({"perm"});
  YAML::Node at = attrs();
  if (node.hasAttr("perm")) at["perm"] = yamlInts(node.intsAttr("perm"));
  node.emit("transpose", {node.use(0)}, at);
}

// Squeeze and Unsqueeze of several axes at once: one reshape.
void translateSqueeze(OnnxNode& node) {
  node.checkAttrs({"axes"});  // an attribute before opset 13
  Shape x = node.inputType(0).shape;
  const bool unsqueeze = node.opType() == "Unsqueeze";
  std::vector<int64_t> axes = node.intsOf("axes", 1).value_or(std::vector<int64_t>{});
  if (unsqueeze && axes.empty()) node.fail("it names no axes");
  const auto rank = static_cast<int64_t>(x.size() + (unsqueeze ? axes.size() : 0));
  for (int64_t& axis : axes) axis = axisIn(node, axis, rank);
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) node.fail("an axis named twice");
  Shape shape;
  if (unsqueeze) {
    shape = x;
    for (int64_t axis : axes) shape.insert(shape.begin() + axis, 1);
  } else {
    for (int64_t d = 0; d < rank; ++d) {
      bool named = std::binary_search(axes.begin(), axes.end(), d);
      if (named && x[static_cast<size_t>(d)] != 1)
        node.fail("axis {} has size {}, not 1", d, x[static_cast<size_t>(d)]);
      if (!(named || (axes.empty() && x[static_cast<size_t>(d)] == 1)))
        shape.push_back(x[static_cast<size_t>(d)]);
    }
  }
  reshapeTo(node, node.use(0), shape);
}

void translateConcat(OnnxNode& node) {
  node.checkAttrs({"axis"});
  std::vector<std::string> inputs;
  for (size_t i = 0; i < node.inputCount(); ++i)
    if (node.hasInput(i)) inputs.push_back(node.use(i));
  YAML::Node at = attrs();
  at["axis"] = node.intAttr("axis", 0);
  node.emit("concat", inputs, at);
}

void translateSlice(OnnxNode& node) {
  node.checkAttrs({});
  std::vector<int64_t> starts = node.constantInts(1, "starts"), ends = node.constantInts(2, "ends");
  std::vector<int64_t> axes(starts.size());
  std::iota(axes.begin(), axes.end(), 0);
  if (node.hasInput(3)) axes = node.constantInts(3, "axes");
  std::vector<int64_t> steps(starts.size(), 1);
  if (node.hasInput(4)) steps = node.constantInts(4, "steps");
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    node.fail("starts, ends, axes and steps of different lengths");
  Shape x = node.inputType(0).shape;
  std::string value = node.use(0);
  for (size_t k = 0; k < starts.size(); ++k) {
    int64_t axis = axisIn(node, axes[k], static_cast<int64_t>(x.size()));
    if (steps[k] <= 0) node.fail("a step of {} (gxc slices with positive steps)", steps[k]);
    YAML::Node at = attrs();
    at["axis"] = axis;
    // The bounds as given: the slice layer clamps them as Python does. Clamped here, to this
    // binding's size, a bound past the end would be that size, wrong at any other binding of
    // a dynamic axis. An end of INT64_MAX (the exporters' "to the end") is left out.
    if (starts[k] != 0) at["start"] = starts[k];
    if (ends[k] != std::numeric_limits<int64_t>::max()) at["end"] = ends[k];
    if (steps[k] != 1) at["step"] = steps[k];
    value = node.emit("slice", {value}, at, k + 1 == starts.size());
  }
  if (starts.empty()) reshapeTo(node, value, x);
}

// ONNX Gather is index_select with indices of any shape: along `axis`, the result's dims are
// x's before it, the indices', then x's after it.
// ONNX indices may count from the end; gxc's, as torch's index_select's, may not: a negative
// index i becomes i + n, in the graph unless the indices are constants.
std::string nonNegativeIndices(OnnxNode& node, size_t input, int64_t n) {
  if (node.constant(input)) {
    const Tensor& index = *node.constant(input);
    bool negative = false;
    for (int64_t k = 0; k < index.numel(); ++k) negative |= index.loadInt(k) < 0;
    if (!negative) return node.use(input);
    Tensor fixed = index;
    for (int64_t k = 0; k < fixed.numel(); ++k)
      if (fixed.loadInt(k) < 0) fixed.storeInt(k, fixed.loadInt(k) + n);
    return node.useConstant(std::move(fixed), "indices");
  }
  YAML::Node zero = attrs(), size = attrs();
  zero["scalar"] = 0;
  size["scalar"] = n;
  std::string index = node.use(input);
  std::string negative = node.emit("lt", {index}, zero, false);
  std::string shifted = node.emit("add", {index}, size, false);
  return node.emit("where", {negative, shifted, index}, attrs(), false);
}

void translateGather(OnnxNode& node) {
  node.checkAttrs({"axis"});
  TensorType x = node.inputType(0), index = node.inputType(1);
  int64_t axis = axisIn(node, node.intAttr("axis", 0), x.rank());
  std::string indices = nonNegativeIndices(node, 1, x.shape[static_cast<size_t>(axis)]);
  if (index.rank() != 1) indices = reshapeTo(node, indices, {index.numel()}, false);
  YAML::Node at = attrs();
  at["axis"] = axis;
  Shape shape(x.shape.begin(), x.shape.begin() + axis);
  shape.insert(shape.end(), index.shape.begin(), index.shape.end());
  shape.insert(shape.end(), x.shape.begin() + axis + 1, x.shape.end());
  if (index.rank() == 1) {
    node.emit("index_select", {node.use(0), indices}, at);
    return;
  }
  std::string selected = node.emit("index_select", {node.use(0), indices}, at, false);
  reshapeTo(node, selected, shape);
}

void translateGatherElements(OnnxNode& node) {
  node.checkAttrs({"axis"});
  TensorType x = node.inputType(0);
  int64_t axis = axisIn(node, node.intAttr("axis", 0), x.rank());
  YAML::Node at = attrs();
  at["axis"] = axis;
  std::string indices = nonNegativeIndices(node, 1, x.shape[static_cast<size_t>(axis)]);
  node.emit("gather", {node.use(0), indices}, at);
}

void translateSplit(OnnxNode& node) {
  node.checkAttrs({"axis", "num_outputs", "split"});  // split: an attribute before opset 13
  TensorType x = node.inputType(0);
  int64_t axis = axisIn(node, node.intAttr("axis", 0), x.rank());
  const auto outputs = static_cast<int64_t>(node.outputCount());
  std::vector<int64_t> sizes;
  if (auto given = node.intsOf("split", 1)) {
    sizes = *given;
  } else {
    // Equal parts, the last smaller when the dim does not divide (as torch.split).
    int64_t n = x.shape[static_cast<size_t>(axis)], part = (n + outputs - 1) / outputs;
    for (int64_t done = 0; done < n; done += part) sizes.push_back(std::min(part, n - done));
  }
  if (static_cast<int64_t>(sizes.size()) != outputs)
    node.fail("{} parts for {} outputs", sizes.size(), outputs);
  if (std::find(sizes.begin(), sizes.end(), 0) != sizes.end())
    node.fail("empty parts are not supported (gxc shapes are positive)");
  YAML::Node at = attrs();
  at["split_size"] = yamlInts(sizes);
  at["axis"] = axis;
  node.emitMulti("split", {node.use(0)}, at, sizes.size());
}

void translateExpand(OnnxNode& node) {
  node.checkAttrs({});
  std::vector<int64_t> target = node.constantInts(1, "shape");
  Shape x = node.inputType(0).shape;
  // Bidirectional: a 1 in the target keeps x's dim, and x may have more dims than it.
  Shape shape(std::max(x.size(), target.size()), 1);
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t a = d + x.size() >= shape.size() ? x[d + x.size() - shape.size()] : 1;
    int64_t b = d + target.size() >= shape.size() ? target[d + target.size() - shape.size()] : 1;
    if (a != b && a != 1 && b != 1)
      node.fail("shape {} does not broadcast to {}", shapeString(x), shapeString(target));
    shape[d] = std::max(a, b);
  }
  // A dim that keeps x's size is written -1 (keep it), not as its size, which would be this
  // binding's number where that dim is a dynamic axis.
  for (size_t d = shape.size() - x.size(); d < shape.size(); ++d)
    if (shape[d] == x[d + x.size() - shape.size()]) shape[d] = -1;
  YAML::Node at = attrs();
  at["shape"] = yamlInts(shape);
  node.emit("expand", {node.use(0)}, at);
}

void translateTile(OnnxNode& node) {
  node.checkAttrs({});
  YAML::Node at = attrs();
  at["repeats"] = yamlInts(node.constantInts(1, "repeats"));
  node.emit("repeat", {node.use(0)}, at);
}

void translatePad(OnnxNode& node) {
  node.checkAttrs({"mode", "pads", "value"});  // pads and value: attributes before opset 11
  std::vector<int64_t> pads = *node.intsOf("pads", 1);
  const int64_t rank = node.inputType(0).rank();
  std::vector<int64_t> axes(static_cast<size_t>(rank));
  std::iota(axes.begin(), axes.end(), 0);
  if (node.hasInput(3)) axes = node.constantInts(3, "axes");
  if (pads.size() != 2 * axes.size()) node.fail("{} pads for {} axes", pads.size(), axes.size());
  // F.pad's order: the last dim's (begin, end) first.
  std::vector<int64_t> begin(static_cast<size_t>(rank), 0), end(static_cast<size_t>(rank), 0);
  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t axis = axisIn(node, axes[k], rank);
    begin[static_cast<size_t>(axis)] = pads[k];
    end[static_cast<size_t>(axis)] = pads[k + axes.size()];
  }
  std::vector<int64_t> torchPads;
  for (int64_t d = rank; d-- > 0;) {
    torchPads.push_back(begin[static_cast<size_t>(d)]);
    torchPads.push_back(end[static_cast<size_t>(d)]);
  }
  if (std::any_of(torchPads.begin(), torchPads.end(), [](int64_t p) { return p < 0; }))
    node.fail("negative pads (cropping) are not supported");
  std::string mode = node.stringAttr("mode", "constant");
  YAML::Node at = attrs();
  at["pad"] = yamlInts(torchPads);
  at["mode"] = mode == "edge" ? std::string("replicate") : mode;
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    node.fail("mode '{}' is not supported (constant, reflect, edge)", mode);
  if (node.hasInput(2)) at["value"] = yamlFloat(node.settingScalar(2, "constant_value"));
  if (node.hasAttr("value")) at["value"] = yamlFloat(node.floatAttr("value", 0));
  node.emit("pad", {node.use(0)}, at);
}

void translateTrilu(OnnxNode& node) {
  node.checkAttrs({"upper"});
  YAML::Node at = attrs();
  if (node.hasInput(1)) at["diagonal"] = node.constantInts(1, "k").at(0);
  node.emit(node.intAttr("upper", 1) ? "triu" : "tril", {node.use(0)}, at);
}

void translateCumSum(OnnxNode& node) {
  node.checkAttrs({"exclusive", "reverse"});
  if (node.intAttr("exclusive", 0) || node.intAttr("reverse", 0))
    node.fail("exclusive and reverse sums are not supported");
  YAML::Node at = attrs();
  at["axis"] = node.constantInts(1, "axis").at(0);
  // torch sums i32 into i64; ONNX keeps the dtype (the i64 sum cut to 32 bits wraps alike).
  DType dtype = node.inputType(0).dtype;
  std::string sum = node.emit("cumsum", {node.use(0)}, at, dtype != DType::I32);
  if (dtype != DType::I32) return;
  YAML::Node cast = attrs();
  cast["dtype"] = dtypeText(dtype);
  node.emit("cast", {sum}, cast);
}

void translateTopK(OnnxNode& node) {
  node.checkAttrs({"axis", "largest", "sorted", "k"});  // k: an attribute before opset 10
  if (!node.intAttr("sorted", 1)) node.fail("sorted = 0 is not supported");
  YAML::Node at = attrs();
  at["k"] = node.hasAttr("k") ? node.intAttr("k", 0) : node.constantInts(1, "K").at(0);
  at["axis"] = node.intAttr("axis", -1);
  at["largest"] = node.intAttr("largest", 1) != 0;
  node.emitMulti("topk", {node.use(0)}, at, 2);
}

// Reached only when an import computes in the graph what the fold would make a param of this
// binding's size (OnnxImporter::computeInGraph): the value, one element of the result's rank,
// expanded to the shape.
void translateConstantOfShape(OnnxNode& node) {
  node.checkAttrs({"value"});
  std::vector<int64_t> shape = node.constantInts(0, "shape");
  std::optional<Tensor> given = node.tensorAttr("value");
  if (given && given->numel() != 1) node.fail("its value must be one element");
  Tensor value(given ? given->dtype() : DType::F32, Shape(shape.size(), 1));
  if (given) std::copy_n(given->data(), dtypeSize(value.dtype()), value.data());
  YAML::Node at = attrs();
  at["shape"] = yamlInts(shape);
  node.emit("expand", {node.useConstant(std::move(value), "value")}, at);
}

void translateNeedsConstant(OnnxNode& node) {
  node.fail(
      "its inputs must be known at import (shape arithmetic); here they are computed at "
      "run time");
}

// Ops gxc has no layer for, which exporters write in shape arithmetic (a floor division of
// sizes: Mod, Xor): folded where their inputs are known (onnx_fold.cpp), refused elsewhere.
void translateFoldedOnly(OnnxNode& node) {
  node.fail(
      "gxc evaluates it only on values known at import (shape arithmetic); on tensors "
      "computed at run time it is not supported");
}

}  // namespace

void addShapeTranslators(OnnxTranslators& table) {
  table["Reshape"] = translateReshape;
  table["Flatten"] = translateFlatten;
  table["Transpose"] = translateTranspose;
  table["Squeeze"] = translateSqueeze;
  table["Unsqueeze"] = translateSqueeze;
  table["Concat"] = translateConcat;
  table["Slice"] = translateSlice;
  table["Gather"] = translateGather;
  table["GatherElements"] = translateGatherElements;
  table["Split"] = translateSplit;
  table["Expand"] = translateExpand;
  table["Tile"] = translateTile;
  table["Pad"] = translatePad;
  table["Trilu"] = translateTrilu;
  table["CumSum"] = translateCumSum;
  table["TopK"] = translateTopK;
  // Folded by onnx_fold.cpp when their inputs are known; refused otherwise (ConstantOfShape:
  // see its translator).
  table["ConstantOfShape"] = translateConstantOfShape;
  for (const char* op : {"Constant", "Shape", "Size", "Range"}) table[op] = translateNeedsConstant;
  for (const char* op : {"Mod", "Xor"}) table[op] = translateFoldedOnly;
}

}  // namespace gxc
