// Where the cuda platform checks data indices (embedding indices, cross_entropy targets) of
// an op that runs on a GPU, before the op's kernel reads them: a GPU kernel given an index out
// of range would read garbage or fault, so gxc refuses such a run with the host's message
// (runtime/host/host_generated_kernels.h, checkDataIndices: exit 3 naming the layer).
//
// Checking costs nothing where the same values are on the host anyway. The indices are
// followed back through what moves them unchanged (copies between devices, reshapes, and the
// packing of several tensors into one transfer by batch-transfers) to the value they started
// as:
//   - a graph input: checked in the input tensor when the run starts;
//   - the result of an op the host computes (the slices with which data-parallel and pipeline
//     placement scatter a batch, micro-batch by micro-batch): checked in that host tensor as
//     soon as the host op has computed it, before any copy takes it to a GPU;
//   - anything a GPU computed: only then does the executor wait for the op's stream and read
//     the (small, integer) indices back.
// No GPU is involved in deciding, so this is tested without one.
//
// Requires: a graph whose ops all have a device.
// Guarantees: one check per op with data indices that runs on a GPU, in program order.
#pragma once

#include <vector>

#include "ir/graph.h"

namespace gxc {

enum class IndexCheckPoint {
  RunStart,     // `source` is a graph input
  AfterHostOp,  // `source` is the result of a host op
  ReadBack,     // `source` is the consumer's own operand, computed on a GPU
};

struct IndexCheck {
  const Op* consumer;   // the GPU op that reads the indices
  const Value* source;  // the value whose host tensor holds them (see IndexCheckPoint)
  IndexCheckPoint when;
};

std::vector<IndexCheck> planIndexChecks(const Graph& graph);

}  // namespace gxc
