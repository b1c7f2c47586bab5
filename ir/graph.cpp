#include "ir/graph.h"

#include <algorithm>
#include <unordered_set>

namespace gxc {

Value* Graph::newValue(const std::string& name, TensorType type) {
  auto [slot, added] = valuesByName_.try_emplace(name, nullptr);  // one lookup, not two
  GXC_CHECK(added, "value name '{}' defined twice", name);
  valueStorage_.push_back(std::make_unique<Value>(Value{name, std::move(type), nullptr, {}}));
  slot->second = valueStorage_.back().get();
  return slot->second;
}

void Graph::reserve(size_t values) {
  valuesByName_.reserve(values);
  valueStorage_.reserve(values);
  opStorage_.reserve(values);
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
  if (anchor) requireInOrder(anchor);  // before anything changes
  auto op = std::make_unique<Op>();
  op->kind = kind;
  op->operands = std::move(operands);
  op->attrs = std::move(attrs);
  op->loc = std::move(loc);
  op->result = newValue(resultName, std::move(type));
  op->result->producer = op.get();
  Op* raw = op.get();
  opStorage_.push_back(std::move(op));
  link(raw, anchor);
  // Appending keeps ops() as it is (the frontend builds graphs this way); positions are
  // rebuilt when next asked for, not kept up per op, which would cost a hash insert each.
  if (anchor)
    opsStale_ = true;
  else if (!opsStale_)
    ops_.push_back(raw);
  indexStale_ = true;
  return raw;
}

void Graph::reorderOps(std::vector<Op*> order) {
  GXC_CHECK(order.size() == opCount_, "reordering {} ops into {}", opCount_, order.size());
  std::unordered_set<const Op*> present;
  for (const Op* op = first_; op; op = op->next_) present.insert(op);
  std::unordered_set<const Value*> defined(inputs_.begin(), inputs_.end());
  for (const Op* op : order) {
    GXC_CHECK(present.erase(op) == 1, "reordering graph @{}: op '{}' is not in it, or twice", name_,
              op->layerName());
    for (const Value* operand : op->operands)
      GXC_CHECK(defined.count(operand), "reordering graph @{}: '{}' would read '{}' too early",
                name_, op->layerName(), operand->name);
    defined.insert(op->result);
  }
  if (!erasedSinceRefresh_.empty()) refreshOps();  // checks what was erased, in the old order
  first_ = last_ = nullptr;
  opCount_ = 0;
  for (Op* op : order) link(op, nullptr);
  ops_ = std::move(order);
  opsStale_ = false;
  indexStale_ = true;
}

void Graph::eraseOp(Op* op) {
  requireInOrder(op);
  unlink(op);
  valuesByName_.erase(op->result->name);
  erasedSinceRefresh_.push_back(op);
  opsStale_ = indexStale_ = true;
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

void Graph::removeOutput(size_t index) {
  GXC_CHECK(index < outputs_.size(), "output {} of {}", index, outputs_.size());
  outputs_.erase(outputs_.begin() + static_cast<std::ptrdiff_t>(index));
}

void Graph::setOutputValue(size_t index, Value* value) { outputs_.at(index).value = value; }

Value* Graph::find(const std::string& name) const {
  auto it = valuesByName_.find(name);
  return it == valuesByName_.end() ? nullptr : it->second;
}

void Graph::attachParamData(const std::string& path, std::shared_ptr<const ParamData> data) {
  paramData_[path] = std::move(data);
}

const ParamData* Graph::findParamData(const std::string& path) const {
  auto it = paramData_.find(path);
  return it == paramData_.end() ? nullptr : it->second.get();
}

std::string Graph::uniqueName(const std::string& base) const {
  if (!find(base)) return base;
  for (int i = 1;; ++i) {
    std::string candidate = base + "." + std::to_string(i);
    if (!find(candidate)) return candidate;
  }
}

const std::vector<Op*>& Graph::ops() const {
  if (opsStale_) refreshOps();
  return ops_;
}

// Rebuilds ops() from the list, and checks the erasures since the last rebuild in one walk:
// eraseOp's contract (nothing reads the result) holds once the rewrite that erased is done.
void Graph::refreshOps() const {
  ops_.clear();
  ops_.reserve(opCount_);
  for (Op* op = first_; op; op = op->next_) ops_.push_back(op);
  opsStale_ = false;
  indexStale_ = true;
  if (erasedSinceRefresh_.empty()) return;
  std::unordered_map<const Value*, const Op*> erased;
  for (const Op* op : erasedSinceRefresh_) erased.emplace(op->result, op);
  erasedSinceRefresh_.clear();
  for (const Op* op : ops_)
    for (const Value* operand : op->operands)
      if (auto it = erased.find(operand); it != erased.end())
        GXC_CHECK(false, "erased op '{}' but '{}' still reads its result", it->second->layerName(),
                  op->layerName());
  for (const GraphOutput& output : outputs_)
    if (auto it = erased.find(output.value); it != erased.end())
      GXC_CHECK(false, "erased op '{}' whose result is an output", it->second->layerName());
}

std::vector<Op*> Graph::users(const Value* value) const {
  std::vector<Op*> result;
  for (Op* op : ops())
    if (std::find(op->operands.begin(), op->operands.end(), value) != op->operands.end())
      result.push_back(op);
  return result;
}

std::unordered_map<const Value*, std::vector<Op*>> Graph::usersByValue() const {
  std::unordered_map<const Value*, std::vector<Op*>> result;
  for (Op* op : ops())
    for (const Value* operand : op->operands) {
      std::vector<Op*>& users = result[operand];
      if (users.empty() || users.back() != op) users.push_back(op);  // once per reader
    }
  return result;
}

size_t Graph::opIndex(const Op* op) const {
  const std::vector<Op*>& ops = this->ops();
  if (indexStale_) {
    indexOf_.clear();
    indexOf_.reserve(ops.size());
    for (size_t i = 0; i < ops.size(); ++i) indexOf_.emplace(ops[i], i);
    indexStale_ = false;
  }
  auto it = indexOf_.find(op);
  GXC_CHECK(it != indexOf_.end(), "op '{}' is not in graph @{}", op->layerName(), name_);
  return it->second;
}

Op* Graph::nextOp(const Op* op) const {
  requireInOrder(op);
  return op->next_;
}

void Graph::requireInOrder(const Op* op) const {
  GXC_CHECK(op->graph_ == this, "op '{}' is not in graph @{}", op->layerName(), name_);
}

void Graph::link(Op* op, Op* before) {
  Op* after = before ? before->prev_ : last_;  // op goes between `after` and `before`
  op->graph_ = this;
  op->prev_ = after;
  op->next_ = before;
  (after ? after->next_ : first_) = op;
  (before ? before->prev_ : last_) = op;
  ++opCount_;
}

void Graph::unlink(Op* op) {
  (op->prev_ ? op->prev_->next_ : first_) = op->next_;
  (op->next_ ? op->next_->prev_ : last_) = op->prev_;
  op->graph_ = nullptr;
  op->prev_ = op->next_ = nullptr;
  --opCount_;
}

}  // namespace gxc
