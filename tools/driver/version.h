// `gxc --version` and `gxc-opt --version`: the project's version (CMake's project VERSION)
// and, when built from a git checkout, the commit ("0.1.0 (commit 1a2b3c4d5e6f)", "+" after
// the commit when the built files differ from it).
#pragma once

#include <string>

namespace gxc {

std::string versionString();  // defined in the build tree's generated version.cpp

}  // namespace gxc
