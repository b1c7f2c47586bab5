// batch-transfers' rewriting of the graph (passes/batch_transfers.h has the pass's contract
// and its reasons): a batch of copies becomes a pack on the source device, one copy, and
// pieces that unpack it before the batch point under the names of the copies they replace.
#pragma once

#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"

namespace gxc {

// A copy that may join a batch, with the op that reads it first.
struct BatchCandidate {
  Op* copy;
  size_t copyIndex;
  Op* consumer;          // the earliest op reading the copy; null when only outputs do
  size_t consumerIndex;  // ops().size() for the end of the graph
};

using Batch = std::vector<BatchCandidate>;  // the leader first

// The device a copy reads from.
inline const Device& sourceDevice(const Op& copy) { return copy.operands[0]->type.device; }

// What a round of writes needs to know of the graph as it was when the round began, taken in
// one walk: asking the graph per copy (its readers, its producer's position) would walk it
// once per copy. Writes within a round never change what it holds for the batches still to
// write: a batch touches only its own copies' readers, and readsMovingCopy (batch_transfers.cpp)
// keeps the batches whose sources another batch replaces for the next round.
struct BatchRound {
  explicit BatchRound(const Graph& graph);
  std::unordered_map<const Value*, std::vector<Op*>> readers;
  std::unordered_map<const Op*, size_t> position;
  std::unordered_map<const Value*, std::vector<size_t>> outputs;  // indices into outputs()
};

class BatchWriter {
 public:
  explicit BatchWriter(Graph& graph) : graph_(graph) {}

  // Packs the batch's sources on their device, moves the packed buffer in one copy, and
  // unpacks it under the copies' names right before the batch point.
  void write(const Batch& batch, const BatchRound& round);

 private:
  Value* insert(Op* before, OpKind kind, Value* operand, const std::string& name, TensorType type,
                Attrs attrs, const SourceLoc& loc);
  // Right after the last source is defined, past the params (resident: they order nothing).
  Op* packPoint(const Batch& batch, const BatchRound& round) const;
  std::string nextBatchName();
  // Replaces `copy` by rows [offset, offset + length) of `moved`, reshaped back to its shape
  // if it was flattened; the result keeps the copy's name, so its readers see no change.
  void unpack(Op* copy, Value* moved, int64_t offset, int64_t length, Op* before,
              const BatchRound& round);

  Graph& graph_;
  int nextBatch_ = 0;
};

}  // namespace gxc
