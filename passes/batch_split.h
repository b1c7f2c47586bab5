// Cutting a graph's batch into pieces: the rewrite that data-parallel and pipeline-stages
// share (the essay on row-wise ops, batch reductions and gathers is in data_parallel.cpp).
//
// What it does: dim 0 of every graph input of rank >= 1 is cut as torch.chunk cuts it
// (chunkRows); every row-wise op runs once per piece as NAME.<suffix>I; batch reductions
// become per-piece partials combined exactly; every batched value something reads whole is
// the concatenation of its pieces along dim 0, under its own name. Who runs what is the
// plan's: `partDevice` places piece I of an op (and its partials), `wholeDevice` the op when
// it runs once (and the combinations and gathers of its pieces). Every operand on another
// device comes through one explicit `to` per value and device, named VALUE.cudaN.
//
// Requires: every value typed; no `copy` op; each op's device either unplaced or final.
// Guarantees: the graph computes what it computed (up to the order of additions); params
//   are untouched (a free param is read wherever its readers run); graph inputs are cut
//   by `slice` ops on the host. The result says which piece each new op belongs to.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "passes/data_parallel_rules.h"
#include "passes/pass.h"

namespace gxc {

struct BatchSplitPlan {
  size_t parts = 1;    // torch.chunk(batch, parts): at most `parts` pieces
  std::string suffix;  // piece I of NAME is NAME.<suffix>I ("shard", "mb")
  // Where piece `part` of `op` runs; `op` is the model's op, before the split.
  std::function<Device(const Op& op, size_t part)> partDevice;
  // Where `op` runs when it runs once, and where its pieces are combined or gathered.
  std::function<Device(const Op& op)> wholeDevice;
};

// What became of one of the model's ops (not a param).
struct SplitLayer {
  std::string name;
  BatchRole role;
  std::vector<Device> pieceDevices;  // where its pieces run: replicas, or partials to combine
  Device wholeDevice;                // where it runs once, or combines its partials
};

struct BatchSplitResult {
  // Piece of every op made for one piece (slices of inputs, replicas, partials); ops made
  // for no piece in particular (combinations, gathers, `to`s) are absent.
  std::unordered_map<const Op*, size_t> pieceOf;
  size_t replicatedOps = 0;        // model ops that run once per piece
  std::vector<SplitLayer> layers;  // every op of the model but params, in program order
};

BatchSplitResult splitBatch(Graph& graph, const BatchSplitPlan& plan);

}  // namespace gxc
