// The rules of the data-parallel pass: how torch.chunk cuts a batch, and how each op relates
// to dim 0 of its batched operands (see the essay in data_parallel.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "passes/pass.h"

namespace gxc {

// Rows [start, end) of a batch that one device gets.
struct RowRange {
  int64_t start = 0;
  int64_t end = 0;
  int64_t rows() const { return end - start; }
};

// torch.chunk(rows, parts) along dim 0: chunks of ceil(rows / parts) rows, the last one
// smaller; fewer than `parts` chunks when rows is small (5 over 4: 2, 2, 1). Never empty ones.
std::vector<RowRange> chunkRows(int64_t rows, int64_t parts);

// What the data-parallel pass does with an op, given which of its operands are batched
// (split along dim 0 across the devices).
enum class BatchRole {
  Unbatched,    // no operand is batched: runs once, on the first device
  RowWise,      // treats dim 0 row by row: runs once per chunk, on the chunk's device
  BatchReduce,  // reduces over the batch: a partial per chunk, combined on the first device
  Whole,        // needs its batched operands whole: they are gathered, it runs once
};

// `batched[i]` says whether operand i is batched; batched values have rank >= 1.
BatchRole batchRole(const Op& op, const std::vector<bool>& batched);

// Phase 1 of data-parallel: forgets the model's device annotations (the replicas decide
// where work runs), saying so in one note when the model had any; `to` layers keep to the
// first device. Returns whether anything changed.
bool dropAnnotations(Graph& graph, const PassContext& context);

}  // namespace gxc
