// Values, ops and graphs: the in-memory IR.
//
// A graph is a straight-line SSA program: inputs, then ops in execution order (every operand
// is defined before it is used), then named outputs. The graph owns every value and op;
// raw pointers between them stay valid until the graph is destroyed.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/attributes.h"
#include "ir/diagnostic.h"
#include "ir/op_kinds.h"
#include "ir/tensor_type.h"

namespace gxc {

struct Op;

struct Value {
  std::string name;  // unique in its graph; for layer results, the layer's name
  TensorType type;
  Op* producer = nullptr;  // null for graph inputs
  SourceLoc loc;           // for graph inputs: where the model declares them
};

struct Op {
  OpKind kind;
  std::vector<Value*> operands;
  Value* result = nullptr;
  Attrs attrs;
  SourceLoc loc;  // the layer (or param) in the model file

  // The model's name for what this op computes: errors say "layer 'NAME'".
  const std::string& layerName() const { return result->name; }
  const Device& device() const { return result->type.device; }
};

struct GraphOutput {
  std::string name;  // the model's output name: `--output DIR` writes DIR/NAME.npy
  Value* value = nullptr;
};

class Graph {
 public:
  explicit Graph(std::string name) : name_(std::move(name)) {}
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  const std::string& name() const { return name_; }
  Attrs& attrs() { return attrs_; }
  const Attrs& attrs() const { return attrs_; }
  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Op*>& ops() const { return ops_; }
  const std::vector<GraphOutput>& outputs() const { return outputs_; }

  Value* addInput(const std::string& name, TensorType type, SourceLoc loc = {});
  // Appends an op computing a new value `resultName` (which must be unused).
  Op* appendOp(OpKind kind, std::vector<Value*> operands, const std::string& resultName,
               TensorType type, Attrs attrs = {}, SourceLoc loc = {});
  // Inserts a new op right before `anchor` (or at the end when anchor is null).
  Op* insertOpBefore(Op* anchor, OpKind kind, std::vector<Value*> operands,
                     const std::string& resultName, TensorType type, Attrs attrs = {},
                     SourceLoc loc = {});
  // Puts the ops in `order`: the same ops, every operand still defined before it is used.
  void reorderOps(std::vector<Op*> order);
  // Removes an op whose result nothing uses any more.
  void eraseOp(Op* op);
  // Every operand and output that is `from` becomes `to`.
  void replaceAllUsesWith(Value* from, Value* to);
  void addOutput(const std::string& name, Value* value);
  void setOutputValue(size_t index, Value* value);

  Value* find(const std::string& name) const;  // null when absent
  // `base` if unused, else base.1, base.2, ...
  std::string uniqueName(const std::string& base) const;
  std::vector<Op*> users(const Value* value) const;
  size_t opIndex(const Op* op) const;

 private:
  Value* newValue(const std::string& name, TensorType type);

  std::string name_;
  Attrs attrs_;
  std::vector<Value*> inputs_;
  std::vector<Op*> ops_;
  std::vector<GraphOutput> outputs_;
  std::vector<std::unique_ptr<Value>> valueStorage_;
  std::unordered_map<std::string, Value*> valuesByName_;
  std::vector<std::unique_ptr<Op>> opStorage_;
};

}  // namespace gxc
