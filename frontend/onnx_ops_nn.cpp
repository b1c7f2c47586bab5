// ONNX's network layers as gxc layers: Gemm and MatMul, 2-D convolutions and pools, and the
// normalizations. Their weights are the layer's extra inputs (params when initializers), so
// the import keeps the exporter's names (a PyTorch state_dict's).
#include <algorithm>

#include "frontend/onnx_node.h"

namespace gxc {
namespace {

YAML::Node attrs() { return YAML::Node(YAML::NodeType::Map); }

void translateMatMul(OnnxNode& node) {
  node.checkAttrs({});
  node.emit("matmul", {node.use(0), node.use(1)});
}

// alpha * A' B' + beta * C
void translateGemm(OnnxNode& node) {
  node.checkAttrs({"alpha", "beta", "transA", "transB"});
  YAML::Node at = attrs();
  if (node.intAttr("transA", 0)) at["transpose_a"] = true;
  if (node.intAttr("transB", 0)) at["transpose_b"] = true;
  const double alpha = node.floatAttr("alpha", 1.0), beta = node.floatAttr("beta", 1.0);
  const bool addsC = node.hasInput(2) && beta != 0;
  std::string product = node.emit("matmul", {node.use(0), node.use(1)}, at, !addsC && alpha == 1);
  if (alpha != 1) {
    YAML::Node scale = attrs();
    scale["scalar"] = yamlFloat(alpha);
    product = node.emit("mul", {product}, scale, !addsC);
  }
  if (!addsC) return;
  std::string c = node.use(2);
  if (beta != 1) {
    YAML::Node scale = attrs();
    scale["scalar"] = yamlFloat(beta);
    c = node.emit("mul", {c}, scale, false);
  }
  node.emit("add", {product, c});
}

// The 2-D spatial attributes shared by Conv, ConvTranspose and the pools: [h, w] pairs; pads
// must be the same at both ends of a dim (gxc's padding is symmetric), after auto_pad.
struct Spatial {
  std::vector<int64_t> kernel, strides, dilations, pads;
};

Spatial spatialAttrs(OnnxNode& node, const std::vector<int64_t>& kernel, const Shape& x) {
  if (x.size() != 4) node.fail("input of rank {} (gxc has the 2-D forms only, rank 4)", x.size());
  Spatial s{kernel, node.intsAttr("strides", {1, 1}), node.intsAttr("dilations", {1, 1}),
            node.intsAttr("pads", {0, 0, 0, 0})};
  if (s.kernel.size() != 2 || s.strides.size() != 2 || s.dilations.size() != 2 ||
      s.pads.size() != 4)
    node.fail("kernel, strides, dilations and pads must be for 2 spatial dims");
  std::string autoPad = node.stringAttr("auto_pad", "NOTSET");
  const bool transposed = node.opType() == "ConvTranspose";
  if (transposed && (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER")) {
    // The output is input * stride; the padding is what the full transposed conv has beyond it.
    std::vector<int64_t> extra = node.intsAttr("output_padding", {0, 0});
    for (size_t d = 0; d < 2; ++d) {
      int64_t total = s.strides[d] * (x[2 + d] - 1) + extra[d] +
                      (s.kernel[d] - 1) * s.dilations[d] + 1 - x[2 + d] * s.strides[d];
      if (total < 0 || total % 2 != 0)
        node.fail("auto_pad {} that pads the two ends of a dim differently is not supported",
                  autoPad);
      s.pads[d] = s.pads[d + 2] = total / 2;
    }
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (size_t d = 0; d < 2; ++d) {
      int64_t in = x[2 + d], out = (in + s.strides[d] - 1) / s.strides[d];
      int64_t total = std::max<int64_t>(
          0, (out - 1) * s.strides[d] + (s.kernel[d] - 1) * s.dilations[d] + 1 - in);
      s.pads[d] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      s.pads[d + 2] = total - s.pads[d];
    }
  } else if (autoPad == "VALID") {
    s.pads = {0, 0, 0, 0};
  } else if (autoPad != "NOTSET") {
    node.fail("auto_pad '{}' is not supported", autoPad);
  }
  return s;
}

// A zero pad layer before the op when pads differ at the two ends (gxc's are symmetric).
std::string padAsymmetric(OnnxNode& node, std::string x, Spatial& s, const char* value) {
  if (s.pads[0] == s.pads[2] && s.pads[1] == s.pads[3]) return x;
  YAML::Node at = attrs();
  at["pad"] = yamlInts({s.pads[1], s.pads[3], s.pads[0], s.pads[2]});
  at["value"] = value;
  s.pads = {0, 0, 0, 0};
  return node.emit("pad", {x}, at, false);
}

void translateConv(OnnxNode& node) {
  const bool transposed = node.opType() == "ConvTranspose";
  if (transposed)
    node.checkAttrs(
        {"auto_pad", "dilations", "group", "kernel_shape", "output_padding", "pads", "strides"});
  else
    node.checkAttrs({"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"});
  TensorType x = node.inputType(0), w = node.inputType(1);
  if (w.rank() != 4) node.fail("weight of rank {} (gxc has the 2-D forms only)", w.rank());
  const int64_t groups = node.intAttr("group", 1);
  Spatial s = spatialAttrs(node, node.intsAttr("kernel_shape", {w.shape[2], w.shape[3]}), x.shape);
  std::string input = node.use(0);
  if (transposed && (s.pads[0] != s.pads[2] || s.pads[1] != s.pads[3]))
    node.fail("pads that differ at the two ends of a dim are not supported");
  input = padAsymmetric(node, input, s, "0.0");
  YAML::Node at = attrs();
  at["in_channels"] = transposed ? w.shape[0] : x.shape[1];
  at["out_channels"] = transposed ? w.shape[1] * groups : w.shape[0];
  at["kernel_size"] = yamlInts(s.kernel);
  at["stride"] = yamlInts(s.strides);
  at["padding"] = yamlInts({s.pads[0], s.pads[1]});
  at["dilation"] = yamlInts(s.dilations);
  at["groups"] = groups;
  if (transposed) at["output_padding"] = yamlInts(node.intsAttr("output_padding", {0, 0}));
  std::vector<std::string> inputs = {input, node.use(1)};
  if (node.hasInput(2))
    inputs.push_back(node.use(2));
  else
    at["bias"] = false;
  node.emit(transposed ? "conv_transpose2d" : "conv2d", inputs, at);
}

void translatePool(OnnxNode& node) {
  const std::string& type = node.opType();
  TensorType x = node.inputType(0);
  if (type == "GlobalAveragePool" || type == "GlobalMaxPool") {
    node.checkAttrs({});
    YAML::Node at = attrs();
    std::vector<int64_t> axes;
    for (int64_t d = 2; d < x.rank(); ++d) axes.push_back(d);
    at["axis"] = yamlInts(axes);
    at["keepdim"] = true;
    node.emit(type == "GlobalAveragePool" ? "mean" : "max", {node.use(0)}, at);
    return;
  }
  const bool max = type == "MaxPool";
  if (max)
    node.checkAttrs(
        {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order", "strides"});
  else
    node.checkAttrs({"auto_pad", "ceil_mode", "count_include_pad", "dilations", "kernel_shape",
                     "pads", "strides"});
  if (node.outputCount() > 1 && !node.proto().output(1).empty())
    node.fail("its Indices output is not supported");
  Spatial s = spatialAttrs(node, node.intsAttr("kernel_shape"), x.shape);
  if (s.dilations != std::vector<int64_t>{1, 1}) node.fail("dilated pools are not supported");
  if (s.pads[0] != s.pads[2] || s.pads[1] != s.pads[3])
    node.fail("pads that differ at the two ends of a dim are not supported");
  if (2 * s.pads[0] > s.kernel[0] || 2 * s.pads[1] > s.kernel[1])
    node.fail("pads over half the kernel are not supported (torch's pools refuse them too)");
  YAML::Node at = attrs();
  at["kernel_size"] = yamlInts(s.kernel);
  at["stride"] = yamlInts(s.strides);
  at["padding"] = yamlInts({s.pads[0], s.pads[1]});
  if (node.intAttr("ceil_mode", 0)) at["ceil_mode"] = true;
  if (!max) at["count_include_pad"] = node.intAttr("count_include_pad", 0) != 0;
  node.emit(max ? "max_pool2d" : "avg_pool2d", {node.use(0)}, at);
}

void translateBatchNorm(OnnxNode& node) {
  node.checkAttrs({"epsilon", "momentum", "training_mode"});
  if (node.intAttr("training_mode", 0)) node.fail("training_mode is not supported");
  if (node.outputCount() > 1) node.fail("its running statistics outputs are not supported");
  YAML::Node at = attrs();
  at["num_features"] = node.inputType(1).numel();
  at["eps"] = yamlFloat(node.floatAttr("epsilon", 1e-5));
  // gxc's operands are in F.batch_norm's order: x, running mean and var, weight, bias.
  node.emit("batch_norm", {node.use(0), node.use(3), node.use(4), node.use(1), node.use(2)}, at);
}

void translateLayerNorm(OnnxNode& node) {
  node.checkAttrs({"axis", "epsilon", "stash_type"});
  for (size_t i = 1; i < node.outputCount(); ++i)
    if (!node.proto().output(static_cast<int>(i)).empty())
      node.fail("its Mean and InvStdDev outputs are not supported");
  TensorType x = node.inputType(0);
  int64_t axis = node.intAttr("axis", -1);
  if (axis < 0) axis += x.rank();
  YAML::Node at = attrs();
  at["normalized_shape"] = yamlInts(Shape(x.shape.begin() + axis, x.shape.end()));
  at["eps"] = yamlFloat(node.floatAttr("epsilon", 1e-5));
  std::vector<std::string> inputs = {node.use(0), node.use(1)};
  if (node.hasInput(2)) {
    inputs.push_back(node.use(2));
    node.emit("layer_norm", inputs, at);
    return;
  }
  // No bias: the scale alone, after a layer_norm without affine params.
  at["affine"] = false;
  std::string normalized = node.emit("layer_norm", {node.use(0)}, at, false);
  node.emit("mul", {normalized, node.use(1)});
}

void translateRmsNorm(OnnxNode& node) {
  node.checkAttrs({"axis", "epsilon", "stash_type"});
  TensorType x = node.inputType(0);
  int64_t axis = node.intAttr("axis", -1);
  if (axis < 0) axis += x.rank();
  YAML::Node at = attrs();
  at["normalized_shape"] = yamlInts(Shape(x.shape.begin() + axis, x.shape.end()));
  at["eps"] = yamlFloat(node.floatAttr("epsilon", 1e-5));
  node.emit("rms_norm", {node.use(0), node.use(1)}, at);
}

// NegativeLogLikelihoodLoss is F.nll_loss; SoftmaxCrossEntropyLoss is F.cross_entropy, whose
// optional second output is the log_softmax it computes on the way.
void translateLoss(OnnxNode& node) {
  node.checkAttrs({"reduction", "ignore_index"});
  YAML::Node at = attrs();
  at["reduction"] = node.stringAttr("reduction", "mean");
  if (node.hasAttr("ignore_index")) at["ignore_index"] = node.intAttr("ignore_index", -100);
  if (node.hasInput(2)) at["weight"] = node.use(2);
  std::string scores = node.use(0);
  const char* op = "nll_loss";
  if (node.opType() == "SoftmaxCrossEntropyLoss") {
    op = "cross_entropy";
    if (node.outputCount() > 1 && !node.proto().output(1).empty()) {
      YAML::Node axis = attrs();
      axis["axis"] = 1;
      scores = node.emitOutput(1, "log_softmax", {scores}, axis);
      op = "nll_loss";
    }
  }
  node.emit(op, {scores, node.use(1)}, at);
}

}  // namespace

void addNnTranslators(OnnxTranslators& table) {
  table["RMSNormalization"] = translateRmsNorm;
  table["NegativeLogLikelihoodLoss"] = translateLoss;
  table["SoftmaxCrossEntropyLoss"] = translateLoss;
  table["MatMul"] = translateMatMul;
  table["Gemm"] = translateGemm;
  table["Conv"] = translateConv;
  table["ConvTranspose"] = translateConv;
  for (const char* op : {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"})
    table[op] = translatePool;
  table["BatchNormalization"] = translateBatchNorm;
  table["LayerNormalization"] = translateLayerNorm;
}

}  // namespace gxc
