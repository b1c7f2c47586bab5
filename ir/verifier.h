// The invariants every pass may rely on, checked after every pass in debug and test builds.
//
// - names are unique; every operand is a graph input or the result of an earlier op;
// - every op matches its schema: operand count, attribute names and kinds; a param shard's
//   attributes describe a slice of its full shape that is exactly its type (ir/param_shard.h);
// - every output names a value of the graph;
// - a value whose type is known has the dtype and shape its op's rule gives;
// - a graph input or param whose type is known has a shape that does not overflow;
// - the members of every fused kernel keep the rules of ir/fused_kernel.h.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace gxc {

// What is wrong with `op` against its schema, or nullopt. Shared with the parser, which
// reports it at the position in the text.
std::optional<std::string> schemaProblem(const Op& op);

// Every broken invariant, one line each; empty when the graph is well-formed.
std::vector<std::string> verifyGraph(const Graph& graph);

}  // namespace gxc
