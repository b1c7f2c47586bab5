// ONNX's data movement ops as gxc layers: reshapes, transposes, concatenation, slicing,
// indexing, padding, broadcasting and tiling. Their shapes, axes and pads must be known at
// import (constants, or shape arithmetic folded by onnx_fold.cpp).
#include <algorithm>
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
  node.checkAttrs({});
  Shape x = node.inputType(0).shape;
  const bool unsqueeze = node.opType() == "Unsqueeze";
  std::vector<int64_t> axes =
      node.hasInput(1) ? node.constantInts(1, "axes") : std::vector<int64_t>{};
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
    const int64_t n = x[static_cast<size_t>(axis)];
    YAML::Node at = attrs();
    at["axis"] = axis;
    at["start"] = std::clamp<int64_t>(starts[k], -n, n);
    at["end"] = std::clamp<int64_t>(ends[k], -n, n);
    if (steps[k] != 1) at["step"] = steps[k];
    value = node.emit("slice", {value}, at, k + 1 == starts.size());
  }
  if (starts.empty()) reshapeTo(node, value, x);
}

// ONNX Gather is index_select with indices of any shape: along `axis`, the result's dims are
// x's before it, the indices', then x's after it.
void translateGather(OnnxNode& node) {
  node.checkAttrs({"axis"});
  TensorType x = node.inputType(0), index = node.inputType(1);
  int64_t axis = axisIn(node, node.intAttr("axis", 0), x.rank());
  std::string indices = node.use(1);
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
  YAML::Node at = attrs();
  at["axis"] = node.intAttr("axis", 0);
  node.emit("gather", {node.use(0), node.use(1)}, at);
}

void translateSplit(OnnxNode& node) {
  node.checkAttrs({"axis", "num_outputs"});
  TensorType x = node.inputType(0);
  int64_t axis = axisIn(node, node.intAttr("axis", 0), x.rank());
  const auto outputs = static_cast<int64_t>(node.outputCount());
  std::vector<int64_t> sizes;
  if (node.hasInput(1)) {
    sizes = node.constantInts(1, "split");
  } else {
    // Equal parts, the last smaller when the dim does not divide (as torch.split).
    int64_t n = x.shape[static_cast<size_t>(axis)], part = (n + outputs - 1) / outputs;
    for (int64_t done = 0; done < n; done += part) sizes.push_back(std::min(part, n - done));
  }
  if (static_cast<int64_t>(sizes.size()) != outputs)
    node.fail("{} parts for {} outputs", sizes.size(), outputs);
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
  node.checkAttrs({"mode"});
  std::vector<int64_t> pads = node.constantInts(1, "pads");
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
  if (node.hasInput(2)) {
    std::optional<double> value = node.constantScalar(2);
    if (!value) node.fail("its constant_value must be a constant");
    at["value"] = yamlFloat(*value);
  }
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
  node.emit("cumsum", {node.use(0)}, at);
}

void translateTopK(OnnxNode& node) {
  node.checkAttrs({"axis", "largest", "sorted"});
  if (!node.intAttr("sorted", 1)) node.fail("sorted = 0 is not supported");
  YAML::Node at = attrs();
  at["k"] = node.constantInts(1, "K").at(0);
  at["axis"] = node.intAttr("axis", -1);
  at["largest"] = node.intAttr("largest", 1) != 0;
  node.emitMulti("topk", {node.use(0)}, at, 2);
}

void translateNeedsConstant(OnnxNode& node) {
  node.fail(
      "its inputs must be known at import (shape arithmetic); here they are computed at "
      "run time");
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
  // Folded by onnx_fold.cpp when their inputs are known; refused otherwise.
  for (const char* op : {"Constant", "Shape", "Size", "ConstantOfShape", "Range"})
    table[op] = translateNeedsConstant;
}

}  // namespace gxc
