#include "passes/autodiff.h"

#include <map>
#include <set>

#include <fmt/format.h>

#include "passes/autodiff_rules.h"

namespace gxc {
namespace {

[[noreturn]] void lossError(const Graph& graph, const SourceLoc& loc, const std::string& text) {
  throw Error(ErrorKind::Model, loc,
              fmt::format("train: loss: {} (graph '{}')", text, graph.name()));
}

Value* findLoss(const Graph& graph) {
  std::string name = graph.attrs().getString("train_loss", "");
  if (name.empty())
    throw Error(ErrorKind::Model, {},
                fmt::format("autodiff: graph '{}' has no `train_loss` attribute naming its loss",
                            graph.name()));
  Value* loss = graph.find(name);
  if (!loss) lossError(graph, {}, fmt::format("'{}' is not a layer of the model", name));
  if (!loss->producer || loss->producer->kind == OpKind::Param)
    lossError(graph, loss->loc,
              fmt::format("'{}' is an input or a param, not a layer computing the loss", name));
  if (loss->type.rank() != 0 || !isFloat(loss->type.dtype))
    lossError(graph, loss->producer->loc,
              fmt::format("layer '{}' is {}, but the loss must be a 0-d float (a reduction "
                          "'mean' or 'sum' of the loss layer)",
                          name, loss->type.withoutDevice()));
  return loss;
}

// The values that depend on a trainable param: those that need a gradient.
std::set<const Value*> valuesNeedingGradients(const Graph& graph) {
  std::set<const Value*> needing;
  for (const Op* op : graph.ops()) {
    if (op->kind == OpKind::Param) {
      if (isTrainableParam(*op)) needing.insert(op->result);
      continue;
    }
    // Not differentiable, or (a class-index loss's `weight_sum`, the denominator of a mean
    // split by data-parallel or pipeline-stages) depending on the targets and weights only.
    if (!isFloat(op->result->type.dtype) || op->attrs.getBool("weight_sum", false)) continue;
    for (const Value* operand : op->operands)
      if (needing.count(operand)) {
        needing.insert(op->result);
        break;
      }
  }
  return needing;
}

}  // namespace

bool isTrainableParam(const Op& param) {
  return param.kind == OpKind::Param && !param.attrs.getBool("frozen", false) &&
         !param.attrs.getBool("buffer", false) && !param.attrs.has("role") &&
         isFloat(param.result->type.dtype);
}

bool AutodiffPass::run(Graph& graph, const PassContext&) const {
  Value* loss = findLoss(graph);
  std::set<const Value*> needing = valuesNeedingGradients(graph);
  if (!needing.count(loss))
    lossError(
        graph, loss->producer->loc,
        fmt::format("layer '{}' depends on no trainable param (all frozen, or none)", loss->name));
  std::vector<Op*> forward = graph.ops();  // a snapshot: the backward is appended after it

  // d loss / d loss = 1, a constant the backward's first ops read.
  Attrs seedAttrs;
  seedAttrs.set("init", std::string("constant"));
  seedAttrs.set("value", 1.0);
  seedAttrs.set("seed", int64_t{0});
  seedAttrs.set("role", std::string("gradient_seed"));
  Value* seed = addTrainingParam(graph, "grad." + loss->name + ".seed", loss->type, seedAttrs,
                                 loss->producer->loc);

  std::map<const Value*, Value*> gradients{{loss, seed}};
  for (auto it = forward.rbegin(); it != forward.rend(); ++it) {
    Op* op = *it;
    if (op->kind == OpKind::Param) continue;
    auto dy = gradients.find(op->result);
    if (dy == gradients.end()) continue;
    std::vector<bool> needed;
    bool any = false;
    for (const Value* operand : op->operands) {
      needed.push_back(needing.count(operand) != 0);
      any = any || needed.back();
    }
    if (!any) continue;
    GradBuilder builder(graph, *op);
    std::vector<Value*> operandGradients = gradientsOf(builder, dy->second, needed);
    for (size_t i = 0; i < op->operands.size(); ++i) {
      if (!needed[i] || !operandGradients[i]) continue;
      Value*& total = gradients[op->operands[i]];
      total = total ? builder.op(OpKind::Add, {total, operandGradients[i]}) : operandGradients[i];
    }
  }

  bool lossIsOutput = false;
  for (const GraphOutput& output : graph.outputs()) lossIsOutput |= output.value == loss;
  if (!lossIsOutput) graph.addOutput(loss->name, loss);
  for (const Op* op : forward) {
    if (!isTrainableParam(*op)) continue;
    auto gradient = gradients.find(op->result);
    if (gradient != gradients.end()) graph.addOutput("grad." + op->result->name, gradient->second);
  }
  return true;
}

}  // namespace gxc
