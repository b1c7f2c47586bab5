// Reads the textual IR that printer.h writes. Errors point into the text as
// FILE:LINE:COL, like any compiler's.
#pragma once

#include <memory>
#include <string>

#include "ir/graph.h"

namespace gxc {

std::unique_ptr<Graph> parseGraph(const std::string& text, const std::string& fileName);
std::unique_ptr<Graph> parseGraphFile(const std::string& path);

}  // namespace gxc
