// The textual IR: what users read after every pass and what lit tests check.
//
//   graph @mlp(%x: f32[64,13] @cpu loc("mlp.yaml":9:3)) -> (y) attributes {seed = 0} {
//     %fc1 = linear %x, %fc1.weight, %fc1.bias {in_features = 13, out_features = 16} : f32[64,16]
//     @cpu loc("mlp.yaml":14:5) return %fc3
//   }
//
// Every value shows its type and device; `?` stands for what is not inferred or placed yet.
// The parser (parser.h) reads exactly this text back, so print, parse, print is the identity.
#pragma once

#include <string>

#include "ir/graph.h"

namespace gxc {

std::string printGraph(const Graph& graph);
std::string printOp(const Op& op);  // one line, no indentation or newline
std::string printLoc(const SourceLoc& loc);

}  // namespace gxc
