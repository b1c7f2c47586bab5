#include "ir/graph.h"

#include <algorithm>
#include <unordered_set>

namespace gxc {

Value* Graph::newValue(const std::string& name, TensorType type) {
  GXC_CHECK(find(name) == nullptr, "value name '{}' defined twice", name);
  valueStorage_.push_back(std::make_unique<Value>(Value{name, std::move(type), nullptr, {}}));
  valuesByName_[name] = valueStorage_.back().get();
  return valueStorage_.back().get();
}

Value* Graph::addInput(const std::string& name, TensorType type, SourceLoc loc) {
  Value* value = newValue(name, std::move(type));
  value->loc = std::move(loc);
  inputs_.push_back(value);
  return value;
}

Op* Graph::appendOp(OpKind kind, std::vector<Value*> operands, const std::string& resultName,
                    TensorType type, Attrs attrs, SourceLoc loc) {
  return insertOpBefore(nullptr, kind, std::move(operands), resultName, std::move(type),
                        std::move(attrs), std::move(loc));
}

Op* Graph::insertOpBefore(Op* anchor, OpKind kind, std::vector<Value*> operands,
                          const std::string& resultName, TensorType type, Attrs attrs,
                          SourceLoc loc) {
  auto op = std::make_unique<Op>();
  op->kind = kind;
  op->operands = std::move(operands);
  op->attrs = std::move(attrs);
  op->loc = std::move(loc);
  op->result = newValue(resultName, std::move(type));
  op->result->producer = op.get();
  Op* raw = op.get();
  opStorage_.push_back(std::move(op));
  auto at = anchor ? ops_.begin() + static_cast<std::ptrdiff_t>(opIndex(anchor)) : ops_.end();
  ops_.insert(at, raw);
  return raw;
}

void Graph::reorderOps(std::vector<Op*> order) {
  GXC_CHECK(order.size() == ops_.size(), "reordering {} ops into {}", ops_.size(), order.size());
  std::unordered_set<const Op*> present(ops_.begin(), ops_.end());
  std::unordered_set<const Value*> defined(inputs_.begin(), inputs_.end());
  for (const Op* op : order) {
    GXC_CHECK(present.erase(op) == 1, "reordering graph @{}: op '{}' is not in it, or twice", name_,
              op->layerName());
    for (const Value* operand : op->operands)
      GXC_CHECK(defined.count(operand), "reordering graph @{}: '{}' would read '{}' too early",
                name_, op->layerName(), operand->name);
    defined.insert(op->result);
  }
  ops_ = std::move(order);
}

void Graph::eraseOp(Op* op) {
  GXC_CHECK(users(op->result).empty(), "erasing op '{}' whose result is still used",
            op->layerName());
  for (const GraphOutput& output : outputs_)
    GXC_CHECK(output.value != op->result, "erasing op '{}' whose result is an output",
              op->layerName());
  ops_.erase(ops_.begin() + static_cast<std::ptrdiff_t>(opIndex(op)));
  valuesByName_.erase(op->result->name);
  // Storage stays until the graph dies, so stale pointers never dangle.
}

void Graph::replaceAllUsesWith(Value* from, Value* to) {
  for (Op* op : ops_)
    for (Value*& operand : op->operands)
      if (operand == from) operand = to;
  for (GraphOutput& output : outputs_)
    if (output.value == from) output.value = to;
}

void Graph::addOutput(const std::string& name, Value* value) { outputs_.push_back({name, value}); }

void Graph::setOutputValue(size_t index, Value* value) { outputs_.at(index).value = value; }

Value* Graph::find(const std::string& name) const {
  auto it = valuesByName_.find(name);
  return it == valuesByName_.end() ? nullptr : it->second;
}

std::string Graph::uniqueName(const std::string& base) const {
  if (!find(base)) return base;
  for (int i = 1;; ++i) {
    std::string candidate = base + "." + std::to_string(i);
    if (!find(candidate)) return candidate;
  }
}

std::vector<Op*> Graph::users(const Value* value) const {
  std::vector<Op*> result;
  for (Op* op : ops_)
    if (std::find(op->operands.begin(), op->operands.end(), value) != op->operands.end())
      result.push_back(op);
  return result;
}

size_t Graph::opIndex(const Op* op) const {
  auto it = std::find(ops_.begin(), ops_.end(), op);
  GXC_CHECK(it != ops_.end(), "op '{}' is not in graph @{}", op->layerName(), name_);
  return static_cast<size_t>(it - ops_.begin());
}

}  // namespace gxc
