// ONNX's reductions as gxc layers: ReduceSum, Mean, Max, Min, Prod, LogSumExp directly; the
// norms (L1, L2, SumSquare, LogSum) as the few layers they are; ArgMax and ArgMin.
#include "frontend/onnx_node.h"

namespace gxc {
namespace {

YAML::Node attrs() { return YAML::Node(YAML::NodeType::Map); }

// The axes (an input from opset 18, 13 for ReduceSum; an attribute before) and keepdims;
// none named reduces every axis unless noop_with_empty_axes.
YAML::Node reduceAttrs(OnnxNode& node, bool* noop) {
  node.checkAttrs({"axes", "keepdims", "noop_with_empty_axes"});
  std::vector<int64_t> axes = node.intsAttr("axes");
  if (node.hasInput(1)) axes = node.constantInts(1, "axes");
  *noop = axes.empty() && node.intAttr("noop_with_empty_axes", 0) != 0;
  YAML::Node at = attrs();
  if (!axes.empty()) at["axis"] = yamlInts(axes);
  at["keepdim"] = node.intAttr("keepdims", 1) != 0;
  return at;
}

void translateReduce(OnnxNode& node) {
  static const std::map<std::string, const char*> ops = {
      {"ReduceSum", "sum"},   {"ReduceMean", "mean"}, {"ReduceMax", "max"},
      {"ReduceMin", "min"},   {"ReduceProd", "prod"}, {"ReduceLogSumExp", "logsumexp"},
      {"ReduceL1", "sum"},    {"ReduceL2", "sum"},    {"ReduceSumSquare", "sum"},
      {"ReduceLogSum", "sum"}};
  const std::string& type = node.opType();
  bool noop = false;
  YAML::Node at = reduceAttrs(node, &noop);
  std::string x = node.use(0);
  if (noop) {  // the input itself, as ONNX defines it
    YAML::Node cast = attrs();
    cast["dtype"] = dtypeText(node.inputType(0).dtype);
    node.emit("cast", {x}, cast);
    return;
  }
  if (type == "ReduceL1") x = node.emit("abs", {x}, attrs(), false);
  if (type == "ReduceL2" || type == "ReduceSumSquare") x = node.emit("mul", {x, x}, attrs(), false);
  const bool after = type == "ReduceL2" || type == "ReduceLogSum";
  std::string reduced = node.emit(ops.at(type), {x}, at, !after);
  if (type == "ReduceL2") node.emit("sqrt", {reduced});
  if (type == "ReduceLogSum") node.emit("log", {reduced});
}

void translateArg(OnnxNode& node) {
  node.checkAttrs({"axis", "keepdims", "select_last_index"});
  if (node.intAttr("select_last_index", 0))
    node.fail("select_last_index = 1 is not supported (gxc returns the first of equal values)");
  YAML::Node at = attrs();
  at["axis"] = node.intAttr("axis", 0);
  at["keepdim"] = node.intAttr("keepdims", 1) != 0;
  node.emit(node.opType() == "ArgMax" ? "argmax" : "argmin", {node.use(0)}, at);
}

}  // namespace

void addReductionTranslators(OnnxTranslators& table) {
  for (const char* op :
       {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceLogSumExp",
        "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum"})
    table[op] = translateReduce;
  table["ArgMax"] = translateArg;
  table["ArgMin"] = translateArg;
}

}  // namespace gxc
