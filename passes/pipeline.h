// The default pass pipeline of `gxc run` and `gxc compile`, and the training one.
#pragma once

#include <string>
#include <vector>

namespace gxc {

std::vector<std::string> defaultPipeline();
// `gxc train`'s: infer-shapes, autodiff, optimizer, then the rest of the default pipeline.
std::vector<std::string> trainingPipeline();

}  // namespace gxc
