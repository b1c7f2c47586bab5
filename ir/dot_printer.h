// The placement picture: a graph in Graphviz's dot language, one box per device with the ops
// placed there, coloured by device; copies between devices are their own nodes (dashed, on
// the edge between the two boxes), so where data moves is what the eye sees first.
#pragma once

#include <string>

#include "ir/graph.h"

namespace gxc {

std::string printDot(const Graph& graph);

}  // namespace gxc
