#include "passes/insert_copies.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace gxc {
namespace {

std::string copyName(const Graph& graph, const Value* value, const Device& destination) {
  std::string suffix = destination.str();
  suffix.erase(std::remove(suffix.begin(), suffix.end(), ':'), suffix.end());
  return graph.uniqueName(value->name + "." + suffix);
}

class CopyInserter {
 public:
  CopyInserter(Graph& graph, const PassContext& context) : graph_(graph), context_(context) {}

  bool run() {
    std::vector<Op*> ops = graph_.ops();  // a snapshot: copies are inserted as we go
    for (Op* op : ops) {
      forward(op);
      if (op->kind == OpKind::To)
        lowerTo(op);
      else if (op->kind == OpKind::Copy)  // an edge already: later consumers share it
        copies_.emplace(std::pair{op->operands[0], op->device().str()}, op->result);
      else if (op->kind != OpKind::Param)
        bringOperandsTo(op);
    }
    returnOutputsToHost();
    return changed_;
  }

 private:
  // The copy of `value` on `destination`, made before `consumer` if there is none yet.
  Value* copyOf(Value* value, const Device& destination, Op* consumer) {
    Value*& copy = copies_[{value, destination.str()}];
    if (!copy) {
      TensorType type = value->type;
      type.device = destination;
      SourceLoc loc = consumer ? consumer->loc : SourceLoc{};
      copy = graph_
                 .insertOpBefore(consumer, OpKind::Copy, {value},
                                 copyName(graph_, value, destination), type, {}, loc)
                 ->result;
      changed_ = true;
    }
    return copy;
  }

  void bringOperandsTo(Op* op) {
    for (Value*& operand : op->operands) {
      if (operand->type.device == op->device()) continue;
      if (context_.strict)
        modelError(op->loc,
                   "layer '{}' runs on {} but its input '{}' is on {} (--strict: move it with "
                   "a `to` layer)",
                   op->layerName(), op->device().str(), operand->name, operand->type.device.str());
      operand = copyOf(operand, op->device(), op);
    }
  }

  // Readers of a `to` that moved nothing read its source instead. Every reader comes after
  // the `to`, so rewriting operands as the walk reaches them replaces all uses in one pass
  // (replaceAllUsesWith per `to` would walk the graph once each).
  void forward(Op* op) {
    if (forwarded_.empty()) return;
    for (Value*& operand : op->operands)
      if (auto it = forwarded_.find(operand); it != forwarded_.end()) operand = it->second;
  }

  // A `to` asked for its transfer: it becomes the copy itself, or nothing.
  void lowerTo(Op* op) {
    Value* source = op->operands[0];
    changed_ = true;
    if (source->type.device == op->device()) {
      forwarded_[op->result] = source;
      graph_.eraseOp(op);
      return;
    }
    op->kind = OpKind::Copy;
    op->attrs = {};
    copies_[{source, op->device().str()}] = op->result;
  }

  void returnOutputsToHost() {
    for (size_t i = 0; i < graph_.outputs().size(); ++i) {
      Value* value = graph_.outputs()[i].value;
      if (auto it = forwarded_.find(value); it != forwarded_.end()) {
        value = it->second;
        graph_.setOutputValue(i, value);
      }
      if (value->type.device.isCpu()) continue;
      graph_.setOutputValue(i, copyOf(value, Device::cpu(), nullptr));
    }
  }

  Graph& graph_;
  const PassContext& context_;
  std::map<std::pair<const Value*, std::string>, Value*> copies_;
  std::unordered_map<const Value*, Value*> forwarded_;  // erased `to` result -> its source
  bool changed_ = false;
};

}  // namespace

bool InsertCopiesPass::run(Graph& graph, const PassContext& context) const {
  for (const Op* op : graph.ops())
    GXC_CHECK(op->device().placed(), "insert-copies before assign-devices: '{}' is unplaced",
              op->layerName());
  return CopyInserter(graph, context).run();
}

}  // namespace gxc
