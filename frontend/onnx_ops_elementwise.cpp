// ONNX's elementwise ops as gxc layers: unary and binary math, comparisons and logic, casts,
// activations (those gxc has under another name or as a few layers), and the variadic ones.
#include <cmath>

#include "frontend/onnx_file.h"
#include "frontend/onnx_node.h"
#include "ir/dtype.h"

namespace gxc {
namespace {

YAML::Node attrs() { return YAML::Node(YAML::NodeType::Map); }

bool isIntegerDType(DType dtype) { return dtype == DType::I32 || dtype == DType::I64; }

// The `scalar:` text of a one-element constant: an integer stays one for integer tensors.
std::string scalarText(double value, DType dtype) {
  if (isIntegerDType(dtype) || dtype == DType::Bool)
    return fmt::format("{}", static_cast<int64_t>(value));
  return yamlFloat(value);
}

// a OP b; a one-element constant b that does not raise a's rank becomes `scalar:` (so the
// import reads `{op: mul, scalar: 0.5}`), as does a for the ops where order does not matter.
std::string binary(OnnxNode& node, const std::string& op, size_t a, size_t b, bool last = true,
                   bool commutative = false) {
  auto scalarOperand = [&](size_t constant, size_t other) {
    std::optional<double> value = node.constantScalar(constant);
    // gxc's pow with a number 0.5 or -0.5 is torch's sqrt or rsqrt (NaN at -inf); ONNX's Pow
    // is C's pow (+inf and 0 there), which gxc's pow by a tensor is.
    if (op == "pow" && value && std::abs(*value) == 0.5) return false;
    return value && node.inputType(constant).rank() <= node.inputType(other).rank() &&
           !node.constant(other);
  };
  YAML::Node at = attrs();
  if (scalarOperand(b, a)) {
    at["scalar"] = scalarText(*node.constantScalar(b), node.inputType(b).dtype);
    return node.emit(op, {node.use(a)}, at, last);
  }
  if (commutative && scalarOperand(a, b)) {
    at["scalar"] = scalarText(*node.constantScalar(a), node.inputType(a).dtype);
    return node.emit(op, {node.use(b)}, at, last);
  }
  return node.emit(op, {node.use(a), node.use(b)}, at, last);
}

void translateBinary(OnnxNode& node) {
  static const std::map<std::string, std::pair<const char*, bool>> ops = {
      {"Add", {"add", true}},         {"Sub", {"sub", false}},
      {"Mul", {"mul", true}},         {"Div", {"div", false}},
      {"Pow", {"pow", false}},        {"Equal", {"eq", true}},
      {"Less", {"lt", false}},        {"LessOrEqual", {"le", false}},
      {"Greater", {"gt", false}},     {"GreaterOrEqual", {"ge", false}},
      {"And", {"logical_and", true}}, {"Or", {"logical_or", true}}};
  node.checkAttrs({});
  auto [op, commutative] = ops.at(node.opType());
  DType a = node.inputType(0).dtype, b = node.inputType(1).dtype;
  // ONNX divides integers truncating and raises them to integer powers; torch (whose
  // semantics gxc has) divides them truly and computes pow in float.
  if (node.opType() == "Div" && isIntegerDType(a))
    node.fail("integer division (truncating) is not supported");
  if (node.opType() == "Pow" && (isIntegerDType(a) || a != b))
    node.fail("pow of {} by {} is not supported (gxc raises floats to floats of one dtype)",
              dtypeName(a), dtypeName(b));
  binary(node, op, 0, 1, true, commutative);
}

// Sum, Mean, Max, Min: any number of inputs, folded left to right.
void translateVariadic(OnnxNode& node) {
  node.checkAttrs({});
  const std::string& type = node.opType();
  const char* op = type == "Max" ? "maximum" : type == "Min" ? "minimum" : "add";
  const bool mean = type == "Mean";
  if (node.inputCount() == 1) {  // the input itself
    YAML::Node at = attrs();
    at["dtype"] = dtypeText(node.inputType(0).dtype);
    node.emit("cast", {node.use(0)}, at);
    return;
  }
  std::string acc = node.use(0);
  for (size_t i = 1; i < node.inputCount(); ++i) {
    bool last = i + 1 == node.inputCount() && !mean;
    acc = node.emit(op, {acc, node.use(i)}, attrs(), last);
  }
  if (mean) {
    YAML::Node at = attrs();
    at["scalar"] = yamlFloat(static_cast<double>(node.inputCount()));
    node.emit("div", {acc}, at);
  }
}

void translateUnary(OnnxNode& node) {
  static const std::map<std::string, const char*> ops = {{"Relu", "relu"},
                                                         {"Sigmoid", "sigmoid"},
                                                         {"Tanh", "tanh"},
                                                         {"Exp", "exp"},
                                                         {"Log", "log"},
                                                         {"Neg", "neg"},
                                                         {"Sqrt", "sqrt"},
                                                         {"Abs", "abs"},
                                                         {"Reciprocal", "reciprocal"},
                                                         {"Erf", "erf"},
                                                         {"Sin", "sin"},
                                                         {"Cos", "cos"},
                                                         {"Floor", "floor"},
                                                         {"Ceil", "ceil"},
                                                         {"Round", "round"},
                                                         {"Sign", "sign"},
                                                         {"Not", "logical_not"},
                                                         {"Softplus", "softplus"},
                                                         {"HardSwish", "hardswish"}};
  node.checkAttrs({});
  node.emit(ops.at(node.opType()), {node.use(0)});
}

// Softmax and LogSoftmax: along one axis since opset 13; before, over the input seen as 2-D,
// its dims before `axis` (default 1) against the rest.
void translateSoftmax(OnnxNode& node) {
  node.checkAttrs({"axis"});
  const char* op = node.opType() == "Softmax" ? "softmax" : "log_softmax";
  Shape x = node.inputType(0).shape;
  const auto rank = static_cast<int64_t>(x.size());
  int64_t axis = node.intAttr("axis", node.opset() >= 13 ? -1 : 1);
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1))
    node.fail("axis {} is out of range for rank {}", axis, rank);
  if (axis < 0) axis += rank;
  YAML::Node at = attrs();
  if (node.opset() >= 13 || axis == rank - 1) {
    at["axis"] = node.opset() >= 13 ? node.intAttr("axis", -1) : int64_t{-1};
    node.emit(op, {node.use(0)}, at);
    return;
  }
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) (d < axis ? outer : inner) *= x[static_cast<size_t>(d)];
  YAML::Node flat = attrs(), back = attrs();
  flat["shape"] = yamlInts({outer, inner});
  back["shape"] = yamlInts(x);
  at["axis"] = -1;
  std::string matrix = node.emit("reshape", {node.use(0)}, flat, false);
  std::string normalized = node.emit(op, {matrix}, at, false);
  node.emit("reshape", {normalized}, back);
}

void translateActivation(OnnxNode& node) {
  const std::string& type = node.opType();
  YAML::Node at = attrs();
  if (type == "LeakyRelu") {
    node.checkAttrs({"alpha"});
    at["negative_slope"] = yamlFloat(node.floatAttr("alpha", 0.01));
    node.emit("leaky_relu", {node.use(0)}, at);
  } else if (type == "Elu") {
    node.checkAttrs({"alpha"});
    at["alpha"] = yamlFloat(node.floatAttr("alpha", 1.0));
    node.emit("elu", {node.use(0)}, at);
  } else if (type == "Selu") {  // gamma * elu(x, alpha)
    node.checkAttrs({"alpha", "gamma"});
    at["alpha"] = yamlFloat(node.floatAttr("alpha", 1.67326319217681884765625));
    std::string elu = node.emit("elu", {node.use(0)}, at, false);
    YAML::Node scale = attrs();
    scale["scalar"] = yamlFloat(node.floatAttr("gamma", 1.05070102214813232421875));
    node.emit("mul", {elu}, scale);
  } else if (type == "Gelu") {
    node.checkAttrs({"approximate"});
    at["approximate"] = node.stringAttr("approximate", "none");
    node.emit("gelu", {node.use(0)}, at);
  } else if (type == "HardSigmoid") {  // max(0, min(1, alpha * x + beta))
    node.checkAttrs({"alpha", "beta"});
    YAML::Node alpha = attrs(), beta = attrs(), bounds = attrs();
    alpha["scalar"] = yamlFloat(node.floatAttr("alpha", 0.2));
    beta["scalar"] = yamlFloat(node.floatAttr("beta", 0.5));
    bounds["min"] = "0.0";
    bounds["max"] = "1.0";
    std::string scaled = node.emit("mul", {node.use(0)}, alpha, false);
    std::string shifted = node.emit("add", {scaled}, beta, false);
    node.emit("clamp", {shifted}, bounds);
  } else if (type == "PRelu") {  // where(x < 0, slope * x, x)
    node.checkAttrs({});
    YAML::Node zero = attrs();
    zero["scalar"] = scalarText(0, node.inputType(0).dtype);
    std::string negative = node.emit("lt", {node.use(0)}, zero, false);
    std::string sloped = node.emit("mul", {node.use(0), node.use(1)}, attrs(), false);
    node.emit("where", {negative, sloped, node.use(0)});
  } else if (type == "Mish") {  // x * tanh(softplus(x))
    node.checkAttrs({});
    std::string soft = node.emit("softplus", {node.use(0)}, attrs(), false);
    std::string tanh = node.emit("tanh", {soft}, attrs(), false);
    node.emit("mul", {node.use(0), tanh});
  } else {
    translateSoftmax(node);
  }
}

void translateClip(OnnxNode& node) {
  node.checkAttrs({"min", "max"});  // attributes before opset 11
  YAML::Node at = attrs();
  DType dtype = node.inputType(0).dtype;
  if (node.hasAttr("min")) at["min"] = scalarText(node.floatAttr("min", 0), dtype);
  if (node.hasAttr("max")) at["max"] = scalarText(node.floatAttr("max", 0), dtype);
  if (!node.hasAttr("min") && !node.hasAttr("max") && !node.hasInput(1) && !node.hasInput(2)) {
    YAML::Node cast = attrs();  // no bounds: the input itself
    cast["dtype"] = dtypeText(dtype);
    node.emit("cast", {node.use(0)}, cast);
    return;
  }
  for (size_t i : {size_t{1}, size_t{2}}) {
    if (!node.hasInput(i)) continue;
    std::optional<double> bound = node.constantScalar(i);
    if (!bound)
      node.fail("its {} must be a constant (gxc's clamp takes numbers)", i == 1 ? "min" : "max");
    at[i == 1 ? "min" : "max"] = scalarText(*bound, dtype);
  }
  node.emit("clamp", {node.use(0)}, at);
}

void translateCast(OnnxNode& node) {
  DType to;
  if (node.opType() == "CastLike") {
    node.checkAttrs({"saturate"});
    to = node.inputType(1).dtype;
  } else {
    node.checkAttrs({"to", "saturate", "round_mode"});
    std::optional<DType> dtype = dtypeFromOnnx(static_cast<int32_t>(node.intAttr("to", 0)));
    if (!dtype)
      node.fail("cast to {}, which gxc has no dtype for",
                onnxTypeName(static_cast<int32_t>(node.intAttr("to", 0))));
    to = *dtype;
  }
  YAML::Node at = attrs();
  at["dtype"] = dtypeText(to);
  node.emit("cast", {node.use(0)}, at);
}

// Identity, and Dropout at inference: the input itself, or a layer when the result is a graph
// output (which needs a value of its own name).
void translateIdentity(OnnxNode& node) {
  if (node.opType() == "Dropout") {
    node.checkAttrs({"seed", "ratio"});  // the ratio only matters in training
    if (node.hasInput(2) && node.constantScalar(2).value_or(1) != 0)
      node.fail("training_mode must be false: gxc runs Dropout at inference");
    if (node.outputCount() > 1 && !node.proto().output(1).empty())
      node.fail("its mask output is not supported");
  } else {
    node.checkAttrs({});
  }
  YAML::Node at = attrs();
  at["dtype"] = dtypeText(node.inputType(0).dtype);
  node.emit("cast", {node.use(0)}, at);
}

void translateWhere(OnnxNode& node) {
  node.checkAttrs({});
  node.emit("where", {node.use(0), node.use(1), node.use(2)});
}

}  // namespace

void addElementwiseTranslators(OnnxTranslators& table) {
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Equal", "Less", "LessOrEqual",
                         "Greater", "GreaterOrEqual", "And", "Or"})
    table[op] = translateBinary;
  for (const char* op : {"Sum", "Mean", "Max", "Min"}) table[op] = translateVariadic;
  for (const char* op :
       {"Relu", "Sigmoid", "Tanh", "Exp", "Log", "Neg", "Sqrt", "Abs", "Reciprocal", "Erf", "Sin",
        "Cos", "Floor", "Ceil", "Round", "Sign", "Not", "Softplus", "HardSwish"})
    table[op] = translateUnary;
  for (const char* op : {"LeakyRelu", "Elu", "Selu", "Gelu", "HardSigmoid", "PRelu", "Mish",
                         "Softmax", "LogSoftmax"})
    table[op] = translateActivation;
  table["Clip"] = translateClip;
  table["Cast"] = translateCast;
  table["CastLike"] = translateCast;
  table["Identity"] = translateIdentity;
  table["Dropout"] = translateIdentity;
  table["Where"] = translateWhere;
}

}  // namespace gxc
