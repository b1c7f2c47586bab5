// GELUs that exporters write out as arithmetic, imported as one `gelu` layer.
//
// PyTorch exports nn.GELU below opset 20 as its formula: x * 0.5 * (1 + erf(x / sqrt(2))),
// and the tanh form as 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))), five and nine
// elementwise nodes whose order, operand order and constants vary with the exporter (a Div by
// sqrt(2) or a Mul by its inverse, x^3 as Pow or two Muls, the 0.5 first or last). As separate
// ops they are a kernel of their own after the GEMM that computes x, with a scalar erf or tanh
// per element; as one `gelu` they join the GEMM's epilogue (ir/fused_kernel.h), as ONNX
// Runtime's Gelu fusion makes them one op.
//
// A match is found by what the nodes compute, not by their order: the *cone* of a Mul node
// (its root) is the well-formed elementwise nodes (Add Sub Mul Div Pow Erf Tanh Sqrt) it is
// computed from, back to scalar constants and to values that are not such nodes. It matches
// when exactly one of those values, x, is not a constant, when no member's result is read
// outside the cone or is a graph output, and when the cone, evaluated in double at 33 points
// from -6 to 6, agrees with one GELU form at every point to 1e-6 (the exported constants are
// f32, 1e-7 off; the two forms differ by up to 5e-4 there). The layer is emitted where the
// cone's first node was, named and located as its root; the other members emit nothing.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "frontend/onnx_importer.h"

namespace gxc {
namespace {

constexpr size_t kMaxConeNodes = 16;

// A well-formed node of the ops a cone may hold: its inputs all given, one output, no
// attributes (a malformed one is left to its translator, which refuses it).
bool isConeNode(const onnx::NodeProto& node) {
  static const std::set<std::string> binary = {"Add", "Sub", "Mul", "Div", "Pow"};
  static const std::set<std::string> unary = {"Erf", "Tanh", "Sqrt"};
  const int arity = binary.count(node.op_type()) ? 2 : unary.count(node.op_type()) ? 1 : 0;
  return arity > 0 && node.input_size() == arity && node.output_size() == 1 &&
         node.attribute_size() == 0 &&
         std::none_of(node.input().begin(), node.input().end(),
                      [](const std::string& input) { return input.empty(); }) &&
         (node.domain().empty() || node.domain() == "ai.onnx");
}

double geluExact(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

double geluTanh(double x) {
  const double pi = 3.14159265358979323846;
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / pi) * (x + 0.044715 * x * x * x)));
}

double apply(const std::string& op, double a, double b) {
  if (op == "Add") return a + b;
  if (op == "Sub") return a - b;
  if (op == "Mul") return a * b;
  if (op == "Div") return a / b;
  if (op == "Pow") return std::pow(a, b);
  if (op == "Erf") return std::erf(a);
  if (op == "Tanh") return std::tanh(a);
  return std::sqrt(a);  // Sqrt
}

}  // namespace

// A scalar known at import before any node runs: an initializer or a Constant node's value of
// one element. Its rank goes to `rank`.
std::optional<double> OnnxImporter::importScalar(const std::string& name, size_t& rank) {
  const onnx::TensorProto* proto = nullptr;
  auto initializer = initializers_.find(name);
  if (initializer != initializers_.end()) {
    proto = initializer->second;
  } else {
    auto producer = producerOf_.find(name);
    if (producer == producerOf_.end() || order_[producer->second]->op_type() != "Constant")
      return std::nullopt;
    for (const onnx::AttributeProto& attribute : order_[producer->second]->attribute()) {
      if (attribute.name() == "value_float") {
        rank = 0;
        return attribute.f();
      }
      if (attribute.name() == "value" && attribute.has_t()) proto = &attribute.t();
    }
  }
  if (!proto || !dtypeFromOnnx(proto->data_type())) return std::nullopt;
  if (!std::all_of(proto->dims().begin(), proto->dims().end(), [](int64_t d) { return d == 1; }))
    return std::nullopt;  // not one element
  Tensor value = readOnnxTensor(*proto, model_, fmt::format("constant '{}'", name));
  rank = value.shape().size();
  return value.loadDouble(0);
}

std::optional<OnnxGelu> OnnxImporter::geluRootedAt(size_t root, const std::string& forcedLeaf,
                                                   std::vector<std::string>* readTwice) {
  OnnxGelu gelu;
  gelu.root = root;
  std::set<size_t> members;  // ordered positions: producers first
  std::set<std::string> variables;
  std::map<std::string, double> scalars;
  // Grows the cone back from `value`'s producer; false when it grows too large.
  std::function<bool(const std::string&)> grow = [&](const std::string& value) -> bool {
    if (value.empty() || scalars.count(value) || variables.count(value)) return true;
    size_t rank = 0;
    if (std::optional<double> scalar = importScalar(value, rank)) {
      scalars[value] = *scalar;
      gelu.constantRank = std::max(gelu.constantRank, rank);
      return true;
    }
    auto producer = producerOf_.find(value);
    if (value == forcedLeaf || producer == producerOf_.end() ||
        !isConeNode(*order_[producer->second]) || absorbed_[producer->second]) {
      variables.insert(value);
      return true;
    }
    if (members.count(producer->second)) return true;
    if (members.size() == kMaxConeNodes) return false;
    members.insert(producer->second);
    for (const std::string& input : order_[producer->second]->input())
      if (!grow(input)) return false;
    return true;
  };
  members.insert(root);
  for (const std::string& input : order_[root]->input())
    if (!grow(input)) return std::nullopt;
  if (readTwice) {
    std::map<std::string, int> reads;
    for (size_t position : members)
      for (const std::string& input : order_[position]->input())
        if (!scalars.count(input) && ++reads[input] == 2) readTwice->push_back(input);
  }
  if (variables.size() != 1 || members.size() < 3) return std::nullopt;
  gelu.x = *variables.begin();
  // No member but the root is read outside the cone or is a graph output.
  for (size_t position : members) {
    if (position == root) continue;
    for (const std::string& output : order_[position]->output()) {
      if (graphOutputs_.count(output)) return std::nullopt;
      for (size_t reader : readersOf_[output])
        if (!members.count(reader)) return std::nullopt;
    }
  }
  // What the cone computes, in double, at each probe point.
  auto evaluate = [&](double x) {
    std::map<std::string, double> values = scalars;
    values[gelu.x] = x;
    for (size_t position : members) {
      const onnx::NodeProto& node = *order_[position];
      double a = values.at(node.input(0));
      double b = node.input_size() > 1 ? values.at(node.input(1)) : 0.0;
      values[node.output(0)] = apply(node.op_type(), a, b);
    }
    return values.at(order_[root]->output(0));
  };
  bool exact = true, tanh = true;
  for (double x = -6.0; x <= 6.0; x += 0.375) {
    double y = evaluate(x);
    exact = exact && std::abs(y - geluExact(x)) <= 1e-6 * std::max(1.0, std::abs(y));
    tanh = tanh && std::abs(y - geluTanh(x)) <= 1e-6 * std::max(1.0, std::abs(y));
  }
  if (!exact && !tanh) return std::nullopt;
  gelu.tanh = !exact;
  gelu.members.assign(members.begin(), members.end());
  return gelu;
}

void OnnxImporter::findGelus() {
  absorbed_.assign(order_.size(), false);
  for (size_t k = 0; k < order_.size(); ++k) {
    for (const std::string& output : order_[k]->output()) producerOf_[output] = k;
    for (const std::string& input : order_[k]->input()) readersOf_[input].push_back(k);
  }
  // Last first, so that a cone is found whole from its root, not from a member.
  for (size_t root = order_.size(); root-- > 0;) {
    const onnx::NodeProto& node = *order_[root];
    if (absorbed_[root] || node.op_type() != "Mul" || !isConeNode(node)) continue;
    std::vector<std::string> readTwice;
    std::optional<OnnxGelu> gelu = geluRootedAt(root, "", &readTwice);
    // The first try stops only at values that are no cone op; where x is itself such an op
    // (gelu(a * b), gelu(x + bias)), it is one of the values the cone reads twice or more.
    for (size_t i = 0; !gelu && i < readTwice.size(); ++i)
      gelu = geluRootedAt(root, readTwice[i], nullptr);
    if (!gelu) continue;
    for (size_t member : gelu->members) absorbed_[member] = true;
    gelus_[gelu->members.front()] = std::move(*gelu);
  }
}

bool OnnxImporter::emitGelu(size_t first) {
  auto found = gelus_.find(first);
  if (found == gelus_.end()) return false;
  const OnnxGelu& gelu = found->second;
  auto x = gxcName_.find(gelu.x);
  // x must be computed (a constant x folds as arithmetic) and float, and the constants must not
  // add dims to it.
  bool emits = x != gxcName_.end();
  if (emits) {
    const TensorType type = builder_->find(x->second)->type;
    emits = isFloat(type.dtype) && static_cast<size_t>(type.rank()) >= gelu.constantRank;
  }
  if (!emits) {
    for (size_t member : gelu.members) absorbed_[member] = false;
    return false;
  }
  OnnxNode root(*this, *order_[gelu.root], indexOf_[gelu.root]);
  YAML::Node attrs(YAML::NodeType::Map);
  if (gelu.tanh) attrs["approximate"] = "tanh";
  root.emit("gelu", {x->second}, attrs);
  return true;
}

}  // namespace gxc
