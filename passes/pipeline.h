// The default pass pipeline of `gxc run` and `gxc compile`.
#pragma once

#include <string>
#include <vector>

namespace gxc {

std::vector<std::string> defaultPipeline();

}  // namespace gxc
