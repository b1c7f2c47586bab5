// Values, ops and graphs: the in-memory IR.
//
// A graph is a straight-line SSA program: inputs, then ops in execution order (every operand
// is defined before it is used), then named outputs. The graph owns every value and op;
// raw pointers between them stay valid until the graph is destroyed.
//
// Cost model, for passes over graphs of 100,000 ops: the program order is a list threaded
// through the ops themselves, so inserting and erasing an op are O(1), with no lookup and no
// allocation beyond the op; ops() and opIndex() are a vector and an index map
// rebuilt from the list, once, on the first call after a batch of insertions and erasures
// (appending keeps ops() as it is). A rewriter that inserts as it walks a snapshot of
// ops(), and asks for positions only between such batches, stays linear. users() walks
// every op: a pass that asks for many values takes usersByValue() once instead.
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

class Graph;
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
  // The graph whose program order holds the op (null once erased).
  const Graph* graph() const { return graph_; }

 private:
  friend class Graph;
  // The program order (Graph's), threaded through its ops: null at the ends. `graph_` is the
  // graph whose order holds the op, null once erased.
  const Graph* graph_ = nullptr;
  Op* prev_ = nullptr;
  Op* next_ = nullptr;
};

// Bytes a graph's params are read from that lie in no file on disk (an imported ONNX model's
// initializers, tensor/safetensors.h), held by the graph under the path its params name
// (`file`): each graph reads its own, whatever another graph of a file of the same name holds.
class ParamData {
 public:
  virtual ~ParamData() = default;
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
  // The ops in program order.
  const std::vector<Op*>& ops() const;
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
  // Removes an op whose result nothing uses any more (checked when ops() is next rebuilt).
  void eraseOp(Op* op);
  // Every operand and output that is `from` becomes `to`. O(ops).
  void replaceAllUsesWith(Value* from, Value* to);
  void addOutput(const std::string& name, Value* value);
  void setOutputValue(size_t index, Value* value);
  void removeOutput(size_t index);

  Value* find(const std::string& name) const;  // null when absent
  // The data of params whose `file` is `path`, kept as long as the graph (see ParamData).
  void attachParamData(const std::string& path, std::shared_ptr<const ParamData> data);
  const ParamData* findParamData(const std::string& path) const;  // null when none
  // Room for about `values` values and ops, for a caller that knows how many it will add
  // (the frontend, from the file's layers): the names are not rehashed on the way.
  void reserve(size_t values);
  // `base` if unused, else base.1, base.2, ...
  std::string uniqueName(const std::string& base) const;
  // The ops that read `value`, in program order. O(ops).
  std::vector<Op*> users(const Value* value) const;
  // users() of every value that some op reads, in one walk.
  std::unordered_map<const Value*, std::vector<Op*>> usersByValue() const;
  // Position of `op` in ops().
  size_t opIndex(const Op* op) const;
  // The op right after `op` in program order (null for the last). O(1).
  Op* nextOp(const Op* op) const;

 private:
  Value* newValue(const std::string& name, TensorType type);
  // Checks that `op` is in this graph's program order.
  void requireInOrder(const Op* op) const;
  void link(Op* op, Op* before);  // into the program order, before `before` (null: at the end)
  void unlink(Op* op);
  void refreshOps() const;

  std::string name_;
  Attrs attrs_;
  std::vector<Value*> inputs_;
  // The program order, the truth: a list through the ops (Op::prev_, Op::next_).
  Op* first_ = nullptr;
  Op* last_ = nullptr;
  size_t opCount_ = 0;
  std::vector<GraphOutput> outputs_;
  std::unordered_map<std::string, std::shared_ptr<const ParamData>> paramData_;
  // Caches of the program order, rebuilt on demand; see the cost model above.
  mutable std::vector<Op*> ops_;
  mutable bool opsStale_ = false;
  mutable std::unordered_map<const Op*, size_t> indexOf_;
  mutable bool indexStale_ = false;
  mutable std::vector<const Op*> erasedSinceRefresh_;  // their results must have no reader
  std::vector<std::unique_ptr<Value>> valueStorage_;
  std::unordered_map<std::string, Value*> valuesByName_;
  std::vector<std::unique_ptr<Op>> opStorage_;
};

}  // namespace gxc
