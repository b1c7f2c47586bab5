// Reads the textual IR that printer.h writes. Errors point into the text as
// FILE:LINE:COL, like any compiler's.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "ir/graph.h"

namespace gxc {

// Where each value is defined in the text (an op's `%name = ...`, a graph input's `%name:`),
// by name: how a tool points problems found later (the verifier's) at a line and column.
using TextPositions = std::map<std::string, SourceLoc>;

std::unique_ptr<Graph> parseGraph(const std::string& text, const std::string& fileName,
                                  TextPositions* positions = nullptr);
std::unique_ptr<Graph> parseGraphFile(const std::string& path, TextPositions* positions = nullptr);

}  // namespace gxc
